"""Signals read off a field or parameter: normalised name, concept tags (Korean and English vocabulary of
public data), coordinate system and axis, expected value length, and value shapes.

These are hints for *proposing* links; only execution decides which links are real.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from graph import regions

#: Concept tags and the words (in names or descriptions, Korean included) that evoke them.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "bjd_code": ("법정동코드", "행정구역코드", "admcd", "regioncd", "bjdcode", "법정동 코드"),
    "sgg_code": ("시군구코드", "sigungucd", "sigungucode", "lawdcd", "sggcd", "지역코드"),
    "sido_code": ("시도코드", "sidocd", "ldongregncd", "시도 2자리"),
    "sgg3_code": ("ldongsigngucd", "시군구코드 (3자리", "3~5번째"),
    "umd_code": ("읍면동코드", "bjdongcd", "umdcd"),
    "umd_name": ("읍면동명", "읍면동 이름", "emdnm", "umdname", "emdongnm", "최하위지역명"),
    "sido_name": ("시도명", "시도 이름", "sinm", "sidoname"),
    "sgg_name": ("시군구명", "시군구 이름", "sggnm", "sggname"),
    "jibun_main": ("본번", "번지", "bonbun", "lnbrmnnm"),
    "jibun_sub": ("부번", "bubun", "lnbrslno"),
    "plat_kind": ("대지구분", "산여부", "platgbcd", "mtyn"),
    "brn": ("사업자등록번호", "bizrno", "사업자번호"),
    "station_name": ("측정소명", "stationname"),
    "item_seq": ("품목기준코드", "품목일련번호", "itemseq"),
    "ingr_code": ("성분코드", "ingrcode"),
    "edi_code": ("보험코드", "edicode"),
    "ykiho": ("요양기호", "ykiho"),
    "content_id": ("콘텐츠id", "contentid"),
    "content_type": ("관광타입", "contenttypeid"),
    "city_code": ("도시코드", "citycode"),
    "node_id": ("정류소id", "nodeid"),
    "route_id": ("노선id", "routeid"),
    "kapt_code": ("단지코드", "kaptcode"),
    "road_code": ("도로명코드", "rnmgtsn"),
    "building_main": ("건물본번", "buldmnnm"),
    "building_sub": ("건물부번", "buldslno"),
    "underground": ("지하여부", "udrtyn"),
    "zip": ("우편번호", "zipno", "zipcode", "postno"),
    "date": ("일자", "날짜", "yyyymmdd", "date"),
    "year_month": ("년월", "yyyymm"),
}
#: Concepts that are sub-parts of the 10-digit 법정동코드, with the slice that extracts them.
CODE_PARTS: dict[str, tuple[int, int]] = {
    "sgg_code": (0, 5),
    "sido_code": (0, 2),
    "sgg3_code": (2, 5),
    "umd_code": (5, 10),
}

CRS_WORDS: list[tuple[str, tuple[str, ...]]] = [
    ("UTMK", ("utm-k", "utmk", "5179")),
    ("TM", ("중부원점", "5181", "tm 좌표", "tm_x", "tm_y", "tm 기준좌표", "tm좌표")),
    ("KMA_GRID", ("격자",)),
    ("WGS84", ("wgs84", "wgs 84", "위도", "경도", "gps", "위경도", "longitude", "latitude")),
]
_NAME_CRS = {"tmx": "TM", "tmy": "TM", "nx": "KMA_GRID", "ny": "KMA_GRID", "entx": "UTMK", "enty": "UTMK"}

_DIGITS_PATTERN = re.compile(r"^\^?\[0-9\]\{(\d+)\}\$?$|^\^?\\d\{(\d+)\}\$?$")
_LEN_HINT = re.compile(r"(\d+)\s*자리")
_HEAD = re.compile(r"앞\s*(\d+)\s*자리")
_TAIL = re.compile(r"뒤\s*(\d+)\s*자리")
_RANGE = re.compile(r"(\d+)\s*~\s*(\d+)\s*번째")


def norm(name: str) -> str:
    return re.sub(r"[^0-9a-z가-힣]", "", name.lower())


_LIKE = re.compile(r"^like_?(?=[A-Z_a-z])(.+)$")


def filtered_norm(name: str) -> str | None:
    """The normalised name of the field a partial-match filter searches (`likeItemCd`: "종목코드가 검색값을
    포함하는 데이터" filters `itemCd`; `likeCorpNm` filters `corpNm`), None for any other name."""
    m = _LIKE.match(name)
    if m is None or not (name[4:5].isupper() or name[4:5] == "_"):
        return None
    return norm(m.group(1)) or None


def tokens(name: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return {t for t in re.split(r"[^0-9a-zA-Z가-힣]+", spaced.lower()) if len(t) >= 3}


@dataclass
class Signals:
    name: str
    norm: str
    tokens: set[str]
    concepts: set[str]
    crs: str | None
    axis: str | None
    stem: str
    type: str
    length: int | None = None  # expected digit length (parameters) or observed length (fields)
    head: int | None = None
    tail: int | None = None
    span: tuple[int, int] | None = None
    pattern: str | None = None
    enum: list[str] | None = None
    is_array: bool = False
    pads: bool = False  # the description asks for zero-padding
    samples: list[str] = field(default_factory=list)


def _crs(name_norm: str, text: str) -> str | None:
    if name_norm in _NAME_CRS:
        return _NAME_CRS[name_norm]
    for crs, words in CRS_WORDS:
        if any(w in text for w in words):
            return crs
    return None


def _axis(name: str, text: str) -> str | None:
    n = name.lower()
    if n.endswith(("lati", "lat")) or "latitude" in n or (n.startswith("y") and len(n) > 1 and n[1:2].isupper()):
        return "y"
    if n.endswith(("long", "lon")) or "longitude" in n or (n.startswith("x") and len(n) > 1 and n[1:2].isupper()):
        return "x"
    if n.endswith("x") or n.startswith("xpos"):
        return "x"
    if n.endswith("y") or n.startswith("ypos"):
        return "y"
    if "x좌표" in text.replace(" ", "") or "경도" in text:
        return "x"
    if "y좌표" in text.replace(" ", "") or "위도" in text:
        return "y"
    return None


def stem(name: str) -> str:
    n = name.lower()
    n = re.sub(r"(lati|long|lat|lon)$", "", n)
    n = re.sub(r"^(x|y)(?=pos)", "", n)
    return re.sub(r"[xy]$", "", n)


#: Short parameter names that carry a concept only as whole names (too short to search in text).
NAME_CONCEPTS = {"bun": "jibun_main", "ji": "jibun_sub", "bonbun": "jibun_main", "bubun": "jibun_sub"}


def concepts_of(name: str, description: str) -> set[str]:
    n = norm(name)
    text = description.lower()
    out = {NAME_CONCEPTS[n]} if n in NAME_CONCEPTS else set()
    for concept, words in CONCEPTS.items():
        if any(w == n or (len(w) > 3 and w in n) or w in text for w in words):
            out.add(concept)
    return out


def signals(
    name: str,
    description: str,
    type_: str = "string",
    *,
    pattern: str | None = None,
    enum: list[str] | None = None,
    samples: list[str] | None = None,
) -> Signals:
    text = f"{name} {description}".lower()
    n = norm(name)
    length = None
    if pattern:
        m = _DIGITS_PATTERN.match(pattern)
        if m:
            length = int(m.group(1) or m.group(2))
    head = _HEAD.search(description)
    tail = _TAIL.search(description)
    span = _RANGE.search(description)
    if length is None and not head and not tail:
        hint = _LEN_HINT.search(description)
        if hint:
            length = int(hint.group(1))
    crs = _crs(n, text)
    axis = _axis(name, text) if crs else None
    return Signals(
        name=name,
        norm=n,
        tokens=tokens(name),
        concepts=concepts_of(name, description),
        crs=crs,
        axis=axis,
        stem=stem(name),
        type=type_,
        length=length,
        head=int(head.group(1)) if head else None,
        tail=int(tail.group(1)) if tail else None,
        span=(int(span.group(1)) - 1, int(span.group(2))) if span else None,
        pattern=pattern,
        enum=enum,
        is_array=type_ == "array",
        pads=bool(re.search(r"0으로\s*채|앞을\s*0|zero", description)),
        samples=list(samples or []),
    )


def value_shape(value: str) -> str:
    """A coarse shape of one observed value: digits10, alnum, float, hangul, ..."""
    v = value.strip()
    if not v:
        return "empty"
    if v.isdigit():
        return f"digits{len(v)}"
    if re.fullmatch(r"-?\d+\.\d+", v):
        return "float"
    if re.fullmatch(r"[A-Za-z]+\d+", v):
        return "alnum"
    if re.search(r"[가-힣]", v):
        return "hangul"
    return "text"


@lru_cache(maxsize=1)
def _units() -> tuple[frozenset[str], frozenset[str]]:
    sido = set(regions.SIDO) | set(regions.FORMER_SIDO)
    units = {n for names in regions.SIGUNGU.values() for n in names}
    units |= {n for former in regions.FORMER_SIGUNGU.values() for n in former}
    units |= {n for gu in regions.GENERAL_GU.values() for n in gu}
    return frozenset(sido), frozenset(units)


def value_concepts(values: list[str]) -> set[str]:
    """Concepts read off values rather than names, that every one of `values` shows (at most 12 read): `sido_full`
    when each is a full 시도 name (서울특별시, 강원특별자치도, a former 강원도), `sgg_full` when each is a 시군구 or
    일반구 name as the 행정구역 list writes it (one word, or a city and its 일반구: 수원시 장안구). Empty when there is
    no value or one is anything else (서울, 보건복지부, 서울특별시 종로구). A document that names a parameter `P1` and
    describes it "주소" still shows its form in its example; a response in its rows."""
    texts = [str(v).strip() for v in values if str(v).strip()][:12]
    if not texts:
        return set()
    sido, units = _units()
    if all(t in sido for t in texts):
        return {"sido_full"}
    if all(0 < len(t.split()) <= 2 and all(w in units for w in t.split()) for t in texts):
        return {"sgg_full"}
    return set()


def crs_from_values(samples: list[str]) -> str | None:
    """Guess a coordinate system from observed values (Korean extents)."""
    nums = []
    for s in samples:
        try:
            nums.append(float(s))
        except ValueError:
            return None
    if not nums:
        return None
    lo, hi = min(nums), max(nums)
    if (lo >= 33 and hi <= 39) or (lo >= 124 and hi <= 132):
        return "WGS84"
    if lo >= 600_000 and hi <= 2_200_000:
        return "UTMK"
    if lo >= 100_000 and hi <= 700_000:
        return "TM"
    return None


# ---------------------------------------------------------------------------------------------- who knows a value

#: Concepts a person knows and says (names, addresses, numbers printed on documents), as opposed to system codes.
USER_CONCEPTS = {"umd_name", "sido_name", "sgg_name", "brn", "station_name", "date", "year_month"}
#: Parameter names a person knows, by normalised name or suffix (free keywords, names, addresses, dates).
_USER_NAMES = re.compile(
    r"(keyword|addr|address|locataddnm|^b_?no$|^bno$|routeno|nodeno|nodenm|stationname|sidoname|"
    r"umdname|itemname|entpname|entp_?name|yadmnm|emdongnm|kaptname|dealymd|startdt|enddt|"
    r"nm$|name$)"
)
#: Clock-bound parameters: a forecast's issue date and time follow from "now", never from the user.
_CLOCK_NAMES = {"basedate", "basetime", "tmfc"}
_CODE_WORDS = ("코드", "id", "좌표", "격자", "구분", "일련번호", "요양기호", "번호 (", "순번")
ROLE_EXTENSION = "x-kopa-role"
ROLES = ("user", "code", "clock", "constant")


def param_role(
    name: str,
    description: str = "",
    *,
    enum: list[str] | None = None,
    has_default: bool = False,
    override: str | None = None,
    non_linkable: bool = False,
) -> str:
    """Who supplies a parameter's value in a conversation: `user` (a person knows it: names, address text,
    business registration numbers, dates), `code` (a system code a person does not know: region and grid codes,
    ids, coordinates; it must come from an earlier tool result), `clock` (issue dates and times that follow
    from now) or `constant` (enums, defaults, paging and app identifiers). `override` is the document's
    `x-kopa-role`."""
    if override in ROLES:
        return override
    n = norm(name)
    if n in _CLOCK_NAMES:
        return "clock"
    if non_linkable or (enum and n not in ("sidoname",)) or has_default:
        return "constant" if n not in ("sidoname",) else "user"
    found = concepts_of(name, description)
    if found & USER_CONCEPTS and not found - USER_CONCEPTS - {"date", "year_month"}:
        return "user"
    if _crs(n, f"{name} {description}".lower()) is not None:
        return "code"
    if _USER_NAMES.search(n) and not any(w in n for w in ("cd", "code", "id")):
        return "user"
    text = f"{name} {description}".lower()
    if any(w in text for w in _CODE_WORDS) or found:
        return "code"
    return "code"


#: Parameters that must come from one and the same upstream row (coordinate pairs, a code split in two).
PAIR_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"nx", "ny"}),
    frozenset({"tmX", "tmY"}),
    frozenset({"gpsLati", "gpsLong"}),
    frozenset({"mapX", "mapY"}),
    frozenset({"xPos", "yPos"}),
    frozenset({"sigunguCd", "bjdongCd", "bun", "ji", "platGbCd"}),
    frozenset({"admCd", "rnMgtSn", "udrtYn", "buldMnnm", "buldSlno"}),
    frozenset({"cityCode", "nodeId", "nodeid", "routeId"}),
    frozenset({"contentId", "contentTypeId"}),
)


def pair_group(name: str) -> frozenset[str] | None:
    return next((g for g in PAIR_GROUPS if name in g), None)


# ---------------------------------------------------------------------------------------------- answering fields

#: Field names (normalised) that answer a question, with a Korean label when the document's is a code word.
ANSWER_FIELDS: dict[str, str] = {
    "pm10value": "미세먼지(PM10)",
    "pm25value": "초미세먼지(PM2.5)",
    "pm10grade": "미세먼지 등급",
    "pm25grade": "초미세먼지 등급",
    "khaivalue": "통합대기환경수치",
    "o3value": "오존",
    "fcstvalue": "예보 값",
    "obsrvalue": "실황 값",
    "arrtime": "도착 예정",
    "arrprevstationcnt": "남은 정류장 수",
    "routeno": "노선 번호",
    "dealamount": "거래금액",
    "deposit": "보증금",
    "monthlyrent": "월세",
    "aptnm": "단지명",
    "excluusear": "전용면적",
    "floor": "층",
    "yadmnm": "기관명",
    "addr": "주소",
    "telno": "전화번호",
    "distance": "거리",
    "stationname": "측정소",
    "roadaddr": "도로명주소",
    "zipno": "우편번호",
    "title": "이름",
    "addr1": "주소",
    "usetime": "이용시간",
    "restdate": "쉬는 날",
    "overview": "개요",
    "itemname": "제품명",
    "efcyqesitm": "효능",
    "usemethodqesitm": "복용법",
    "entpname": "업체명",
    "b_stt": "상태",
    "bstt": "상태",
    "taxtype": "과세유형",
    "valid": "진위 확인 결과",
    "validmsg": "결과",
    "intervaltime": "배차간격",
    "startvehicletime": "첫차",
    "endvehicletime": "막차",
    "startnodenm": "기점",
    "endnodenm": "종점",
    "nodenm": "정류소",
    "bldnm": "건물명",
    "mainpurpscdnm": "주용도",
    "totarea": "연면적",
    "grndflrcnt": "지상 층수",
    "platplc": "대지위치",
    "kaptname": "단지명",
    "kaptdacnt": "세대수",
    "kaptaddr": "주소",
    "dgsbjtcdnm": "진료과목",
    "trmtmonstart": "평일 진료 시작",
    "trmtmonend": "평일 진료 종료",
    "parkqty": "주차 가능 대수",
    "prohbtcontent": "금기 내용",
    "mixtureitemname": "함께 먹으면 안 되는 약",
    "ingrkorname": "성분",
    "drugshape": "모양",
    "colorclass1": "색상",
    "printfront": "앞면 표시",
    "mintamin": "",
    "avgta": "평균기온",
    "minta": "최저기온",
    "maxta": "최고기온",
    "sumrn": "강수량",
    "stnnm": "지점",
    "tmx": "TM X",
    "tmy": "TM Y",
    "entx": "X 좌표",
    "enty": "Y 좌표",
    "sidoname": "시도",
    "cityname": "도시",
    "tamin4": "4일 후 최저기온",
    "tamax4": "4일 후 최고기온",
    "locataddnm": "지역",
    "regioncd": "법정동코드",
    "ldongregnnm": "시도",
    "ldongsignngunm": "시군구",
    "name": "이름",
    "routetp": "노선 유형",
}
#: KMA short-term forecast categories: label, unit, and value names for coded categories.
KMA_CATEGORIES: dict[str, tuple[str, str]] = {
    "T1H": ("기온", "℃"),
    "TMP": ("기온", "℃"),
    "REH": ("습도", "%"),
    "RN1": ("1시간 강수량", "mm"),
    "PCP": ("1시간 강수량", ""),
    "POP": ("강수확률", "%"),
    "WSD": ("풍속", "m/s"),
    "SKY": ("하늘", ""),
    "PTY": ("강수 형태", ""),
    "TMN": ("최저기온", "℃"),
    "TMX": ("최고기온", "℃"),
    "VEC": ("풍향", "deg"),
    "UUU": ("동서 바람", "m/s"),
    "VVV": ("남북 바람", "m/s"),
    "LGT": ("낙뢰", "kA"),
    "SNO": ("신적설", ""),
    "WAV": ("파고", "M"),
}
KMA_CODES: dict[str, dict[str, str]] = {
    "SKY": {"1": "맑음", "3": "구름많음", "4": "흐림"},
    "PTY": {
        "0": "없음",
        "1": "비",
        "2": "비/눈",
        "3": "눈",
        "4": "소나기",
        "5": "빗방울",
        "6": "빗방울눈날림",
        "7": "눈날림",
    },
}
AIR_GRADES = {"1": "좋음", "2": "보통", "3": "나쁨", "4": "매우나쁨"}
_UNIT = re.compile(r"\(([^()]*?(?:㎍/㎥|ppm|℃|%|mm|m/s|만원|㎡|초|m\b|원|분)[^()]*?)\)")


def field_unit(description: str) -> str:
    """The unit a field's document states in parentheses ('(㎍/㎥, 결측 '-')' → '㎍/㎥'), else ''."""
    m = _UNIT.search(description)
    if not m:
        return ""
    unit = m.group(1).split(",")[0].strip()
    return unit if len(unit) <= 6 else ""


def answer_label(name: str, description: str = "") -> str | None:
    """The Korean label of a field that answers a question, or None when the field does not answer one."""
    key = norm(name)
    if key in ANSWER_FIELDS:
        return ANSWER_FIELDS[key] or re.sub(r"\s*\(.*$", "", description).strip() or name
    return None
