"""Test helpers: call sandbox operations by id, in process (ASGI) or over a real socket; register and verify the
catalog into a store; start the processes a test needs (`running`)."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import httpx

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.conversions import register_conversions
from graph.embedded_store import EmbeddedStore
from graph.registry import register
from graph.store import GraphStore
from sandbox.catalog import shipped_documents
from sandbox.keys import DEMO_KEY
from sandbox.providers import all_operations
from sandbox.spec import Operation
from verification.engine import Engine
from verification.rounds import prepare_round
from verification.runs import execute_run, new_run

S = TypeVar("S", bound=GraphStore)
OPS: dict[str, Operation] = {op.op_id: op for op in all_operations()}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(app: Any, **config: Any) -> Iterator[str]:
    """An ASGI app behind uvicorn on a free loopback port in a thread, once it answers /healthz; stopped after."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(10)


def request_args(
    op: Operation, args: dict[str, Any], fmt: str | None = "json", key: str | None = DEMO_KEY
) -> dict[str, Any]:
    params = {k: v for k, v in args.items() if k != "__body__"}
    if key is not None:
        params[op.provider.key_param] = key
    if fmt and op.provider.format_param and fmt in op.provider.formats:
        params[op.provider.format_param] = (
            fmt.upper() if op.provider.format_param in ("dataType", "returnType") else fmt
        )
    out: dict[str, Any] = {"method": op.method, "url": op.path, "params": params}
    if "__body__" in args:
        out["json"] = args["__body__"]
    return out


class Recorder(httpx.AsyncBaseTransport):
    """Every request that would go on the wire (after the key was added), answered by the wrapped transport (the
    in-process sandbox): `urls`, and `seen` (the URL with the headers)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.urls: list[str] = []
        self.seen: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        self.seen.append(f"{request.url} {dict(request.headers)}")
        return await self.inner.handle_async_request(request)


def first_tool_outcome(
    settings: Settings, store: GraphStore, api: Any, transport: httpx.AsyncBaseTransport, args: dict[str, Any]
) -> str:
    """The outcome of calling the API's first registered tool once with `args`, through a fresh executor."""

    async def go() -> str:
        executor = Executor(settings, MemoryEconomy(), {api.id: api}, transport=transport)
        try:
            return (await executor.call(store.tools_of_api(api.id)[0], args)).outcome
        finally:
            await executor.aclose()

    return asyncio.run(go())


def call(
    client: httpx.Client, op_id: str, args: dict[str, Any], fmt: str | None = "json", key: str | None = DEMO_KEY
) -> httpx.Response:
    return client.request(**request_args(OPS[op_id], args, fmt, key))


def items_of(op: Operation, doc: Any) -> list[dict[str, Any]]:
    """Rows of a JSON success body, whatever the envelope."""
    env = op.provider.envelope
    if env == "stanreg":
        return list(doc["StanReginCd"][1]["row"])
    if env == "juso":
        return list(doc["results"]["juso"] or [])
    if env == "odcloud":
        return list(doc["data"])
    if env == "mfds":
        return list(doc["body"].get("items", []))
    body = doc["response"]["body"]
    if env == "molit_json" and op.single:
        return [body["item"]]
    items = body["items"]
    if items == "" or items is None:
        return []
    if isinstance(items, list):
        return items
    item = items["item"]
    return item if isinstance(item, list) else [item]


def result_code(op: Operation, doc: Any) -> str:
    env = op.provider.envelope
    if env == "stanreg":
        return (
            str(doc["StanReginCd"][0]["head"][2]["RESULT"]["resultCode"])
            if "StanReginCd" in doc
            else doc["RESULT"]["resultCode"]
        )
    if env == "juso":
        return str(doc["results"]["common"]["errorCode"])
    if env == "odcloud":
        return str(doc["status_code"])
    if env == "mfds":
        return str(doc["header"]["resultCode"])
    return str(doc["response"]["header"]["resultCode"])


ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def running(
    cmd: list[str],
    *,
    ready: str | Callable[[], bool] | None = None,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
    log: Path | None = None,
    timeout: float = 60,
    stop_timeout: float = 10,
) -> Iterator[subprocess.Popen[bytes]]:
    """A process a test starts (a server, a Celery worker, a redis-server), stopped however the test ends: terminated,
    then killed after `stop_timeout` seconds. Its stdout and stderr go to `log` (a temporary file when None, removed
    after). With `ready` (a URL that must answer 200, or a predicate) the block starts once it holds; a process that
    exits first or is not ready within `timeout` seconds fails the set-up with the end of its log."""
    own = log is None
    if log is None:
        fd, name = tempfile.mkstemp(prefix="kopa-test-", suffix=".log")
        os.close(fd)
        log = Path(name)
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    try:
        if ready is not None:
            check = (lambda: answers(ready)) if isinstance(ready, str) else ready
            if not wait_until(check, proc, timeout):
                state = f"exited with {proc.returncode}" if proc.poll() is not None else f"not ready in {timeout:g} s"
                raise RuntimeError(f"{shlex.join(cmd)} {state}:\n{log.read_text(errors='replace')[-4000:]}")
        yield proc
    finally:
        terminate(proc, stop_timeout)
        if own:
            log.unlink(missing_ok=True)


def answers(url: str) -> bool:
    """Whether a GET of `url` answers 200 within a second."""
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def wait_until(check: Callable[[], bool], proc: subprocess.Popen[Any], timeout: float) -> bool:
    """Poll `check` until it holds (True), `proc` exits or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def celery_worker_command(name: str, loglevel: str = "WARNING") -> list[str]:
    """A solo-pool Celery worker of this project named `name` on its three queues, without gossip or mingle."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "workers.celery_app",
        "worker",
        "--pool=solo",
        "-Q",
        "kopa,verification,synthesis",
        "-n",
        f"{name}@%h",
        f"--loglevel={loglevel}",
        "--without-gossip",
        "--without-mingle",
    ]


def uvicorn_command(factory: str, port: int) -> list[str]:
    """uvicorn serving the app that `factory` (module:function) builds, on loopback at `port`."""
    host = ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    return [sys.executable, "-m", "uvicorn", "--factory", factory, *host]


@contextmanager
def sandbox_process(*extra: str, env: dict[str, str] | None = None, port: int | None = None) -> Iterator[str]:
    """Run `kopa sandbox serve` as a real process on loopback; yields its base URL."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "cli", "sandbox", "serve", "--host", "127.0.0.1", "--port", str(port), *extra]
    url = f"http://127.0.0.1:{port}"
    with running(cmd, ready=url + "/healthz", env={**os.environ, **(env or {})}, timeout=30):
        yield url


def terminate(proc: subprocess.Popen[Any], timeout: float = 10) -> None:
    """Stop a child process: terminate, then kill if it has not exited within `timeout` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def wait_healthy(url: str, proc: subprocess.Popen[Any], timeout: float = 30) -> bool:
    """Poll `url`/healthz until it answers 200 (True), the process exits or the time runs out (False)."""
    return wait_until(lambda: answers(url + "/healthz"), proc, timeout)


def pretty(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)[:500]


def register_catalog(store: S, settings: Settings) -> S:
    """Register every shipped sandbox document into `store` (the set-up of most engine tests)."""
    for doc in shipped_documents().values():
        register(store, settings, doc)
    register_conversions(store, settings)
    return store


def verified_store(path: Path, settings: Settings, transport: Any = None) -> EmbeddedStore:
    """An embedded store at `path` with the catalog registered and verified in process."""
    store = register_catalog(EmbeddedStore(path), settings)
    asyncio.run(execute_run(store, settings, new_run(), transport=transport, economy=MemoryEconomy()))
    return store


def copy_store(source: Path, path: Path) -> EmbeddedStore:
    """An embedded store at `path` holding a copy of the one at `source` (SQLite's online backup, the write-ahead
    log included): a test that writes to it leaves `source` as it was."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(path)) as dst:
        src.backup(dst)
    return EmbeddedStore(path)


def sampled_engine(store: GraphStore, settings: Settings, transport: Any = None) -> Engine:
    """An engine whose round's first half ran in process on `store`: every tool sampled, candidates derived,
    nothing decided (`engine.samples` and `engine.sample_args` hold what discovery saw)."""
    run = new_run()
    apis = {a.id: a for a in store.list_apis(limit=1000)[0]}
    ex = Executor(settings, MemoryEconomy(), apis, transport=transport, run_id=run.id)
    engine = Engine(store, settings, ex, run, tools={t.name: t for t in store.all_tools()})

    async def go() -> None:
        try:
            await prepare_round(engine, store.all_tools())
        finally:
            await ex.aclose()

    asyncio.run(go())
    return engine


def reply(handler: Any, body: bytes, content_type: str = "application/json", status: int = 200) -> None:
    """Answer from a BaseHTTPRequestHandler: status, Content-Type and Content-Length, then the body."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def http_server(handler: type[Any]):  # type: ignore[no-untyped-def]
    """A threading HTTP server on a free loopback port for `handler`; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def wait_batch(client: Any, batch_id: str, headers: dict[str, str], timeout: float = 120) -> dict[str, Any]:
    """Poll a trajectory batch over the API until it completes or fails; its last state."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        b: dict[str, Any] = client.get(f"/v1/trajectory-batches/{batch_id}", headers=headers).json()
        if b["status"] in ("completed", "failed"):
            return b
        time.sleep(0.2)
    raise AssertionError(f"batch {batch_id} did not finish in {timeout}s")
