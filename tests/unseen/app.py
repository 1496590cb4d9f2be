"""The unseen family's servers as one ASGI app (FastAPI): five services of four made-up agencies, each with its own
envelope and error style. Hosts in the documents are `*.unseen.example`; tests map them to this app.

    corp.unseen.example    /corpinfo/v2/search (XML <result><item>, all-optional filters, code 11),
                           /history (bare JSON list)
    odcloud.unseen.example /api/15083277/v1/uddi:pension (odcloud `data`, cond[사업자등록번호::EQ])
    adm.unseen.example     /admcode/v1/list (JSON {"response":{"item":[...]}}, opaque p1/p2),
                           /population (XML <response><item>)
    ocean.unseen.example   /khoa/obs/stations, /khoa/obs/tide (JSON {"result":{"data":[...]}}, codes "DT_0012")
    sea.unseen.example     /nifs/sst/v1 (key in `key`, station codes without the "DT_" prefix)
    culture.unseen.example /cultr/v1/fclty (data.go.kr-style JSON, 시도명 in the short form only, code 11 without a
                           filter), /cultr/v1/program (fcltyId + eventYm YYYYMM, both required)
    kostat.unseen.example  /sttst/v1/ctprvn, /sttst/v1/popltn (the agency's own province numbers under the standard
                           term names ctprvnCd/ctprvnNm that the culture service uses for legal-dong codes)
    astro.unseen.example   /calendar/v1/anniversaries (XML like KASI: solYear YYYY required, solMonth MM optional)
    openapi.city.unseen.example
                           /{KEY}/json/TideStationInfo/{START_INDEX}/{END_INDEX} (a city portal in the Seoul open-data
                           style: the key a path segment, index-range paging, `{"<service>": {"list_total_count",
                           "RESULT": {"CODE": "INFO-000"}, "row": [...]}}`, errors on HTTP 200: INFO-100 key, INFO-200
                           no data, ERROR-3xx parameters),
                           /{KEY}/json/TideStationDetail/{START_INDEX}/{END_INDEX}/{STN_ID} (NEIS style
                           `{"<service>": [{"head": [{"list_total_count"}, {"RESULT"}]}, {"row": [...]}]}`)
    data.road.unseen.example
                           /openapi/restinfo/restOperatorList (highway-corporation style `{"code": "SUCCESS", "count",
                           "list"}`, key in `key`, one matching row sent as an object, errors `{"code": "ERROR"}` on
                           HTTP 200)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any
from xml.sax.saxutils import escape

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.unseen.portals import add_portals
from tests.unseen.world import REGIONS, UnseenWorld, anniversaries, get_world, region_by_stat

KEY = "unseen-demo-key-0001"
Query = dict[str, str]
Handler = Callable[[Query], Response]


def _xml(root: str, rows: list[dict[str, Any]], head: dict[str, Any] | None = None) -> Response:
    parts = [f"<{k}>{escape(str(v))}</{k}>" for k, v in (head or {}).items()]
    for row in rows:
        parts.append("<item>" + "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in row.items()) + "</item>")
    body = f'<?xml version="1.0" encoding="UTF-8"?><{root}>{"".join(parts)}</{root}>'
    return Response(body, media_type="application/xml;charset=UTF-8")


def _key_error_xml() -> Response:
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg>'
        "<returnAuthMsg>SERVICE_KEY_IS_NOT_REGISTERED_ERROR</returnAuthMsg><returnReasonCode>30</returnReasonCode>"
        "</cmmMsgHeader></OpenAPI_ServiceResponse>"
    )
    return Response(body, media_type="application/xml;charset=UTF-8")


def _answer(body: Any, status_code: int = 200) -> Callable[[], Response]:
    """A fixed JSON answer (a service's wrong-key reply)."""
    return lambda: JSONResponse(body, status_code=status_code)


def _page(
    q: Query, rows: list[dict[str, Any]], size_name: str = "numOfRows", page_name: str = "pageNo"
) -> list[dict[str, Any]]:
    """The requested page of `rows` (size capped at 100; a malformed size or page gives the first 10)."""
    try:
        size = max(1, min(100, int(q.get(size_name, "10"))))
        page = max(1, int(q.get(page_name, "1")))
    except ValueError:
        size, page = 10, 1
    return rows[(page - 1) * size : page * size]


class _Keyed:
    """Registers GET routes on `app` that check the service key first: a request whose `key_param` is not `key`
    gets the route's own wrong-key reply; the handler sees only keyed requests, as a plain query dict."""

    def __init__(self, app: FastAPI, key: str) -> None:
        self.app, self.key = app, key

    def __call__(
        self, path: str, bad_key: Callable[[], Response] = _key_error_xml, key_param: str = "serviceKey"
    ) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            def endpoint(request: Request) -> Response:
                q = dict(request.query_params)
                if q.get(key_param) != self.key:
                    return bad_key()
                return handler(q)

            self.app.add_api_route(path, endpoint, methods=["GET"], name=handler.__name__)
            return handler

        return register


def _datagokr(rows: list[dict[str, Any]], code: str = "00", msg: str = "NORMAL SERVICE") -> JSONResponse:
    return JSONResponse(
        {
            "response": {
                "header": {"resultCode": code, "resultMsg": msg},
                "body": {"items": {"item": rows}, "totalCount": len(rows)},
            }
        }
    )


def _kostat(rows: list[dict[str, Any]], code: str = "00", msg: str = "NORMAL") -> JSONResponse:
    return JSONResponse({"header": {"resultCode": code, "resultMsg": msg}, "body": {"items": rows}})


def create_app(key: str = KEY) -> FastAPI:
    app = FastAPI(title="unseen family", openapi_url=None, docs_url=None, redoc_url=None)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    get, w = _Keyed(app, key), get_world()
    for service in (_corp, _pension, _adm, _ocean, _sea, _culture, _kostat_stats, _astro, _road):
        service(get, w)
    _city(app, key, w)
    add_portals(app, key, w)  # other portals' conventions, registered apart (tests/unseen/portal_harness.py)
    return app


# ------------------------------------------------------------------ corp.unseen.example
def _corp(get: _Keyed, w: UnseenWorld) -> None:
    @get("/corpinfo/v2/search")
    def corp_search(q: Query) -> Response:
        name, bzno = q.get("corpNm", "").strip(), q.get("bzno", "").strip()
        if not name and not bzno:
            return _xml(
                "result", [], {"resultCode": "11", "resultMsg": "검색조건(corpNm 또는 bzno) 중 하나는 필수입니다"}
            )
        # filters are OR-combined, as this provider documents
        hits = [c for c in w.companies if (name and name.replace("(주)", "") in c.name) or (bzno and c.bzno == bzno)]
        rows = [
            {
                "crno": c.crno,
                "bzno": c.bzno,
                "corpNm": c.name,
                "fndnDt": c.founded.isoformat(),
                "hdofcAddr": c.address,
                "admCd": c.adm_cd,
            }
            for c in hits
        ]
        return _xml("result", _page(q, rows), {"resultCode": "00", "resultMsg": "정상", "totalCount": len(rows)})

    @get("/corpinfo/v2/history", _answer({"error": {"code": "AUTH", "message": "인증키가 유효하지 않습니다"}}, 401))
    def corp_history(q: Query) -> Response:
        crno, base = q.get("crno", ""), q.get("baseDt", "")
        if not crno or not re.fullmatch(r"[0-9]{8}", base):
            return JSONResponse(
                {"error": {"code": "PARAM", "message": "crno와 baseDt(YYYYMMDD)는 필수입니다"}}, status_code=400
            )
        company = next((c for c in w.companies if c.crno == crno), None)
        try:
            until = datetime.strptime(base, "%Y%m%d").date()
        except ValueError:
            return JSONResponse(
                {"error": {"code": "PARAM", "message": "baseDt가 올바른 날짜가 아닙니다"}}, status_code=400
            )
        if company is None or until < company.founded:
            return JSONResponse([])
        events = [
            (company.founded, "설립"),
            (company.founded + timedelta(days=400), "본점 이전"),
            (company.founded + timedelta(days=2100), "대표이사 변경"),
        ]
        return JSONResponse(
            [{"crno": crno, "chgDt": d.strftime("%Y%m%d"), "chgCn": what} for d, what in events if d <= until]
        )


# ------------------------------------------------------------------ odcloud.unseen.example
def _pension(get: _Keyed, w: UnseenWorld) -> None:
    @get("/api/15083277/v1/uddi:pension", _answer({"code": -4, "msg": "등록되지 않은 인증키입니다"}, 401))
    def pension(q: Query) -> Response:
        rows = [
            {"사업장명": c.name, "사업자등록번호": c.bzno, "가입자수": c.members, "행정동코드": c.adm_cd}
            for c in w.companies
        ]
        want = q.get("cond[사업자등록번호::EQ]")
        if want is not None:
            rows = [r for r in rows if r["사업자등록번호"] == want]
        page = _page(q, rows, "perPage", "page")
        return JSONResponse(
            {
                "page": int(q.get("page", "1") or 1),
                "perPage": len(page),
                "totalCount": len(rows),
                "currentCount": len(page),
                "matchCount": len(rows),
                "data": page,
            }
        )


# ------------------------------------------------------------------ adm.unseen.example
def _adm(get: _Keyed, w: UnseenWorld) -> None:
    @get("/admcode/v1/list", _answer({"response": {"error": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR", "code": "30"}}))
    def adm_list(q: Query) -> Response:
        p1, p2 = q.get("p1", "").strip(), q.get("p2", "").strip()
        if p1 and p2:
            units = [u for u in w.units if u.sido == p1 and u.sgg == p2]
        elif p1:
            units = [u for u in w.units if u.sido == p1 and u.level != "읍면동"]
        else:
            units = [u for u in w.units if u.level == "시도"]
        rows = [
            {
                "admCd": u.adm_cd,
                "admNm": " ".join(x for x in (u.sido, u.sgg, u.emd) if x),
                "lvl": u.level,
                "sidoNm": u.sido,
                "sggNm": u.sgg,
            }
            for u in units
        ]
        return JSONResponse({"response": {"item": rows}})

    @get("/admcode/v1/population")
    def adm_population(q: Query) -> Response:
        code = q.get("admCd", "")
        if not re.fullmatch(r"[0-9]{10}", code):
            return _xml("response", [], {"error": "INVALID_REQUEST_PARAMETER_ERROR(admCd)"})
        unit = w.unit(code)
        if unit is None or unit.level == "시도":  # 시도 totals are published elsewhere
            return _xml("response", [])
        return _xml(
            "response",
            [
                {
                    "admCd": code,
                    "admNm": f"{unit.sido} {unit.sgg} {unit.emd}".strip(),
                    "totPopltn": unit.population,
                    "stdrYm": "202609",
                }
            ],
        )


# ------------------------------------------------------------------ ocean.unseen.example
def _ocean(get: _Keyed, w: UnseenWorld) -> None:
    bad_key = _answer({"result": {"error": "invalid key"}})

    @get("/khoa/obs/stations", bad_key, key_param="ServiceKey")
    def stations(q: Query) -> Response:
        return JSONResponse(
            {
                "result": {
                    "data": [
                        {
                            "obs_post_id": s.code,
                            "obs_post_name": s.name,
                            "obs_lat": f"{s.lat:.4f}",
                            "obs_lon": f"{s.lon:.4f}",
                        }
                        for s in w.stations
                    ]
                }
            }
        )

    @get("/khoa/obs/tide", bad_key, key_param="ServiceKey")
    def tide(q: Query) -> Response:
        station = next((s for s in w.stations if s.code == q.get("ObsCode")), None)
        day = q.get("Date", "")
        if station is None or not re.fullmatch(r"20[0-9]{6}", day):
            return JSONResponse({"result": {"error": "No search data"}})
        seed = sum(map(ord, station.code + day))
        return JSONResponse(
            {
                "result": {
                    "meta": {"obs_post_id": station.code, "obs_post_name": station.name},
                    "data": [
                        {
                            "record_time": f"{day[:4]}-{day[4:6]}-{day[6:]} {h:02d}:00",
                            "tide_level": str(80 + (seed * (h + 3)) % 170),
                        }
                        for h in range(0, 24, 6)
                    ],
                }
            }
        )


# ------------------------------------------------------------------ sea.unseen.example
def _sea(get: _Keyed, w: UnseenWorld) -> None:
    @get("/nifs/sst/v1", _answer({"header": {"resultCode": "99", "resultMsg": "KEY ERROR"}}), key_param="key")
    def sst(q: Query) -> Response:
        code = q.get("stnCd", "")
        station = next((s for s in w.stations if s.code == f"DT_{code}"), None)
        if station is None:
            return JSONResponse({"header": {"resultCode": "03", "resultMsg": "NODATA_ERROR"}, "body": {"items": []}})
        temp = 14 + (sum(map(ord, code)) % 70) / 10
        return JSONResponse(
            {
                "header": {"resultCode": "00", "resultMsg": "NORMAL"},
                "body": {
                    "items": [
                        {
                            "sta_cde": code,
                            "sta_nam_kor": station.name,
                            "wtr_tmp": f"{temp:.1f}",
                            "obs_dtm": date(2026, 10, 15).isoformat() + " 14:00",
                        }
                    ]
                },
            }
        )


# ------------------------------------------------------------------ culture.unseen.example
def _culture(get: _Keyed, w: UnseenWorld) -> None:
    @get("/cultr/v1/fclty")
    def facilities(q: Query) -> Response:
        sido, sgg, name = (q.get(k, "").strip() for k in ("sidoNm", "signguNm", "fcltyNm"))
        if not (sido or sgg or name):
            return _datagokr([], "11", "NO_MANDATORY_REQUEST_PARAMETERS_ERROR(sidoNm, signguNm, fcltyNm 중 하나 이상)")
        # 시도명 is the short form (서울, 강원) as AirKorea's sidoName; filters are AND-combined
        hits = [
            f
            for f in w.facilities
            if (not sido or f.region.short == sido) and (not sgg or f.district == sgg) and (not name or name in f.name)
        ]
        rows = [
            {
                "fcltyId": f.fclty_id,
                "fcltyNm": f.name,
                "ctprvnCd": f.region.legal,
                "ctprvnNm": f.region.name,
                "signguNm": f.district,
                "rdnmadr": f.address,
                "opnDe": f.opened.isoformat(),
            }
            for f in hits
        ]
        return _datagokr(_page(q, rows))

    @get("/cultr/v1/program")
    def programs(q: Query) -> Response:
        fid, ym = q.get("fcltyId", ""), q.get("eventYm", "")
        if not fid or not re.fullmatch(r"(19|20)[0-9]{2}(0[1-9]|1[0-2])", ym):
            return _datagokr([], "10", "INVALID_REQUEST_PARAMETER_ERROR(fcltyId, eventYm)")
        facility = next((f for f in w.facilities if f.fclty_id == fid), None)
        if facility is None or ym < facility.opened.strftime("%Y%m") or ym > "202612":
            return _datagokr([], "03", "NODATA_ERROR")
        seed = sum(map(ord, fid + ym))
        rows = [
            {
                "fcltyId": fid,
                "fcltyNm": facility.name,
                "eventYm": ym,
                "prgrmNm": f"{facility.name} {what}",
                "eventBgngDt": f"{ym}{10 + (seed * n) % 15:02d}{9 + (seed + n) % 10:02d}",
            }
            for n, what in ((1, "정기 강좌"), (2, "특별 전시"))
        ]
        return _datagokr(rows)


# ------------------------------------------------------------------ kostat.unseen.example
def _kostat_stats(get: _Keyed, w: UnseenWorld) -> None:
    bad_key = _answer({"header": {"resultCode": "30", "resultMsg": "SERVICE_KEY_IS_NOT_REGISTERED"}})

    @get("/sttst/v1/ctprvn", bad_key)
    def stat_regions(q: Query) -> Response:
        return _kostat([{"ctprvnCd": r.stat, "ctprvnNm": r.name} for r in sorted(REGIONS, key=lambda r: r.stat)])

    @get("/sttst/v1/popltn", bad_key)
    def stat_population(q: Query) -> Response:
        code, ym = q.get("ctprvnCd", ""), q.get("stdrYm", "")
        if not re.fullmatch(r"[0-9]{2}", code) or not re.fullmatch(r"(19|20)[0-9]{2}(0[1-9]|1[0-2])", ym):
            return _kostat([], "10", "INVALID_REQUEST_PARAMETER_ERROR(ctprvnCd 2자리, stdrYm YYYYMM)")
        region = region_by_stat(code)
        if region is None or not "199001" <= ym <= "202612":
            return _kostat([], "03", "NODATA_ERROR")
        seed = sum(map(ord, code + ym))
        return _kostat(
            [
                {
                    "ctprvnCd": code,
                    "ctprvnNm": region.name,
                    "stdrYm": ym,
                    "ageGrp": grp,
                    "popltnCnt": str(100_000 + (seed * (i + 7)) % 900_000),
                }
                for i, grp in enumerate(("0-19세", "20-64세", "65세 이상"))
            ]
        )


# ------------------------------------------------------------------ astro.unseen.example
def _astro(get: _Keyed, w: UnseenWorld) -> None:
    @get("/calendar/v1/anniversaries")
    def calendar(q: Query) -> Response:
        year, month = q.get("solYear", ""), q.get("solMonth", "")
        if not re.fullmatch(r"[0-9]{4}", year) or (month and not re.fullmatch(r"0[1-9]|1[0-2]", month)):
            return _xml("response", [], {"resultCode": "10", "resultMsg": "INVALID_REQUEST_PARAMETER_ERROR"})
        if not 1950 <= int(year) <= 2030:
            return _xml("response", [], {"resultCode": "00", "resultMsg": "NORMAL SERVICE.", "totalCount": 0})
        months = [int(month)] if month else list(range(1, 13))
        rows = [
            {"dateKind": "02", "dateName": name, "isHoliday": "N", "locdate": d.strftime("%Y%m%d"), "seq": 1}
            for m in months
            for d, name in anniversaries(int(year), m)
        ]
        return _xml(
            "response", _page(q, rows), {"resultCode": "00", "resultMsg": "NORMAL SERVICE.", "totalCount": len(rows)}
        )


# ------------------------------------------------------------------ openapi.city.unseen.example
def _city_result(code: str, message: str) -> JSONResponse:
    return JSONResponse({"RESULT": {"CODE": code, "MESSAGE": message}})


def _city_range(key: str, given: str, start: str, end: str) -> tuple[int, int] | JSONResponse:
    """The portal's checks, in its order: the key (a path segment), then the index range (1-based, at most 1000)."""
    if given != key:
        return _city_result(
            "INFO-100", "인증키가 유효하지 않습니다. 인증키가 없는 경우, 홈페이지에서 인증키를 신청하십시오."
        )
    if not (start.isdigit() and end.isdigit()) or int(start) < 1 or int(end) < int(start):
        return _city_result("ERROR-331", "요청시작위치 값을 확인하십시오. (요청인자 : START_INDEX)")
    if int(end) - int(start) >= 1000:
        return _city_result("ERROR-336", "데이터요청은 한번에 최대 1000건을 넘을 수 없습니다.")
    return int(start), int(end)


def _city(app: FastAPI, key: str, w: UnseenWorld) -> None:
    ok = {"CODE": "INFO-000", "MESSAGE": "정상 처리되었습니다"}

    # the 행정동 (this family's own codes) a station stands in: its city's first 읍면동, or the nearest city's
    city_of = {"통영": "통영시", "군산": "군산시", "마산": "창원시"}
    site = {
        s.code: next(u.adm_cd for u in w.units if u.level == "읍면동" and u.sgg == city_of.get(s.name, "강릉시"))
        for s in w.stations
    }

    def row(s: Any) -> dict[str, Any]:
        return {
            "STN_ID": s.code,
            "STN_NM": s.name,
            "ADSTRD_CD": site[s.code],
            "LAT": f"{s.lat:.4f}",
            "LOT": f"{s.lon:.4f}",
        }

    @app.get("/{given}/json/TideStationInfo/{start}/{end}")
    def station_info(given: str, start: str, end: str) -> Response:
        checked = _city_range(key, given, start, end)
        if isinstance(checked, Response):
            return checked
        first, last = checked
        rows = [row(s) for s in w.stations]
        if first > len(rows):
            return _city_result("INFO-200", "해당하는 데이터가 없습니다.")
        return JSONResponse(
            {"TideStationInfo": {"list_total_count": len(rows), "RESULT": ok, "row": rows[first - 1 : last]}}
        )

    @app.get("/{given}/json/TideStationDetail/{start}/{end}/{stn}")
    def station_detail(given: str, start: str, end: str, stn: str) -> Response:
        checked = _city_range(key, given, start, end)
        if isinstance(checked, Response):
            return checked
        station = next((s for s in w.stations if s.code == stn), None)
        if station is None or checked[0] > 1:
            return _city_result("INFO-200", "해당하는 데이터가 없습니다.")
        detail = {**row(station), "MGMT_ORG": "해양조사원 동해지원", "OBS_ITEM": "조위, 수온"}
        head = [{"list_total_count": 1}, {"RESULT": ok}]
        return JSONResponse({"TideStationDetail": [{"head": head}, {"row": [detail]}]})


# ------------------------------------------------------------------ data.road.unseen.example
def _road(get: _Keyed, w: UnseenWorld) -> None:
    bad_key = _answer({"code": "ERROR", "message": "인증키가 유효하지 않습니다.", "count": 0, "list": []})

    @get("/openapi/restinfo/restOperatorList", bad_key, key_param="key")
    def operators(q: Query) -> Response:
        rows = [
            {
                "svarCd": f"{100010 + 10 * i:06d}",
                "svarNm": f"{c.name.removeprefix('(주)')[:2]}휴게소",
                "routeNm": ("경부선", "영동선", "서해안선")[i % 3],
                "operBzno": c.bzno,
                "operNm": c.name,
            }
            for i, c in enumerate(w.companies[::3])
        ]
        want = q.get("svarCd", "").strip()
        if want and not re.fullmatch(r"[0-9]{6}", want):
            return JSONResponse({"code": "ERROR", "message": "svarCd는 6자리 숫자입니다.", "count": 0, "list": []})
        if want:
            rows = [r for r in rows if r["svarCd"] == want]
        page = _page(q, rows)
        # one row travels as an object, as the provider's XML-to-JSON conversion sends it
        listed: Any = page[0] if len(page) == 1 else page
        return JSONResponse({"code": "SUCCESS", "message": "인증키가 유효합니다.", "count": len(rows), "list": listed})
