"""Hostile upstream responses over a real socket (huge body, XML entity expansion, invalid encoding) are
rejected safely and recorded as refutation reasons; the run goes on."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from core.payload import MAX_BODY
from core.settings import Settings
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.registry import register
from verification.runs import execute_run, new_run

BOMB = (
    b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><rows><row><code>&c;</code></row></rows>'
)


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/src":
            body, ctype = (
                b'{"rows": [{"code": "A1"}, {"code": "A2"}, {"code": "A3"}, {"code": "A4"}]}',
                "application/json",
            )
        elif path == "/huge":
            body, ctype = b'{"rows": [{"v": "' + b"x" * (MAX_BODY + 1024) + b'"}]}', "application/json"
        elif path == "/bomb":
            body, ctype = BOMB, "application/xml"
        elif path == "/badenc":
            body, ctype = b'{"rows": [{"v": "\xff\xfe\xfa"}]}', "application/json"
        else:  # honours its code: only the codes /src lists have a row
            code = parse_qs(urlsplit(self.path).query).get("code", [""])[0]
            rows = [{"v": f"fine {code}"}] if code in ("A1", "A2", "A3", "A4") else []
            body, ctype = json.dumps({"rows": rows}).encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def hostile_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _op(name: str, with_param: bool) -> dict[str, Any]:
    row = {"type": "object", "properties": {"code": {"type": "string", "description": "코드"}, "v": {"type": "string"}}}
    op: dict[str, Any] = {
        "operationId": name,
        "responses": {
            "200": {
                "description": "ok",
                "content": {
                    "application/json": {
                        "schema": {"type": "object", "properties": {"rows": {"type": "array", "items": row}}}
                    }
                },
            }
        },
    }
    if with_param:
        op["parameters"] = [
            {"name": "code", "in": "query", "required": True, "description": "코드", "schema": {"type": "string"}}
        ]
    return op


def test_hostile_responses_become_refutation_reasons(hostile_server: str, tmp_path: Path) -> None:
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Hostile", "version": "1"},
        "servers": [{"url": hostile_server}],
        "paths": {
            "/src": {"get": _op("source", False)},
            "/huge": {"get": _op("huge", True)},
            "/bomb": {"get": _op("bomb", True)},
            "/badenc": {"get": _op("badenc", True)},
            "/fine": {"get": _op("fine", True)},
        },
    }
    local = hostile_server.split("//", 1)[1].split("/", 1)[0]  # 127.0.0.1:PORT, named as a local upstream
    settings = Settings(allowed_hosts=["127.0.0.1"], local_upstreams=[local])
    settings = settings.model_copy(update={"verify": settings.verify.model_copy(update={"backoff_s": 0.01})})
    store = EmbeddedStore(tmp_path / "h.sqlite3")
    register(store, settings, doc)
    run = asyncio.run(execute_run(store, settings, new_run(), economy=MemoryEconomy()))
    assert run.status == "completed"
    links = {lk.target_tool: lk for lk in store.list_links(limit=100)[0] if lk.source_tool == "hostile_source"}
    assert links["hostile_fine"].status == "verified"
    for name, words in (
        ("hostile_huge", "over"),
        ("hostile_bomb", "refused XML"),
        ("hostile_badenc", "never readable"),
    ):
        assert links[name].status == "refuted", (name, links[name].reason)
        assert words in links[name].reason, links[name].reason
    store.close()
