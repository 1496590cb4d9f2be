"""Offset + limit paging: a tool paged by `offset`/`limit` is described as such by graph.envelopes (the
one description the registration report and the view read), and a later page's rows are placed where the call asked
for them (offset 10 starts at row 11), so the view says "rows 11-15 of 23". End to end over a socket: registration,
a call, rows, total, position, and a verified link from the listing into a detail tool."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from execution.executor import Executor
from execution.limits import MemoryEconomy
from execution.view import narrowing, view_object
from graph import envelopes
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import parse_with_report
from graph.registry import register
from tests.support.helpers import served
from tests.support.made_up import local_settings
from verification.runs import execute_run, new_run

SECRET_NAME = "KOPA_APIKEY_PARK_TEST"
KEY = "park-key-0123456789"
SYLLABLES = "가나다라마바사아자차카타파하거너더러머버서어저"
PARKS = [(f"P{i:03d}", f"{n}공원") for i, n in enumerate(SYLLABLES, 1)]
ROW = {
    "type": "object",
    "properties": {"parkId": {"type": "string", "description": "공원 ID"}, "parkNm": {"type": "string"}},
}


def _ok(listing: bool) -> dict[str, Any]:
    props: dict[str, Any] = {"items": {"type": "array", "items": ROW}}
    if listing:
        props |= {"totalCount": {"type": "integer"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}}
    schema = {"type": "object", "properties": props}
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def offset_doc(server: str) -> dict[str, Any]:
    key = {"name": "apiKey", "in": "query", "required": True, "description": "인증키"}
    paging = [
        {"name": "offset", "in": "query", "schema": {"type": "integer", "example": 0}},
        {"name": "limit", "in": "query", "schema": {"type": "integer", "example": 5}},
    ]
    park = {"name": "parkId", "in": "query", "required": True, "description": "공원 ID (예: P001)"}
    return {
        "openapi": "3.0.3",
        "info": {"title": "공원 (offset)", "version": "1"},
        "servers": [{"url": server}],
        "paths": {
            "/parks": {"get": {"operationId": "parkList", "parameters": [key, *paging], "responses": _ok(True)}},
            "/park": {"get": {"operationId": "parkInfo", "parameters": [key, park], "responses": _ok(False)}},
        },
    }


def offset_portal() -> FastAPI:
    app = FastAPI()
    rows = [{"parkId": c, "parkNm": n} for c, n in PARKS]

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/parks")
    def parks(apiKey: str = "", offset: int = 0, limit: int = 5) -> JSONResponse:
        if apiKey != KEY:
            return JSONResponse({"code": "ERROR", "message": "인증키가 유효하지 않습니다", "items": []})
        page = rows[offset : offset + limit]
        return JSONResponse({"totalCount": len(rows), "offset": offset, "limit": limit, "items": page})

    @app.get("/park")
    def park(apiKey: str = "", parkId: str = "") -> JSONResponse:
        if apiKey != KEY:
            return JSONResponse({"code": "ERROR", "message": "인증키가 유효하지 않습니다", "items": []})
        return JSONResponse({"items": [r for r in rows if r["parkId"] == parkId]})

    return app


@pytest.fixture(scope="module")
def portal() -> Iterator[str]:
    with served(offset_portal()) as url:
        yield url


def test_offsets_and_start_rows_give_the_first_position() -> None:
    params = [("offset", "integer"), ("limit", "integer")]
    assert envelopes.paging_kind(params) == ("offset", ["offset", "limit"])
    assert envelopes.first_position(params, {"offset": 10, "limit": 5}) == 11  # 0-based
    assert envelopes.first_position(params, {"limit": 5}) is None
    assert envelopes.first_position([("skip", "integer"), ("limit", "integer")], {"skip": "0"}) == 1
    assert envelopes.first_position([("startRow", "integer"), ("maxResults", "integer")], {"startRow": 21}) == 21
    assert envelopes.first_position([("START_INDEX", "integer"), ("END_INDEX", "integer")], {"START_INDEX": 4}) == 4
    assert envelopes.first_position([("pageNo", "integer")], {"pageNo": 3}) is None  # the response says its page
    assert envelopes.first_position([("cursor", "string")], {"cursor": "abc"}) is None


def test_an_offset_paged_service_is_registered_read_placed_and_verified(
    portal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_NAME, KEY)
    meta = RegistrationMeta(auth=AuthConfig(param="apiKey", secret=SECRET_NAME))
    listing_r, _ = parse_with_report(offset_doc(portal), meta)[2]
    assert listing_r["paging"]["kind"] == "offset" and listing_r["paging"]["params"] == ["offset", "limit"]
    assert (listing_r["rows"]["path"], listing_r["total"]["path"]) == ("items[]", "totalCount")
    settings = local_settings(portal, tmp_path / "g.sqlite3")
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    api = register(store, settings, offset_doc(portal), meta).api
    tools = store.all_tools()
    listing = next(t for t in tools if t.url.endswith("/parks"))
    assert narrowing(listing)[1] == ["offset", "limit"]
    economy = MemoryEconomy()

    async def calls() -> list[Any]:
        ex = Executor(settings, economy, {api.id: api})
        try:
            return [await ex.call(listing, {"offset": 10, "limit": 5}), await ex.call(listing, {"limit": 5})]
        finally:
            await ex.aclose()

    later, first_page = asyncio.run(calls())
    assert later.ok and [r["parkId"] for r in later.items] == [c for c, _ in PARKS[10:15]]
    assert (later.total, later.first) == (23, 11) and (first_page.total, first_page.first) == (23, 1)
    view = view_object("ok", later.items, total=later.total, first=later.first, tool=listing)
    assert view["first"] == 11 and "rows 11-15 of 23" in view["note"] and "offset, limit" in view["note"]
    run = asyncio.run(execute_run(store, settings, new_run(), economy=economy))
    assert run.status == "completed"
    verified = store.list_links(status="verified", limit=100)[0]
    store.close()
    assert any(lk.source_field == "parkId" and lk.target_param == "query:parkId" for lk in verified), verified
