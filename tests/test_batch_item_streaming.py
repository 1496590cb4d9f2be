"""Batch items stream from the store, bounded.

* 30 parallel full pages (30 readers, each streaming a whole batch of 1,000 real trajectories, about 9 kB each)
  raise the server's peak memory by a small multiple of one store chunk, far under what building each page in
  memory takes (measured here as the size of one page built in memory, times 30).
* A token holds at most `batches.item_streams_per_token` streams at once: one more is answered 429 with
  Retry-After and the reason, and a slot comes back when a stream ends, also when the client goes away.
* The page bound is stated in the OpenAPI document and enforced (422 above it).

The server is `kopa serve` in a process of its own, so its memory is its own (Linux: /proc/PID/status).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.deps import slot_key
from api.routes.batches import ITEMS_CHUNK, MAX_ITEMS_PAGE
from api.security import Principal, hash_token, mint_token
from core.settings import BatchSettings, Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.registry import register
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from synthesis.engine import synthesize
from synthesis.export import convert
from synthesis.records import SynthesisResult
from tests.support.helpers import free_port, running
from tests.support.upstream import SERVICES
from verification.runs import execute_run, new_run

ROOT = Path(__file__).resolve().parents[1]
PAGE = 1000  # the batch's size: a full page holds all of it
PARALLEL = 30
BATCH_ID = "tb_streamed"
PER_TOKEN = 4

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/PID/status (Linux)")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """40 trajectories synthesised against the in-process sandbox."""
    settings, transport = sandbox_mode(Settings(redis_url=None))
    store = EmbeddedStore(tmp_path_factory.mktemp("made") / "g.sqlite3")
    try:
        for name in SERVICES:
            register(store, settings, shipped_documents()[name])
        asyncio.run(execute_run(store, settings, new_run(), transport=transport, economy=MemoryEconomy()))

        async def go() -> SynthesisResult:
            apis = {a.id: a for a in store.list_apis(limit=100)[0]}
            ex = Executor(settings, MemoryEconomy(), apis, transport=transport)
            try:
                return await synthesize(store, settings, ex, count=40, seed=3)
            finally:
                await ex.aclose()

        records = [r.to_json() for r in asyncio.run(go())["records"]]
    finally:
        store.close()
    assert len(records) == 40
    return records


def copies(made: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """`count` trajectories: the synthesised ones over and over, each with its own id and place."""
    return [{**made[i % len(made)], "id": f"{made[i % len(made)]['id']}-{i}", "seq": i} for i in range(count)]


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


class Server:
    def __init__(self, url: str, proc: subprocess.Popen[bytes], store: EmbeddedStore, tokens: list[str]) -> None:
        self.url, self.proc, self.store, self.tokens = url, proc, store, tokens


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, made: list[dict[str, Any]]) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("stream")
    path = folder / "g.sqlite3"
    store = EmbeddedStore(path)
    store.save_batch(
        {"id": BATCH_ID, "team": "team-a", "status": "completed", "format": "trl", "created_at": "2026-01-01"}
    )
    store.add_trajectories(BATCH_ID, copies(made, PAGE))
    tokens = [mint_token(store, "reader", "team-a") for _ in range(PARALLEL)]
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}  # no Redis, no services
    env.update(
        KOPA_STORE="embedded",
        KOPA_EMBEDDED_PATH=str(path),
        KOPA_DATA_DIR=str(folder),
        KOPA_LOG_LEVEL="WARNING",
        KOPA_BATCHES__ITEM_STREAMS_PER_TOKEN=str(PER_TOKEN),
    )
    url = f"http://127.0.0.1:{port}"
    serve = [sys.executable, "-m", "cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    try:
        with running(serve, ready=url + "/healthz", env=env, timeout=60) as proc:
            yield Server(url, proc, store, tokens)
    finally:
        store.close()


def read_page(url: str, token: str, start: threading.Barrier | None = None) -> int:
    """Stream one full page and count its lines (nothing kept)."""
    if start is not None:
        start.wait()
    lines = 0
    with httpx.stream(
        "GET",
        f"{url}/v1/trajectory-batches/{BATCH_ID}/items",
        params={"limit": PAGE},
        headers={"Authorization": f"Bearer {token}"},
        timeout=300,
    ) as r:
        assert r.status_code == 200, r.read()
        for chunk in r.iter_bytes():
            lines += chunk.count(b"\n")
    return lines


def page_in_memory(store: EmbeddedStore) -> int:
    """Bytes one full page takes when built in memory (the rows read at once and converted), as before."""
    tracemalloc.start()
    try:
        page, _ = store.list_trajectories(BATCH_ID, 0, PAGE)
        lines = [json.dumps(convert(r, "trl"), ensure_ascii=False) for r in page]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(lines) == PAGE
    return peak


def test_30_parallel_full_pages_stream_in_bounded_memory(server: Server) -> None:
    assert read_page(server.url, server.tokens[0]) == PAGE  # warm: imports, thread pool, first chunks
    base_kb = status_kb(server.proc.pid, "VmRSS")
    start = threading.Barrier(PARALLEL)
    counts: list[int] = []
    errors: list[BaseException] = []

    def reader(token: str) -> None:
        try:
            counts.append(read_page(server.url, token, start))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(t,)) for t in server.tokens]
    began = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    elapsed = time.monotonic() - began
    assert not errors, errors[:3]
    assert counts == [PAGE] * PARALLEL
    rise_mb = (status_kb(server.proc.pid, "VmHWM") - base_kb) / 1024
    built_mb = page_in_memory(server.store) / 2**20
    print(
        f"\n{PARALLEL} parallel full pages of {PAGE} trajectories in {elapsed:.1f} s: server peak memory rose "
        f"{rise_mb:.1f} MB; one page built in memory takes {built_mb:.1f} MB ({PARALLEL} x = "
        f"{PARALLEL * built_mb:.0f} MB)"
    )
    assert rise_mb < PARALLEL * built_mb / 10, (rise_mb, built_mb)
    assert rise_mb < 150, rise_mb


def hold(url: str, token: str) -> tuple[socket.socket, bytes]:
    """A stream of a full page opened and left unread (a small receive buffer, so the server waits on it): the
    socket and the response head."""
    parts = urlsplit(url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(30)
    sock.connect((parts.hostname or "127.0.0.1", parts.port or 80))
    sock.sendall(
        f"GET /v1/trajectory-batches/{BATCH_ID}/items?limit={PAGE} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Authorization: Bearer {token}\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1024)
    return sock, head


def test_a_token_holds_a_bounded_number_of_streams(server: Server) -> None:
    token = server.tokens[1]
    url = f"{server.url}/v1/trajectory-batches/{BATCH_ID}/items"
    auth = {"Authorization": f"Bearer {token}"}
    held = [hold(server.url, token) for _ in range(PER_TOKEN)]
    try:
        assert all(head.startswith(b"HTTP/1.1 200") for _, head in held)  # open, not read: each holds its slot
        over = httpx.get(url, params={"limit": 1}, headers=auth, timeout=30)
        assert over.status_code == 429, over.text[:300]
        assert over.json()["error"] == "too_many_requests" and f"at most {PER_TOKEN}" in over.json()["detail"]
        assert int(over.headers["retry-after"]) >= 1
        other = httpx.get(url, params={"limit": 1}, headers={"Authorization": f"Bearer {server.tokens[2]}"})
        assert other.status_code == 200  # the limit is per token
        held[0][0].close()  # the client goes away mid-page: its slot comes back
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            again = httpx.get(url, params={"limit": 1}, headers=auth, timeout=30)
            if again.status_code == 200:
                break
            time.sleep(0.2)
        assert again.status_code == 200 and len(again.text.splitlines()) == 1, again.text[:200]
    finally:
        for sock, _ in held:
            sock.close()


def test_the_page_bound_is_documented_and_enforced(tmp_path: Path, made: list[dict[str, Any]]) -> None:
    settings = Settings(redis_url=None, batches=BatchSettings(item_streams_per_token=2))
    store = EmbeddedStore(tmp_path / "b.sqlite3")
    store.save_batch({"id": "tb_small", "team": "team-a", "status": "completed", "created_at": "2026-01-01"})
    store.add_trajectories("tb_small", copies(made, ITEMS_CHUNK * 4 + 5))
    token = mint_token(store, "reader", "team-a")
    auth = {"Authorization": f"Bearer {token}"}
    app = create_app(settings, store)
    with TestClient(app) as c:
        limit = next(
            p
            for p in c.get("/openapi.json").json()["paths"]["/v1/trajectory-batches/{batch_id}/items"]["get"][
                "parameters"
            ]
            if p["name"] == "limit"
        )
        assert limit["schema"]["maximum"] == MAX_ITEMS_PAGE and f"{MAX_ITEMS_PAGE:,}" in limit["description"]
        path = "/v1/trajectory-batches/tb_small/items"
        assert c.get(path, params={"limit": MAX_ITEMS_PAGE + 1}, headers=auth).status_code == 422
        # pages that cross chunk boundaries come whole, in order, with the next page linked
        size = ITEMS_CHUNK * 2 + 7
        page = c.get(path, params={"offset": 3, "limit": size, "format": "record"}, headers=auth)
        assert [json.loads(x)["seq"] for x in page.text.splitlines()] == list(range(3, 3 + size))
        assert page.headers["x-total-count"] == str(ITEMS_CHUNK * 4 + 5)
        assert f"offset={3 + size}&" in page.headers["link"]
        rest = c.get(path, params={"offset": ITEMS_CHUNK * 4, "format": "record"}, headers=auth)
        assert len(rest.text.splitlines()) == 5 and "link" not in rest.headers
        # every stream gave its slot back
        record = store.find_token(hash_token(token))
        assert record is not None
        key = slot_key(Principal("reader", "team-a", record.id))
        assert app.state.kopa_streams.held(key) == 0
        release = [app.state.kopa_streams.take(key, 2) for _ in range(2)]
        busy = c.get(path, params={"limit": 1}, headers=auth)
        assert busy.status_code == 429 and busy.headers["retry-after"] == "2"
        release[0]()
        assert c.get(path, params={"limit": 1}, headers=auth).status_code == 200
    store.close()
