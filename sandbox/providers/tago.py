"""국토교통부 TAGO (국가대중교통정보센터): 버스 도착, 정류소, 노선 정보. cityCode is TAGO's own code."""

from __future__ import annotations

from core.geo import haversine_m
from core.json_types import JsonObject
from sandbox.entities import BusRoute, BusStop, rng_for
from sandbox.providers._util import as_float
from sandbox.spec import Field, Operation, Param, Provider, Request, Result, format_param, paging_params
from sandbox.world_tables import TAGO_CITY

TAGO = Provider(
    key="1613000",
    title="국토교통부_(TAGO)_버스정보",
    org="국토교통부",
    format_param="_type",
    success_msg="NORMAL SERVICE",
    single_as_object=True,
    digits_as_numbers=True,
)
STOP_RADIUS_M = 500.0


def _num(v: str) -> int | str:
    return int(v) if v.isdigit() else v


def _stop_row(s: BusStop, with_city: bool = False) -> JsonObject:
    row: JsonObject = {
        "gpslati": s.lat,
        "gpslong": s.lon,
        "nodeid": s.node_id,
        "nodenm": s.node_nm,
        "nodeno": s.node_no,
    }
    if with_city:
        row = {"citycode": int(s.city_code), **row}
    return row


def _route_row(r: BusRoute, detail: bool = False) -> JsonObject:
    row: JsonObject = {
        "endnodenm": r.stops[-1].node_nm,
        "endvehicletime": _num(r.end_time),
        "routeid": r.route_id,
        "routeno": _num(r.route_no),
        "routetp": r.route_tp,
        "startnodenm": r.stops[0].node_nm,
        "startvehicletime": _num(r.start_time),
    }
    if detail:
        row["intervaltime"] = r.interval
    return row


def _cities(req: Request) -> Result:
    return Result([{"citycode": int(code), "cityname": name} for code, name, _ in TAGO_CITY.values()])


def _stops_by_name(req: Request) -> Result:
    city = req.params["cityCode"]
    name, no = req.params.get("nodeNm", ""), req.params.get("nodeNo", "")
    return Result(
        [
            _stop_row(s)
            for s in req.world.bus_stops
            if s.city_code == city and (not name or name in s.node_nm) and (not no or str(s.node_no) == no)
        ]
    )


def _stops_near(req: Request) -> Result:
    lat, lon = as_float(req.params["gpsLati"], "gpsLati"), as_float(req.params["gpsLong"], "gpsLong")
    scored = sorted(((haversine_m(lat, lon, s.lat, s.lon), s) for s in req.world.bus_stops), key=lambda t: t[0])
    return Result([_stop_row(s, with_city=True) for d, s in scored if d <= STOP_RADIUS_M])


def _routes_via_stop(req: Request) -> Result:
    city, node = req.params["cityCode"], req.params["nodeid"]
    stop = req.world.stops_by_id.get(node)
    if stop is None or stop.city_code != city:
        return Result([])
    return Result(
        [
            {
                "routeid": r.route_id,
                "routeno": _num(r.route_no),
                "routetp": r.route_tp,
                "startnodenm": r.stops[0].node_nm,
                "endnodenm": r.stops[-1].node_nm,
            }
            for r in req.world.routes_by_stop.get(node, [])
        ]
    )


def _arrivals(req: Request) -> Result:
    city, node = req.params["cityCode"], req.params["nodeId"]
    only_route = req.params.get("routeId")
    stop = req.world.stops_by_id.get(node)
    if stop is None or stop.city_code != city:
        return Result([])
    minute = req.now.strftime("%Y%m%d%H%M")
    timed: list[tuple[int, JsonObject]] = []  # (seconds to arrival, row)
    for r in req.world.routes_by_stop.get(node, []):
        if only_route and r.route_id != only_route:
            continue
        rnd = rng_for(req.seed, "arr", node, r.route_id, minute)
        for _vehicle in range(rnd.choice([1, 1, 2])):
            cnt = rnd.randint(1, 12)
            arrtime = cnt * 90 + rnd.randint(0, 80)
            timed.append(
                (
                    arrtime,
                    {
                        "arrprevstationcnt": cnt,
                        "arrtime": arrtime,
                        "nodeid": node,
                        "nodenm": stop.node_nm,
                        "routeid": r.route_id,
                        "routeno": _num(r.route_no),
                        "routetp": r.route_tp,
                        "vehicletp": rnd.choice(["일반차량", "저상버스"]),
                    },
                )
            )
    timed.sort(key=lambda pair: pair[0])
    return Result([row for _, row in timed])


def _routes_by_no(req: Request) -> Result:
    city, no = req.params["cityCode"], req.params.get("routeNo", "")
    return Result([_route_row(r) for r in req.world.bus_routes if r.city_code == city and (not no or no in r.route_no)])


def _route_stops(req: Request) -> Result:
    r = req.world.route_by_id.get(req.params["routeId"])
    if r is None or r.city_code != req.params["cityCode"]:
        return Result([])
    half = len(r.stops) // 2
    return Result(
        [
            {**_stop_row(s), "nodeord": i + 1, "routeid": r.route_id, "updowncd": 0 if i < half else 1}
            for i, s in enumerate(r.stops)
        ]
    )


def _route_info(req: Request) -> Result:
    r = req.world.route_by_id.get(req.params["routeId"])
    if r is None or r.city_code != req.params["cityCode"]:
        return Result([])
    return Result([_route_row(r, detail=True)])


_KEY = Param("serviceKey", "공공데이터포털에서 발급받은 인증키", required=True)
_CITY = Param(
    "cityCode",
    "도시코드 (TAGO 도시코드, 도시코드 목록 조회 결과의 citycode)",
    required=True,
    example="25",
    pattern="^[0-9]{2,5}$",
)
_COMMON = [_KEY, *paging_params(TAGO), *format_param(TAGO)]
_STOP_FIELDS = [
    Field("gpslati", "정류소 Y좌표 (WGS84 위도)", "number"),
    Field("gpslong", "정류소 X좌표 (WGS84 경도)", "number"),
    Field("nodeid", "정류소ID"),
    Field("nodenm", "정류소명"),
    Field("nodeno", "정류소번호", "integer"),
]
_ROUTE_FIELDS = [
    Field("routeid", "노선ID"),
    Field("routeno", "노선번호"),
    Field("routetp", "노선유형"),
    Field("startnodenm", "기점"),
    Field("endnodenm", "종점"),
    Field("startvehicletime", "첫차시간"),
    Field("endvehicletime", "막차시간"),
]
_ARR_FIELDS = [
    Field("arrprevstationcnt", "도착예정버스 남은 정류장 수", "integer"),
    Field("arrtime", "도착예정버스 도착예상시간 (초)", "integer"),
    Field("nodeid", "정류소ID"),
    Field("nodenm", "정류소명"),
    Field("routeid", "노선ID"),
    Field("routeno", "노선번호"),
    Field("routetp", "노선유형"),
    Field("vehicletp", "도착예정버스 차량유형"),
]

OPERATIONS = [
    Operation(
        TAGO,
        "ArvlInfoInqireService",
        "getCtyCodeList",
        "도시코드 목록 조회",
        "버스 도착정보 서비스가 제공되는 도시의 TAGO 도시코드와 도시명을 조회합니다.",
        _COMMON,
        [Field("citycode", "도시코드", "integer"), Field("cityname", "도시명")],
        _cities,
        intent="버스 정보가 제공되는 도시 확인",
    ),
    Operation(
        TAGO,
        "BusSttnInfoInqireService",
        "getSttnNoList",
        "정류소번호 목록 조회",
        "도시코드와 정류소명 또는 정류소번호로 정류소ID, 정류소명, 좌표를 조회합니다.",
        [*_COMMON, _CITY, Param("nodeNm", "정류소명", example="주민센터"), Param("nodeNo", "정류소번호")],
        _STOP_FIELDS,
        _stops_by_name,
        intent="'{nodeNm}' 버스 정류소 찾기",
    ),
    Operation(
        TAGO,
        "BusSttnInfoInqireService",
        "getCrdntPrxmtSttnList",
        "좌표기반 근접정류소 목록 조회",
        "GPS 좌표(WGS84 위경도)를 기준으로 반경 500m 안의 정류소를 조회합니다.",
        [
            *_COMMON,
            Param("gpsLati", "WGS84 위도 좌표", "number", required=True, example="36.3504"),
            Param("gpsLong", "WGS84 경도 좌표", "number", required=True, example="127.3845"),
        ],
        [Field("citycode", "도시코드", "integer"), *_STOP_FIELDS],
        _stops_near,
        intent="근처 버스 정류소 찾기",
    ),
    Operation(
        TAGO,
        "BusSttnInfoInqireService",
        "getSttnThrghRouteList",
        "정류소별 경유노선 목록 조회",
        "도시코드와 정류소ID로 정류소를 경유하는 노선 목록을 조회합니다.",
        [*_COMMON, _CITY, Param("nodeid", "정류소ID", required=True, example="DJB8001793")],
        [
            Field("routeid", "노선ID"),
            Field("routeno", "노선번호"),
            Field("routetp", "노선유형"),
            Field("startnodenm", "기점"),
            Field("endnodenm", "종점"),
        ],
        _routes_via_stop,
        intent="정류소를 지나는 버스 노선 확인",
    ),
    Operation(
        TAGO,
        "ArvlInfoInqireService",
        "getSttnAcctoArvlPrearngeInfoList",
        "정류소별 도착예정정보 목록 조회",
        "도시코드와 정류소ID로 정류소에 도착 예정인 버스의 노선, 남은 정류장 수, 도착예상시간을 조회합니다.",
        [*_COMMON, _CITY, Param("nodeId", "정류소ID", required=True, example="DJB8001793")],
        _ARR_FIELDS,
        _arrivals,
        intent="정류소에 곧 도착하는 버스 확인",
    ),
    Operation(
        TAGO,
        "BusRouteInfoInqireService",
        "getRouteNoList",
        "노선번호 목록 조회",
        "도시코드와 노선번호로 노선ID, 노선유형, 기점·종점, 첫차·막차 시간을 조회합니다.",
        [*_COMMON, _CITY, Param("routeNo", "노선번호", example="102")],
        _ROUTE_FIELDS,
        _routes_by_no,
        intent="{routeNo}번 버스 노선 찾기",
    ),
    Operation(
        TAGO,
        "BusRouteInfoInqireService",
        "getRouteAcctoThrghSttnList",
        "노선별 경유정류소 목록 조회",
        "도시코드와 노선ID로 노선이 경유하는 정류소 목록과 순서를 조회합니다.",
        [*_COMMON, _CITY, Param("routeId", "노선ID", required=True, example="DJB30300002")],
        [
            *_STOP_FIELDS,
            Field("nodeord", "정류소순번", "integer"),
            Field("routeid", "노선ID"),
            Field("updowncd", "상하행구분코드 (0 상행, 1 하행)", "integer"),
        ],
        _route_stops,
        intent="버스 노선의 경유 정류소 확인",
    ),
    Operation(
        TAGO,
        "BusRouteInfoInqireService",
        "getRouteInfoIem",
        "노선정보항목 조회",
        "도시코드와 노선ID로 노선의 기본정보(기점, 종점, 배차간격, 첫차·막차 시간)를 조회합니다.",
        [*_COMMON, _CITY, Param("routeId", "노선ID", required=True, example="DJB30300002")],
        [*_ROUTE_FIELDS, Field("intervaltime", "배차간격 (분)", "integer")],
        _route_info,
        intent="버스 노선의 배차간격과 운행시간 확인",
    ),
]
