"""Redaction by construction: a distinctive canary service key is grepped in every log (captured
at DEBUG, httpx and httpcore included), in a real Celery worker's log, in the SQLite graph file, in every Redis key
and value, and in API responses, after verification against the sandbox over a socket and against an upstream that
echoes the request (auth parameter named `access_token`, key echoed in rows and errors)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from core.logging import install_redaction, redact, register_secret
from core.settings import Settings
from execution.limits import MemoryEconomy, RedisEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.registry import register
from graph.store import GraphStore
from sandbox.catalog import REAL_HOSTS, shipped_documents
from tests.support.helpers import celery_worker_command, free_port, sandbox_process
from verification.runs import execute_run, new_run
from workers.celery_app import make_celery

ROOT = Path(__file__).resolve().parents[1]
CANARY = "c0ffee" + secrets.token_hex(29)  # 64 hex characters, like a real key
SECRET_NAME = "KOPA_CANARY_KEY"
NEEDLES = (CANARY, CANARY[6:40])


class Echo(BaseHTTPRequestHandler):
    """A hostile upstream: echoes the full request (key included) in its rows, and in an error for /dst."""

    def do_GET(self) -> None:
        if self.path.startswith("/dst"):
            body = json.dumps({"rows": [], "error": f"bad request {self.path}", "detail": self.path}).encode()
            status = 400 if "fail" in self.path else 200
            if status == 200:
                body = json.dumps({"rows": [{"code": "A1", "v": f"seen {self.path}"}]}).encode()
        else:
            body = json.dumps({"rows": [{"code": f"A{i}", "v": f"echo {self.path}"} for i in range(4)]}).encode()
            status = 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


def echo_doc(server: str) -> dict[str, Any]:
    row = {"type": "object", "properties": {"code": {"type": "string", "description": "코드"}, "v": {"type": "string"}}}
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
    param = [{"name": "code", "in": "query", "required": True, "description": "코드", "schema": {"type": "string"}}]
    return {
        "openapi": "3.0.3",
        "info": {"title": "Echo", "version": "1"},
        "servers": [{"url": server}],
        "components": {"securitySchemes": {"tok": {"type": "apiKey", "in": "query", "name": "access_token"}}},
        "paths": {
            "/src": {"get": {"operationId": "source", "responses": ok}},
            "/dst": {"get": {"operationId": "target", "parameters": param, "responses": ok}},
            "/dstfail": {"get": {"operationId": "failing", "parameters": param, "responses": ok}},
        },
    }


@pytest.fixture(scope="module")
def echo_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def canary_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    keys = tmp_path_factory.mktemp("keys") / "keys.json"
    keys.write_text(json.dumps([{"key": CANARY, "name": "canary"}]))
    with sandbox_process(env={"KOPA_SANDBOX__KEYS_FILE": str(keys)}) as url:
        yield url


def assert_clean(label: str, text: str | bytes) -> None:
    data = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
    for needle in NEEDLES:
        assert needle not in data, f"canary key found in {label}: ...{data[max(0, data.find(needle) - 120) :][:240]}..."


def settings_for(sandbox: str, echo: str, path: Path, **kw: Any) -> Settings:
    return Settings(
        embedded_path=path,
        upstream_overrides=",".join(f"{h}={sandbox}" for h in REAL_HOSTS),
        allowed_hosts=["127.0.0.1"],
        local_upstreams=[echo],
        **kw,
    ).model_copy(update={"verify": Settings().verify.model_copy(update={"key_secret": SECRET_NAME, "backoff_s": 0.01})})


def register_all(store: GraphStore, settings: Settings, echo: str) -> None:
    for name in ("StanReginCd", "VilageFcstInfoService_2.0", "MsrstnInfoInqireSvc", "ArpltnInforInqireSvc"):
        register(store, settings, shipped_documents()[name])
    register(store, settings, echo_doc(echo), RegistrationMeta(auth=AuthConfig(secret=SECRET_NAME)))


def test_redact_handles_every_form() -> None:
    register_secret(CANARY)
    for text in (
        f"GET http://x/?serviceKey={CANARY}",
        f"access_token={CANARY}&a=1",
        f"Bearer {CANARY}",
        f"plain {CANARY} inside",
        f"{httpx.URL('http://x/', params={'k': CANARY})}",
    ):
        assert_clean("redact()", redact(text))


def test_canary_in_process_logs_graph_and_api(
    canary_sandbox: str,
    echo_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(SECRET_NAME, CANARY)
    log_file = tmp_path / "serve.log"
    install_redaction()  # what setup_logging (kopa serve) and the executor install
    file_handler = logging.FileHandler(log_file)
    file_handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    logging.getLogger().addHandler(file_handler)
    caplog.set_level(logging.DEBUG)
    logging.getLogger().setLevel(logging.DEBUG)
    settings = settings_for(
        canary_sandbox, echo_server, tmp_path / "g.sqlite3", bootstrap_token=SecretStr("canary-test-boot-token")
    )
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    register_all(store, settings, echo_server)
    run = asyncio.run(execute_run(store, settings, new_run(), economy=MemoryEconomy()))
    assert run.status == "completed"
    verified = store.list_links(status="verified", limit=1000)[0]
    assert len(verified) > 5  # the key worked: calls reached the data
    assert any(lk.source_tool.startswith("echo") for lk in store.list_links(limit=1000)[0])
    with TestClient(create_app(settings, store)) as client:
        auth = {"Authorization": "Bearer canary-test-boot-token"}
        pages = [
            client.get("/v1/links", params={"limit": 500}, headers=auth).text,
            client.get("/v1/tools", params={"limit": 500}, headers=auth).text,
            client.get("/v1/apis", headers=auth).text,
        ]
        for lk in store.list_links(limit=50)[0]:
            pages.append(client.get(f"/v1/links/{lk.id}", headers=auth).text)
    store_links = store.list_links(limit=1000)[0]
    store.close()
    logging.getLogger().removeHandler(file_handler)
    file_handler.close()
    assert "HTTP Request" in caplog.text  # httpx did log its requests ...
    assert_clean("captured log records", caplog.text + "".join(r.getMessage() for r in caplog.records))
    assert_clean("the serve log file", log_file.read_text())  # ... without the key
    for page in pages:
        assert_clean("API responses", page)
    assert_clean("the SQLite graph file", (tmp_path / "g.sqlite3").read_bytes())
    echo_links = [lk for lk in store_links if lk.source_tool.startswith("echo")]
    # the evidence URLs never held the key; what the upstream echoed back is scrubbed to ***
    assert echo_links and not any(re.search(r"access_token=(?!\*\*\*)", json.dumps(lk.evidence)) for lk in echo_links)
    assert any("access_token=***" in json.dumps(lk.evidence) for lk in echo_links)


def test_canary_through_a_real_celery_worker(
    canary_sandbox: str, echo_server: str, tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    redis_proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    own_redis = f"redis://127.0.0.1:{port}/0"
    worker: subprocess.Popen[bytes] | None = None
    try:
        for _ in range(100):
            try:
                if redis.Redis.from_url(own_redis).ping():
                    break
            except redis.RedisError:
                time.sleep(0.05)
        graph_path = tmp_path / "g.sqlite3"
        settings = settings_for(canary_sandbox, echo_server, graph_path, redis_url=own_redis)
        store = EmbeddedStore(graph_path)
        register_all(store, settings, echo_server)
        env = {
            **os.environ,
            "KOPA_STORE": "embedded",
            "KOPA_EMBEDDED_PATH": str(graph_path),
            "KOPA_REDIS_URL": own_redis,
            "KOPA_UPSTREAM_OVERRIDES": settings.upstream_overrides,
            "KOPA_ALLOWED_HOSTS": "127.0.0.1",
            "KOPA_LOCAL_UPSTREAMS": echo_server,
            "KOPA_VERIFY__KEY_SECRET": SECRET_NAME,
            SECRET_NAME: CANARY,
            "KOPA_VERIFY__BACKOFF_S": "0.01",
        }
        log_path = tmp_path / "worker.log"
        with open(log_path, "wb") as log:
            worker = subprocess.Popen(
                celery_worker_command("canary", loglevel="DEBUG"),
                env=env,
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            run = new_run(mode="celery")
            store.save_run(run)
            make_celery(settings).send_task("kopa.start_round", args=[run.id])
            deadline = time.monotonic() + 150
            status = ""
            while time.monotonic() < deadline:
                got = store.get_run(run.id)
                status = got.status if got else ""
                if status in ("completed", "failed", "paused"):
                    break
                time.sleep(0.5)
            assert status == "completed", (status, log_path.read_text()[-2000:])
        assert len(store.list_links(status="verified", limit=1000)[0]) > 5
        store.close()
        worker.terminate()
        worker.wait(20)
        text = log_path.read_text()
        assert "HTTP Request" in text or "kopa.start_round" in text
        assert_clean("the Celery worker log", text)
        assert_clean("the SQLite graph file (Celery)", graph_path.read_bytes())
        r = redis.Redis.from_url(own_redis)
        dump: list[Any] = []
        for key in r.scan_iter("*"):
            kind = r.type(key)
            dump.append(key)
            if kind == b"string":
                dump.append(r.get(key) or b"")
            elif kind == b"hash":
                dump.extend(f"{k!r}={v!r}" for k, v in r.hgetall(key).items())
            elif kind == b"list":
                dump.extend(r.lrange(key, 0, -1))
            elif kind == b"set":
                dump.extend(r.smembers(key))
            elif kind == b"zset":
                dump.extend(r.zrange(key, 0, -1))
        assert any(k.startswith(b"kopa:cache:") for k in dump)  # the call cache was written ...
        assert_clean(
            "Redis keys and values", b"\n".join(d if isinstance(d, bytes) else str(d).encode() for d in dump)
        )  # ... without the key
        economy = RedisEconomy(own_redis)
        assert economy.calls(run.id).get("calls", 0) > 0
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
        redis_proc.terminate()
        redis_proc.wait(10)
