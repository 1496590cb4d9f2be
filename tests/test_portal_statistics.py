"""Statistics portals: odcloud's `{"page", "perPage", "totalCount", "currentCount", "matchCount", "data"}`
(the filtered `matchCount` is the query's total, a later page starts past 1) and KOSIS's bare JSON list of rows with
`{"err", "errMsg"}` errors on HTTP 200 in its own numbering (30 no data, 10/11 the key, 20/21 the inputs), read from
the schema at registration and confirmed on answers sent through the executor."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from core.settings import Settings
from execution.executor import Executor
from execution.judge import KEY_REFUSED, judge
from execution.limits import MemoryEconomy
from execution.result import Outcome
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import parse_with_report

SECRET_NAME = "KOPA_APIKEY_STAT_TEST"
ROWS = [
    {"PRD_DE": "2023", "C1": "11", "C1_NM": "서울특별시", "DT": "9386034", "UNIT_NM": "명"},
    {"PRD_DE": "2023", "C1": "21", "C1_NM": "부산광역시", "DT": "3293362", "UNIT_NM": "명"},
]
ROW = {"type": "object", "properties": {k: {"type": "string"} for k in ROWS[0]}}


def _judge(doc: Any) -> Any:
    body = json.dumps(doc, ensure_ascii=False).encode()
    return judge(200, body, "application/json", envelope="plain", items_path="", declared_fields={"C1", "DT"})


def test_odcloud_and_kosis_answers_give_rows_totals_and_errors() -> None:
    od = {"page": 2, "perPage": 10, "totalCount": 120, "currentCount": 2, "matchCount": 12, "data": ROWS}
    got = _judge(od)
    assert (got.outcome, got.total, got.first, got.items_path) == (Outcome.OK, 12, 11, "data[]")
    bare = _judge(ROWS)
    assert (bare.outcome, bare.items, bare.total) == (Outcome.OK, ROWS, None)
    nodata = _judge({"err": "30", "errMsg": "데이터가 존재하지 않습니다."})
    assert (nodata.outcome, nodata.code) == (Outcome.EMPTY, "30")
    missing = _judge({"err": "20", "errMsg": "필수요청변수값이 누락되었습니다."})
    assert (missing.outcome, missing.code) == (Outcome.INVALID, "20")  # before: read as an empty answer
    expired = _judge({"err": "11", "errMsg": "인증KEY의 기간이 만료되었습니다."})
    assert (expired.outcome, expired.code) == (Outcome.TRANSIENT, KEY_REFUSED)
    limited = _judge({"err": "40", "errMsg": "호출가능건수를 초과하였습니다."})
    assert limited.outcome == Outcome.TRANSIENT and limited.quota
    # a row that happens to hold `err` and `errMsg` among other fields is a row
    assert _judge([{"err": "1", "errMsg": "x", "C1": "11", "DT": "5"}]).ok


def _doc() -> dict[str, Any]:
    key = {"name": "apiKey", "in": "query", "required": True, "description": "인증키"}
    region = {"name": "objL1", "in": "query", "description": "분류값 (예: 11)"}
    od_props = {n: {"type": "integer"} for n in ("page", "perPage", "totalCount", "currentCount", "matchCount")}
    od_schema = {"type": "object", "properties": {**od_props, "data": {"type": "array", "items": ROW}}}
    paging = [{"name": "page", "in": "query"}, {"name": "perPage", "in": "query"}]

    def ok(schema: dict[str, Any]) -> dict[str, Any]:
        return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}

    return {
        "openapi": "3.0.3",
        "info": {"title": "통계", "version": "1"},
        "servers": [{"url": "https://stat.example.go.kr"}],
        "paths": {
            "/statisticsData": {
                "get": {
                    "operationId": "statData",
                    "parameters": [key, region],
                    "responses": ok({"type": "array", "items": ROW}),
                }
            },
            "/od/population": {
                "get": {"operationId": "odPop", "parameters": [key, *paging], "responses": ok(od_schema)},
            },
        },
    }


def test_registered_statistics_services_are_read_through_the_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    api, tools, report = parse_with_report(_doc(), RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME)))
    stat, od = (next(t for t in tools if t.url.endswith(e)) for e in ("/statisticsData", "/od/population"))
    said = {r["tool"]: r for r in report}
    assert said[od.name]["rows"]["path"] == "data[]" and said[od.name]["total"]["path"] == "matchCount"
    assert said[od.name]["paging"]["kind"] == "page" and said[stat.name]["key"]["param"] == "apiKey"
    for t in tools:
        t.api_id = api.id

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/od/population":
            od_doc = {"page": 2, "perPage": 2, "totalCount": 17, "currentCount": 2, "matchCount": 5, "data": ROWS}
            return httpx.Response(200, json=od_doc)
        if request.url.params.get("objL1") == "99":
            return httpx.Response(200, json={"err": "30", "errMsg": "데이터가 존재하지 않습니다."})
        return httpx.Response(200, json=[r for r in ROWS if r["C1"] == request.url.params.get("objL1", r["C1"])])

    monkeypatch.setenv(SECRET_NAME, "stat-key-0123456789")

    async def calls() -> list[Any]:
        settings = Settings(allowed_hosts=["stat.example.go.kr"])
        ex = Executor(settings, MemoryEconomy(), {api.id: api}, transport=httpx.MockTransport(answer))
        try:
            return [
                await ex.call(stat, {"objL1": "21"}),
                await ex.call(stat, {"objL1": "99"}),
                await ex.call(od, {"page": 2, "perPage": 2}),
            ]
        finally:
            await ex.aclose()

    one, none, page = asyncio.run(calls())
    assert one.ok and one.items == [ROWS[1]]
    assert (none.outcome, none.code) == (Outcome.EMPTY, "30")
    assert page.ok and (page.total, page.first) == (5, 3)
