"""APIs of other portals: a key as a path segment with index-range paging (서울 열린데이터광장
`/{KEY}/json/{SERVICE}/{START_INDEX}/{END_INDEX}`), the NEIS / 행정표준코드 head-and-row envelope, the
highway-corporation `{"code": "SUCCESS", "count", "list"}` envelope, a single row sent as an object, and errors on
HTTP 200 told by their body code. Fast unit checks of the pure rules, then calls over a socket to an upstream that
echoes the path (so the key travels back in rows and errors) with a canary key grepped in logs, evidence, cache and
the graph file."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from core.logging import install_redaction
from core.settings import Settings
from execution.executor import Executor
from execution.judge import KEY_REFUSED, judge
from execution.limits import MemoryEconomy
from execution.result import Outcome
from execution.view import narrowing, view_object
from graph import envelopes
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import parse_document, parse_with_report
from graph.registry import register
from synthesis.engine import synthesize
from synthesis.records import SynthesisResult
from tests.support.helpers import served
from tests.support.made_up import assert_no_secret, local_settings
from verification.runs import execute_run, new_run

CANARY = "c0ffee" + secrets.token_hex(29)
SECRET_NAME = "KOPA_APIKEY_PORTAL_CANARY"
NAMES = [f"{w}도서관" for w in ("한빛", "푸른", "새봄", "가람", "누리", "다솜", "보람", "시내", "하늘")]
ROW = {
    "type": "object",
    "properties": {
        "CODE": {"type": "string", "description": "코드"},
        "NAME": {"type": "string", "description": "시설명"},
        "PATH": {"type": "string", "description": "요청 경로"},
    },
}


def _ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _path(name: str, *, described: bool = False) -> dict[str, Any]:
    if described:
        return {
            "name": name,
            "in": "path",
            "required": True,
            "description": "OpenAPI 인증키",
            "schema": {"type": "string"},
        }
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def portal_doc(server: str, key_name: str = "KEY", described: bool = True) -> dict[str, Any]:
    rng = [
        {"name": "START_INDEX", "in": "path", "required": True, "schema": {"type": "integer", "example": 1}},
        {"name": "END_INDEX", "in": "path", "required": True, "schema": {"type": "integer", "example": 5}},
    ]
    seoul = {
        "type": "object",
        "properties": {
            "Echo": {
                "type": "object",
                "properties": {
                    "list_total_count": {"type": "integer"},
                    "RESULT": {"type": "object", "properties": {"CODE": {"type": "string"}}},
                    "row": {"type": "array", "items": ROW},
                },
            }
        },
    }
    head = {"type": "array", "items": {"type": "object", "properties": {"list_total_count": {"type": "integer"}}}}
    neis = {
        "type": "object",
        "properties": {
            "EchoDetail": {
                "type": "array",
                "items": {"type": "object", "properties": {"head": head, "row": {"type": "array", "items": ROW}}},
            }
        },
    }
    key = _path(key_name, described=described)
    name = {"name": "NAME", "in": "query", "description": "시설명 (예: 한빛도서관)", "schema": {"type": "string"}}
    code = {
        "name": "CODE",
        "in": "path",
        "required": True,
        "description": "코드 (예: A1)",
        "schema": {"type": "string"},
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "portal echo", "version": "1"},
        "servers": [{"url": server}],
        "paths": {
            f"/{{{key_name}}}/json/Echo/{{START_INDEX}}/{{END_INDEX}}": {
                "get": {"operationId": "echoList", "parameters": [key, *rng, name], "responses": _ok(seoul)},
            },
            f"/{{{key_name}}}/json/EchoDetail/{{START_INDEX}}/{{END_INDEX}}/{{CODE}}": {
                "get": {"operationId": "echoDetail", "parameters": [key, *rng, code], "responses": _ok(neis)},
            },
        },
    }


# ------------------------------------------------------------------ the document: where the key and the rows are


def test_a_path_segment_key_is_found_by_description_name_scheme_or_option_and_never_shown() -> None:
    server = "https://portal.example.go.kr"
    api, tools = parse_document(portal_doc(server))
    assert api.auth.param == "KEY"
    for tool in tools:
        assert tool.key_in_path and tool.auth_param == "KEY"
        assert "KEY" not in tool.json_schema["properties"] and "KEY" not in {p.name for p in tool.params}
    by_name = {t.name.rsplit("_", 1)[-1]: t for t in tools}
    assert by_name["list"].items_path == "Echo.row[]"
    assert by_name["detail"].items_path == "EchoDetail[].row[]"  # the rows inside the NEIS [{head}, {row}] list
    # by name only (식품안전나라 keyId), by a security scheme's name, or named at registration
    _, named = parse_document(portal_doc(server, "keyId", described=False))
    assert all(t.auth_param == "keyId" and t.key_in_path for t in named)
    doc = portal_doc(server, "tok", described=False)
    _, unnamed = parse_document(json.loads(json.dumps(doc)))
    assert all(not t.key_in_path for t in unnamed)  # nothing says `tok` is a key: it stays a parameter
    doc["components"] = {"securitySchemes": {"k": {"type": "apiKey", "in": "query", "name": "tok"}}}
    _, schemed = parse_document(doc)
    assert all(t.key_in_path and "tok" not in t.json_schema["properties"] for t in schemed)
    _, optioned = parse_document(
        (portal_doc(server, "tok", described=False)), RegistrationMeta(auth=AuthConfig(param="tok"))
    )
    assert all(t.key_in_path for t in optioned)


def test_index_range_paging_is_paging() -> None:
    assert envelopes.index_range([("START_INDEX", "integer"), ("END_INDEX", "integer")]) == ("START_INDEX", "END_INDEX")
    assert envelopes.index_range([("startIdx", "string"), ("endIdx", "string")]) == ("startIdx", "endIdx")
    assert envelopes.index_range([("start", "integer"), ("end", "integer")]) == ("start", "end")
    assert envelopes.index_range([("start", "string"), ("end", "string")]) is None  # dates, names: not positions
    assert envelopes.index_range([("START_INDEX", "integer")]) is None
    _, tools = parse_document(portal_doc("https://portal.example.go.kr"))
    assert narrowing(tools[0])[1] == ["START_INDEX", "END_INDEX"]
    # the view's note and the registration report read the same description of paging
    spec = {"properties": {"q": {"type": "string"}, "start": {"type": "integer"}, "end": {"type": "integer"}}}
    assert narrowing({"function": {"parameters": spec}}) == (["q"], ["start", "end"])
    dates = {"properties": {"start": {"type": "string"}, "end": {"type": "string"}, "cursor": {"type": "string"}}}
    assert narrowing({"function": {"parameters": dates}}) == (["start", "end"], ["cursor"])


def test_registration_says_what_it_understood_of_each_operation() -> None:
    _, tools, report = parse_with_report(portal_doc("https://portal.example.go.kr"))
    listing, detail = report
    assert (listing["tool"], detail["tool"]) == (tools[0].name, tools[1].name)
    assert listing["key"]["in"] == "path" and listing["key"]["param"] == "KEY"
    assert "its name" in listing["key"]["reason"] and "never a parameter the model sees" in listing["key"]["reason"]
    assert listing["paging"] == {
        "kind": "index_range",
        "params": ["START_INDEX", "END_INDEX"],
        "reason": listing["paging"]["reason"],
    }
    assert (listing["rows"]["path"], listing["total"]["path"]) == ("Echo.row[]", "Echo.list_total_count")
    assert listing["success"]["code"] == "Echo.RESULT.CODE" and "INFO-200" in listing["success"]["rule"]
    assert (detail["rows"]["path"], detail["total"]["path"]) == (
        "EchoDetail[].row[]",
        "EchoDetail[].head[].list_total_count",
    )
    assert listing["unresolved"] == detail["unresolved"] == []
    # a document that names no key and declares no response: both said, with what to do about the key
    bare = {
        "openapi": "3.0.3",
        "info": {"title": "bare", "version": "1"},
        "servers": [{"url": "https://bare.example.go.kr"}],
        "paths": {
            "/list": {"get": {"parameters": [{"name": "offset", "in": "query"}, {"name": "limit", "in": "query"}]}}
        },
    }
    (only,) = parse_with_report(bare)[2]
    assert only["unresolved"] == ["rows", "key"] and "auth_param" in only["key"]["reason"]
    assert only["paging"]["kind"] == "offset" and only["success"]["code"] is None
    (named,) = parse_with_report(bare, RegistrationMeta(auth=AuthConfig(param="apiKey")))[2]
    assert named["key"]["in"] == "query" and "named at registration" in named["key"]["reason"]


def test_an_optional_trailing_path_segment_is_left_off_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """서울 열린데이터광장 style filters at the end of the path (`.../{START_INDEX}/{END_INDEX}/{GU}`): a document that
    marks one `required: false` gets it optional; a segment before a literal one stays required."""
    doc = portal_doc("https://portal.example.go.kr")
    listing = doc["paths"].pop("/{KEY}/json/Echo/{START_INDEX}/{END_INDEX}")
    gu = {"name": "GU", "in": "path", "required": False, "description": "자치구명", "schema": {"type": "string"}}
    svc = {"name": "SVC", "in": "path", "required": False, "schema": {"type": "string"}}
    listing["get"]["parameters"] += [gu, svc]
    doc["paths"]["/{KEY}/json/{SVC}/{START_INDEX}/{END_INDEX}/{GU}"] = listing
    api, tools = parse_document(doc, RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME)))
    tool = next(t for t in tools if "{GU}" in t.url)
    tool.api_id = api.id
    assert tool.json_schema["required"] == ["START_INDEX", "END_INDEX", "SVC"]  # GU optional, SVC not (mid-path)
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(200, json={"RESULT": {"CODE": "INFO-200", "MESSAGE": "해당하는 데이터가 없습니다."}})

    monkeypatch.setenv(SECRET_NAME, CANARY)
    settings = Settings(allowed_hosts=["portal.example.go.kr"])

    async def calls() -> list[Any]:
        ex = Executor(settings, MemoryEconomy(), {api.id: api}, transport=httpx.MockTransport(answer))
        try:
            return [
                await ex.call(tool, {"START_INDEX": 1, "END_INDEX": 5, "SVC": "Echo"}),
                await ex.call(tool, {"START_INDEX": 1, "END_INDEX": 5, "SVC": "Echo", "GU": "중구"}),
            ]
        finally:
            await ex.aclose()

    without, with_gu = asyncio.run(calls())
    assert seen == [f"/{CANARY}/json/Echo/1/5", f"/{CANARY}/json/Echo/1/5/중구"]
    assert without.outcome == with_gu.outcome == Outcome.EMPTY
    assert without.url.endswith("/%7BKEY%7D/json/Echo/1/5") and CANARY not in without.url + with_gu.url


def test_a_header_key_scheme_is_sent_as_a_header(monkeypatch: pytest.MonkeyPatch) -> None:
    """An apiKey security scheme `in: header` (the document's only one) puts the key in that header, on the wire
    only, unless the registration says otherwise."""
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "header key", "version": "1"},
        "servers": [{"url": "https://hdr.example.go.kr"}],
        "components": {"securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}},
        "paths": {
            "/list": {"get": {"parameters": [{"name": "X-Api-Key", "in": "header"}, {"name": "q", "in": "query"}]}}
        },
    }
    api, (tool,), (report,) = parse_with_report(doc, RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME)))
    tool.api_id = api.id
    assert (api.auth.scheme, api.auth.param, api.auth.secret) == ("header_key", "X-Api-Key", SECRET_NAME)
    assert list(tool.json_schema["properties"]) == ["q"] and report["key"]["in"] == "header"
    assert parse_document(doc, RegistrationMeta(auth=AuthConfig(param="q")))[0].auth.scheme == "query_key"
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"code": "SUCCESS", "count": 1, "list": {"id": "1", "name": "가"}})

    monkeypatch.setenv(SECRET_NAME, CANARY)

    async def call() -> Any:
        ex = Executor(
            Settings(allowed_hosts=["hdr.example.go.kr"]),
            MemoryEconomy(),
            {api.id: api},
            transport=httpx.MockTransport(answer),
        )
        try:
            return await ex.call(tool, {"q": "가", "X-Api-Key": "a model's guess"})
        finally:
            await ex.aclose()

    got = asyncio.run(call())
    assert got.ok and got.items == [{"id": "1", "name": "가"}] and got.total == 1
    assert seen[0].headers["X-Api-Key"] == CANARY and CANARY not in got.url and "X-Api-Key" not in got.url


# ------------------------------------------------------------------ the answer: rows, total and success


def _judge(doc: Any, items_path: str = "", status: int = 200) -> Any:
    return judge(
        status,
        json.dumps(doc, ensure_ascii=False).encode(),
        "application/json",
        envelope="plain",
        items_path=items_path,
        declared_fields={"CODE", "NAME"},
    )


def test_other_portals_envelopes_give_rows_total_and_success() -> None:
    rows = [{"CODE": "A1", "NAME": "가"}, {"CODE": "A2", "NAME": "나"}]
    ok = {"CODE": "INFO-000", "MESSAGE": "정상 처리되었습니다"}
    neis = {"Svc": [{"head": [{"list_total_count": 7}, {"RESULT": ok}]}, {"row": rows}]}
    for doc, path in (
        (neis, "Svc[].row[]"),
        (neis, ""),
        ({"Svc": {"list_total_count": 7, "RESULT": ok, "row": rows}}, ""),
    ):
        got = _judge(doc, path)
        assert (got.outcome, got.total, len(got.items)) == (Outcome.OK, 7, 2), (doc, got)
    highway = {"code": "SUCCESS", "message": "인증키가 유효합니다.", "count": 1, "list": rows[0]}
    got = _judge(highway, "list[]")  # one row as an object where the schema says a list
    assert (got.outcome, got.total, got.items) == (Outcome.OK, 1, [rows[0]])
    for code in ("0", "00", "INFO-000", "OK", "NORMAL SERVICE"):
        assert _judge({"result": {"code": code, "message": "fine"}, "list": rows}).ok, code


def test_errors_on_http_200_are_told_by_their_code() -> None:
    no_data = _judge({"RESULT": {"CODE": "INFO-200", "MESSAGE": "해당하는 데이터가 없습니다."}})
    assert no_data.outcome == Outcome.EMPTY
    key = _judge({"RESULT": {"CODE": "INFO-100", "MESSAGE": "인증키가 유효하지 않습니다."}})
    assert (key.outcome, key.code) == (Outcome.TRANSIENT, KEY_REFUSED)  # never a refutation; the API is blocked
    bad = _judge({"Svc": [{"head": [{"RESULT": {"CODE": "ERROR-300", "MESSAGE": "필수 값이 누락되어 있습니다."}}]}]})
    assert (bad.outcome, bad.code) == (Outcome.INVALID, "ERROR-300")
    assert _judge({"RESULT": {"CODE": "ERROR-500", "MESSAGE": "서버 오류입니다."}}).outcome == Outcome.TRANSIENT
    worded = _judge({"code": "ERROR", "message": "인증키가 유효하지 않습니다.", "count": 0, "list": []})
    assert worded.outcome == Outcome.TRANSIENT
    refused = _judge({"code": "FAIL", "message": "svarCd는 6자리 숫자입니다.", "list": []})
    assert refused.outcome == Outcome.INVALID
    # the data.go.kr family's parameter errors stay errors of the inputs even when they name the key parameter
    named = _judge({"header": {"resultCode": "10", "resultMsg": "INVALID_REQUEST_PARAMETER_ERROR(serviceKey)"}})
    assert (named.outcome, named.code) == (Outcome.INVALID, "10")
    assert _judge({"header": {"resultCode": "-7", "resultMsg": "서비스키가 만료되었습니다"}}).code == KEY_REFUSED
    # a row's own `code` and `message` fields are never read as the response's result
    rowish = _judge({"list": [{"code": "E1", "message": "서버 오류", "CODE": "A1", "NAME": "가"}]}, "list[]")
    assert rowish.ok


# ------------------------------------------------------------------ over a socket, with a canary key


def echo_portal() -> FastAPI:
    """An upstream in the Seoul style that echoes the request path (the key with it) in rows and errors."""
    app = FastAPI()

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/{key}/json/Echo/{start}/{end}")
    def echo(key: str, start: int, end: int, request: Request) -> JSONResponse:
        if key != CANARY:
            return JSONResponse({"RESULT": {"CODE": "INFO-100", "MESSAGE": f"인증키가 유효하지 않습니다 ({key})"}})
        rows = [{"CODE": f"A{i}", "NAME": n, "PATH": f"echo {request.url.path}"} for i, n in enumerate(NAMES, 1)]
        rows = [r for r in rows if request.query_params.get("NAME", "") in r["NAME"]][start - 1 : end]
        result = {"CODE": "INFO-000", "MESSAGE": "정상"}
        return JSONResponse({"Echo": {"list_total_count": 9, "RESULT": result, "row": rows}})

    @app.get("/{key}/json/EchoDetail/{start}/{end}/{code}")
    def detail(key: str, start: int, end: int, code: str, request: Request) -> JSONResponse:
        if key != CANARY:
            return JSONResponse({"RESULT": {"CODE": "INFO-100", "MESSAGE": "인증키가 유효하지 않습니다"}})
        if code not in {f"A{i}" for i in range(1, 10)}:
            return JSONResponse({"RESULT": {"CODE": "ERROR-300", "MESSAGE": f"값을 확인하세요 {request.url.path}"}})
        head = [{"list_total_count": 1}, {"RESULT": {"CODE": "INFO-000", "MESSAGE": "정상"}}]
        row = {"CODE": code, "NAME": NAMES[int(code[1:]) - 1], "PATH": request.url.path}
        return JSONResponse({"EchoDetail": [{"head": head}, {"row": [row]}]})

    return app


@pytest.fixture(scope="module")
def portal() -> Iterator[str]:
    with served(echo_portal()) as url:
        yield url


def assert_clean(label: str, data: str | bytes) -> None:
    assert_no_secret(label, data, CANARY)


def test_a_path_key_is_filled_on_the_wire_and_redacted_everywhere(
    portal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(SECRET_NAME, CANARY)
    install_redaction()
    caplog.set_level(logging.DEBUG)
    settings = local_settings(portal, tmp_path / "g.sqlite3")
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    api = register(store, settings, portal_doc(portal), RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME))).api
    tools = store.all_tools()
    listing = next(t for t in tools if "Echo/" in t.url)
    detail = next(t for t in tools if t is not listing)
    economy = MemoryEconomy()

    async def calls() -> list[Any]:
        ex = Executor(settings, economy, {api.id: api})
        try:
            return [
                await ex.call(listing, {"START_INDEX": 4, "END_INDEX": 6}),
                await ex.call(listing, {"START_INDEX": 1, "END_INDEX": 2, "KEY": "a model's guess"}),
                await ex.call(detail, {"START_INDEX": 1, "END_INDEX": 1, "CODE": "Z"}),
            ]
        finally:
            await ex.aclose()

    page, guessed, refused = asyncio.run(calls())
    assert page.ok and [r["CODE"] for r in page.items] == ["A4", "A5", "A6"]
    assert (page.total, page.first) == (9, 4)  # index-range paging: the view says rows 4-6 of 9
    view = view_object("ok", page.items, total=page.total, first=page.first, tool=listing)
    assert view["first"] == 4 and "START_INDEX, END_INDEX" in view.get("note", "")
    assert "/%7BKEY%7D/json/Echo/4/6" in page.url  # the evidence URL keeps the placeholder
    assert all(r["PATH"] == "echo /***/json/Echo/4/6" for r in page.items)  # what the upstream echoed is scrubbed
    assert guessed.ok  # a KEY argument is dropped: the key comes from the environment only
    assert refused.outcome == Outcome.INVALID and "/***/json/EchoDetail" in refused.reason
    run = asyncio.run(execute_run(store, settings, new_run(), economy=economy))
    assert run.status == "completed"
    verified = store.list_links(status="verified", limit=100)[0]
    assert any(lk.source_field == "CODE" and lk.target_param == "path:CODE" for lk in verified), verified
    links = store.list_links(limit=100)[0]

    async def synth() -> SynthesisResult:
        ex = Executor(settings, economy, {api.id: api})
        try:
            return await synthesize(store, settings, ex, count=3, shapes=("chain",), extras={})
        finally:
            await ex.aclose()

    out = asyncio.run(synth())
    records = [r.to_json() for r in out["records"]]
    store.close()
    # synthesis uses the verified link: the listing's CODE into the detail's path segment, no key among the arguments
    chained = [r for r in records if [st["tool"] for st in r["steps"]] == [listing.name, detail.name]]
    assert chained, [[st["tool"] for st in r["steps"]] for r in records]
    assert all("KEY" not in st["arguments"] for r in chained for st in r["steps"])
    assert all(json.dumps(t).find('"KEY"') < 0 for r in chained for t in r["tools"])
    for label, data in (
        ("results", json.dumps([page.to_json(), guessed.to_json(), refused.to_json()], ensure_ascii=False)),
        ("the log", caplog.text + "".join(r.getMessage() for r in caplog.records)),
        ("the cache", json.dumps(economy._cache, ensure_ascii=False, default=str)),
        ("link evidence", json.dumps([lk.model_dump() for lk in links], ensure_ascii=False, default=str)),
        ("trajectories", json.dumps(records, ensure_ascii=False)),
        ("the graph file", (tmp_path / "g.sqlite3").read_bytes()),
    ):
        assert_clean(label, data)


def test_a_key_refused_on_http_200_blocks_the_api(portal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_NAME, "not-the-key-" + secrets.token_hex(8))
    settings = local_settings(portal, tmp_path / "g.sqlite3")
    api, tools = parse_document((portal_doc(portal)), RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME)))
    for t in tools:
        t.api_id = api.id

    async def calls() -> tuple[Any, Any, dict[str, str]]:
        ex = Executor(settings, MemoryEconomy(), {api.id: api})
        try:
            first = await ex.call(tools[0], {"START_INDEX": 1, "END_INDEX": 5})
            second = await ex.call(tools[1], {"START_INDEX": 1, "END_INDEX": 1, "CODE": "A1"})
            return first, second, dict(ex.blocked_apis)
        finally:
            await ex.aclose()

    first, second, blocked = asyncio.run(calls())
    assert (first.outcome, first.code) == (Outcome.TRANSIENT, KEY_REFUSED) and "INFO-100" in first.reason
    assert second.code == "blocked" and api.id in blocked and SECRET_NAME in blocked[api.id]
