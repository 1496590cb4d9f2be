"""Outages: Neo4j cut mid-session (a TCP proxy in front of the shared Neo4j that this test cuts: the shared server
is never touched) gives 503 fast on /readyz and /v1 routes and recovers; Redis away (a closed port) makes a run or
batch dispatch answer 503 with the record marked failed and the team's slot released; in-process runs and batches
that crash or are cancelled are marked failed, never left queued or running."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from api.security import mint_token
from core.settings import BatchSettings, Neo4jSettings, Settings
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import ToolRecord
from graph.neo4j_store import Neo4jStore
from graph.registry import register
from sandbox.catalog import REAL_HOSTS, shipped_documents
from sandbox.inprocess import sandbox_mode
from synthesis.batches import BatchRequest, new_batch, run_batch
from tests.support.helpers import celery_worker_command, free_port
from verification.runs import execute_run, new_run

ADMIN = {"Authorization": "Bearer boot-o"}
ROOT = Path(__file__).resolve().parents[1]


class CuttableProxy:
    """A TCP forwarder on a free loopback port; `cut()` closes the listener and every open connection (Neo4j
    looks gone), `restore()` listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target, self.port = target, free_port()
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", self.port))
        srv.listen(64)
        self.listener = srv
        threading.Thread(target=self._accept, args=(srv,), daemon=True).start()

    def _accept(self, srv: socket.socket) -> None:
        while True:
            try:
                client, _ = srv.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        if self.listener is not None:
            with contextlib.suppress(OSError):  # wakes the thread blocked in accept(); close() alone would not
                self.listener.shutdown(socket.SHUT_RDWR)
            self.listener.close()
            self.listener = None
        with self.lock:
            for s in self.conns:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
            self.conns.clear()


@pytest.fixture
def proxied(neo4j_uri: str) -> Iterator[tuple[CuttableProxy, Neo4jStore]]:
    u = urlparse(neo4j_uri)
    proxy = CuttableProxy((u.hostname or "127.0.0.1", u.port or 7687))
    store = Neo4jStore(Neo4jSettings(uri=f"bolt://127.0.0.1:{proxy.port}"))
    store.init_schema()
    yield proxy, store
    proxy.cut()
    store.close()


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    start = time.monotonic()
    out = fn(*args, **kwargs)
    return time.monotonic() - start, out


def test_neo4j_cut_gives_fast_503_and_recovers(proxied: tuple[CuttableProxy, Neo4jStore]) -> None:
    proxy, store = proxied
    with TestClient(create_app(Settings(bootstrap_token=SecretStr("boot-o"), redis_url=None), store)) as c:
        assert c.get("/readyz").status_code == 200
        assert c.get("/v1/tools", headers=ADMIN).status_code == 200
        proxy.cut()
        took, r = timed(c.get, "/readyz")
        assert r.status_code == 503 and took < 1.5, (took, r.text)
        assert r.json()["checks"]["neo4j"].startswith("unavailable")
        for path in ("/v1/tools", "/v1/apis", "/v1/links", "/v1/verification-runs", "/v1/tools/x"):
            took, r = timed(c.get, path, headers=ADMIN)
            assert r.status_code == 503 and took < 8, (path, took, r.status_code)
            assert r.json()["error"] == "store_unavailable"
            assert "Traceback" not in r.text
        took, r = timed(c.post, "/v1/verification-runs", json={}, headers=ADMIN)
        assert r.status_code == 503 and took < 8, (took, r.text)
        proxy.restore()
        deadline = time.monotonic() + 15
        while c.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, "no recovery after Neo4j came back"
            time.sleep(0.2)
        assert c.get("/v1/tools", headers=ADMIN).status_code == 200


def test_redis_down_fails_dispatch_and_frees_slots(tmp_path: Path) -> None:
    closed = free_port()  # nothing listens there
    settings = Settings(
        bootstrap_token=SecretStr("boot-o"),
        redis_url=f"redis://127.0.0.1:{closed}/0",
        batches=BatchSettings(max_count=50, max_concurrent=2),
    )
    store = EmbeddedStore(tmp_path / "r.sqlite3")
    reader = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-r')}"}
    with TestClient(create_app(settings, store)) as c:
        took, r = timed(c.post, "/v1/verification-runs", json={}, headers=ADMIN)
        assert r.status_code == 503 and took < 10, (took, r.text)
        assert r.json()["error"] == "queue_unavailable" and "marked failed" in r.json()["detail"]
        runs = store.list_runs()
        assert len(runs) == 1 and runs[0].status == "failed" and "unreachable" in runs[0].message
        assert c.get(f"/v1/verification-runs/{runs[0].id}", headers=ADMIN).json()["status"] == "failed"
        for _ in range(4):  # twice the team's limit: never 409, every batch closed as failed
            took, r = timed(c.post, "/v1/trajectory-batches", json={"count": 2}, headers=reader)
            assert r.status_code == 503 and took < 10, (took, r.status_code, r.text)
        batches = store.list_batches("team-r")
        assert len(batches) == 4 and all(b["status"] == "failed" and b["message"] for b in batches)
    store.close()


class CrashingStore(EmbeddedStore):
    """Reads that the engines need blow up (as a corrupt graph or a bug would)."""

    def all_tools(self, status: str | None = "active") -> list[ToolRecord]:
        raise RuntimeError("graph read exploded")

    def verified_edges(self) -> dict[str, dict[str, list[str]]]:
        raise RuntimeError("graph read exploded")

    def sample_paths(self, starts: list[str], min_hops: int, max_hops: int, per_start: int) -> list[list[str]]:
        raise RuntimeError("graph read exploded")


def test_inprocess_crashes_are_marked_failed(tmp_path: Path) -> None:
    settings = Settings(
        bootstrap_token=SecretStr("boot-o"), redis_url=None, batches=BatchSettings(max_count=50, max_concurrent=1)
    )  # in process
    store = CrashingStore(tmp_path / "c.sqlite3")
    reader = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-c')}"}
    store.save_links([])
    with TestClient(create_app(settings, store)) as c:
        r = c.post("/v1/verification-runs", json={"mode": "inprocess"}, headers=ADMIN)
        assert r.status_code == 202
        run_id = r.json()["id"]
        ids = []
        for _ in range(3):  # limit 1: a crashed batch must not hold the slot
            b = c.post("/v1/trajectory-batches", json={"count": 2}, headers=reader)
            assert b.status_code == 202, b.text
            ids.append(b.json()["id"])
            deadline = time.monotonic() + 20
            while (batch := c.get(f"/v1/trajectory-batches/{ids[-1]}", headers=reader).json())["status"] != "failed":
                assert batch["status"] in ("queued", "running") and time.monotonic() < deadline, batch
                time.sleep(0.05)
            assert "exploded" in batch["message"]
        deadline = time.monotonic() + 20
        while (run := c.get(f"/v1/verification-runs/{run_id}", headers=ADMIN).json())["status"] != "failed":
            assert run["status"] in ("queued", "running") and time.monotonic() < deadline, run
            time.sleep(0.05)
        assert "exploded" in run["message"] and run["finished_at"]
    store.close()


class Hanging(httpx.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


def test_cancelled_inprocess_work_is_marked_failed(tmp_path: Path) -> None:
    settings, sandbox = sandbox_mode(Settings(redis_url=None))
    store = EmbeddedStore(tmp_path / "x.sqlite3")
    for name in ("StanReginCd", "RTMSDataSvcAptTrade"):
        register(store, settings, shipped_documents()[name])
    run = new_run()
    store.save_run(run)

    async def cancel_after(coro: Any, seconds: float) -> None:
        task = asyncio.create_task(coro)
        await asyncio.sleep(seconds)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    # a run whose first upstream call never answers, cancelled (as at shutdown)
    asyncio.run(cancel_after(execute_run(store, settings, run, transport=Hanging(), economy=MemoryEconomy()), 1.0))
    saved = store.get_run(run.id)
    assert saved is not None and saved.status == "failed" and "cancelled" in saved.message and saved.finished_at

    # verify for real, then a batch whose upstream never answers, cancelled
    done = asyncio.run(execute_run(store, settings, new_run(), transport=sandbox, economy=MemoryEconomy()))
    assert done.status == "completed" and store.stats()["links"].get("verified")
    batch = new_batch(store, settings, "team-x", BatchRequest(count=3))
    asyncio.run(cancel_after(run_batch(store, settings, batch.id, transport=Hanging()), 1.0))
    closed = store.get_batch(batch.id)
    assert closed is not None and closed["status"] == "failed" and "cancelled" in closed["message"]
    new_batch(store, settings, "team-x", BatchRequest(count=3))  # the slot is free again
    store.close()


# ------------------------------------------------------------------ Celery runs through Neo4j and Redis restarts
def _celery_env(neo4j_uri: str, redis: str, sandbox_url: str) -> dict[str, str]:
    from tests.test_celery import worker_env

    env = worker_env(neo4j_uri, redis, sandbox_url)
    # no redelivery to wait for: the tasks outlast the outage themselves (and the visibility timeout stays long)
    env.update({"KOPA_VERIFY__VISIBILITY_TIMEOUT_S": "900", "KOPA_VERIFY__OUTAGE_WAIT_S": "240"})
    return env


def _worker(env: dict[str, str], name: str, log: Path) -> subprocess.Popen[bytes]:
    out = log.open("ab")
    return subprocess.Popen(celery_worker_command(name), env=env, cwd=ROOT, stdout=out, stderr=out)


def _finished_after(store: Neo4jStore, run_id: str, back: float, limit: float = 120) -> tuple[float, Any]:
    """Seconds from `back` (the service answering again) until the run is completed or failed."""
    deadline = back + limit
    run = None
    while time.monotonic() < deadline:
        try:
            run = store.get_run(run_id)
        except Exception:
            run = None
        if run is not None and run.status in ("completed", "failed"):
            return time.monotonic() - back, run
        time.sleep(0.5)
    raise AssertionError(
        f"run {run_id} still {run.status if run else '?'} {limit:g} s after the service came "
        f"back: {run.model_dump(include={'message', 'round', 'pending_sources'}) if run else None}"
    )


def _mid_run(store: Neo4jStore, run_id: str, decided: int = 30, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = store.get_run(run_id)
        if run is not None and run.status in ("completed", "failed"):
            raise AssertionError(f"the run ended before the outage: {run.status} {run.message}")
        if sum(store.run_counts(run_id).values()) >= decided:
            return
        time.sleep(0.2)
    raise AssertionError("the run made no progress before the outage")


def _fresh_quota_day(redis_url: str) -> None:
    """Forget the quota-exhausted marks earlier tests left for today in the shared Redis (the quota tests run
    their own sandboxes with quotas; their marks would pause this run's APIs 'until tomorrow')."""
    import redis

    r = redis.Redis.from_url(redis_url)
    try:
        for key in r.scan_iter("kopa:exhausted:*"):
            r.delete(key)
    finally:
        r.close()


@contextlib.contextmanager
def _celery_run_under_way(
    neo4j_uri: str, broker_url: str, shared_redis_url: str, sandbox_url: str, log: Path, worker_prefix: str
) -> Iterator[tuple[Neo4jStore, str]]:
    """A fresh graph with the catalog, two Celery workers on `broker_url`, and a Celery run started and part-way
    through (some links decided); yields the store and the run's id, and stops the workers and closes the store
    afterwards. `shared_redis_url` is the shared Redis whose quota marks are cleared first."""
    from tests.support.helpers import register_catalog
    from tests.test_celery import ALLOWED, stop
    from workers.celery_app import make_celery

    settings = Settings(
        store="neo4j",
        neo4j=Neo4jSettings(uri=neo4j_uri),
        redis_url=broker_url,
        upstream_overrides=",".join(f"{h}={sandbox_url}" for h in REAL_HOSTS),
        allowed_hosts=ALLOWED,
    )
    store = Neo4jStore(settings.neo4j)
    store.init_schema()
    store.reset()
    _fresh_quota_day(shared_redis_url)
    register_catalog(store, settings)
    env = _celery_env(neo4j_uri, broker_url, sandbox_url)
    workers = [_worker(env, f"{worker_prefix}{i}", log) for i in range(2)]
    try:
        run = new_run(mode="celery")
        store.save_run(run)
        make_celery(settings).send_task("kopa.start_round", args=[run.id])
        _mid_run(store, run.id)
        yield store, run.id
    finally:
        for w in workers:
            stop(w)
        store.close()


@pytest.mark.slow
@pytest.mark.celery
@pytest.mark.timeout(900)
def test_celery_run_survives_neo4j_stopped_mid_run(
    neo4j_uri: str, redis_url: str, sandbox_url: str, tmp_path: Path
) -> None:
    log = tmp_path / "workers.log"
    with _celery_run_under_way(neo4j_uri, redis_url, redis_url, sandbox_url, log, "n") as (store, run_id):
        down = time.monotonic()
        ports = {"KOPA_NEO4J_BOLT_PORT": str(urlparse(neo4j_uri).port or 7687)}  # this Neo4j, not another's
        subprocess.run(
            ["bash", str(ROOT / "scripts/services.sh"), "restart-neo4j"],
            check=True,
            capture_output=True,
            env={**os.environ, **ports},
        )  # stops Neo4j, starts it again (keeping the data), until ready
        back = time.monotonic()
        took, final = _finished_after(store, run_id, back)
        print(f"\nNeo4j away {back - down:.1f} s; run {final.status} {took:.1f} s after it answered again")
        assert final.status == "completed" or (final.status == "failed" and final.message), final
        assert took < 120
        text = log.read_text(errors="replace")
        assert "Traceback" not in text or "DependencyLost" not in text, text[-3000:]


@pytest.mark.slow
@pytest.mark.celery
@pytest.mark.timeout(900)
def test_celery_run_survives_redis_stopped_mid_run(
    neo4j_uri: str, redis_url: str, sandbox_url: str, tmp_path: Path
) -> None:
    from tests.test_celery import DurableRedis

    broker = DurableRedis(tmp_path)  # the broker keeps its queue on disk, as a Celery broker must
    broker.start()
    try:
        with _celery_run_under_way(neo4j_uri, broker.url, redis_url, sandbox_url, tmp_path / "workers.log", "r") as (
            store,
            run_id,
        ):
            broker.stop()
            down = time.monotonic()
            time.sleep(10)  # long enough for every worker to hit it
            broker.start()
            back = time.monotonic()
            took, final = _finished_after(store, run_id, back)
            print(f"\nRedis away {back - down:.1f} s; run {final.status} {took:.1f} s after it answered again")
            assert final.status == "completed" or (final.status == "failed" and final.message), final
            assert took < 120
    finally:
        broker.stop()


def test_outlast_retries_with_backoff_then_fails_with_the_reason() -> None:
    from neo4j.exceptions import DatabaseUnavailable

    from workers.tasks import DependencyLost, outlast

    slept: list[float] = []
    calls = {"n": 0}

    def flaky() -> None:
        calls["n"] += 1
        if calls["n"] < 4:
            raise DatabaseUnavailable("Neo.TransientError.General.DatabaseUnavailable: starting")

    outlast("flaky", flaky, wait_s=60, sleep=slept.append)
    assert calls["n"] == 4 and len(slept) == 3 and slept[0] < slept[1] < slept[2]

    def away() -> None:
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6399. Connection refused.")

    with pytest.raises(DependencyLost) as info:
        outlast("away", away, wait_s=0)
    assert "stayed unreachable" in str(info.value) and "127.0.0.1" not in str(info.value)

    def bug() -> None:
        raise KeyError("not an outage")

    with pytest.raises(KeyError):  # anything else is not retried
        outlast("bug", bug, wait_s=60, sleep=slept.append)


def test_no_internal_address_in_any_response_body(proxied: tuple[CuttableProxy, Neo4jStore]) -> None:
    """Neo4j cut and Redis away: /readyz (unauthenticated), /v1 503s and the failed run's message name neither the
    Bolt nor the Redis host:port (the server log does)."""
    proxy, store = proxied
    closed = free_port()
    addresses = [f"127.0.0.1:{proxy.port}", f"127.0.0.1:{closed}", str(proxy.port), str(closed), "bolt://"]
    settings = Settings(bootstrap_token=SecretStr("boot-o"), redis_url=f"redis://127.0.0.1:{closed}/0")
    with TestClient(create_app(settings, store)) as c:
        r = c.post("/v1/verification-runs", json={}, headers=ADMIN)  # Redis away: 503, run marked failed
        assert r.status_code == 503
        bodies = [
            r.text,
            c.get("/readyz").text,
            c.get(f"/v1/verification-runs/{r.json().get('id', 'x')}", headers=ADMIN).text,
        ]
        bodies.append(c.get("/v1/verification-runs", headers=ADMIN).text)
        proxy.cut()
        for path in ("/readyz", "/v1/tools", "/v1/apis", "/v1/links", "/v1/verification-runs"):
            got = c.get(path, headers=ADMIN)
            assert got.status_code == 503, (path, got.status_code)
            bodies.append(got.text)
        bodies.append(c.post("/v1/verification-runs", json={}, headers=ADMIN).text)
    for body in bodies:
        for address in addresses:
            # a bare port is matched as a whole number: ids such as "...-482893" may hold its digits by chance
            pattern = re.escape(address)
            if address.isdigit():
                pattern = rf"(?<![0-9A-Za-z]){pattern}(?![0-9A-Za-z])"
            assert not re.search(pattern, body), (address, body)
    assert "unavailable" in bodies[1] and "redis" in bodies[1]
