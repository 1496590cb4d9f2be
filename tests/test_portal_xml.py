"""XML answers: data.go.kr-family services that answer only XML, with values inside <![CDATA[...]]>, and
the gateway's XML error envelope on HTTP 200 (`<OpenAPI_ServiceResponse><cmmMsgHeader><returnReasonCode>30`: the key
is not registered). End to end over a socket: registration (and what it understood of the XML response schema), a
call, the rows read out of CDATA, the total, a verified link, and the refused key blocking the API."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import Response

from execution.executor import Executor
from execution.judge import judge
from execution.limits import MemoryEconomy
from execution.result import Outcome
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import parse_with_report
from graph.registry import register
from tests.support.helpers import served
from tests.support.made_up import local_settings
from verification.runs import execute_run, new_run

KEY = "x0ml" + secrets.token_hex(20)
SECRET_NAME = "KOPA_APIKEY_XML_CANARY"
NAMES = ["한빛 & 푸른 <본관>", "새봄도서관", "가람도서관", "누리도서관", "다솜도서관"]
ROW = {
    "type": "object",
    "properties": {
        "libCode": {"type": "string", "description": "도서관 코드"},
        "libName": {"type": "string", "description": "도서관명"},
    },
}
DENIED = (
    '<?xml version="1.0" encoding="UTF-8"?><OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg>'
    "<returnAuthMsg>SERVICE_KEY_IS_NOT_REGISTERED_ERROR</returnAuthMsg><returnReasonCode>30</returnReasonCode>"
    "</cmmMsgHeader></OpenAPI_ServiceResponse>"
)


def _xml_ok(items: dict[str, Any]) -> dict[str, Any]:
    body = {
        "type": "object",
        "properties": {
            "header": {
                "type": "object",
                "properties": {"resultCode": {"type": "string"}, "resultMsg": {"type": "string"}},
            },
            "body": {
                "type": "object",
                "properties": {
                    "items": {"type": "object", "properties": {"item": items}},
                    "numOfRows": {"type": "integer"},
                    "pageNo": {"type": "integer"},
                    "totalCount": {"type": "integer"},
                },
            },
        },
    }
    schema = {"type": "object", "properties": {"response": body}}
    return {"200": {"description": "ok", "content": {"application/xml": {"schema": schema}}}}


def xml_doc(server: str) -> dict[str, Any]:
    key = {"name": "serviceKey", "in": "query", "required": True, "description": "공공데이터포털 인증키"}
    paging = [
        {"name": "pageNo", "in": "query", "schema": {"type": "integer", "example": 1}},
        {"name": "numOfRows", "in": "query", "schema": {"type": "integer", "example": 10}},
    ]
    code = {"name": "libCode", "in": "query", "required": True, "description": "도서관 코드 (예: L01)"}
    return {
        "openapi": "3.0.3",
        "info": {"title": "도서관 정보 (XML)", "version": "1"},
        "servers": [{"url": server}],
        "paths": {
            "/LibService/getLibList": {
                "get": {
                    "operationId": "getLibList",
                    "parameters": [key, *paging],
                    "responses": _xml_ok({"type": "array", "items": ROW}),
                }
            },
            "/LibService/getLibInfo": {
                "get": {
                    "operationId": "getLibInfo",
                    "parameters": [key, code],
                    "responses": _xml_ok(ROW),
                }
            },
        },
    }


def _page(rows: list[tuple[str, str]], total: int, page: int, size: int) -> str:
    items = "".join(
        f"<item><libCode><![CDATA[{c}]]></libCode><libName><![CDATA[{n}]]></libName></item>" for c, n in rows
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><response><header><resultCode>00</resultCode>'
        "<resultMsg>NORMAL SERVICE.</resultMsg></header><body>"
        f"<items>{items}</items><numOfRows>{size}</numOfRows><pageNo>{page}</pageNo>"
        f"<totalCount>{total}</totalCount></body></response>"
    )


def xml_portal() -> FastAPI:
    """An XML-only upstream: rows in CDATA (names with &, < and > in them), one row as a single <item>, and the
    gateway's XML refusal on HTTP 200 for a key it does not know."""
    app = FastAPI()
    rows = [(f"L{i:02d}", n) for i, n in enumerate(NAMES, 1)]

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/LibService/getLibList")
    def listing(request: Request, pageNo: int = 1, numOfRows: int = 10) -> Response:
        if request.query_params.get("serviceKey") != KEY:
            return Response(DENIED, media_type="text/xml")
        chunk = rows[(pageNo - 1) * numOfRows : pageNo * numOfRows]
        return Response(_page(chunk, len(rows), pageNo, numOfRows), media_type="text/xml;charset=UTF-8")

    @app.get("/LibService/getLibInfo")
    def info(request: Request, libCode: str = "") -> Response:
        if request.query_params.get("serviceKey") != KEY:
            return Response(DENIED, media_type="text/xml")
        found = [r for r in rows if r[0] == libCode]
        return Response(_page(found, len(found), 1, 10), media_type="text/xml;charset=UTF-8")

    return app


@pytest.fixture(scope="module")
def portal() -> Iterator[str]:
    with served(xml_portal()) as url:
        yield url


def test_cdata_values_and_the_xml_gateway_refusal_are_read() -> None:
    page = _page([("L01", NAMES[0]), ("L02", NAMES[1])], 5, 1, 2).encode()
    got = judge(200, page, "text/xml", envelope="plain", items_path="", declared_fields={"libCode", "libName"})
    assert (got.outcome, got.total) == (Outcome.OK, 5)
    assert got.items == [{"libCode": "L01", "libName": NAMES[0]}, {"libCode": "L02", "libName": NAMES[1]}]
    one = judge(200, _page([("L03", NAMES[2])], 1, 1, 10).encode(), "text/xml", envelope="plain", items_path="",
                declared_fields={"libCode"})  # fmt: skip
    assert one.items == [{"libCode": "L03", "libName": NAMES[2]}]  # one <item> is one row, not a row of wrappers
    refused = judge(200, DENIED.encode(), "text/xml", envelope="plain", items_path="", declared_fields={"libCode"})
    assert (refused.outcome, refused.code) == (Outcome.TRANSIENT, "30")


def test_an_xml_service_is_registered_called_read_and_verified(
    portal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_NAME, KEY)
    meta = RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME))
    _, _, report = parse_with_report(xml_doc(portal), meta)
    listing_r, info_r = report
    assert listing_r["key"]["in"] == "query" and listing_r["key"]["param"] == "serviceKey"
    assert listing_r["paging"]["kind"] == "page" and listing_r["paging"]["params"] == ["pageNo", "numOfRows"]
    assert listing_r["rows"]["path"] == "response.body.items.item[]"
    assert listing_r["total"]["path"] == "response.body.totalCount"
    assert listing_r["success"]["code"] == "response.header.resultCode"
    assert info_r["rows"]["path"] == "response.body.items.item[]" and listing_r["unresolved"] == []
    settings = local_settings(portal, tmp_path / "g.sqlite3")
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    api = register(store, settings, xml_doc(portal), meta).api
    tools = store.all_tools()
    listing = next(t for t in tools if t.url.endswith("getLibList"))
    info = next(t for t in tools if t.url.endswith("getLibInfo"))
    economy = MemoryEconomy()

    async def calls() -> list[Any]:
        ex = Executor(settings, economy, {api.id: api})
        try:
            return [await ex.call(listing, {"pageNo": 2, "numOfRows": 2}), await ex.call(info, {"libCode": "L01"})]
        finally:
            await ex.aclose()

    page, one = asyncio.run(calls())
    assert page.ok and [r["libName"] for r in page.items] == NAMES[2:4]
    assert (page.total, page.first) == (5, 3)  # rows 3-4 of 5, from the XML body's totalCount and pageNo
    assert one.ok and one.items == [{"libCode": "L01", "libName": NAMES[0]}]
    assert KEY not in page.url + one.url
    run = asyncio.run(execute_run(store, settings, new_run(), economy=economy))
    assert run.status == "completed"
    verified = store.list_links(status="verified", limit=100)[0]
    store.close()
    assert any(lk.source_field == "libCode" and lk.target_param == "query:libCode" for lk in verified), verified


def test_the_xml_refusal_on_http_200_blocks_the_api(
    portal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_NAME, "not-the-key-" + secrets.token_hex(8))
    settings = local_settings(portal, tmp_path / "g.sqlite3")
    api, tools, _ = parse_with_report(xml_doc(portal), RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME)))
    for t in tools:
        t.api_id = api.id

    async def calls() -> tuple[Any, Any, dict[str, str]]:
        ex = Executor(settings, MemoryEconomy(), {api.id: api})
        try:
            first = await ex.call(tools[0], {"pageNo": 1, "numOfRows": 10})
            second = await ex.call(tools[1], {"libCode": "L01"})
            return first, second, dict(ex.blocked_apis)
        finally:
            await ex.aclose()

    first, second, blocked = asyncio.run(calls())
    assert first.outcome == Outcome.TRANSIENT and first.code == "30" and "NOT_REGISTERED" in first.reason
    assert second.code == "blocked" and api.id in blocked and SECRET_NAME in blocked[api.id]
