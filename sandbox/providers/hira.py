"""건강보험심사평가원: 병원정보서비스, 의료기관별상세정보서비스, 약국정보서비스. HIRA codes are not 법정동 codes."""

from __future__ import annotations

from core.geo import haversine_m
from core.json_types import JsonObject
from sandbox.entities import Facility, rng_for
from sandbox.providers._util import as_float
from sandbox.spec import Field, Operation, Param, Provider, Request, Result, format_param, paging_params
from sandbox.world_tables import HIRA_SIDO, SIDO_SHORT

HIRA = Provider(
    key="B551182",
    title="건강보험심사평가원_병원정보서비스",
    org="건강보험심사평가원",
    format_param="_type",
    single_as_object=True,
)


def _row(f: Facility, dist: float | None) -> JsonObject:
    b = f.building
    row: JsonObject = {
        "addr": b.road_addr + (f", {b.bd_nm}" if b.bd_nm else ""),
        "clCd": f.cl_cd,
        "clCdNm": f.cl_nm,
        "emdongNm": b.region.umd_nm,
        "estbDd": f.estb,
        "postNo": b.zip_no,
        "sgguCd": f.sggu_cd,
        "sgguCdNm": f.sggu_nm,
        "sidoCd": HIRA_SIDO[b.adm_cd[:2]],
        "sidoCdNm": SIDO_SHORT[b.adm_cd[:2]],
        "telno": f.tel,
        "XPos": f"{b.lon:.10f}",
        "YPos": f"{b.lat:.10f}",
        "yadmNm": f.name,
        "ykiho": f.ykiho,
    }
    if not f.is_pharmacy:
        row.update(
            {
                "drTotCnt": f.doctors,
                "gdrCnt": max(0, f.doctors - 1),
                "intnCnt": 0,
                "resdntCnt": 0,
                "sdrCnt": 1 if f.doctors else 0,
                "hospUrl": None,
            }
        )
    if dist is not None:
        row["distance"] = round(dist, 2)
    return row


def _search(req: Request, pharmacy: bool) -> Result:
    p = req.params
    sido, sggu, emd, name = p.get("sidoCd", ""), p.get("sgguCd", ""), p.get("emdongNm", ""), p.get("yadmNm", "")
    cl, subj = p.get("clCd", ""), p.get("dgsbjtCd", "")
    point = None
    if p.get("xPos") and p.get("yPos"):
        point = (
            as_float(p["yPos"], "yPos"),
            as_float(p["xPos"], "xPos"),
            as_float(p.get("radius") or "3000", "radius"),
        )
    hits: list[tuple[float, Facility, float | None]] = []
    for f in req.world.facilities:
        b = f.building
        if f.is_pharmacy != pharmacy:
            continue
        if sido and sido != HIRA_SIDO[b.adm_cd[:2]]:
            continue
        if (sggu and sggu != f.sggu_cd) or (emd and emd != b.region.umd_nm) or (name and name not in f.name):
            continue
        if (cl and cl != f.cl_cd) or (subj and subj not in {c for c, _ in f.subjects}):
            continue
        dist = None
        if point:
            dist = haversine_m(point[0], point[1], b.lat, b.lon)
            if dist > point[2]:
                continue
        hits.append((dist if dist is not None else 0.0, f, dist))
    if point:
        hits.sort(key=lambda h: h[0])
    return Result([_row(f, d) for _, f, d in hits])


def _detail(req: Request) -> Result:
    f = req.world.facility_by_ykiho.get(req.params["ykiho"])
    if f is None or f.is_pharmacy:
        return Result([])
    rnd = rng_for(req.seed, "hira-detail", f.ykiho)
    close = rnd.choice(["1800", "1830", "1900"])
    return Result(
        [
            {
                "plcNm": f"{f.building.region.umd_nm}역",
                "plcDir": f"{rnd.randint(1, 8)}번 출구",
                "plcDist": f"{rnd.randint(1, 9) * 50}m",
                "parkQty": rnd.randint(0, 30),
                "parkXpnsYn": rnd.choice(["Y", "N"]),
                "emyDayYn": "Y" if f.cl_cd == "11" else "N",
                "emyNgtYn": "Y" if f.cl_cd == "11" else "N",
                "emyDayTelNo1": f.tel if f.cl_cd == "11" else None,
                "lunchWeek": "1300~1400",
                "rcvWeek": "0900~" + close,
                "rcvSat": "0900~1300",
                "trmtMonStart": "0900",
                "trmtMonEnd": close,
                "trmtTueStart": "0900",
                "trmtTueEnd": close,
                "trmtWedStart": "0900",
                "trmtWedEnd": close,
                "trmtThuStart": "0900",
                "trmtThuEnd": close,
                "trmtFriStart": "0900",
                "trmtFriEnd": close,
                "trmtSatStart": "0900",
                "trmtSatEnd": "1300",
                "noTrmtSun": "휴진",
                "noTrmtHoli": "휴진",
            }
        ]
    )


def _subjects(req: Request) -> Result:
    f = req.world.facility_by_ykiho.get(req.params["ykiho"])
    if f is None or f.is_pharmacy:
        return Result([])
    return Result([{"dgsbjtCd": c, "dgsbjtCdNm": n, "dgsbjtPrSdrCnt": 1, "cdiagDrCnt": 0} for c, n in f.subjects])


_KEY = Param("serviceKey", "공공데이터포털에서 발급받은 인증키", required=True)
_FILTERS = [
    Param(
        "sidoCd",
        "시도코드 (심평원 6자리 코드, 예: 110000 서울, 220000 인천, 250000 대전)",
        example="110000",
        pattern="^[0-9]{6}$",
    ),
    Param("sgguCd", "시군구코드 (심평원 6자리 코드)", example="110019", pattern="^[0-9]{6}$"),
    Param("emdongNm", "읍면동명 (예: 역삼동)", example="역삼동"),
    Param("yadmNm", "요양기관명 (병원명, 일부 일치)", example="내과"),
    Param("xPos", "x좌표 (WGS84 경도, 반경검색 시)", "number", example="127.0473"),
    Param("yPos", "y좌표 (WGS84 위도, 반경검색 시)", "number", example="37.5172"),
    Param("radius", "반경 (미터)", "integer", example="2000"),
]
_COMMON_OUT = [
    Field("addr", "주소"),
    Field("clCd", "종별코드"),
    Field("clCdNm", "종별코드명"),
    Field("emdongNm", "읍면동명"),
    Field("estbDd", "개설일자 (YYYYMMDD)"),
    Field("postNo", "우편번호"),
    Field("sgguCd", "시군구코드 (심평원)"),
    Field("sgguCdNm", "시군구명"),
    Field("sidoCd", "시도코드 (심평원)"),
    Field("sidoCdNm", "시도명"),
    Field("telno", "전화번호"),
    Field("XPos", "x좌표 (WGS84 경도)"),
    Field("YPos", "y좌표 (WGS84 위도)"),
    Field("yadmNm", "요양기관명"),
    Field("ykiho", "암호화된 요양기호"),
    Field("distance", "거리 (m)", "number"),
]

OPERATIONS = [
    Operation(
        HIRA,
        "hospInfoServicev2",
        "getHospBasisList",
        "병원기본목록 조회",
        "시도·시군구(심평원 코드), 읍면동, 병원명, 종별, 진료과목, 좌표 "
        "반경으로 병원 목록과 암호화된 요양기호(ykiho)를 조회합니다.",
        [
            _KEY,
            *paging_params(HIRA),
            *format_param(HIRA),
            *_FILTERS,
            Param("zipCd", "분류코드 (2010 종합병원, 2030 병원, 2070 의원 …)"),
            Param(
                "clCd",
                "종별코드 (01 상급종합, 11 종합병원, 21 병원, 31 의원, 51 치과의원, 93 한의원)",
                enum=("01", "11", "21", "28", "29", "31", "41", "51", "61", "71", "92", "93"),
            ),
            Param("dgsbjtCd", "진료과목코드 (01 내과, 11 소아청소년과, 13 이비인후과 …)"),
        ],
        [
            *_COMMON_OUT,
            Field("drTotCnt", "의사총수", "integer"),
            Field("gdrCnt", "일반의 인원수", "integer"),
            Field("intnCnt", "인턴 인원수", "integer"),
            Field("resdntCnt", "레지던트 인원수", "integer"),
            Field("sdrCnt", "전문의 인원수", "integer"),
            Field("hospUrl", "홈페이지", nullable=True),
        ],
        lambda req: _search(req, pharmacy=False),
        intent="근처 병원 찾기",
        retired=("hospInfoService1",),
    ),
    Operation(
        HIRA,
        "MadmDtlInfoService2.7",
        "getDtlInfo2.7",
        "의료기관별상세정보 세부정보 조회",
        "병원정보서비스에서 받은 암호화된 요양기호(ykiho)로 진료시간, 점심시간, 주차, 응급실 운영 정보를 조회합니다.",
        [_KEY, *format_param(HIRA), Param("ykiho", "암호화된 요양기호 (병원정보서비스 결과의 ykiho)", required=True)],
        [
            Field("plcNm", "교통편 위치명"),
            Field("plcDir", "교통편 방향"),
            Field("plcDist", "교통편 거리"),
            Field("parkQty", "주차 가능대수", "integer"),
            Field("parkXpnsYn", "주차 비용 부담여부"),
            Field("emyDayYn", "응급실 주간 운영여부"),
            Field("emyNgtYn", "응급실 야간 운영여부"),
            Field("emyDayTelNo1", "응급실 주간 전화번호", nullable=True),
            Field("lunchWeek", "점심시간 평일"),
            Field("rcvWeek", "접수시간 평일"),
            Field("rcvSat", "접수시간 토요일"),
            *[
                Field(f"trmt{d}{s}", f"진료 {'시작' if s == 'Start' else '종료'}시간 ({d})")
                for d in ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
                for s in ("Start", "End")
            ],
            Field("noTrmtSun", "일요일 휴진 안내"),
            Field("noTrmtHoli", "공휴일 휴진 안내"),
        ],
        _detail,
        paged=False,
        single=True,
        intent="병원 진료시간과 주차 정보 확인",
    ),
    Operation(
        HIRA,
        "MadmDtlInfoService2.7",
        "getDgsbjtInfo2.7",
        "의료기관별상세정보 진료과목 조회",
        "암호화된 요양기호(ykiho)로 병원의 진료과목과 과목별 전문의 수를 조회합니다.",
        [
            _KEY,
            *paging_params(HIRA),
            *format_param(HIRA),
            Param("ykiho", "암호화된 요양기호 (병원정보서비스 결과의 ykiho)", required=True),
        ],
        [
            Field("dgsbjtCd", "진료과목코드"),
            Field("dgsbjtCdNm", "진료과목명"),
            Field("dgsbjtPrSdrCnt", "과목별 전문의 수", "integer"),
            Field("cdiagDrCnt", "협진 의사 수", "integer"),
        ],
        _subjects,
        intent="병원 진료과목 확인",
    ),
    Operation(
        HIRA,
        "pharmacyInfoService",
        "getParmacyBasisList",
        "약국기본목록 조회",
        "시도·시군구(심평원 코드), 읍면동, 약국명, 좌표 반경으로 약국 목록을 조회합니다.",
        [_KEY, *paging_params(HIRA), *format_param(HIRA), *_FILTERS],
        _COMMON_OUT,
        lambda req: _search(req, pharmacy=True),
        intent="근처 약국 찾기",
    ),
]
