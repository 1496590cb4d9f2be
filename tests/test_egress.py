"""Egress policy (core.egress): no server-side request forgery into our own services.

The reported attack runs for real: a document whose server is our Neo4j HTTP port with a Cypher body
example, and one on our Redis port, are refused at registration and, planted directly in the store, refused again
by the executor before any byte leaves; an allowed name that resolves to 127.0.0.1 is refused; a DNS answer that
changes between registration and the call (rebinding) is caught at connect time; named local upstreams and
override targets keep working over real sockets.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from core.egress import EgressPolicy, internal_address, parse_ip
from core.errors import DisallowedHost
from core.settings import DEFAULT_ALLOWED_HOSTS, Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import ApiRecord, RegistrationMeta, ToolRecord
from graph.openapi import parse_document
from graph.registry import register
from sandbox.catalog import REAL_HOSTS, shipped_documents
from sandbox.keys import DEMO_KEY

SSRF_FORMS = [
    "file:///etc/passwd",
    "gopher://127.0.0.1:6379/_INFO",
    "ftp://apis.data.go.kr/",
    "dict://127.0.0.1:6379/",
    "javascript:alert(1)",
    "//127.0.0.1/",
    "http:///x",
    "http://user:pw@apis.data.go.kr/",
    "http://apis.data.go.kr@127.0.0.1/",
    "http://apis.data.go.kr\\@127.0.0.1/",
    "http://127.0.0.1#@apis.data.go.kr/",
    "http://apis.data.go.kr:80@evil.example/",
    "http://127.0.0.1/",
    "http://127.0.0.1:7474/db/neo4j/tx/commit",
    "http://127.1/",
    "http://127.000.000.001/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0x7f.1/",
    "http://0177.0.0.1/",
    "http://0/",
    "http://0.0.0.0/",
    "http://localhost/",
    "http://localhost./",
    "http://LOCALHOST/",
    "http://localhost.localdomain/",
    "http://[::1]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::]/",
    "http://[fe80::1]/",
    "http://[fd00:ec2::254]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.170.2/",
    "http://100.100.100.200/",
    "http://100.64.0.1/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.0.1/",
    "http://192.0.0.1/",
    "http://198.18.0.1/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://metadata.google.internal/",
    "http://metadata/",
    "http://instance-data/",
    "http://apis.data.go.kr.evil.example/",
    "http://evilapis.data.go.kr/",
    "http://data.go.kr.evil.example/",
    "http://xn--apis-data-go-kr.example/",
    "http://ⓛocalhost/",
    "http://loc%61lhost/",
    "http://127.0.0.1%2f@apis.data.go.kr/",
    "http://[::1]:6379/",
    "http://kubernetes.default.svc/",
    "http://redis:6379/",
    "http://neo4j:7474/",
    "https://127.0.0.1:16379/",
    "http://apis.data.go.kr%00.evil.example/",
]


class Counting(BaseHTTPRequestHandler):
    """Stands in for an internal service: counts every request it gets."""

    hits: ClassVar[list[str]] = []

    def _any(self) -> None:
        Counting.hits.append(f"{self.command} {self.path}")
        body = b'{"rows": [{"code": "A1", "v": "internal"}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _any

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def internal() -> Iterator[tuple[str, int]]:
    Counting.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "127.0.0.1", int(server.server_address[1])
    server.shutdown()
    server.server_close()


def doc_for(server: str, *, body_example: Any = None, title: str = "Internal") -> dict[str, Any]:
    row = {"type": "object", "properties": {"code": {"type": "string"}, "v": {"type": "string"}}}
    ok = {
        "200": {
            "description": "ok",
            "content": {
                "application/json": {
                    "schema": {"type": "object", "properties": {"rows": {"type": "array", "items": row}}}
                }
            },
        }
    }
    op: dict[str, Any] = {"operationId": "commit", "responses": ok}
    if body_example is not None:
        op["requestBody"] = {
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "properties": {"statements": {"type": "array", "items": {"type": "object"}}},
                    },
                    "example": body_example,
                }
            }
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": title, "version": "1"},
        "servers": [{"url": server}],
        "paths": {"/db/neo4j/tx/commit": {"post": op}},
    }


def call_one(
    settings: Settings,
    api: ApiRecord,
    tool: ToolRecord,
    args: dict[str, Any] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Any:
    async def go() -> Any:
        ex = Executor(settings, MemoryEconomy(), {api.id: api}, transport=transport)
        try:
            return await ex.call(tool, args or {})
        finally:
            await ex.aclose()

    return asyncio.run(go())


def planted(server: str, **kw: Any) -> tuple[ApiRecord, ToolRecord]:
    """What a store would hold had an older version registered it: skips registration on purpose."""
    api, tools = parse_document(doc_for(server, **kw))
    return api, tools[0]


# -- the policy itself ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", SSRF_FORMS)
def test_ssrf_forms_are_refused_with_the_default_allow_list(url: str) -> None:
    policy = EgressPolicy.from_settings(Settings())
    with pytest.raises(DisallowedHost):
        policy.check_url(url, resolve=True)


def test_ssrf_forms_are_refused_even_when_loopback_names_are_allow_listed() -> None:
    """The old defaults (127.0.0.1, localhost) allowed by name: every internal address is still refused."""
    settings = Settings(allowed_hosts=["127.0.0.1", "localhost", "::1", "0.0.0.0"])
    policy = EgressPolicy.from_settings(settings)
    refused = 0
    for url in SSRF_FORMS:
        with pytest.raises(DisallowedHost):
            policy.check_url(url, resolve=True)
        refused += 1
    assert refused == len(SSRF_FORMS) >= 60


def test_internal_address_classification() -> None:
    internal = [
        "127.0.0.1",
        "10.1.2.3",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "::",
        "fe80::1",
        "fd00::1",
        "::ffff:10.0.0.1",
        "64:ff9b::a9fe:a9fe",
        "2002:a9fe:a9fe::1",
        "224.0.0.1",
        "240.0.0.1",
    ]
    public = ["8.8.8.8", "1.1.1.1", "211.43.0.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"]
    for a in internal:
        ip = parse_ip(a)
        assert ip is not None and internal_address(ip), a
    for a in public:
        ip = parse_ip(a)
        assert ip is not None and not internal_address(ip), a


def test_allow_list_exact_names_wildcards_and_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOPA_ALLOWED_HOSTS", "open.example.go.kr, *.data.example.kr")
    settings = Settings()
    assert settings.allowed_hosts == ["open.example.go.kr", "*.data.example.kr"]
    assert set(DEFAULT_ALLOWED_HOSTS) <= set(settings.allowed_host_patterns())  # adding keeps the defaults
    monkeypatch.setenv("KOPA_ALLOWED_HOSTS", json.dumps(["Open.Example.go.kr."]))
    assert Settings().allowed_hosts == ["open.example.go.kr"]
    policy = EgressPolicy.from_settings(settings)
    for ok in (
        "https://apis.data.go.kr/1360000",
        "http://open.example.go.kr/x",
        "https://a.data.example.kr/",
        "https://b.c.data.example.kr/",
        "https://OPEN.EXAMPLE.GO.KR./x",
    ):
        assert policy.check_url(ok).host
    for bad in ("https://data.example.kr/", "https://xdata.example.kr/", "https://open.example.go.kr.evil.example/"):
        with pytest.raises(DisallowedHost):
            policy.check_url(bad)
    off = EgressPolicy.from_settings(Settings(allowed_hosts=["only.example"], use_default_hosts=False))
    with pytest.raises(DisallowedHost):
        off.check_url("https://apis.data.go.kr/")
    monkeypatch.setenv("KOPA_ALLOWED_HOSTS", "http://127.0.0.1:7474/")
    with pytest.raises(ValueError, match="host names"):
        Settings()


# -- registration --------------------------------------------------------------------------------------------


def test_neo4j_http_and_redis_ports_are_refused_at_registration(tmp_path: Path) -> None:
    """The reported attack: with 127.0.0.1 allow-listed by name (the old default), a document pointing at our Neo4j
    HTTP port with Cypher in a body example, or at our Redis port, is refused with a 422-class error."""
    settings = Settings(
        allowed_hosts=["127.0.0.1", "localhost"],
        upstream_overrides=",".join(f"{h}=http://127.0.0.1:18090" for h in REAL_HOSTS),
    )
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    cypher = {"statements": [{"statement": "CREATE (:Pwned {at: timestamp()})"}]}
    for server in ("http://127.0.0.1:17474", "http://127.0.0.1:16379", "http://localhost:17474", "http://[::1]:17474"):
        with pytest.raises(DisallowedHost, match="internal address"):
            register(store, settings, doc_for(server, body_example=cypher))
    assert store.list_apis()[1] == 0
    # the override target itself (the operator named it, with its port) stays registrable
    register(store, settings, doc_for("http://127.0.0.1:18090", title="Sandbox direct"))
    assert store.list_apis()[1] == 1
    store.close()


def test_allowed_name_resolving_to_loopback_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = socket.getaddrinfo

    def fake(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "evil.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 80))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    settings = Settings(allowed_hosts=["evil.example"])
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    with pytest.raises(DisallowedHost, match="resolves to an internal address"):
        register(store, settings, doc_for("http://evil.example"))
    # and "localhost" allow-listed by name resolves (through /etc/hosts) to loopback: refused the same way
    with pytest.raises(DisallowedHost, match="internal address"):
        register(store, Settings(allowed_hosts=["localhost"]), doc_for("http://localhost:7474"))
    store.close()


def test_api_answers_422_host_not_allowed(internal: tuple[str, int]) -> None:
    host, port = internal
    with tempfile.TemporaryDirectory() as d:
        settings = Settings(
            bootstrap_token=SecretStr("boot-egress-token"),
            allowed_hosts=["127.0.0.1"],
            embedded_path=Path(d) / "g.sqlite3",
        )
        with TestClient(create_app(settings)) as client:
            r = client.post(
                "/v1/apis", json=doc_for(f"http://{host}:{port}"), headers={"Authorization": "Bearer boot-egress-token"}
            )
            assert r.status_code == 422, r.text
            assert r.json()["error"] == "host_not_allowed"
            assert "KOPA_LOCAL_UPSTREAMS" in r.json()["detail"]
    assert Counting.hits == []


# -- calls ---------------------------------------------------------------------------------------------------


def test_planted_internal_tool_is_refused_before_any_byte_is_sent(internal: tuple[str, int]) -> None:
    host, port = internal
    api, tool = planted(f"http://{host}:{port}", body_example={"statements": [{"statement": "CREATE (:Pwned)"}]})
    settings = Settings(allowed_hosts=["127.0.0.1"])
    result = call_one(settings, api, tool, {"statements": [{"statement": "CREATE (:Pwned)"}]})
    assert result.outcome == "invalid" and "internal address" in result.reason
    # a name that resolves there is refused too, and so is a base_url pointing there
    result = call_one(Settings(allowed_hosts=["localhost"]), *planted(f"http://localhost:{port}"))
    assert result.outcome == "invalid"
    assert Counting.hits == []


def test_planted_tool_against_real_neo4j_http_creates_nothing(neo4j_uri: str) -> None:
    """Against the real Neo4j: no node is created through its HTTP endpoint."""
    from neo4j import GraphDatabase

    label = "Pwned" + socket.gethostname().replace("-", "")[:8].capitalize()
    http_port = 17474
    api, tool = planted(
        f"http://127.0.0.1:{http_port}", body_example={"statements": [{"statement": f"CREATE (:{label})"}]}
    )
    result = call_one(
        Settings(allowed_hosts=["127.0.0.1"]), api, tool, {"statements": [{"statement": f"CREATE (:{label})"}]}
    )
    assert result.outcome == "invalid", result
    with GraphDatabase.driver(neo4j_uri, auth=None) as driver:
        records, _, _ = driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS c")
        assert records[0]["c"] == 0


def test_dns_rebinding_between_registration_and_call_is_caught(
    internal: tuple[str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, port = internal
    answers = {"rebind.example": "93.184.216.34"}
    real = socket.getaddrinfo

    def fake(host: Any, p: Any, *args: Any, **kwargs: Any) -> Any:
        if host in answers:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[host], int(p or 80)))]
        return real(host, p, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    settings = Settings(allowed_hosts=["rebind.example"])
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    result = register(store, settings, doc_for(f"http://rebind.example:{port}"))
    answers["rebind.example"] = "127.0.0.1"  # the attacker's DNS now answers loopback
    tool = store.tools_of_api(result.api.id)[0]
    outcome = call_one(settings, result.api, tool)
    assert outcome.outcome == "invalid" and "internal address" in outcome.reason
    assert Counting.hits == []
    store.close()


def test_named_local_upstream_is_reached_over_a_socket(internal: tuple[str, int], tmp_path: Path) -> None:
    host, port = internal
    settings = Settings(allowed_hosts=["127.0.0.1"], local_upstreams=[f"127.0.0.1:{port}"])
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    result = register(store, settings, doc_for(f"http://{host}:{port}"))
    tool = store.tools_of_api(result.api.id)[0]
    outcome = call_one(settings, result.api, tool)
    assert outcome.outcome == "ok", outcome
    assert Counting.hits == ["POST /db/neo4j/tx/commit"]
    # the same name on another port is not covered by the entry
    other = Settings(allowed_hosts=["127.0.0.1"], local_upstreams=["127.0.0.1:1"])
    assert call_one(other, result.api, tool).outcome == "invalid"
    assert len(Counting.hits) == 1
    store.close()


def test_override_target_is_reached_over_a_socket(sandbox_url: str) -> None:
    """The catalog through the sandbox over a real socket (override target named by the operator)."""
    settings = Settings(upstream_overrides=",".join(f"{h}={sandbox_url}" for h in REAL_HOSTS))
    doc = shipped_documents()["StanReginCd"]
    api, tools = parse_document(doc, RegistrationMeta())
    tool = tools[0]
    os.environ.setdefault(settings.verify.key_secret, DEMO_KEY)
    outcome = call_one(settings, api, tool, {"locatadd_nm": "서울특별시"})
    assert outcome.status == 200, outcome
    assert outcome.url.startswith(sandbox_url)
