"""Schemathesis against the real server: `create_app` under uvicorn in a subprocess on a free port (embedded
store), with an admin and a reader token, bounded examples, every check but `positive_data_acceptance` (schema-
valid bodies are rightly refused by state and business rules: an OpenAPI document without operations, a team's
batch limit, a zero expiry). Passes only with 0 server errors, 0 response-schema/status/content-type violations,
and honest 405s, auth rejections and negative-data rejections."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from api.security import mint_token
from graph.embedded_store import EmbeddedStore
from tests.support.helpers import free_port, running

ROOT = Path(__file__).resolve().parents[1]
ST = Path(sys.executable).with_name("st")
LAUNCH = textwrap.dedent("""
    import sys
    import uvicorn
    from api.app import create_app
    from core.settings import Settings
    app = create_app(Settings(store="embedded", embedded_path=sys.argv[2], redis_url=None))
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
""")
EXCLUDED_PATHS: list[str] = []


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str], Path]]:
    folder = tmp_path_factory.mktemp("st")
    graph = folder / "graph.sqlite3"
    store = EmbeddedStore(graph)
    tokens = {"admin": mint_token(store, "admin", "ops"), "reader": mint_token(store, "reader", "team-st")}
    store.close()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    url = f"http://127.0.0.1:{port}"
    launch = [sys.executable, "-c", LAUNCH, str(port), str(graph)]
    with running(launch, ready=url + "/healthz", env=env, log=folder / "server.log", timeout=30):
        yield url, tokens, folder


@pytest.mark.slow
@pytest.mark.parametrize("role", ["admin", "reader"])
def test_schemathesis_finds_nothing(server: tuple[str, dict[str, str], Path], role: str) -> None:
    url, tokens, folder = server
    if not ST.exists():
        pytest.fail("schemathesis is not installed in the environment (the `st` command is missing)")
    cmd = [
        str(ST),
        "run",
        f"{url}/openapi.json",
        "-H",
        f"Authorization: Bearer {tokens[role]}",
        # not_a_server_error is replaced by the server's own 5xx counter below: a documented 503 (mode celery on
        # a server without a task queue, as this one is) is the behaviour the API promises, a 500 never is
        "--checks",
        "all",
        "--exclude-checks",
        "positive_data_acceptance,not_a_server_error",
        "--phases",
        "examples,coverage,fuzzing",
        "-n",
        "5",
        "--seed",
        "20261130",
        "--no-shrink",
        # one worker thread: CPython 3.11 keeps the AST recursion depth per interpreter, so hypothesis parsing
        # lambdas in two threads at once can fail with "AST constructor recursion depth mismatch" (seen in CI)
        "--workers",
        "1",
        "--request-timeout",
        "20",
        "--max-time",
        "15",
        "--warnings",
        "off",
    ]
    for path in EXCLUDED_PATHS:
        cmd += ["--exclude-path", path]
    start = time.monotonic()
    out = subprocess.run(
        cmd,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_TELEMETRY": "false"},
    )
    took = time.monotonic() - start
    report = out.stdout[-6000:] + out.stderr[-2000:]
    assert out.returncode == 0, report
    assert "Server error" not in out.stdout and "ST101" not in out.stdout, report
    metrics = httpx.get(f"{url}/metrics", timeout=10).text
    five = [
        line
        for line in metrics.splitlines()
        if line.startswith("kopa_http_requests_total{")
        and re.search(r'status="5\d\d"', line)
        and not line.rstrip().endswith(" 0.0")
    ]
    unexpected = [line for line in five if not ('status="503"' in line and "verification-runs" in line)]
    assert not unexpected, unexpected  # no 500 anywhere; the only 5xx is the documented queue_unavailable 503
    assert "Tested:" in out.stdout, report  # it ran against the operations
    log = (folder / "server.log").read_text()
    assert "Traceback" not in log and "unhandled error" not in log, log[-3000:]
    assert took < 55
