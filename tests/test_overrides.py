"""Upstream overrides per API: two services under one host go to two servers (by base URL, by API id), the host
entry catches the rest, and a malformed entry stops the process at start with one line instead of failing every
call; one host form (case, trailing dot, default port) for overrides and egress. Real sockets: each override
target is a small HTTP server that says who it is."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from core.settings import Settings, find_override, parse_overrides
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import ApiRecord, AuthConfig, RegistrationMeta, ToolRecord
from graph.registry import register
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from tests.support.helpers import Recorder, first_tool_outcome, http_server, reply

ROOT = Path(__file__).resolve().parents[1]
HOST = "apis.data.go.kr"


def _doc(service: str, op: str) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": f"{service} service", "version": "1"},
        "servers": [{"url": f"https://{HOST}/1230000/{service}"}],
        "paths": {
            f"/{op}": {
                "get": {
                    "operationId": op,
                    "parameters": [
                        {"name": "serviceKey", "in": "query", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "array",
                                        "items": {"type": "object", "properties": {"who": {"type": "string"}}},
                                    }
                                }
                            },
                        }
                    },
                }
            }
        },
    }


def _handler(name: str, seen: list[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            reply(self, json.dumps([{"who": name}]).encode())

        def log_message(self, *_: Any) -> None:
            pass

    return Handler


@pytest.fixture
def servers() -> Iterator[dict[str, tuple[str, list[str]]]]:
    with ExitStack() as stack:
        out: dict[str, tuple[str, list[str]]] = {}
        for n in ("gateway", "procurement", "corp"):
            seen: list[str] = []
            out[n] = (stack.enter_context(http_server(_handler(n, seen))), seen)
        yield out


def _call(settings: Settings, api: ApiRecord, tool: ToolRecord) -> Any:
    async def go() -> Any:
        ex = Executor(settings, MemoryEconomy(), {api.id: api})
        try:
            return await ex.call(tool, {})
        finally:
            await ex.aclose()

    return asyncio.run(go())


def test_two_services_under_one_host_reach_their_own_servers(
    tmp_path: Path, servers: dict[str, tuple[str, list[str]]]
) -> None:
    os.environ["KOPA_APIKEY_OVERRIDE_TEST"] = "k-0123456789"
    gateway, procurement, corp = (servers[n][0] for n in ("gateway", "procurement", "corp"))
    settings = Settings(
        upstream_overrides=(f"{HOST}={gateway},https://{HOST}/1230000/BidPublicInfo={procurement},corp-info={corp}")
    )
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    meta = RegistrationMeta(auth=AuthConfig(secret="KOPA_APIKEY_OVERRIDE_TEST"))
    bid = register(store, settings, _doc("BidPublicInfo", "getBidList"), meta)
    corp_api = register(
        store, settings, _doc("CorpInfo", "getCorpList"), meta.model_copy(update={"api_id": "corp-info"})
    )
    other = register(store, settings, _doc("Weather", "getForecast"), meta)
    # the registration's own base_url is a key too: the same service registered with another base URL
    moved = register(
        store,
        settings,
        _doc("Moved", "getMoved"),
        meta.model_copy(update={"base_url": f"https://{HOST}/1230000/BidPublicInfo/v2"}),
    )
    answers = {}
    for result in (bid, corp_api, other, moved):
        tool = store.tools_of_api(result.api.id)[0]
        got = _call(settings, result.api, tool)
        assert got.ok, got
        answers[result.api.id] = got.items[0]["who"]
    assert answers == {
        bid.api.id: "procurement",
        "corp-info": "corp",
        other.api.id: "gateway",
        moved.api.id: "procurement",
    }
    # host entries keep the path; base-URL and API-id entries replace the API's base
    assert servers["gateway"][1][0].startswith("/1230000/Weather/getForecast?")
    assert servers["corp"][1][0].startswith("/getCorpList?")
    assert servers["procurement"][1] and servers["procurement"][1][0].startswith("/getBidList?")
    assert servers["procurement"][1][1].startswith("/v2/getMoved?")
    assert all("k-0123456789" in p for s in servers.values() for p in s[1])  # the key still travels
    store.close()


def test_precedence_is_api_id_then_longest_base_url_then_host() -> None:
    overrides = parse_overrides(
        f"{HOST}=http://h:1,https://{HOST}/a=http://a:1,https://{HOST}/a/b=http://ab:1,x-api=http://x:1"
    )

    def pick(url: str, api: str | None = None) -> str:
        found = find_override(overrides, url, api)
        return found.target if found else "http://none:1"

    assert pick(f"https://{HOST}/a/b/op") == "http://ab:1"
    assert pick(f"https://{HOST}/a/op") == "http://a:1"
    assert pick(f"https://{HOST}/ab/op") == "http://h:1"  # a prefix is a path segment, not a string prefix
    assert pick(f"https://{HOST}/a/b/op", "x-api") == "http://x:1"
    assert pick("https://elsewhere.kr/op") == "http://none:1"


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        (f"{HOST}=127.0.0.1:8080", "absolute http(s) URL"),
        (f"{HOST}=ftp://127.0.0.1/", "absolute http(s) URL"),
        (f"{HOST}=http://a.local,{HOST.upper()}=http://b.local", "named twice"),
        (f"{HOST}", "expected KEY=VALUE"),
        ("ftp://apis.data.go.kr/x=http://a.local", "base URL must be http(s)"),
    ],
)
def test_malformed_overrides_are_refused_with_the_reason(entry: str, says: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(says)):
        Settings(upstream_overrides=entry)


def test_a_command_with_a_bad_override_prints_one_line_and_exits() -> None:
    env = {**os.environ, "KOPA_UPSTREAM_OVERRIDES": f"{HOST}=127.0.0.1:18090"}
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "graph", "stats"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "KOPA_UPSTREAM_OVERRIDES" in lines[0] and "http://127.0.0.1:18090" in lines[0], lines


def test_one_host_form_for_overrides_and_egress() -> None:
    overrides = parse_overrides(
        "apis.data.go.kr=http://h:1,https://api.odcloud.kr/api/1=http://b:1,Business.Juso.go.kr.=http://j:1"
    )
    for url, target in [
        ("https://apis.data.go.kr./1360000/x", "http://h:1"),
        ("https://APIS.DATA.GO.KR/1360000/x", "http://h:1"),
        ("https://apis.data.go.kr:443/1360000/x", "http://h:1"),
        ("https://api.odcloud.kr./api/1/op", "http://b:1"),
        ("https://api.odcloud.kr:443/api/1/op", "http://b:1"),
        ("https://business.juso.go.kr/addrlink", "http://j:1"),
    ]:
        found = find_override(overrides, url, None)
        assert found is not None and found.target == target, (url, found)
    assert find_override(overrides, "https://apis.data.go.kr:8443/x", None) is None  # another port: another server
    with pytest.raises(ValidationError, match="named twice"):
        Settings(upstream_overrides="apis.data.go.kr=http://a:1,APIS.data.go.kr.=http://b:1")


def test_a_trailing_dot_server_hits_the_override(tmp_path: Path) -> None:
    settings, sandbox = sandbox_mode(Settings())
    doc = copy.deepcopy(shipped_documents()["StanReginCd"])
    doc["servers"] = [{"url": doc["servers"][0]["url"].replace("apis.data.go.kr", "apis.data.go.kr.")}]
    store = EmbeddedStore(tmp_path / "dot.sqlite3")
    result = register(store, settings, doc)
    assert "apis.data.go.kr." in result.api.server_url
    recorder = Recorder(sandbox)

    assert first_tool_outcome(settings, store, result.api, recorder, {"locatadd_nm": "서울특별시"}) in ("ok", "empty")
    assert recorder.seen and all("apis.data.go.kr" not in seen.split()[0] for seen in recorder.seen), recorder.seen
    store.close()
