"""Request bodies travel as the document says: a JSON media type of any name, a form-urlencoded body, a multipart
body and Swagger 2 formData parameters are registered as body parameters and sent in that encoding to a real
server over a socket, which reads them back with the standard library's parsers."""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

import pytest

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.models import RegistrationMeta
from graph.openapi import parse_document
from tests.support.helpers import http_server, reply

HOST = "forms.unseen.example"


class Recorder(BaseHTTPRequestHandler):
    got: list[tuple[str, dict[str, list[str]]]] = []  # noqa: RUF012
    paths: list[str] = []  # noqa: RUF012

    def do_POST(self) -> None:
        Recorder.paths.append(self.path.split("?")[0])
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        ctype = self.headers.get("Content-Type", "")
        if ctype.startswith("application/x-www-form-urlencoded"):
            fields = parse_qs(raw.decode())
        elif ctype.startswith("multipart/form-data"):
            msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                f"Content-Type: {ctype}\r\n\r\n".encode() + raw
            )
            fields = {}
            for part in msg.iter_parts():
                fields.setdefault(str(part.get_param("name", header="content-disposition")), []).append(
                    str(part.get_content()).strip()
                )
        else:
            fields = {k: [json.dumps(v) if not isinstance(v, str) else v] for k, v in json.loads(raw).items()}
        Recorder.got.append((ctype.split(";")[0], fields))
        reply(self, b'{"items": [{"ok": "Y"}]}')

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    Recorder.got, Recorder.paths = [], []
    with http_server(Recorder) as url:
        yield url


ROWS: dict[str, Any] = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"ok": {"type": "string"}}}}},
}
OK = {"200": {"description": "ok", "content": {"application/json": {"schema": ROWS}}}}
FIELDS = {
    "type": "object",
    "required": ["bizNo"],
    "properties": {
        "bizNo": {"type": "string"},
        "count": {"type": "integer"},
        "open": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}


def _oas3(media: str) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Forms", "version": "1"},
        "servers": [{"url": f"https://{HOST}/v1"}],
        "paths": {
            "/submit": {
                "post": {
                    "operationId": "submitForm",
                    "responses": OK,
                    "requestBody": {"content": {media: {"schema": FIELDS}}},
                }
            }
        },
    }


def _swagger2() -> dict[str, Any]:
    params = [
        {"name": "bizNo", "in": "formData", "type": "string", "required": True},
        {"name": "count", "in": "formData", "type": "integer"},
        {"name": "open", "in": "formData", "type": "boolean"},
        {"name": "tags", "in": "formData", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"},
    ]
    return {
        "swagger": "2.0",
        "info": {"title": "Forms", "version": "1"},
        "host": HOST,
        "basePath": "/v1",
        "schemes": ["https"],
        "consumes": ["application/x-www-form-urlencoded"],
        "paths": {
            "/submit": {
                "post": {
                    "operationId": "submitForm",
                    "parameters": params,
                    "responses": {"200": {"description": "ok", "schema": ROWS}},
                }
            }
        },
    }


ARGS = {"bizNo": "1208147521", "count": 3, "open": True, "tags": ["a", "b"]}


@pytest.mark.parametrize(
    ("doc", "sent_as"),
    [
        (_oas3("application/json; charset=utf-8"), "application/json"),
        (_oas3("application/vnd.kopa.form+json"), "application/json"),
        (_oas3("application/x-www-form-urlencoded"), "application/x-www-form-urlencoded"),
        (_oas3("multipart/form-data"), "multipart/form-data"),
        (_swagger2(), "application/x-www-form-urlencoded"),
    ],
    ids=["json-charset", "vnd-json", "form", "multipart", "swagger2-formData"],
)
def test_bodies_travel_in_the_documented_encoding(server: str, doc: dict[str, Any], sent_as: str) -> None:
    api, tools = parse_document(doc, RegistrationMeta(auth={"scheme": "none"}))
    tool = tools[0]
    assert {p.name: p.location for p in tool.params} == dict.fromkeys(ARGS, "body")
    assert tool.body_media == sent_as
    settings = Settings(upstream_overrides=f"{HOST}={server}")

    async def go() -> Any:
        ex = Executor(settings, MemoryEconomy(), {api.id: api})
        try:
            return await ex.call(tool, ARGS)
        finally:
            await ex.aclose()

    result = asyncio.run(go())
    assert result.ok, result
    ((ctype, fields),) = Recorder.got
    assert ctype == sent_as
    if sent_as == "application/json":
        assert fields == {"bizNo": ["1208147521"], "count": ["3"], "open": ["true"], "tags": ['["a", "b"]']}
    else:
        assert fields == {"bizNo": ["1208147521"], "count": ["3"], "open": ["true"], "tags": ["a", "b"]}


@pytest.mark.parametrize(
    ("server_url", "base_url", "called"),
    [
        ("/svc", "BASE", "/svc/submit"),  # relative to the base: its path stays
        ("//forms.unseen.example/svc", "BASE", "/svc/submit"),
        ("https://forms.unseen.example/v1", "BASE/gw", "/gw/submit"),  # base_url replaces an absolute server
    ],
)
def test_base_url_and_server_paths_reach_the_right_path(
    server: str, server_url: str, base_url: str, called: str
) -> None:
    doc = _oas3("application/x-www-form-urlencoded")
    doc["servers"] = [{"url": server_url}]
    api, tools = parse_document(
        doc, RegistrationMeta(auth={"scheme": "none"}, base_url=base_url.replace("BASE", server))
    )
    settings = Settings(allowed_hosts=["127.0.0.1"], local_upstreams=[server.split("//", 1)[1]])

    async def go() -> Any:
        ex = Executor(settings, MemoryEconomy(), {api.id: api})
        try:
            return await ex.call(tools[0], ARGS)
        finally:
            await ex.aclose()

    result = asyncio.run(go())
    assert result.ok, result
    assert Recorder.paths == [called]
