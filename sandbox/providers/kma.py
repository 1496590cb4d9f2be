"""기상청: 단기예보 (초단기실황, 초단기예보, 단기예보), 중기기온, 종관기상관측(ASOS) 일자료."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache

from core.geo import in_kma_grid
from core.json_types import JsonObject
from sandbox.entities import kma_cell_weather, rng_for
from sandbox.providers._util import as_int, parse_ymd
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
from sandbox.world_tables import ASOS_STATIONS, MID_TA_REGIONS

KMA = Provider(
    key="1360000",
    title="기상청_단기예보 ((구)_동네예보) 조회서비스",
    org="기상청",
    format_param="dataType",
    success_msg="NORMAL_SERVICE",
    empty="header_only",
    kma_datatype_in_body=True,
)
NO_DATA = ("03", "NO_DATA")
VILAGE_TIMES = ("0200", "0500", "0800", "1100", "1400", "1700", "2000", "2300")
#: Minutes after the hour when 초단기실황 becomes available (guides say 40).
NCST_OFFSET_MIN = 40
ASOS_GRID = {
    "108": (60, 127),
    "112": (55, 124),
    "133": (67, 100),
    "119": (60, 121),
    "143": (89, 90),
    "156": (58, 74),
    "159": (98, 76),
    "184": (53, 38),
}
MID_GRID = {
    "11B10101": (60, 127),
    "11B20201": (55, 124),
    "11C20401": (67, 100),
    "11B20601": (60, 121),
    "11H20201": (98, 76),
}


def _grid(req: Request) -> tuple[int, int]:
    nx, ny = as_int(req.params["nx"], "nx"), as_int(req.params["ny"], "ny")
    if not in_kma_grid(nx, ny):
        raise ProviderError("10", "INVALID_REQUEST_PARAMETER_ERROR")
    return nx, ny


def _base(req: Request) -> datetime:
    d = parse_ymd(req.params["base_date"])
    t = req.params["base_time"]
    if len(t) != 4 or not t.isdigit() or int(t[:2]) > 23 or int(t[2:]) > 59:
        raise ProviderError("10", "INVALID_REQUEST_PARAMETER_ERROR")
    return datetime(d.year, d.month, d.day, int(t[:2]), int(t[2:]), tzinfo=req.now.tzinfo)


def _fmt(v: float) -> str:
    return f"{v:g}" if v != int(v) else str(int(v))


def _pcp(mm: float) -> str:
    if mm <= 0:
        return "강수없음"
    if mm < 1:
        return "1mm 미만"
    if mm >= 50:
        return "50.0mm 이상"
    if mm >= 30:
        return "30.0~50.0mm"
    return f"{mm:.1f}mm"


def _ncst(req: Request) -> Result:
    nx, ny = _grid(req)
    base = _base(req).replace(minute=0)
    if base < req.now - timedelta(hours=24):
        raise ProviderError("10", "최근 1일 간의 자료만 제공합니다.")
    if req.now < base + timedelta(minutes=NCST_OFFSET_MIN):
        raise ProviderError(*NO_DATA)
    wx = kma_cell_weather(req.seed, nx, ny, base)
    bd, bt = base.strftime("%Y%m%d"), base.strftime("%H%M")
    values = {
        "PTY": _fmt(wx["PTY"]),
        "REH": _fmt(wx["REH"]),
        "RN1": _fmt(wx["RN"]),
        "T1H": _fmt(wx["T"]),
        "UUU": _fmt(wx["UUU"]),
        "VEC": _fmt(wx["VEC"]),
        "VVV": _fmt(wx["VVV"]),
        "WSD": _fmt(wx["WSD"]),
    }
    return Result(
        [{"baseDate": bd, "baseTime": bt, "category": k, "nx": nx, "ny": ny, "obsrValue": v} for k, v in values.items()]
    )


def _ultra_fcst(req: Request) -> Result:
    nx, ny = _grid(req)
    raw = _base(req)
    base = raw.replace(minute=30) if raw.minute >= 30 else (raw - timedelta(hours=1)).replace(minute=30)
    if base < req.now - timedelta(hours=24):
        raise ProviderError("10", "최근 1일 간의 자료만 제공합니다.")
    if req.now < base + timedelta(minutes=15):
        raise ProviderError(*NO_DATA)
    rows: list[JsonObject] = []
    cats = ("LGT", "PTY", "RN1", "SKY", "T1H", "REH", "UUU", "VVV", "VEC", "WSD")
    for cat in cats:
        for h in range(1, 7):
            t = (base + timedelta(hours=h)).replace(minute=0)
            wx = kma_cell_weather(req.seed, nx, ny, t)
            v = {
                "LGT": "0",
                "PTY": _fmt(wx["PTY"]),
                "RN1": _pcp(wx["RN"]),
                "SKY": _fmt(wx["SKY"]),
                "T1H": _fmt(wx["T"]),
                "REH": _fmt(wx["REH"]),
                "UUU": _fmt(wx["UUU"]),
                "VVV": _fmt(wx["VVV"]),
                "VEC": _fmt(wx["VEC"]),
                "WSD": _fmt(wx["WSD"]),
            }[cat]
            rows.append(
                {
                    "baseDate": base.strftime("%Y%m%d"),
                    "baseTime": base.strftime("%H%M"),
                    "category": cat,
                    "fcstDate": t.strftime("%Y%m%d"),
                    "fcstTime": t.strftime("%H%M"),
                    "fcstValue": v,
                    "nx": nx,
                    "ny": ny,
                }
            )
    return Result(rows)


@lru_cache(maxsize=2048)
def _vilage_rows(seed: int, nx: int, ny: int, base: datetime) -> tuple[JsonObject, ...]:
    rows: list[JsonObject] = []
    bd, bt = base.strftime("%Y%m%d"), base.strftime("%H%M")
    end_day = (base + timedelta(days=3 if base.hour < 17 else 4)).date()
    t = base + timedelta(hours=1)
    while t.date() <= end_day:
        wx = kma_cell_weather(seed, nx, ny, t)
        fd, ft = t.strftime("%Y%m%d"), t.strftime("%H%M")
        extended = (t.date() - base.date()).days >= 3
        if extended and t.hour % 3:
            t += timedelta(hours=1)
            continue
        cats = {
            "TMP": _fmt(wx["T"]),
            "UUU": _fmt(wx["UUU"]),
            "VVV": _fmt(wx["VVV"]),
            "VEC": _fmt(wx["VEC"]),
            "WSD": _fmt(wx["WSD"]),
            "SKY": _fmt(wx["SKY"]),
            "PTY": _fmt(wx["PTY"]),
            "POP": _fmt(wx["POP"]),
            "WAV": "0",
            "PCP": _pcp(wx["RN"]) if not extended else ("0" if wx["RN"] <= 0 else "1"),
            "REH": _fmt(wx["REH"]),
            "SNO": "적설없음" if not extended else "0",
        }
        if t.hour == 6:
            cats["TMN"] = f"{wx['T'] - 3:.1f}"
        if t.hour == 15:
            cats["TMX"] = f"{wx['T'] + 2:.1f}"
        for k, v in cats.items():
            rows.append(
                {
                    "baseDate": bd,
                    "baseTime": bt,
                    "category": k,
                    "fcstDate": fd,
                    "fcstTime": ft,
                    "fcstValue": v,
                    "nx": nx,
                    "ny": ny,
                }
            )
        t += timedelta(hours=1)
    return tuple(rows)


def _vilage(req: Request) -> Result:
    nx, ny = _grid(req)
    base = _base(req)
    if req.params["base_time"] not in VILAGE_TIMES:
        raise ProviderError(*NO_DATA)
    if base < req.now - timedelta(days=3):
        raise ProviderError("10", "최근 3일 간의 자료만 제공합니다.")
    if req.now < base + timedelta(minutes=10):
        raise ProviderError(*NO_DATA)
    return Result(list(_vilage_rows(req.seed, nx, ny, base)))


def _mid_ta(req: Request) -> Result:
    tm = req.params["tmFc"]
    if len(tm) != 12 or not tm.isdigit() or tm[8:] not in ("0600", "1800"):
        raise ProviderError("10", "INVALID_REQUEST_PARAMETER_ERROR")
    d = parse_ymd(tm[:8])
    issued = datetime(d.year, d.month, d.day, int(tm[8:10]), tzinfo=req.now.tzinfo)
    if issued > req.now:
        raise ProviderError(*NO_DATA)
    if issued < req.now - timedelta(hours=24):
        raise ProviderError("10", "최근 1일 간의 자료만 제공합니다.")
    reg = req.params["regId"]
    if reg not in MID_TA_REGIONS:
        raise ProviderError(*NO_DATA)
    nx, ny = MID_GRID[reg]
    row: JsonObject = {"regId": reg}
    for day in range(4, 11):
        noon = (issued + timedelta(days=day)).replace(hour=14)
        dawn = (issued + timedelta(days=day)).replace(hour=6)
        tmax = round(kma_cell_weather(req.seed, nx, ny, noon)["T"])
        tmin = round(kma_cell_weather(req.seed, nx, ny, dawn)["T"])
        tmin, tmax = min(tmin, tmax - 2), max(tmax, tmin + 2)
        row.update(
            {
                f"taMin{day}": tmin,
                f"taMin{day}Low": 1,
                f"taMin{day}High": 1,
                f"taMax{day}": tmax,
                f"taMax{day}Low": 1,
                f"taMax{day}High": 1,
            }
        )
    return Result([row])


def _asos_daily(req: Request) -> Result:
    p = req.params
    if p["dataCd"] != "ASOS" or p["dateCd"] != "DAY":
        raise ProviderError("10", "INVALID_REQUEST_PARAMETER_ERROR")
    start, end = parse_ymd(p["startDt"]), parse_ymd(p["endDt"])
    if end >= req.now.date():
        raise ProviderError("10", "전날 자료까지 제공됩니다.")
    if start > end or (end - start).days > 999:
        raise ProviderError("10", "INVALID_REQUEST_PARAMETER_ERROR")
    stn = p["stnIds"]
    if stn not in ASOS_STATIONS:
        raise ProviderError(*NO_DATA)
    nx, ny = ASOS_GRID[stn]
    rows = []
    day = start
    while day <= end:
        base = datetime(day.year, day.month, day.day, tzinfo=req.now.tzinfo)
        temps = [kma_cell_weather(req.seed, nx, ny, base + timedelta(hours=h))["T"] for h in (0, 6, 14, 20)]
        rnd = rng_for(req.seed, "asos", stn, day.isoformat())
        rain = sum(kma_cell_weather(req.seed, nx, ny, base + timedelta(hours=h))["RN"] for h in range(0, 24, 3))
        rows.append(
            {
                "stnId": stn,
                "stnNm": ASOS_STATIONS[stn][0],
                "tm": day.isoformat(),
                "avgTa": f"{sum(temps) / 4:.1f}",
                "minTa": f"{min(temps):.1f}",
                "minTaHrmt": "0612",
                "maxTa": f"{max(temps):.1f}",
                "maxTaHrmt": "1448",
                "sumRn": f"{rain:.1f}" if rain else "",
                "avgWs": f"{rnd.uniform(0.8, 4.5):.1f}",
                "avgRhm": f"{rnd.uniform(40, 90):.1f}",
                "sumSsHr": f"{rnd.uniform(0, 10):.1f}",
                "avgPs": f"{rnd.uniform(1005, 1030):.1f}",
            }
        )
        day += timedelta(days=1)
    return Result(rows)


_KEY = Param("serviceKey", "공공데이터포털에서 발급받은 인증키", required=True)
_GRID_PARAMS = [
    Param(
        "base_date", "발표일자 (YYYYMMDD)", required=True, example="20261015", pattern="^[0-9]{8}$", format="yyyymmdd"
    ),
    Param("base_time", "발표시각 (HHMM)", required=True, example="0500", pattern="^[0-9]{4}$", format="hhmm"),
    Param("nx", "예보지점 X 좌표 (기상청 격자, 위경도를 LCC 격자로 변환한 값)", "integer", required=True, example="60"),
    Param("ny", "예보지점 Y 좌표 (기상청 격자)", "integer", required=True, example="127"),
]
_FCST_FIELDS = [
    Field("baseDate", "발표일자"),
    Field("baseTime", "발표시각"),
    Field("category", "자료구분코드"),
    Field("fcstDate", "예보일자"),
    Field("fcstTime", "예보시각"),
    Field("fcstValue", "예보 값"),
    Field("nx", "예보지점 X 좌표", "integer"),
    Field("ny", "예보지점 Y 좌표", "integer"),
]

OPERATIONS = [
    Operation(
        KMA,
        "VilageFcstInfoService_2.0",
        "getUltraSrtNcst",
        "초단기실황조회",
        "실황정보를 조회하기 위해 발표일자, 발표시각, 예보지점 X, Y "
        "격자좌표로 기온, 강수량, 습도, 풍속 등 실황값을 조회합니다.",
        [_KEY, *paging_params(KMA, 1000), *format_param(KMA), *_GRID_PARAMS],
        [
            Field("baseDate", "발표일자"),
            Field("baseTime", "발표시각"),
            Field("category", "자료구분코드"),
            Field("nx", "예보지점 X 좌표", "integer"),
            Field("ny", "예보지점 Y 좌표", "integer"),
            Field("obsrValue", "실황 값"),
        ],
        _ncst,
        intent="현재 날씨(기온, 강수, 습도) 확인",
        retired=("VilageFcstInfoService",),
    ),
    Operation(
        KMA,
        "VilageFcstInfoService_2.0",
        "getUltraSrtFcst",
        "초단기예보조회",
        "초단기예보정보를 조회하기 위해 발표일자, 발표시각, 예보지점 X, Y 격자좌표로 향후 6시간 예보를 조회합니다.",
        [_KEY, *paging_params(KMA, 1000), *format_param(KMA), *_GRID_PARAMS],
        _FCST_FIELDS,
        _ultra_fcst,
        intent="앞으로 6시간 날씨 예보 확인",
    ),
    Operation(
        KMA,
        "VilageFcstInfoService_2.0",
        "getVilageFcst",
        "단기예보조회",
        "단기예보 정보를 조회하기 위해 발표일자, 발표시각(0200, 0500, … 2300), "
        "예보지점 X, Y 격자좌표로 기온, 강수확률, 하늘상태 등 예보를 조회합니다.",
        [_KEY, *paging_params(KMA, 1000), *format_param(KMA), *_GRID_PARAMS],
        _FCST_FIELDS,
        _vilage,
        intent="며칠간의 날씨 예보 확인",
    ),
    Operation(
        KMA,
        "MidFcstInfoService",
        "getMidTa",
        "중기기온조회",
        "예보구역코드와 발표시각(YYYYMMDD0600 또는 1800)으로 4일~10일 후 최저·최고기온 예보를 조회합니다.",
        [
            _KEY,
            *paging_params(KMA),
            *format_param(KMA),
            Param("regId", "예보구역코드 (예: 11B10101 서울)", required=True, example="11B10101"),
            Param(
                "tmFc",
                "발표시각 (YYYYMMDD0600 또는 YYYYMMDD1800, 최근 24시간)",
                required=True,
                example="202610150600",
                pattern="^[0-9]{8}(0600|1800)$",
            ),
        ],
        [
            Field("regId", "예보구역코드"),
            *[
                Field(
                    f"ta{k}{d}{s}",
                    f"{d}일 후 {'최저' if k == 'Min' else '최고'}기온"
                    f"{' 하한' if s == 'Low' else ' 상한' if s == 'High' else ''}",
                    "integer",
                )
                for d in range(4, 11)
                for k in ("Min", "Max")
                for s in ("", "Low", "High")
            ],
        ],
        _mid_ta,
        paged=False,
        intent="다음 주 최저·최고기온 확인",
    ),
    Operation(
        KMA,
        "AsosDalyInfoService",
        "getWthrDataList",
        "종관기상관측 일자료 조회",
        "종관기상관측(ASOS) 지점번호와 기간으로 일평균기온, 최저·최고기온, "
        "강수량 등 일자료를 조회합니다. 종료일은 전날까지입니다.",
        [
            _KEY,
            *paging_params(KMA),
            *format_param(KMA),
            Param("dataCd", "자료 분류 코드", required=True, enum=("ASOS",), example="ASOS"),
            Param("dateCd", "날짜 분류 코드", required=True, enum=("DAY",), example="DAY"),
            Param(
                "startDt",
                "조회 기간 시작일 (YYYYMMDD)",
                required=True,
                example="20261001",
                pattern="^[0-9]{8}$",
                format="yyyymmdd",
            ),
            Param(
                "endDt",
                "조회 기간 종료일 (YYYYMMDD, 전날까지)",
                required=True,
                example="20261010",
                pattern="^[0-9]{8}$",
                format="yyyymmdd",
            ),
            Param(
                "stnIds",
                "종관기상관측 지점 번호 (108 서울, 112 인천, 133 대전 …)",
                required=True,
                example="108",
                pattern="^[0-9]{2,3}$",
            ),
        ],
        [
            Field("stnId", "지점 번호"),
            Field("stnNm", "지점명"),
            Field("tm", "일시 (YYYY-MM-DD)"),
            Field("avgTa", "평균 기온 (°C)"),
            Field("minTa", "최저 기온"),
            Field("minTaHrmt", "최저 기온 시각"),
            Field("maxTa", "최고 기온"),
            Field("maxTaHrmt", "최고 기온 시각"),
            Field("sumRn", "일강수량 (mm)"),
            Field("avgWs", "평균 풍속"),
            Field("avgRhm", "평균 상대습도"),
            Field("sumSsHr", "합계 일조시간"),
            Field("avgPs", "평균 해면기압"),
        ],
        _asos_daily,
        intent="지난 기간의 관측 날씨 확인",
    ),
]
