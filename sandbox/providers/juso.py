"""도로명주소 검색 API (addrLinkApi) and 좌표제공 API (addrCoordApi), juso's own envelope and E-codes."""

from __future__ import annotations

import re

from sandbox.entities import Building
from sandbox.spec import Field, Operation, Param, Provider, ProviderError, Request, Result, format_param

JUSO = Provider(
    key="juso",
    title="도로명주소 API",
    org="행정안전부",
    host="business.juso.go.kr",
    envelope="juso",
    format_param="resultType",
    success_code="0",
    success_msg="정상",
    key_param="confmKey",
    gateway="juso",
    paging=("currentPage", "countPerPage"),
    validates_itself=True,
    daily_quota=0,
)

_INITIAL = ["g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch", "k", "t", "p", "h"]
_MEDIAL = [
    "a",
    "ae",
    "ya",
    "yae",
    "eo",
    "e",
    "yeo",
    "ye",
    "o",
    "wa",
    "wae",
    "oe",
    "yo",
    "u",
    "wo",
    "we",
    "wi",
    "yu",
    "eu",
    "ui",
    "i",
]
_FINAL = [
    "",
    "k",
    "k",
    "k",
    "n",
    "n",
    "n",
    "t",
    "l",
    "k",
    "m",
    "l",
    "l",
    "l",
    "p",
    "l",
    "m",
    "p",
    "p",
    "t",
    "t",
    "ng",
    "t",
    "t",
    "k",
    "t",
    "p",
    "t",
]


def romanize(text: str) -> str:
    out = []
    for ch in text:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            out.append(_INITIAL[code // 588] + _MEDIAL[(code % 588) // 28] + _FINAL[code % 28])
        else:
            out.append(ch)
    return "".join(out)


def _eng(b: Building) -> str:
    r = b.region
    sido = {"11": "Seoul", "28": "Incheon", "30": "Daejeon"}[b.adm_cd[:2]]
    road = romanize(b.road_name).replace("daero", "-daero").replace("gil", "-gil").capitalize()
    number = f"{b.buld_mnnm}{'-' + str(b.buld_slno) if b.buld_slno else ''}"
    return f"{number} {road}, {romanize(r.sgg_nm).capitalize()}, {sido}"


def juso_row(b: Building, add_info: bool = False) -> dict[str, str]:
    r = b.region
    part2 = f" ({r.umd_nm}{', ' + b.bd_nm if b.bd_nm else ''})"
    row = {
        "roadAddr": b.road_addr + part2,
        "roadAddrPart1": b.road_addr,
        "roadAddrPart2": part2,
        "jibunAddr": b.jibun_addr + (f" {b.bd_nm}" if b.bd_nm else ""),
        "engAddr": _eng(b),
        "zipNo": b.zip_no,
        "admCd": b.adm_cd,
        "rnMgtSn": b.rn_mgt_sn,
        "bdMgtSn": b.bd_mgt_sn,
        "detBdNmList": "",
        "bdNm": b.bd_nm,
        "bdKdcd": b.bd_kdcd,
        "siNm": r.sido_nm,
        "sggNm": r.sgg_nm,
        "emdNm": r.umd_nm,
        "liNm": r.ri_nm,
        "rn": b.road_name,
        "udrtYn": b.udrt_yn,
        "buldMnnm": str(b.buld_mnnm),
        "buldSlno": str(b.buld_slno),
        "mtYn": b.mt_yn,
        "lnbrMnnm": str(b.lnbr_mnnm),
        "lnbrSlno": str(b.lnbr_slno),
        "emdNo": b.adm_cd[5:8] + "01",
    }
    if add_info:
        row.update({"hstryYn": "0", "relJibun": "", "hemdNm": r.umd_nm})
    return row


_SIDO_ONLY = {"서울", "서울시", "서울특별시", "인천", "인천시", "인천광역시", "대전", "대전시", "대전광역시"}
_SPECIAL = re.compile(r"[%=><\[\]]")


def _search(req: Request) -> Result:
    kw = req.params.get("keyword", "").strip()
    if not kw:
        raise ProviderError("E0005", "검색어가 입력되지 않았습니다.")
    if _SPECIAL.search(kw):
        raise ProviderError("E0013", "검색어에 SQL 예약어 또는 특수문자를 입력할 수 없습니다.")
    if len(kw.replace(" ", "")) < 2:
        raise ProviderError("E0008", "검색어는 두글자 이상 입력되어야 합니다.")
    if kw.replace(" ", "").isdigit():
        raise ProviderError("E0009", "검색어는 문자와 숫자 같이 입력되어야 합니다.")
    if len(kw) > 80:
        raise ProviderError("E0010", "검색어가 너무 깁니다. (한글40자, 영문,숫자 80자 이하)")
    if kw in _SIDO_ONLY:
        raise ProviderError("E0006", "주소를 상세히 입력해 주시기 바랍니다.")
    tokens = kw.split()
    add_info = req.params.get("addInfoYn", "N").upper() == "Y"
    hits = []
    for b in req.world.buildings:
        hay = f"{b.road_addr} {b.jibun_addr} {b.bd_nm} {b.region.umd_nm}"
        if all(t in hay for t in tokens):
            hits.append(juso_row(b, add_info))
    if len(hits) > 9000:
        raise ProviderError("E0015", "검색 범위를 초과하였습니다.")
    return Result(hits)


def _coord(req: Request) -> Result:
    p = req.params
    for name, code, msg in (
        ("admCd", "E0002", "행정구역코드(admCd)가 입력되지 않았습니다."),
        ("rnMgtSn", "E0003", "도로명코드(rnMgtSn)가 입력되지 않았습니다."),
        ("udrtYn", "E0004", "지하여부(udrtYn)가 입력되지 않았습니다."),
        ("buldMnnm", "E0005", "건물본번(buldMnnm)이 입력되지 않았습니다."),
        ("buldSlno", "E0006", "건물부번(buldSlno)이 입력되지 않았습니다."),
    ):
        if not p.get(name, "").strip():
            raise ProviderError(code, msg)
    hits = []
    for b in req.world.buildings_by_umd.get(p["admCd"], []):
        if (
            b.rn_mgt_sn == p["rnMgtSn"]
            and b.udrt_yn == p["udrtYn"]
            and str(b.buld_mnnm) == p["buldMnnm"]
            and str(b.buld_slno) == p["buldSlno"]
        ):
            hits.append(
                {
                    "admCd": b.adm_cd,
                    "rnMgtSn": b.rn_mgt_sn,
                    "bdMgtSn": b.bd_mgt_sn,
                    "udrtYn": b.udrt_yn,
                    "buldMnnm": str(b.buld_mnnm),
                    "buldSlno": str(b.buld_slno),
                    "entX": f"{b.ent_x:.6f}",
                    "entY": f"{b.ent_y:.6f}",
                    "bdNm": b.bd_nm,
                }
            )
    return Result(hits)


_PAGING = [
    Param("currentPage", "현재 페이지 번호", "integer", example="1", default="1"),
    Param("countPerPage", "페이지당 출력할 결과 Row 수 (최대 100)", "integer", example="10", default="10"),
]
_KEY = [Param("confmKey", "신청시 발급받은 승인키", required=True)]

OPERATIONS = [
    Operation(
        JUSO,
        "addrlink",
        "addrLinkApi.do",
        "도로명주소 검색",
        "검색어(도로명, 지번, 건물명)로 도로명주소와 지번주소, 행정구역코드(admCd, "
        "법정동코드 10자리), 도로명코드, 건물번호를 조회합니다.",
        [
            *_KEY,
            Param("keyword", "주소 검색어 (예: 세종대로 209, 종로구 청운동)", required=True, example="종로구 사직로"),
            *_PAGING,
            *format_param(JUSO),
            Param("hstryYn", "변동된 주소정보 포함 여부", enum=("Y", "N"), default="N"),
            Param("firstSort", "정렬 우선순위", enum=("none", "road", "location"), default="none"),
            Param("addInfoYn", "추가정보 출력 여부 (hstryYn, relJibun, hemdNm)", enum=("Y", "N"), default="N"),
        ],
        [
            Field("roadAddr", "전체 도로명주소", example="서울특별시 종로구 사직로 161 (세종로)"),
            Field("roadAddrPart1", "도로명주소 (참고항목 제외)"),
            Field("roadAddrPart2", "도로명주소 참고항목"),
            Field("jibunAddr", "지번주소"),
            Field("engAddr", "도로명주소 (영문)"),
            Field("zipNo", "우편번호 (5자리)", example="03045"),
            Field("admCd", "행정구역코드 (법정동코드 10자리)", example="1111011900"),
            Field("rnMgtSn", "도로명코드 (12자리: 시군구코드 5 + 도로명번호 7)", example="111103100012"),
            Field("bdMgtSn", "건물관리번호 (25자리)"),
            Field("detBdNmList", "상세건물명"),
            Field("bdNm", "건물명"),
            Field("bdKdcd", "공동주택여부 (1: 공동주택, 0: 비공동주택)"),
            Field("siNm", "시도명", example="서울특별시"),
            Field("sggNm", "시군구명", example="종로구"),
            Field("emdNm", "읍면동명", example="세종로"),
            Field("liNm", "법정리명"),
            Field("rn", "도로명"),
            Field("udrtYn", "지하여부 (0: 지상, 1: 지하)"),
            Field("buldMnnm", "건물본번", "string", example="161"),
            Field("buldSlno", "건물부번 (부번이 없는 경우 0)", example="0"),
            Field("mtYn", "산여부 (0: 대지, 1: 산)"),
            Field("lnbrMnnm", "지번본번(번지)", example="1"),
            Field("lnbrSlno", "지번부번(호) (부번이 없는 경우 0)", example="0"),
            Field("emdNo", "읍면동일련번호"),
            Field("hstryYn", "변동이력여부", nullable=True),
            Field("relJibun", "관련지번", nullable=True),
            Field("hemdNm", "관할주민센터", nullable=True),
        ],
        _search,
        path_override="/addrlink/addrLinkApi.do",
        intent="'{keyword}' 주소 검색",
    ),
    Operation(
        JUSO,
        "addrlink",
        "addrCoordApi.do",
        "도로명주소 좌표 조회",
        "도로명주소 검색 API 결과의 admCd, rnMgtSn, udrtYn, buldMnnm, "
        "buldSlno로 건물 출입구 좌표(UTM-K, GRS80, EPSG:5179)를 조회합니다.",
        [
            *_KEY,
            Param(
                "admCd",
                "행정구역코드 (도로명주소 검색 결과의 admCd)",
                required=True,
                example="1111011900",
                pattern="^[0-9]{10}$",
            ),
            Param("rnMgtSn", "도로명코드 (도로명주소 검색 결과의 rnMgtSn)", required=True, pattern="^[0-9]{12}$"),
            Param("udrtYn", "지하여부 (0: 지상, 1: 지하)", required=True, enum=("0", "1")),
            Param("buldMnnm", "건물본번", "integer", required=True, example="161"),
            Param("buldSlno", "건물부번", "integer", required=True, example="0"),
            *format_param(JUSO),
        ],
        [
            Field("admCd", "행정구역코드"),
            Field("rnMgtSn", "도로명코드"),
            Field("bdMgtSn", "건물관리번호"),
            Field("udrtYn", "지하여부"),
            Field("buldMnnm", "건물본번"),
            Field("buldSlno", "건물부번"),
            Field("entX", "X좌표 (UTM-K, EPSG:5179, 미터)", example="953901.165312"),
            Field("entY", "Y좌표 (UTM-K, EPSG:5179, 미터)", example="1952032.080979"),
            Field("bdNm", "건물명"),
        ],
        _coord,
        path_override="/addrlink/addrCoordApi.do",
        paged=False,
        intent="주소의 좌표 확인",
    ),
]
