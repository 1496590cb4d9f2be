"""A key in a cookie: a document whose apiKey security scheme is `in: cookie` registers with the key sent
as a cookie at call time, never in the URL nor among the model's parameters; over a socket, with an upstream that
echoes its Cookie header back in rows and errors, the canary key is absent from results, logs, cache, link
evidence, trajectories and the graph file, and a wrong key on HTTP 200 blocks the API."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from core.logging import install_redaction
from execution.executor import Executor
from execution.limits import MemoryEconomy
from execution.result import Outcome
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import parse_document, parse_with_report
from graph.registry import register
from synthesis.engine import synthesize
from synthesis.records import SynthesisResult
from tests.support.helpers import served
from tests.support.made_up import assert_no_secret, local_settings
from verification.runs import execute_run, new_run

CANARY = "c00k1e" + secrets.token_hex(29)
SECRET_NAME = "KOPA_APIKEY_GYM_CANARY"
NAMES = [f"{w}체육관" for w in ("한빛", "푸른", "새봄", "가람", "누리", "다솜")]
ROW = {
    "type": "object",
    "properties": {
        "gymId": {"type": "string", "description": "체육관 ID"},
        "gymName": {"type": "string", "description": "체육관명"},
        "echo": {"type": "string", "description": "요청 쿠키"},
    },
}


def _ok(total: bool) -> dict[str, Any]:
    props: dict[str, Any] = {"code": {"type": "string"}, "message": {"type": "string"}}
    if total:
        props["count"] = {"type": "integer"}
    props["list"] = {"type": "array", "items": ROW}
    schema = {"type": "object", "properties": props}
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def cookie_doc(server: str) -> dict[str, Any]:
    cookie = {"name": "apiKey", "in": "cookie", "required": True, "schema": {"type": "string"}}
    name = {"name": "gymName", "in": "query", "description": "체육관명 (예: 한빛체육관)", "schema": {"type": "string"}}
    gym = {"name": "gymId", "in": "query", "required": True, "description": "체육관 ID (예: G1)"}
    return {
        "openapi": "3.0.3",
        "info": {"title": "체육관 (cookie key)", "version": "1"},
        "servers": [{"url": server}],
        "components": {"securitySchemes": {"k": {"type": "apiKey", "in": "cookie", "name": "apiKey"}}},
        "security": [{"k": []}],
        "paths": {
            "/gyms": {"get": {"operationId": "gymList", "parameters": [cookie, name], "responses": _ok(True)}},
            "/gym": {"get": {"operationId": "gymInfo", "parameters": [cookie, gym], "responses": _ok(False)}},
        },
    }


def cookie_portal() -> FastAPI:
    """The key read from a cookie only; the Cookie header and the URL echoed back in rows and errors."""
    app = FastAPI()
    rows = [{"gymId": f"G{i}", "gymName": n} for i, n in enumerate(NAMES, 1)]

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    def refused(request: Request) -> JSONResponse | None:
        if request.cookies.get("apiKey") == CANARY and CANARY not in str(request.url):
            return None
        said = f"인증키가 유효하지 않습니다 ({request.headers.get('cookie')} {request.url})"
        return JSONResponse({"code": "ERROR", "message": said, "list": []})

    @app.get("/gyms")
    def gyms(request: Request) -> JSONResponse:
        no = refused(request)
        echo = f"{request.headers.get('cookie')} {request.url}"
        listing = [{**r, "echo": echo} for r in rows if request.query_params.get("gymName", "") in r["gymName"]]
        return no or JSONResponse({"code": "SUCCESS", "message": "ok", "count": len(listing), "list": listing})

    @app.get("/gym")
    def gym(request: Request, gymId: str = "") -> JSONResponse:
        no = refused(request)
        found = [{**r, "echo": f"{request.headers.get('cookie')}"} for r in rows if r["gymId"] == gymId]
        if no is None and not found:
            return JSONResponse({"code": "FAIL", "message": f"gymId 값을 확인하세요 ({request.cookies.get('apiKey')})"})
        return no or JSONResponse({"code": "SUCCESS", "message": "ok", "list": found})

    return app


@pytest.fixture(scope="module")
def portal() -> Iterator[str]:
    with served(cookie_portal()) as url:
        yield url


def assert_clean(label: str, data: str | bytes) -> None:
    assert_no_secret(label, data, CANARY)


def test_a_cookie_scheme_is_understood_and_hidden_from_the_model() -> None:
    api, tools, report = parse_with_report(cookie_doc("https://gym.example.go.kr"))
    assert (api.auth.scheme, api.auth.param) == ("cookie_key", "apiKey")
    for tool, said in zip(tools, report, strict=True):
        assert "apiKey" not in tool.json_schema["properties"] and "apiKey" not in {p.name for p in tool.params}
        assert said["key"]["in"] == "cookie" and said["key"]["param"] == "apiKey" and said["unresolved"] == []
    # a registration that names the key's place keeps it there
    named = RegistrationMeta(auth=AuthConfig(param="apiKey", scheme="query_key"))
    assert parse_document(cookie_doc("https://gym.example.go.kr"), named)[0].auth.scheme == "query_key"


def test_a_cookie_key_is_sent_as_a_cookie_and_redacted_everywhere(
    portal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(SECRET_NAME, CANARY)
    install_redaction()
    caplog.set_level(logging.DEBUG)
    settings = local_settings(portal, tmp_path / "g.sqlite3")
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    api = register(store, settings, cookie_doc(portal), RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME))).api
    tools = store.all_tools()
    listing = next(t for t in tools if t.url.endswith("/gyms"))
    info = next(t for t in tools if t is not listing)
    economy = MemoryEconomy()

    async def calls() -> list[Any]:
        ex = Executor(settings, economy, {api.id: api})
        try:
            return [
                await ex.call(listing, {}),
                await ex.call(info, {"gymId": "G2", "apiKey": "a model's guess"}),
                await ex.call(info, {"gymId": "Z9"}),
            ]
        finally:
            await ex.aclose()

    page, one, bad = asyncio.run(calls())
    assert page.ok and [r["gymId"] for r in page.items] == [f"G{i}" for i in range(1, 7)] and page.total == 6
    assert all(r["echo"].startswith("apiKey=*** ") for r in page.items)  # the cookie went, and is scrubbed back
    assert one.ok and one.items[0]["gymName"] == NAMES[1]  # a guessed apiKey argument is dropped, never sent
    assert bad.outcome == Outcome.INVALID and "(***)" in bad.reason
    assert "apiKey" not in page.url + one.url
    run = asyncio.run(execute_run(store, settings, new_run(), economy=economy))
    assert run.status == "completed"
    verified = store.list_links(status="verified", limit=100)[0]
    assert any(lk.source_field == "gymId" and lk.target_param == "query:gymId" for lk in verified), verified
    links = store.list_links(limit=100)[0]

    async def synth() -> SynthesisResult:
        ex = Executor(settings, economy, {api.id: api})
        try:
            return await synthesize(store, settings, ex, count=3, shapes=("chain",), extras={})
        finally:
            await ex.aclose()

    records = [r.to_json() for r in asyncio.run(synth())["records"]]
    store.close()
    assert any([st["tool"] for st in r["steps"]] == [listing.name, info.name] for r in records), records
    assert all("apiKey" not in st["arguments"] for r in records for st in r["steps"])
    for label, data in (
        ("results", json.dumps([page.to_json(), one.to_json(), bad.to_json()], ensure_ascii=False)),
        ("the log", caplog.text + "".join(r.getMessage() for r in caplog.records)),
        ("the cache", json.dumps(economy._cache, ensure_ascii=False, default=str)),
        ("link evidence", json.dumps([lk.model_dump() for lk in links], ensure_ascii=False, default=str)),
        ("trajectories", json.dumps(records, ensure_ascii=False)),
        ("the graph file", (tmp_path / "g.sqlite3").read_bytes()),
    ):
        assert_clean(label, data)


def test_a_refused_cookie_key_blocks_the_api(portal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_NAME, "not-the-key-" + secrets.token_hex(8))
    api, tools = parse_document(cookie_doc(portal), RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME)))
    for t in tools:
        t.api_id = api.id

    async def calls() -> tuple[Any, Any, dict[str, str]]:
        ex = Executor(local_settings(portal, tmp_path / "g.sqlite3"), MemoryEconomy(), {api.id: api})
        try:
            first = await ex.call(tools[0], {})
            second = await ex.call(tools[1], {"gymId": "G1"})
            return first, second, dict(ex.blocked_apis)
        finally:
            await ex.aclose()

    first, second, blocked = asyncio.run(calls())
    assert (first.outcome, first.code) == (Outcome.TRANSIENT, "30")  # `{"code": "ERROR"}` naming the key
    assert second.code == "blocked" and api.id in blocked
