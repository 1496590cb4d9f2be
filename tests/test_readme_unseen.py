"""The README's recipe for an API the sandbox does not know, run as a user would: `kopa register` with the API's own
key variable and base URL (or an upstream override by base URL), then `kopa verify`, against emulated services of
the unseen family served over a socket. A missing key fails the run with its name; unreachable tools say why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.helpers import free_port, running, uvicorn_command
from tests.unseen.app import KEY

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "tests" / "unseen" / "docs"


@pytest.fixture
def unseen_server() -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with running(uvicorn_command("tests.unseen.app:create_app", port), ready=url + "/healthz", timeout=30):
        yield url


def kopa(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_register_and_verify_an_api_the_sandbox_does_not_know(unseen_server: str, tmp_path: Path) -> None:
    local = unseen_server.split("//", 1)[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update(
        {
            "KOPA_STORE": "embedded",
            "KOPA_EMBEDDED_PATH": str(tmp_path / "g.sqlite3"),
            "KOPA_ALLOWED_HOSTS": "127.0.0.1,odcloud.unseen.example",
            "KOPA_LOCAL_UPSTREAMS": local,
            # the pension service keeps its documented server; calls to it go where the override says
            "KOPA_UPSTREAM_OVERRIDES": f"https://odcloud.unseen.example/api/15083277/v1={unseen_server}/api/15083277/v1",
            "CORP_SERVICE_KEY": KEY,
        }
    )
    for doc, extra in (
        ("corpinfo.json", ["--api-id", "corp-info", "--base-url", f"{unseen_server}/corpinfo/v2"]),
        ("admcode.json", ["--base-url", f"{unseen_server}/admcode/v1"]),
        ("pension.yaml", []),
    ):
        got = kopa(
            env, "register", str(DOCS / doc), "--secret-name", "CORP_SERVICE_KEY", "--auth-param", "serviceKey", *extra
        )
        assert got.returncode == 0, got.stderr
    first = kopa(env, "verify", "--api", "corp-info")
    assert first.returncode == 0, first.stderr
    # alone, the all-optional company search has nothing to search with: the run says why, not "()"
    assert "unreachable tools" in first.stderr and "corpinfo_search_corp: " in first.stderr
    assert "unblock:" in first.stderr and "()" not in first.stderr, first.stderr
    run = kopa(env, "verify")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["status"] == "completed" and summary["verified"] >= 5, (summary, run.stderr)
    assert summary["candidate"] == 0, run.stderr

    del env["CORP_SERVICE_KEY"]
    (tmp_path / "g.sqlite3").unlink()
    assert kopa(env, "register", str(DOCS / "pension.yaml"), "--secret-name", "CORP_SERVICE_KEY").returncode == 0
    missing = kopa(env, "verify")
    summary = json.loads(missing.stdout.strip().splitlines()[-1])
    assert summary["status"] == "failed" and "CORP_SERVICE_KEY" in summary["message"] and summary["calls_spent"] == 0, (
        summary
    )
