"""Signals read off a field or parameter: normalised name, concept tags (Korean and English vocabulary of
public data), coordinate system and axis, expected value length, and value shapes.

These are hints for *proposing* links; only execution decides which links are real.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
CODE_PARTS: dict[str, tuple[int, int]] = {"sgg_code": (0, 5), "sido_code": (0, 2), "sgg3_code": (2, 5),
                                          "umd_code": (5, 10)}

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


def signals(name: str, description: str, type_: str = "string", *, pattern: str | None = None,
            enum: list[str] | None = None, samples: list[str] | None = None) -> Signals:
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
        name=name, norm=n, tokens=tokens(name), concepts=concepts_of(name, description), crs=crs,
        axis=axis, stem=stem(name), type=type_, length=length, head=int(head.group(1)) if head else None,
        tail=int(tail.group(1)) if tail else None,
        span=(int(span.group(1)) - 1, int(span.group(2))) if span else None, pattern=pattern, enum=enum,
        is_array=type_ == "array", pads=bool(re.search(r"0으로\s*채|앞을\s*0|zero", description)),
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
