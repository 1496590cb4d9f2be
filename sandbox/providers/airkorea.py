"""한국환경공단 에어코리아: 측정소정보 (목록, 근접측정소, TM 기준좌표) and 대기오염정보 (측정소별, 시도별 실시간)."""

from __future__ import annotations

from datetime import datetime, timedelta

from core.geo import convert
from core.json_types import JsonObject
from sandbox.entities import Station, rng_for
from sandbox.providers._util import as_float, invalid, page_args
from sandbox.spec import Field, Operation, Param, Provider, Request, Result, format_param, paging_params
from sandbox.world_tables import SIDO_SHORT

AIRKOREA = Provider(
    key="B552584",
    title="한국환경공단_에어코리아",
    org="한국환경공단",
    envelope="airkorea",
    format_param="returnType",
    success_msg="NORMAL_CODE",
    daily_quota=500,
)
SIDO_NAMES = (
    "전국",
    "서울",
    "부산",
    "대구",
    "인천",
    "광주",
    "대전",
    "울산",
    "경기",
    "강원",
    "충북",
    "충남",
    "전북",
    "전남",
    "경북",
    "경남",
    "제주",
    "세종",
)
#: Stations farther than this from the query point are not "nearby" (the real service answers nonsense there;
#: the sandbox answers nothing, so a wrong coordinate system fails visibly).
NEARBY_MAX_KM = 50.0


def _ver(req: Request) -> float:
    try:
        return float(req.params.get("ver") or 0)
    except ValueError:
        return 0.0


def _station_row(s: Station, ver: float) -> JsonObject:
    lat, lon = f"{s.lat:.6f}", f"{s.lon:.6f}"
    dm_x, dm_y = (lon, lat) if ver >= 1.1 else (lat, lon)
    return {
        "stationName": s.name,
        "addr": s.addr,
        "year": s.year,
        "mangName": s.mang_name,
        "item": "SO2, CO, O3, NO2, PM10, PM2.5",
        "dmX": dm_x,
        "dmY": dm_y,
    }


def _list(req: Request) -> Result:
    addr, name = req.params.get("addr", ""), req.params.get("stationName", "")
    ver = _ver(req)
    return Result(
        [
            _station_row(s, ver)
            for s in req.world.stations
            if (not addr or addr in s.addr) and (not name or name == s.name)
        ]
    )


def _nearby(req: Request) -> Result:
    x, y = as_float(req.params["tmX"], "tmX"), as_float(req.params["tmY"], "tmY")
    lon, lat = convert(x, y, "TM", "WGS84")
    return Result(
        [
            {"stationName": s.name, "addr": s.addr, "tm": round(d, 1)}
            for s, d in req.world.nearest_stations(lat, lon, 3, NEARBY_MAX_KM)
        ]
    )


def _tm_std(req: Request) -> Result:
    name = req.params["umdName"].strip()
    return Result(
        [
            {
                "sidoName": r.sido_nm,
                "sggName": r.sgg_nm,
                "umdName": r.umd_nm,
                "tmX": f"{r.tm_x:.6f}",
                "tmY": f"{r.tm_y:.6f}",
            }
            for r in req.world.regions
            if r.level == "umd" and r.umd_nm == name
        ]
    )


def _latest_hour(now: datetime) -> datetime:
    t = now.replace(minute=0, second=0, microsecond=0)
    return t if now.minute >= 15 else t - timedelta(hours=1)


def _grade(v: float, cuts: tuple[float, float, float]) -> str:
    return str(1 + sum(v > c for c in cuts))


def measurement(seed: int, s: Station, t: datetime, ver: float) -> JsonObject:
    rnd = rng_for(seed, "air", s.name, s.addr, t.strftime("%Y%m%d%H"))
    missing = rnd.random() < 0.03
    pm10 = rnd.randint(8, 95)
    pm25 = max(3, int(pm10 * rnd.uniform(0.35, 0.7)))
    o3, no2 = round(rnd.uniform(0.005, 0.07), 3), round(rnd.uniform(0.006, 0.05), 3)
    row: JsonObject = {
        "dataTime": t.strftime("%Y-%m-%d %H:%M"),
        "so2Value": f"{rnd.uniform(0.001, 0.006):.3f}",
        "coValue": f"{rnd.uniform(0.2, 0.9):.1f}",
        "o3Value": f"{o3:.3f}",
        "no2Value": f"{no2:.3f}",
        "pm10Value": "-" if missing else str(pm10),
        "khaiValue": "-" if missing else str(40 + pm10 // 2),
        "khaiGrade": None if missing else _grade(pm10, (30, 80, 150)),
        "so2Grade": "1",
        "coGrade": "1",
        "o3Grade": _grade(o3, (0.03, 0.09, 0.15)),
        "no2Grade": _grade(no2, (0.03, 0.06, 0.2)),
        "pm10Grade": None if missing else _grade(pm10, (30, 80, 150)),
        "so2Flag": None,
        "coFlag": None,
        "o3Flag": None,
        "no2Flag": None,
        "pm10Flag": "통신장애" if missing else None,
    }
    if ver >= 1.0:
        row.update(
            {
                "pm25Value": "-" if missing else str(pm25),
                "pm25Grade": None if missing else _grade(pm25, (15, 35, 75)),
                "pm25Flag": "통신장애" if missing else None,
            }
        )
    if ver >= 1.1:
        row.update({"pm10Value24": str(pm10 + rnd.randint(-5, 5)), "pm25Value24": str(pm25 + rnd.randint(-3, 3))})
    if ver >= 1.2:
        row["mangName"] = s.mang_name
    if ver >= 1.3:
        row.update({"pm10Grade1h": _grade(pm10, (30, 80, 150)), "pm25Grade1h": _grade(pm25, (15, 35, 75))})
    return row


def _by_station(req: Request) -> Result:
    name = req.params["stationName"].strip()
    term = req.params.get("dataTerm", "DAILY").upper()
    hours = {"DAILY": 24, "MONTH": 24 * 30, "3MONTH": 24 * 90}.get(term)
    if hours is None:
        raise invalid()
    station = next((s for s in req.world.stations if s.name == name), None)
    if station is None:
        return Result([], total=0)
    page, rows = page_args(req)
    latest = _latest_hour(req.now)
    ver = _ver(req)
    start = (page - 1) * rows
    items = [
        measurement(req.seed, station, latest - timedelta(hours=i), ver) for i in range(start, min(hours, start + rows))
    ]
    return Result(items, total=hours)


def _by_sido(req: Request) -> Result:
    sido = req.params["sidoName"].strip()
    if sido not in SIDO_NAMES:
        return Result([])
    ver, latest = _ver(req), _latest_hour(req.now)
    out = []
    for s in req.world.stations:
        if sido == "전국" or s.sido_short == sido:
            row = measurement(req.seed, s, latest, ver)
            out.append({"stationName": s.name, "sidoName": s.sido_short, "mangName": s.mang_name, **row})
    return Result(out)


_KEY = Param("serviceKey", "공공데이터포털에서 발급받은 인증키", required=True)
_VER = Param(
    "ver",
    "오퍼레이션 버전 (1.0 PM2.5 추가, 1.1 24시간 이동평균, 1.2 측정망 정보, 1.3 1시간 등급)",
    enum=("1.0", "1.1", "1.2", "1.3"),
)
_MEASURE_FIELDS = [
    Field("dataTime", "측정일 (YYYY-MM-DD HH:MM)"),
    Field("mangName", "측정망 정보"),
    Field("so2Value", "아황산가스 농도 (ppm)"),
    Field("coValue", "일산화탄소 농도 (ppm)"),
    Field("o3Value", "오존 농도 (ppm)"),
    Field("no2Value", "이산화질소 농도 (ppm)"),
    Field("pm10Value", "미세먼지(PM10) 농도 (㎍/㎥, 결측 '-')"),
    Field("pm10Value24", "미세먼지 24시간 예측이동농도"),
    Field("pm25Value", "초미세먼지(PM2.5) 농도 (㎍/㎥)"),
    Field("pm25Value24", "초미세먼지 24시간 예측이동농도"),
    Field("khaiValue", "통합대기환경수치"),
    Field("khaiGrade", "통합대기환경지수", nullable=True),
    Field("so2Grade", "아황산가스 지수"),
    Field("coGrade", "일산화탄소 지수"),
    Field("o3Grade", "오존 지수"),
    Field("no2Grade", "이산화질소 지수"),
    Field("pm10Grade", "미세먼지 24시간 등급", nullable=True),
    Field("pm25Grade", "초미세먼지 24시간 등급", nullable=True),
    Field("pm10Grade1h", "미세먼지 1시간 등급"),
    Field("pm25Grade1h", "초미세먼지 1시간 등급"),
    Field("so2Flag", "측정자료 상태정보", nullable=True),
    Field("coFlag", "측정자료 상태정보", nullable=True),
    Field("o3Flag", "측정자료 상태정보", nullable=True),
    Field("no2Flag", "측정자료 상태정보", nullable=True),
    Field("pm10Flag", "측정자료 상태정보", nullable=True),
    Field("pm25Flag", "측정자료 상태정보", nullable=True),
]

OPERATIONS = [
    Operation(
        AIRKOREA,
        "MsrstnInfoInqireSvc",
        "getMsrstnList",
        "측정소 목록 조회",
        "주소 또는 측정소명으로 대기질 측정소 목록(측정소명, 주소, 측정망, 측정항목, 좌표)을 조회합니다.",
        [
            _KEY,
            *format_param(AIRKOREA),
            *paging_params(AIRKOREA),
            Param("addr", "주소 (예: 서울, 서울 종로구)", example="서울"),
            Param("stationName", "측정소명 (예: 종로구)", example="종로구"),
            _VER,
        ],
        [
            Field("stationName", "측정소명"),
            Field("addr", "측정소 주소"),
            Field("year", "설치년도"),
            Field("mangName", "측정망"),
            Field("item", "측정항목"),
            Field("dmX", "측정소 위도 (ver 1.1 이상에서는 경도)"),
            Field("dmY", "측정소 경도 (ver 1.1 이상에서는 위도)"),
        ],
        _list,
        intent="대기질 측정소 목록 확인",
    ),
    Operation(
        AIRKOREA,
        "MsrstnInfoInqireSvc",
        "getNearbyMsrstnList",
        "근접측정소 목록 조회",
        "TM 좌표(중부원점, EPSG:5181)를 입력하여 가까운 측정소 최대 "
        "3곳과 거리(km)를 조회합니다. 위경도가 아닌 TM 좌표를 입력해야 합니다.",
        [
            _KEY,
            *format_param(AIRKOREA),
            Param("tmX", "TM_X 좌표 (중부원점 TM, 미터)", "number", required=True, example="198056.37"),
            Param("tmY", "TM_Y 좌표 (중부원점 TM, 미터)", "number", required=True, example="451885.03"),
            _VER,
        ],
        [
            Field("stationName", "측정소명"),
            Field("addr", "측정소 주소"),
            Field("tm", "요청 위치와의 거리 (km)", "number"),
        ],
        _nearby,
        intent="가장 가까운 대기질 측정소 찾기",
    ),
    Operation(
        AIRKOREA,
        "MsrstnInfoInqireSvc",
        "getTMStdrCrdnt",
        "TM 기준좌표 조회",
        "읍면동명으로 해당 읍면동의 TM 기준좌표(중부원점)를 조회합니다.",
        [
            _KEY,
            *format_param(AIRKOREA),
            *paging_params(AIRKOREA),
            Param("umdName", "읍면동명 (예: 역삼동)", required=True, example="혜화동"),
        ],
        [
            Field("sidoName", "시도 이름"),
            Field("sggName", "시군구 이름"),
            Field("umdName", "읍면동 이름"),
            Field("tmX", "TM_X 좌표"),
            Field("tmY", "TM_Y 좌표"),
        ],
        _tm_std,
        intent="{umdName}의 TM 좌표 확인",
    ),
    Operation(
        AIRKOREA,
        "ArpltnInforInqireSvc",
        "getMsrstnAcctoRltmMesureDnsty",
        "측정소별 실시간 측정정보 조회",
        "측정소명과 측정기간으로 미세먼지, 초미세먼지, 오존 등 실시간 대기오염 측정정보를 조회합니다.",
        [
            _KEY,
            *format_param(AIRKOREA),
            *paging_params(AIRKOREA),
            Param("stationName", "측정소명 (예: 종로구)", required=True, example="종로구"),
            Param(
                "dataTerm",
                "요청 데이터기간 (DAILY 1일, MONTH 1개월, 3MONTH 3개월)",
                required=True,
                enum=("DAILY", "MONTH", "3MONTH"),
                example="DAILY",
            ),
            _VER,
        ],
        _MEASURE_FIELDS,
        _by_station,
        intent="{stationName} 측정소의 미세먼지 농도 확인",
    ),
    Operation(
        AIRKOREA,
        "ArpltnInforInqireSvc",
        "getCtprvnRltmMesureDnsty",
        "시도별 실시간 측정정보 조회",
        "시도명(서울, 인천, 대전 등 약칭)으로 시도 내 측정소별 실시간 대기오염 측정정보를 조회합니다.",
        [
            _KEY,
            *format_param(AIRKOREA),
            *paging_params(AIRKOREA),
            Param(
                "sidoName",
                "시도 이름 (전국, 서울, 부산, 대구, 인천, 광주, 대전, 울산, "
                "경기, 강원, 충북, 충남, 전북, 전남, 경북, 경남, 제주, 세종)",
                required=True,
                enum=SIDO_NAMES,
                example="서울",
            ),
            _VER,
        ],
        [Field("stationName", "측정소명"), Field("sidoName", "시도명"), *_MEASURE_FIELDS],
        _by_sido,
        intent="{sidoName} 지역 실시간 대기질 확인",
    ),
]

__all__ = ["OPERATIONS", "SIDO_SHORT", "measurement"]
