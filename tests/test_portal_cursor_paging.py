"""Cursor tokens: an answer that hands over the token of its next page (`nextToken`, `next_cursor`,
`nextPageToken`, a bare `next` token) is read outside its rows (graph.envelopes.detect_next), kept on the result and
in synthesised steps, and the view tells the model to call again with the tool's cursor parameter and that token.
End to end over a socket: registration, a call, rows, the token, the view's note, the last page, a verified link."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from execution.executor import Executor
from execution.judge import judge
from execution.limits import MemoryEconomy
from execution.view import view_object
from graph import envelopes
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import parse_with_report
from graph.registry import register
from tests.support.helpers import served
from tests.support.made_up import local_settings
from verification.runs import execute_run, new_run

SECRET_NAME = "KOPA_APIKEY_STOP_TEST"
KEY = "stop-key-0123456789"
STOPS = [(f"S{i:02d}", f"{n}정류장") for i, n in enumerate("가나다라마바사아", 1)]
ROW = {"type": "object", "properties": {"stopId": {"type": "string"}, "stopNm": {"type": "string"}}}
PAGE = 3


def _ok(listing: bool) -> dict[str, Any]:
    props: dict[str, Any] = {"data": {"type": "array", "items": ROW}}
    if listing:
        props["nextToken"] = {"type": "string", "nullable": True}
    schema = {"type": "object", "properties": props}
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def cursor_doc(server: str) -> dict[str, Any]:
    key = {"name": "apiKey", "in": "query", "required": True, "description": "인증키"}
    cursor = {"name": "cursor", "in": "query", "description": "이전 응답의 nextToken", "schema": {"type": "string"}}
    stop = {"name": "stopId", "in": "query", "required": True, "description": "정류장 ID (예: S01)"}
    return {
        "openapi": "3.0.3",
        "info": {"title": "정류장 (cursor)", "version": "1"},
        "servers": [{"url": server}],
        "paths": {
            "/stops": {"get": {"operationId": "stopList", "parameters": [key, cursor], "responses": _ok(True)}},
            "/stop": {"get": {"operationId": "stopInfo", "parameters": [key, stop], "responses": _ok(False)}},
        },
    }


def cursor_portal() -> FastAPI:
    """Pages of 3 rows; the token is an opaque string (the next row's position, encoded), null on the last page."""
    app = FastAPI()
    rows = [{"stopId": c, "stopNm": n} for c, n in STOPS]

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/stops")
    def stops(apiKey: str = "", cursor: str = "") -> JSONResponse:
        if apiKey != KEY:
            return JSONResponse({"code": "ERROR", "message": "인증키가 유효하지 않습니다", "data": []})
        at = int(cursor[3:]) if cursor.startswith("pos") else 0
        following = f"pos{at + PAGE}" if at + PAGE < len(rows) else None
        return JSONResponse({"data": rows[at : at + PAGE], "nextToken": following})

    @app.get("/stop")
    def stop(apiKey: str = "", stopId: str = "") -> JSONResponse:
        if apiKey != KEY:
            return JSONResponse({"code": "ERROR", "message": "인증키가 유효하지 않습니다", "data": []})
        return JSONResponse({"data": [r for r in rows if r["stopId"] == stopId], "nextToken": None})

    return app


@pytest.fixture(scope="module")
def portal() -> Iterator[str]:
    with served(cursor_portal()) as url:
        yield url


def test_the_next_page_token_is_read_outside_the_rows() -> None:
    rows = [{"id": "1", "next": "row's own"}]
    assert envelopes.detect_next({"data": rows, "nextToken": "abc"}, rows) == "abc"
    assert envelopes.detect_next({"items": rows, "meta": {"next_cursor": "c2"}}, rows) == "c2"
    assert envelopes.detect_next({"items": rows, "paging": {"cursor": 40}}, rows) == "40"
    assert envelopes.detect_next({"data": rows, "nextToken": None}, rows) == ""  # the last page
    assert envelopes.detect_next({"data": rows, "next": ""}, rows) == ""
    assert envelopes.detect_next({"data": rows, "next": "https://x.example.go.kr/a?page=2"}, rows) == ""  # a link
    assert envelopes.detect_next({"data": rows, "hasNext": True}, rows) == ""
    assert envelopes.detect_next(rows, rows) == ""  # a row's own `next` is a value, not a token
    # the cursor a page was asked with, echoed back, is not the next one (asking with it again would loop)
    assert envelopes.detect_next({"data": rows, "cursor": "c2", "nextCursor": None}, rows, {"c2"}) == ""
    assert envelopes.detect_next({"data": rows, "cursor": "c2", "nextCursor": "c3"}, rows, {"c2"}) == "c3"
    assert envelopes.detect_next({"data": rows, "cursor": "c3"}, rows, {"c2"}) == "c3"
    # a flag that says no page follows outweighs a token; one that says more without a token leaves it to paging
    assert envelopes.detect_next({"data": rows, "nextToken": "z", "hasNext": False}, rows) == ""
    assert envelopes.detect_next({"data": rows, "nextToken": "z", "hasMore": "Y"}, rows) == "z"
    assert envelopes.detect_more({"content": rows, "hasNext": True}, rows) is True
    assert envelopes.detect_more({"content": rows, "last": True}, rows) is False  # Spring Data's page
    assert envelopes.detect_more({"content": rows, "page": {"has_more": "false"}}, rows) is False
    flagged = [{"hasNext": True, "id": "1"}]
    assert envelopes.detect_more(flagged, flagged) is None  # a row's own field
    assert envelopes.detect_more({"content": rows, "last": 3}, rows) is None  # a number, not a flag
    tool = {"function": {"parameters": {"properties": {"q": {"type": "string"}, "cursor": {"type": "string"}}}}}
    said = view_object("ok", rows, tool=tool, next_token="abc")
    assert said["note"] == 'more rows follow this page: call again with cursor="abc"'
    assert "note" not in view_object("ok", rows, tool={"function": {"parameters": {"properties": {}}}}, next_token="a")
    paged = {"function": {"parameters": {"properties": {"page": {"type": "integer"}, "size": {"type": "integer"}}}}}
    assert view_object("ok", rows, tool=paged, next_token="3")["note"] == (
        "more rows follow this page: call again with page=3"
    )


def test_a_has_next_flag_names_the_next_page_by_number() -> None:
    """An answer that flags `hasNext` without a token (Spring-style pages) is asked for its next page by number: the
    page the call asked for plus one (the documented default when it asked none)."""
    params = [("page", "integer"), ("size", "integer")]
    assert envelopes.next_page(params, {"page": 2, "size": 5}) == "3"
    assert envelopes.next_page(params, {}, default=0) == "1"  # 0-based pages
    assert envelopes.next_page(params, {}) == "2"
    assert envelopes.next_page([("cursor", "string")], {"cursor": "c1"}) == ""
    assert envelopes.next_page([("offset", "integer"), ("limit", "integer")], {"offset": 0}) == ""
    body = json.dumps({"page": 2, "hasNext": True, "content": [{"id": "1", "name": "가"}]}).encode()
    got = judge(200, body, "application/json", envelope="plain", items_path="", declared_fields={"id"})
    assert got.ok and got.more and got.next_token == ""  # the executor names the page (its arguments)


def test_a_cursor_paged_service_is_registered_read_and_verified(
    portal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_NAME, KEY)
    meta = RegistrationMeta(auth=AuthConfig(param="apiKey", secret=SECRET_NAME))
    listing_r, _ = parse_with_report(cursor_doc(portal), meta)[2]
    assert listing_r["paging"]["kind"] == "cursor" and listing_r["paging"]["params"] == ["cursor"]
    assert listing_r["rows"]["path"] == "data[]"
    settings = local_settings(portal, tmp_path / "g.sqlite3")
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    api = register(store, settings, cursor_doc(portal), meta).api
    listing = next(t for t in store.all_tools() if t.url.endswith("/stops"))
    economy = MemoryEconomy()

    async def calls() -> list[Any]:
        ex = Executor(settings, economy, {api.id: api})
        try:
            first = await ex.call(listing, {})
            second = await ex.call(listing, {"cursor": first.next_token})
            last = await ex.call(listing, {"cursor": second.next_token})
            return [first, second, last]
        finally:
            await ex.aclose()

    first, second, last = asyncio.run(calls())
    assert [r["stopId"] for r in first.items + second.items + last.items] == [c for c, _ in STOPS]
    assert (first.next_token, second.next_token, last.next_token) == ("pos3", "pos6", "")
    view = view_object("ok", first.items, total=first.total, first=first.first, tool=listing, next_token="pos3")
    assert 'call again with cursor="pos3"' in view["note"]
    assert "note" not in view_object("ok", last.items, total=last.total, tool=listing, next_token=last.next_token)
    run = asyncio.run(execute_run(store, settings, new_run(), economy=economy))
    assert run.status == "completed"
    verified = store.list_links(status="verified", limit=100)[0]
    store.close()
    assert any(lk.source_field == "stopId" and lk.target_param == "query:stopId" for lk in verified), verified
