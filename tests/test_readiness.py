"""Clean outages and the production guard: /readyz answers 503 within a second when Neo4j
or Redis stops answering (a TCP proxy of this test in front of the shared servers goes silent; the shared servers
are never touched), 500s show in /metrics, an exhausted Neo4j pool answers 503 busy with Retry-After (not
unreachable), and KOPA_ENV=production refuses default secrets at start."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import GraphDatabase
from pydantic import SecretStr

from api.app import create_app
from core.errors import ConfigurationError
from core.settings import Neo4jSettings, SandboxSettings, Settings
from graph.neo4j_store import Neo4jStore
from sandbox.catalog import shipped_documents

ADMIN = {"Authorization": "Bearer boot-two"}


class Proxy:
    """Forwards 127.0.0.1:<port> to an upstream; `freeze()` keeps every connection open but relays nothing (the way
    a host that went away looks to a client), `thaw()` resumes for new connections."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.frozen = threading.Event()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = int(self.sock.getsockname()[1])
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(client)
            if self.frozen.is_set():
                continue  # accepted, never answered
            try:
                up = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            self.conns.append(up)
            for a, b in ((client, up), (up, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                while self.frozen.is_set():
                    time.sleep(0.05)
                dst.sendall(data)
        except OSError:
            pass

    def freeze(self) -> None:
        self.frozen.set()

    def thaw(self) -> None:
        self.frozen.clear()

    def close(self) -> None:
        """Gone for good: connections reset (before the relays wake, so nothing still queued gets through)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread; a bare close() would not
        self.sock.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass
        self.frozen.clear()


def _hostport(url: str) -> tuple[str, int]:
    rest = url.split("://", 1)[1].split("/", 1)[0]
    host, _, port = rest.rpartition(":")
    return host, int(port)


@pytest.fixture
def neo4j_proxy(neo4j_uri: str) -> Iterator[Proxy]:
    p = Proxy(_hostport(neo4j_uri))
    yield p
    p.close()


@pytest.fixture
def redis_proxy(redis_url: str) -> Iterator[Proxy]:
    p = Proxy(_hostport(redis_url))
    yield p
    p.close()


def timed_ready(client: TestClient) -> tuple[int, float, dict[str, str]]:
    start = time.perf_counter()
    r = client.get("/readyz")
    return r.status_code, time.perf_counter() - start, r.json()["checks"]


def test_readyz_503_within_a_second_when_neo4j_goes_silent(neo4j_proxy: Proxy) -> None:
    settings = Settings(store="neo4j", neo4j=Neo4jSettings(uri=f"bolt://127.0.0.1:{neo4j_proxy.port}"), redis_url=None)
    with TestClient(create_app(settings)) as client:
        status, _, checks = timed_ready(client)
        assert status == 200 and checks == {"neo4j": "ok"}
        neo4j_proxy.freeze()
        for _ in range(3):  # repeated probes while it hangs: each bounded, no pile-up
            status, took, checks = timed_ready(client)
            assert status == 503 and took < 1.0, (status, took, checks)
            assert checks["neo4j"].startswith("unavailable")
        assert client.get("/healthz").status_code == 200
        neo4j_proxy.thaw()


def test_readyz_503_within_a_second_when_redis_goes_silent_or_away(redis_proxy: Proxy, tmp_path: Path) -> None:
    settings = Settings(redis_url=f"redis://127.0.0.1:{redis_proxy.port}/0", embedded_path=tmp_path / "g.sqlite3")
    with TestClient(create_app(settings)) as client:
        status, _, checks = timed_ready(client)
        assert status == 200 and checks["redis"] == "ok", checks
        redis_proxy.freeze()
        status, took, checks = timed_ready(client)
        assert status == 503 and took < 1.0, (took, checks)
        assert checks["redis"].startswith("unavailable") and checks["embedded"] == "ok"
        redis_proxy.close()  # now refused outright
        status, took, checks = timed_ready(client)
        assert status == 503 and took < 1.0, (took, checks)


def test_server_errors_are_counted_in_metrics(tmp_path: Path) -> None:
    settings = Settings(bootstrap_token=SecretStr("metrics-boot-token"), embedded_path=tmp_path / "g.sqlite3")
    app = create_app(settings)

    @app.get("/_boom")
    def boom() -> None:
        raise RuntimeError("boom")

    with TestClient(app, raise_server_exceptions=False) as client:
        for _ in range(3):
            assert client.get("/_boom").status_code == 500
        text = client.get("/metrics").text
    assert 'kopa_http_server_errors_total{route="/_boom"} 3.0' in text
    assert 'kopa_http_requests_total{method="GET",route="/_boom",status="500"} 3.0' in text


@pytest.mark.parametrize("boot", ["change-me", "boot", "short-token"])
def test_production_refuses_default_bootstrap_tokens(boot: str, tmp_path: Path) -> None:
    settings = Settings(env="production", bootstrap_token=SecretStr(boot), embedded_path=tmp_path / "g.sqlite3")
    with pytest.raises(ConfigurationError, match="KOPA_BOOTSTRAP_TOKEN"):
        create_app(settings)


def test_production_guard_sandbox_secret_and_good_configuration(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KOPA_ENV", "prod")
    settings = Settings(embedded_path=tmp_path / "g.sqlite3")
    assert settings.production
    with pytest.raises(ValueError, match="KOPA_SANDBOX__ADMIN_TOKEN"):
        settings.check_production(sandbox=True)
    with pytest.raises(ValueError, match="loopback"):
        Settings(env="production", allowed_hosts=["localhost"]).check_production()
    good = settings.model_copy(
        update={
            "bootstrap_token": SecretStr("x7Gk2pQ9vL4mN8rT1wZ5"),
            "sandbox": SandboxSettings(admin_token=SecretStr("Yq3Lp8Vn2Kd6Hs9Tb4Wm")),
        }
    )
    good.check_production(sandbox=True)
    with TestClient(create_app(good)) as client:
        assert client.get("/healthz").status_code == 200
    # outside production the defaults still work (dev, tests, the demo)
    Settings(env="dev", bootstrap_token=SecretStr("boot")).check_production(sandbox=True)
    create_app(Settings(env="dev", bootstrap_token=SecretStr("boot"), embedded_path=tmp_path / "d.sqlite3"))


def test_readyz_is_fast_when_healthy(tmp_path: Path, redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, embedded_path=tmp_path / "g.sqlite3")
    with TestClient(create_app(settings)) as client:
        status, took, checks = timed_ready(client)
        assert status == 200 and took < 1.0 and checks == {"embedded": "ok", "redis": "ok"}


def test_pool_exhaustion_is_busy_not_unreachable(neo4j_uri: str) -> None:
    store = Neo4jStore(Neo4jSettings(uri=neo4j_uri))
    store.init_schema()
    store.driver.close()  # the same store with a tiny pool, so 50 concurrent registrations must wait for it
    store.driver = GraphDatabase.driver(
        neo4j_uri,
        max_connection_pool_size=2,
        connection_acquisition_timeout=0.2,
        connection_timeout=2.0,
        notifications_min_severity="OFF",
    )
    documents = shipped_documents()
    docs = [documents[name] for name in sorted(documents)]
    try:
        with TestClient(create_app(Settings(bootstrap_token=SecretStr("boot-two"), redis_url=None), store)) as c:

            def post(i: int) -> Any:
                return c.post(
                    "/v1/apis",
                    params={"api_id": f"pool-{i}"},
                    json=docs[i % len(docs)],
                    headers={"Authorization": "Bearer boot-two"},
                )

            with ThreadPoolExecutor(50) as pool:
                answers = list(pool.map(post, range(50)))
        statuses = [r.status_code for r in answers]
        busy = [r for r in answers if r.status_code == 503]
        assert busy, f"no registration waited for the pool: {statuses}"
        assert set(statuses) <= {200, 201, 503}, statuses
        for r in busy:
            assert r.json()["error"] == "store_busy" and "retry" in r.json()["detail"], r.text
            assert "not reachable" not in r.text and r.headers.get("retry-after", "").isdigit(), r.headers
    finally:
        for i in range(50):
            store.delete_api(f"pool-{i}")
        store.close()
