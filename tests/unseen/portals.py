"""Services of the unseen family in the conventions of portals other than data.go.kr (issue 38), each a listing and
a detail tool over this family's own world, registered apart from the scored family (`tests/unseen/docs`) so its
figures stay comparable:

    museum.unseen.example  /exhibit/v1/list, /exhibit/v1/detail: XML only, every value in <![CDATA[...]]> (names
                           with `&` and `<>`), pageNo/numOfRows paging, resultCode 03/10 on HTTP 200
    corp.offset.unseen.example
                           /v1/corps (offset + limit, `{"totalCount", "offset", "limit", "items"}`), /v1/corp
    bus.unseen.example     /v1/stations (cursor tokens: the answer echoes the cursor it was sent as `cursor` and
                           gives the next one as `nextCursor`), /v1/station
    unit.unseen.example    /v1/units (page + size, `{"page", "hasNext", "content"}`: no total and no token, only a
                           flag that another page follows), /v1/unit
    kosis.unseen.example   /openapi/regions.do, /openapi/statisticsData.do (KOSIS: a bare JSON list of rows, errors
                           `{"err", "errMsg"}` on HTTP 200: 30 no data, 20 a missing input, 10/11 the key)
    data.road.unseen.example
                           /openapi/restinfo/restAreaList, /openapi/restinfo/restAreaDetail (highway-corporation
                           `{"code": "SUCCESS", "count", "list"}`, one row sent as an object, `{"code": "ERROR"}`
                           on HTTP 200 for a malformed code)

The city portal of the scored family (`docs/cityopen.json`: the key and an index range in the path, the Seoul and
NEIS envelopes) is registered with them by `tests/unseen/portal_harness.py`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from tests.unseen.world import REGIONS, UnseenWorld

Rows = list[dict[str, Any]]
HOSTS = [
    "museum.unseen.example",
    "corp.offset.unseen.example",
    "bus.unseen.example",
    "unit.unseen.example",
    "kosis.unseen.example",
]


def _keyed(request: Request, key: str, name: str) -> bool:
    return request.query_params.get(name) == key


def _int(value: str | None, default: int) -> int:
    return int(value) if value is not None and value.isdigit() else default


# ------------------------------------------------------------------ XML with CDATA
def _cdata_xml(code: str, msg: str, rows: Rows, total: int, page: int, size: int) -> Response:
    items = "".join("<item>" + "".join(f"<{k}><![CDATA[{v}]]></{k}>" for k, v in r.items()) + "</item>" for r in rows)
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><response><header>'
        f"<resultCode>{code}</resultCode><resultMsg>{msg}</resultMsg></header><body><items>{items}</items>"
        f"<numOfRows>{size}</numOfRows><pageNo>{page}</pageNo><totalCount>{total}</totalCount></body></response>"
    )
    return Response(body, media_type="text/xml;charset=UTF-8")


MUSEUM_PAGE = 5


def _museum(app: FastAPI, key: str, w: UnseenWorld) -> None:
    def row(f: Any) -> dict[str, Any]:
        # names and addresses as the provider stores them: with characters XML must not hold bare
        return {
            "exhbId": f"EX{f.fclty_id[2:]}",
            "exhbNm": f"{f.name} <상설> & 기획",
            "sidoNm": f.region.short,
            "opnDe": f.opened.strftime("%Y%m%d"),
        }

    rows = [row(f) for f in w.facilities]

    @app.get("/exhibit/v1/list")
    def exhibit_list(request: Request) -> Response:
        if not _keyed(request, key, "serviceKey"):
            return _cdata_xml("30", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR", [], 0, 1, 10)
        q = request.query_params
        # at most MUSEUM_PAGE rows a page, whatever was asked (a provider's cap): a province's total can exceed it
        page, size = max(1, _int(q.get("pageNo"), 1)), max(1, min(MUSEUM_PAGE, _int(q.get("numOfRows"), 10)))
        hits = [r for r in rows if not q.get("sidoNm") or r["sidoNm"] == q["sidoNm"]]
        return _cdata_xml("00", "NORMAL SERVICE.", hits[(page - 1) * size : page * size], len(hits), page, size)

    @app.get("/exhibit/v1/detail")
    def exhibit_detail(request: Request) -> Response:
        if not _keyed(request, key, "serviceKey"):
            return _cdata_xml("30", "SERVICE_KEY_IS_NOT_REGISTERED_ERROR", [], 0, 1, 10)
        code = request.query_params.get("exhbId", "")
        if not re.fullmatch(r"EX[0-9]{4}", code):
            return _cdata_xml("10", "INVALID_REQUEST_PARAMETER_ERROR(exhbId)", [], 0, 1, 10)
        seed = sum(map(ord, code))
        fee, closed = 1000 * (seed % 7), ("월요일", "화요일", "없음")[seed % 3]
        hit = [{**r, "admsFee": fee, "rstDe": closed} for r in rows if r["exhbId"] == code]
        if not hit:
            return _cdata_xml("03", "NODATA_ERROR", [], 0, 1, 10)
        return _cdata_xml("00", "NORMAL SERVICE.", hit, 1, 1, 10)


# ------------------------------------------------------------------ offset + limit
def _industry(name: str) -> str:
    """A company's industry, as its name's last word says it (물산, 해운, ...)."""
    return next((kind for word, kind in INDUSTRIES if name.endswith(word)), "기타")


INDUSTRIES = [("식품", "식료품 제조업"), ("건설", "건설업"), ("해운", "해상 운송업"), ("바이오", "의약품 제조업")]


def _offset(app: FastAPI, key: str, w: UnseenWorld) -> None:
    rows = [
        {"jurirno": c.crno, "corpNm": c.name, "indutyNm": _industry(c.name), "fndnDt": c.founded.isoformat()}
        for c in w.companies
    ]
    refused = {"status": 401, "message": "invalid apiKey", "items": []}

    @app.get("/v1/corps")
    def corps(request: Request) -> JSONResponse:
        if not _keyed(request, key, "apiKey"):
            return JSONResponse(refused, status_code=401)
        q = request.query_params
        offset, limit = _int(q.get("offset"), 0), max(1, min(50, _int(q.get("limit"), 10)))
        name = (q.get("corpNm") or "").replace("(주)", "").strip()
        industry = (q.get("indutyNm") or "").strip()
        hits = [r for r in rows if name in r["corpNm"] and industry in r["indutyNm"]]
        return JSONResponse(
            {"totalCount": len(hits), "offset": offset, "limit": limit, "items": hits[offset : offset + limit]}
        )

    @app.get("/v1/corp")
    def corp(request: Request) -> JSONResponse:
        if not _keyed(request, key, "apiKey"):
            return JSONResponse(refused, status_code=401)
        crno = request.query_params.get("jurirno", "")
        if not re.fullmatch(r"[0-9]{13}", crno):
            return JSONResponse({"status": 400, "message": "jurirno는 13자리 숫자입니다"}, status_code=400)
        company = next((c for c in w.companies if c.crno == crno), None)
        hit = [] if company is None else [{"jurirno": crno, "corpNm": company.name, "empCnt": company.members}]
        return JSONResponse({"totalCount": len(hit), "items": hit})


# ------------------------------------------------------------------ cursor tokens
PAGE = 2


def _cursor(app: FastAPI, key: str, w: UnseenWorld) -> None:
    rows = [{"stationId": s.code, "stationNm": s.name} for s in w.stations]

    def token(at: int) -> str:
        return f"c{at:03d}x" if at < len(rows) else ""

    @app.get("/v1/stations")
    def stations(request: Request) -> JSONResponse:
        if not _keyed(request, key, "apiKey"):
            return JSONResponse({"code": "ERROR", "message": "인증키가 유효하지 않습니다", "data": []})
        sent = request.query_params.get("cursor") or ""
        at = int(sent[1:4]) if re.fullmatch(r"c[0-9]{3}x", sent) else 0
        # the cursor this page was asked with is echoed; the next page's is `nextCursor`, null on the last page
        following = token(at + PAGE) or None
        return JSONResponse({"cursor": sent or None, "nextCursor": following, "data": rows[at : at + PAGE]})

    @app.get("/v1/station")
    def station(request: Request) -> JSONResponse:
        if not _keyed(request, key, "apiKey"):
            return JSONResponse({"code": "ERROR", "message": "인증키가 유효하지 않습니다", "data": []})
        code = request.query_params.get("stationId", "")
        hit = next((s for s in w.stations if s.code == code), None)
        data = (
            []
            if hit is None
            else [
                {
                    "stationId": code,
                    "stationNm": hit.name,
                    "arsId": f"{int(code[3:]) * 1111:05d}",
                    "routeCnt": 2 + int(code[3:]) % 5,
                    "stationTp": "해안 정류소",
                }
            ]
        )
        return JSONResponse({"cursor": None, "nextCursor": None, "data": data})


# ------------------------------------------------------------------ a hasNext flag, paged by number
def _has_next(app: FastAPI, key: str, w: UnseenWorld) -> None:
    rows = [
        {"admCd": u.adm_cd, "admNm": " ".join(x for x in (u.sido, u.sgg, u.emd) if x), "lvl": u.level}
        for u in w.units
        if u.level != "읍면동"
    ]

    @app.get("/v1/units")
    def units(request: Request) -> JSONResponse:
        if not _keyed(request, key, "serviceKey"):
            return JSONResponse({"resultCode": "30", "resultMsg": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR"})
        q = request.query_params
        page, size = max(1, _int(q.get("page"), 1)), max(1, min(20, _int(q.get("size"), 5)))
        chunk = rows[(page - 1) * size : page * size]
        return JSONResponse({"page": page, "hasNext": page * size < len(rows), "content": chunk})

    @app.get("/v1/unit")
    def unit(request: Request) -> JSONResponse:
        if not _keyed(request, key, "serviceKey"):
            return JSONResponse({"resultCode": "30", "resultMsg": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR"})
        found = w.unit(request.query_params.get("admCd", ""))
        content = [] if found is None else [{"admCd": found.adm_cd, "popltn": found.population, "lvl": found.level}]
        return JSONResponse({"page": 1, "hasNext": False, "content": content})


# ------------------------------------------------------------------ KOSIS
def _kosis(app: FastAPI, key: str, w: UnseenWorld) -> None:
    def err(code: str, msg: str) -> JSONResponse:
        return JSONResponse({"err": code, "errMsg": msg})

    @app.get("/openapi/regions.do")
    def regions(request: Request) -> JSONResponse:
        if not _keyed(request, key, "apiKey"):
            return err("10", "인증KEY값이 유효하지 않습니다.")
        return JSONResponse(
            [{"C1": r.stat, "C1_NM": r.name, "LVL": "1"} for r in sorted(REGIONS, key=lambda r: r.stat)]
        )

    @app.get("/openapi/statisticsData.do")
    def data(request: Request) -> JSONResponse:
        if not _keyed(request, key, "apiKey"):
            return err("10", "인증KEY값이 유효하지 않습니다.")
        code = request.query_params.get("objL1", "")
        if not code:
            return err("20", "필수요청변수값이 누락되었습니다.")
        region = next((r for r in REGIONS if r.stat == code), None)
        if region is None:
            return err("30", "데이터가 존재하지 않습니다.")
        seed = sum(map(ord, code))
        return JSONResponse(
            [
                {"C1": code, "C1_NM": region.name, "PRD_DE": str(year), "DT": str(90_000 + seed * (year - 2000))}
                for year in (2022, 2023, 2024)
            ]
        )


# ------------------------------------------------------------------ highway corporation
def _highway(app: FastAPI, key: str, w: UnseenWorld) -> None:
    rows = [
        {"svarCd": f"{200010 + 10 * i:06d}", "svarNm": f"{s.name}휴게소", "routeNm": ("동해선", "남해선")[i % 2]}
        for i, s in enumerate(w.stations)
    ]
    refused = {"code": "ERROR", "message": "인증키가 유효하지 않습니다.", "count": 0, "list": []}

    def answer(found: Rows, total: int) -> JSONResponse:
        # one row travels as an object, as the provider's XML-to-JSON conversion sends it
        listed: Any = found[0] if len(found) == 1 else found
        return JSONResponse({"code": "SUCCESS", "message": "인증키가 유효합니다.", "count": total, "list": listed})

    @app.get("/openapi/restinfo/restAreaList")
    def areas(request: Request) -> JSONResponse:
        if not _keyed(request, key, "key"):
            return JSONResponse(refused)
        q = request.query_params
        page, size = max(1, _int(q.get("pageNo"), 1)), max(1, min(100, _int(q.get("numOfRows"), 10)))
        hits = [r for r in rows if (q.get("svarNm") or "").strip() in r["svarNm"]]
        return answer(hits[(page - 1) * size : page * size], len(hits))

    @app.get("/openapi/restinfo/restAreaDetail")
    def area(request: Request) -> JSONResponse:
        if not _keyed(request, key, "key"):
            return JSONResponse(refused)
        code = request.query_params.get("svarCd", "")
        if not re.fullmatch(r"[0-9]{6}", code):
            return JSONResponse({"code": "ERROR", "message": "svarCd는 6자리 숫자입니다.", "count": 0, "list": []})
        found = [
            {**r, "oilCompany": "가람에너지", "parking": 120 + i} for i, r in enumerate(rows) if r["svarCd"] == code
        ]
        return answer(found, len(found))


SERVICES: list[Callable[[FastAPI, str, UnseenWorld], None]] = [_museum, _offset, _cursor, _has_next, _kosis, _highway]


def add_portals(app: FastAPI, key: str, w: UnseenWorld) -> None:
    for service in SERVICES:
        service(app, key, w)
