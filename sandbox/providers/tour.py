"""한국관광공사 TourAPI 4.0 국문 관광정보 (KorService2)."""

from __future__ import annotations

from core.geo import haversine_m
from core.json_types import JsonObject
from sandbox.entities import TourSite
from sandbox.providers._util import as_float
from sandbox.spec import (
    Field,
    Operation,
    Param,
    Provider,
    ProviderError,
    Request,
    Result,
    format_param,
    paging_params,
)
from sandbox.world_tables import TOUR_LCLS, TOUR_LEGACY_AREA

TOUR = Provider(
    key="B551011",
    title="한국관광공사_국문 관광정보 서비스_GW",
    org="한국관광공사",
    format_param="_type",
    success_code="0000",
    success_msg="OK",
    single_as_object=True,
    daily_quota=1000,
)


def _site_row(t: TourSite, dist: float | None = None) -> JsonObject:
    b = t.building
    l1, l2, l3 = TOUR_LCLS[t.content_type_id]
    row: JsonObject = {
        "addr1": b.road_addr,
        "addr2": f"({b.region.umd_nm})",
        "areacode": TOUR_LEGACY_AREA[b.adm_cd[:2]],
        "cat1": "",
        "cat2": "",
        "cat3": "",
        "contentid": t.content_id,
        "contenttypeid": str(t.content_type_id),
        "createdtime": t.created,
        "firstimage": f"http://tong.visitkorea.or.kr/cms/resource/{t.content_id[-2:]}/{t.content_id}_image2_1.jpg",
        "firstimage2": f"http://tong.visitkorea.or.kr/cms/resource/{t.content_id[-2:]}/{t.content_id}_image3_1.jpg",
        "cpyrhtDivCd": "Type3",
        "mapx": f"{t.lon:.10f}",
        "mapy": f"{t.lat:.10f}",
        "mlevel": "6",
        "modifiedtime": t.modified,
        "sigungucode": t.legacy_sigungu,
        "tel": t.tel,
        "title": t.title,
        "zipcode": b.zip_no,
        "lDongRegnCd": b.adm_cd[:2],
        "lDongSignguCd": b.adm_cd[2:5],
        "lclsSystm1": l1,
        "lclsSystm2": l2,
        "lclsSystm3": l3,
    }
    if dist is not None:
        row["dist"] = repr(dist)
    return row


def _filter(req: Request) -> list[TourSite]:
    p = req.params
    ctype, regn, signgu = p.get("contentTypeId", ""), p.get("lDongRegnCd", ""), p.get("lDongSignguCd", "")
    out = []
    for t in req.world.tour_sites:
        code = t.building.adm_cd
        if ctype and ctype != str(t.content_type_id):
            continue
        if regn and regn != code[:2]:
            continue
        if signgu and signgu != code[2:5]:
            continue
        out.append(t)
    arrange = p.get("arrange", "C")
    if arrange in ("A", "O"):
        out.sort(key=lambda t: t.title)
    elif arrange in ("C", "Q"):
        out.sort(key=lambda t: t.modified, reverse=True)
    elif arrange in ("D", "R"):
        out.sort(key=lambda t: t.created, reverse=True)
    return out


def _area(req: Request) -> Result:
    return Result([_site_row(t) for t in _filter(req)])


def _location(req: Request) -> Result:
    x, y = as_float(req.params["mapX"], "mapX"), as_float(req.params["mapY"], "mapY")
    radius = as_float(req.params["radius"], "radius")
    if radius > 20000 or radius <= 0:
        raise ProviderError("10", "INVALID_REQUEST_PARAMETER_ERROR")
    hits = []
    for t in _filter(req):
        d = haversine_m(y, x, t.lat, t.lon)
        if d <= radius:
            hits.append((d, t))
    hits.sort(key=lambda h: h[0])
    return Result([_site_row(t, round(d, 10)) for d, t in hits])


def _keyword(req: Request) -> Result:
    kw = req.params["keyword"].strip()
    return Result([_site_row(t) for t in _filter(req) if kw in t.title or kw in t.building.road_addr])


def _ldong(req: Request) -> Result:
    regn = req.params.get("lDongRegnCd", "")
    full = req.params.get("lDongListYn", "N").upper() == "Y"
    regions = [r for r in req.world.regions if r.level in ("sido", "sgg") and "출장" not in r.sgg_nm]
    if full:
        rows = [
            {
                "lDongRegnCd": r.code[:2],
                "lDongRegnNm": r.sido_nm,
                "lDongSignguCd": r.code[2:5],
                "lDongSignguNm": r.sgg_nm,
            }
            for r in regions
            if r.level == "sgg" and (not regn or r.code[:2] == regn)
        ]
    elif not regn:
        rows = [{"code": r.code[:2], "name": r.sido_nm} for r in regions if r.level == "sido"]
    else:
        rows = [{"code": r.code[2:5], "name": r.sgg_nm} for r in regions if r.level == "sgg" and r.code[:2] == regn]
    return Result([{**row, "rnum": i + 1} for i, row in enumerate(rows)])


def _common(req: Request) -> Result:
    t = req.world.tour_by_id.get(req.params["contentId"])
    if t is None:
        return Result([])
    row = _site_row(t)
    for k in ("firstimage2", "cpyrhtDivCd", "areacode", "sigungucode", "cat1", "cat2", "cat3"):
        row.pop(k, None)
    row.update(
        {
            "homepage": f'<a href="https://www.example.go.kr/{t.content_id}" target="_blank" '
            f'title="새창 : {t.title} 홈페이지">www.example.go.kr</a>',
            "telname": t.title,
            "overview": f"{t.title}은(는) {t.building.region.full_name}에 있습니다.<br>"
            f"{t.building.region.sgg_nm}의 대표적인 {'관광' if t.content_type_id == 12 else '여행'} 명소입니다.",
        }
    )
    return Result([row])


_INTRO: dict[int, dict[str, str]] = {
    12: {
        "usetime": "09:00~18:00",
        "restdate": "매주 화요일",
        "parking": "가능",
        "infocenter": "문의 안내센터",
        "expguide": "해설 프로그램 운영",
        "chkpet": "불가",
    },
    14: {
        "usetimeculture": "10:00~19:00",
        "restdateculture": "매주 월요일",
        "parkingculture": "가능",
        "infocenterculture": "문화센터 안내",
    },
    15: {
        "eventstartdate": "20261101",
        "eventenddate": "20261130",
        "eventplace": "광장 일대",
        "playtime": "10:00~21:00",
        "usetimefestival": "무료",
    },
    28: {"usetimeleports": "06:00~22:00", "restdateleports": "연중무휴", "parkingleports": "가능"},
    32: {"checkintime": "15:00", "checkouttime": "11:00", "roomcount": "40", "parkinglodging": "가능"},
    38: {"opentime": "09:00~20:00", "restdateshopping": "첫째·셋째 일요일", "parkingshopping": "가능"},
    39: {"firstmenu": "칼국수", "treatmenu": "칼국수, 만두", "opentimefood": "11:00~21:00", "restdatefood": "일요일"},
}


def _intro(req: Request) -> Result:
    t = req.world.tour_by_id.get(req.params["contentId"])
    if t is None or str(t.content_type_id) != req.params["contentTypeId"]:
        return Result([])
    return Result([{"contentid": t.content_id, "contenttypeid": str(t.content_type_id), **_INTRO[t.content_type_id]}])


_COMMON = [
    Param("serviceKey", "공공데이터포털에서 발급받은 인증키", required=True),
    Param(
        "MobileOS",
        "OS 구분 (IOS, AND, WIN, ETC, WEB)",
        required=True,
        enum=("IOS", "AND", "WIN", "ETC", "WEB"),
        example="ETC",
    ),
    Param("MobileApp", "서비스명 (어플명)", required=True, example="KOPA"),
    *paging_params(TOUR),
    *format_param(TOUR),
]
_FILTERS = [
    Param(
        "arrange",
        "정렬구분 (A 제목순, C 수정일순, D 생성일순; O/Q/R 대표이미지 있는 것만)",
        enum=("A", "C", "D", "O", "Q", "R"),
    ),
    Param(
        "contentTypeId",
        "관광타입 ID (12 관광지, 14 문화시설, 15 축제공연행사, 28 레포츠, 32 숙박, 38 쇼핑, 39 음식점)",
        enum=("12", "14", "15", "25", "28", "32", "38", "39"),
    ),
    Param("lDongRegnCd", "법정동 시도코드 (2자리, 법정동코드 앞 2자리)", example="11", pattern="^[0-9]{2}$"),
    Param("lDongSignguCd", "법정동 시군구코드 (3자리, 법정동코드 3~5번째 자리)", example="110", pattern="^[0-9]{3}$"),
    Param("lclsSystm1", "분류체계 대분류"),
    Param("lclsSystm2", "분류체계 중분류"),
    Param("lclsSystm3", "분류체계 소분류"),
]
_SITE_FIELDS = [
    Field("addr1", "주소"),
    Field("addr2", "상세주소"),
    Field("areacode", "지역코드 (구 체계, 미사용 예정)"),
    Field("cat1", "대분류 (구 체계)"),
    Field("cat2", "중분류 (구 체계)"),
    Field("cat3", "소분류 (구 체계)"),
    Field("contentid", "콘텐츠ID", example="126508"),
    Field("contenttypeid", "관광타입 ID", example="12"),
    Field("createdtime", "등록일"),
    Field("firstimage", "대표이미지 (원본)"),
    Field("firstimage2", "대표이미지 (썸네일)"),
    Field("cpyrhtDivCd", "저작권 유형"),
    Field("mapx", "GPS X좌표 (WGS84 경도)", example="126.9769930325"),
    Field("mapy", "GPS Y좌표 (WGS84 위도)", example="37.578822235"),
    Field("mlevel", "Map Level"),
    Field("modifiedtime", "수정일"),
    Field("sigungucode", "시군구코드 (구 체계, 미사용 예정)"),
    Field("tel", "전화번호"),
    Field("title", "콘텐츠명 (제목)"),
    Field("zipcode", "우편번호"),
    Field("lDongRegnCd", "법정동 시도코드"),
    Field("lDongSignguCd", "법정동 시군구코드"),
    Field("lclsSystm1", "분류체계 대분류"),
    Field("lclsSystm2", "분류체계 중분류"),
    Field("lclsSystm3", "분류체계 소분류"),
]

OPERATIONS = [
    Operation(
        TOUR,
        "KorService2",
        "ldongCode2",
        "법정동코드 조회",
        "TourAPI에서 사용하는 법정동 시도코드와 시군구코드 목록을 조회합니다. "
        "lDongRegnCd를 주면 해당 시도의 시군구 목록을 줍니다.",
        [
            *_COMMON,
            Param("lDongRegnCd", "법정동 시도코드 (2자리)", pattern="^[0-9]{2}$"),
            Param("lDongListYn", "법정동 전체 목록 조회 여부 (N 코드조회, Y 전체목록)", enum=("N", "Y")),
        ],
        [
            Field("code", "코드 (시도 2자리 또는 시군구 3자리)"),
            Field("name", "이름"),
            Field("rnum", "일련번호", "integer"),
            Field("lDongRegnCd", "법정동 시도코드"),
            Field("lDongRegnNm", "법정동 시도명"),
            Field("lDongSignguCd", "법정동 시군구코드"),
            Field("lDongSignguNm", "법정동 시군구명"),
        ],
        _ldong,
        intent="관광정보 지역코드 확인",
        retired=("KorService1",),
    ),
    Operation(
        TOUR,
        "KorService2",
        "areaBasedList2",
        "지역기반 관광정보 조회",
        "법정동 시도·시군구코드, 관광타입으로 관광지, 문화시설, 숙박, 음식점 목록을 조회합니다.",
        [*_COMMON, *_FILTERS, Param("modifiedtime", "콘텐츠 수정일 (YYYYMMDD)")],
        _SITE_FIELDS,
        _area,
        intent="지역의 관광지 목록 조회",
    ),
    Operation(
        TOUR,
        "KorService2",
        "locationBasedList2",
        "위치기반 관광정보 조회",
        "GPS 좌표(WGS84 경도 mapX, 위도 mapY)와 반경(m)으로 주변 관광정보를 거리순으로 조회합니다.",
        [
            *_COMMON,
            Param("mapX", "GPS X좌표 (WGS84 경도)", "number", required=True, example="126.981611"),
            Param("mapY", "GPS Y좌표 (WGS84 위도)", "number", required=True, example="37.568477"),
            Param("radius", "거리 반경 (m, 최대 20000)", "integer", required=True, example="2000"),
            *[p for p in _FILTERS if p.name != "arrange"],
            Param(
                "arrange",
                "정렬구분 (A 제목순, C 수정일순, D 생성일순, E 거리순)",
                enum=("A", "C", "D", "E", "O", "Q", "R", "S"),
            ),
        ],
        [*_SITE_FIELDS, Field("dist", "중심 좌표로부터 거리 (m)")],
        _location,
        intent="주변 관광지 찾기",
    ),
    Operation(
        TOUR,
        "KorService2",
        "searchKeyword2",
        "키워드 검색 조회",
        "키워드로 관광정보를 검색합니다. 한글 키워드는 URL 인코딩하여 전달합니다.",
        [
            *_COMMON,
            Param("keyword", "검색 요청할 키워드 (국문=인코딩 필요)", required=True, example="경복궁"),
            *_FILTERS,
        ],
        _SITE_FIELDS,
        _keyword,
        intent="'{keyword}' 관광정보 검색",
    ),
    Operation(
        TOUR,
        "KorService2",
        "detailCommon2",
        "공통정보 조회",
        "콘텐츠ID로 관광정보의 공통정보(제목, 주소, 좌표, 홈페이지, 개요)를 조회합니다.",
        [*_COMMON, Param("contentId", "콘텐츠ID", required=True, example="126508", pattern="^[0-9]+$")],
        [
            Field("contentid", "콘텐츠ID"),
            Field("contenttypeid", "관광타입 ID"),
            Field("title", "제목"),
            Field("homepage", "홈페이지 주소 (HTML)"),
            Field("tel", "전화번호"),
            Field("telname", "전화번호명"),
            Field("overview", "개요 (HTML)"),
            Field("addr1", "주소"),
            Field("addr2", "상세주소"),
            Field("zipcode", "우편번호"),
            Field("mapx", "GPS X좌표 (WGS84 경도)"),
            Field("mapy", "GPS Y좌표 (WGS84 위도)"),
            Field("mlevel", "Map Level"),
            Field("firstimage", "대표이미지"),
            Field("createdtime", "등록일"),
            Field("modifiedtime", "수정일"),
            Field("lDongRegnCd", "법정동 시도코드"),
            Field("lDongSignguCd", "법정동 시군구코드"),
            Field("lclsSystm1", "분류체계 대분류"),
            Field("lclsSystm2", "분류체계 중분류"),
            Field("lclsSystm3", "분류체계 소분류"),
        ],
        _common,
        paged=False,
        single=True,
        intent="관광지 상세 정보 확인",
    ),
    Operation(
        TOUR,
        "KorService2",
        "detailIntro2",
        "소개정보 조회",
        "콘텐츠ID와 관광타입ID로 이용시간, 휴무일, 주차, 체크인 시간 등 타입별 소개정보를 조회합니다.",
        [
            *_COMMON,
            Param("contentId", "콘텐츠ID", required=True, example="126508", pattern="^[0-9]+$"),
            Param(
                "contentTypeId",
                "관광타입 ID",
                required=True,
                example="12",
                enum=("12", "14", "15", "25", "28", "32", "38", "39"),
            ),
        ],
        [
            Field("contentid", "콘텐츠ID"),
            Field("contenttypeid", "관광타입 ID"),
            *[Field(k, f"소개정보 ({k})") for k in dict.fromkeys(k for v in _INTRO.values() for k in v)],
        ],
        _intro,
        paged=False,
        single=True,
        intent="관광지 이용시간과 휴무일 확인",
    ),
]
