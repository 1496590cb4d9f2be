"""Outages: Neo4j cut mid-session (a TCP proxy in front of the shared Neo4j that this test cuts: the shared server
is never touched) gives 503 fast on /readyz and /v1 routes and recovers; Redis away (a closed port) makes a run or
batch dispatch answer 503 with the record marked failed and the team's slot released; in-process runs and batches
that crash or are cancelled are marked failed, never left queued or running."""

from __future__ import annotations

import asyncio
import contextlib
import socket
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
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from synthesis.batches import new_batch, run_batch
from tests.support.helpers import free_port
from verification.runs import execute_run, new_run

ADMIN = {"Authorization": "Bearer boot-o"}


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
    settings = Settings(bootstrap_token=SecretStr("boot-o"), redis_url=f"redis://127.0.0.1:{closed}/0",
                        batches=BatchSettings(max_count=50, max_concurrent=2))
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
    settings = Settings(bootstrap_token=SecretStr("boot-o"), redis_url=None,
                        batches=BatchSettings(max_count=50, max_concurrent=1))  # in process
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
    batch = new_batch(store, settings, "team-x", count=3)
    asyncio.run(cancel_after(run_batch(store, settings, batch["id"], transport=Hanging()), 1.0))
    closed = store.get_batch(batch["id"])
    assert closed is not None and closed["status"] == "failed" and "cancelled" in closed["message"]
    new_batch(store, settings, "team-x", count=3)  # the slot is free again
    store.close()
