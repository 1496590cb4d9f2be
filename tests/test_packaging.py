"""The wheel is what the image installs: build it, install it where the source tree cannot be seen, and check that
every package is there, every module imports from the wheel, the `kopa` entry point works for every process
command, and the API starts on the embedded store and answers /readyz."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from setuptools import find_packages  # type: ignore[import-untyped]

from bench.tasks import load_tasks
from tests.support.helpers import free_port, running

ROOT = Path(__file__).resolve().parents[1]
EXCLUDE = ["tests*", "perf*", "infra*", "scripts*", "helm*", "docs*", "build*", "dist*"]
# shipped, but run by the bfcl-eval environment's own Python (they import bfcl_eval), so not importable here
RUN_ELSEWHERE = {"bench.bfcl.runner"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        cwd=out,
        timeout=240,
    )
    wheels = list(out.glob("kopa_edge-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def target(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    t = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(t), str(wheel)],
        check=True,
        timeout=240,
    )
    return t


def _run(target: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run Python with the wheel's target first on the path, from a folder outside the source tree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update(
        PYTHONPATH=str(target), KOPA_STORE="embedded", KOPA_DATA_DIR=str(target.parent / "data"), PYTHONSAFEPATH="1"
    )
    return subprocess.run(
        [sys.executable, *args], cwd=target.parent, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_wheel_ships_every_package_and_its_data(wheel: Path) -> None:
    expected = set(find_packages(str(ROOT), exclude=EXCLUDE))
    assert {"api.routes", "sandbox.providers", "execution", "verification", "synthesis", "cli"} <= expected
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n.rsplit("/", 1)[0].replace("/", ".") for n in names if n.endswith("/__init__.py")}
    assert expected <= shipped, expected - shipped
    assert not any(n.startswith(("tests/", "perf/")) for n in names)
    assert any(n.startswith("sandbox/catalog/") and n.endswith(".json") for n in names)
    assert "sandbox/ground_truth.json" in names and any(n.startswith("graph/browser/") for n in names)
    assert sum(1 for n in names if n.startswith("bench/tasks/") and n.endswith(".yaml")) == 8  # KOPA-Bench tasks
    assert any(n.startswith("synthesis/needs/") and n.endswith(".yaml") for n in names)  # what people ask


def test_every_module_imports_from_the_wheel(target: Path) -> None:
    code = """
import importlib, json, pkgutil, sys
ELSEWHERE = %s  # scripts that run inside another environment (the bfcl-eval venv)
bad, where = [], set()
for pkg in %r:
    m = importlib.import_module(pkg)
    where.add(m.__file__.rsplit('/' + pkg + '/', 1)[0])
    for info in pkgutil.walk_packages(m.__path__, pkg + '.'):
        if info.name.endswith('__main__') or info.name in ELSEWHERE:
            continue
        try:
            importlib.import_module(info.name)
        except Exception as exc:
            bad.append(f'{info.name}: {type(exc).__name__}: {exc}')
print(json.dumps({'bad': bad, 'where': sorted(where)}))
""".replace("%r", repr(sorted({p.split(".")[0] for p in find_packages(str(ROOT), exclude=EXCLUDE)}))).replace(
        "%s", repr(sorted(RUN_ELSEWHERE))
    )
    proc = _run(target, "-c", code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["bad"] == []
    assert out["where"] == [str(target)], "modules must come from the installed wheel, not the source tree"


@pytest.mark.parametrize("command", [[], ["serve"], ["worker"], ["beat"], ["sandbox", "serve"], ["graph", "init"]])
def test_kopa_entry_point_runs_every_process_command(target: Path, command: list[str]) -> None:
    proc = _run(target, str(target / "bin" / "kopa"), *command, "--help")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Usage" in proc.stdout


def test_installed_api_starts_on_the_embedded_store(target: Path) -> None:
    code = """
from fastapi.testclient import TestClient
from api.app import create_app
from bench.tasks import load_tasks
with TestClient(create_app()) as client:
    r = client.get('/readyz')
    print(r.status_code, r.json()['status'], len(client.get('/openapi.json').json()['paths']), len(load_tasks()))
"""
    proc = _run(target, "-c", code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, ready, paths, tasks = proc.stdout.split()
    # the wheel ships every task the source tree has
    assert (status, ready) == ("200", "ready") and int(paths) >= 10 and int(tasks) == len(load_tasks())


def _env(target: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update(
        PYTHONPATH=str(target),
        KOPA_STORE="embedded",
        KOPA_EMBEDDED_PATH=str(target.parent / "g.sqlite3"),
        PYTHONSAFEPATH="1",
        **extra,
    )
    return env


def _wait_for(predicate: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return False


def test_installed_processes_start(target: Path, redis_url: str) -> None:
    """The image's processes from the wheel alone: serve answers /readyz, a worker takes a task from Redis, beat
    schedules. A private Redis database keeps the queues apart from other tests."""
    import redis

    db_url = redis_url.rsplit("/", 1)[0] + "/9"
    redis.Redis.from_url(db_url).flushdb()
    kopa = str(target / "bin" / "kopa")
    port = free_port()
    log_dir = target.parent
    serve_log, worker_log, beat_log = log_dir / "serve.log", log_dir / "worker.log", log_dir / "beat.log"
    with ExitStack() as procs:
        serve = [kopa, "serve", "--port", str(port)]
        ready = f"http://127.0.0.1:{port}/readyz"
        serve_env = _env(target)
        procs.enter_context(
            running(serve, ready=ready, env=serve_env, cwd=log_dir, log=serve_log, timeout=40, stop_timeout=20)
        )
        worker = [kopa, "worker", "--queues", "verification", "--pool", "solo"]
        worker_env = _env(target, KOPA_REDIS_URL=db_url)
        procs.enter_context(running(worker, env=worker_env, cwd=log_dir, log=worker_log, stop_timeout=20))
        celery = Celery("probe", broker=db_url)
        celery.send_task("kopa.reverify_stale", queue="verification")
        took = _wait_for(lambda: "succeeded" in worker_log.read_text(errors="replace"), 60)
        assert took, worker_log.read_text()[-3000:]

        schedule = log_dir / "beat-schedule"
        beat = [kopa, "beat", "--schedule-file", str(schedule)]
        beat_env = _env(target, KOPA_REDIS_URL=db_url)
        procs.enter_context(running(beat, env=beat_env, cwd=log_dir, log=beat_log, stop_timeout=20))
        started = _wait_for(lambda: "beat: Starting" in beat_log.read_text(errors="replace"), 40)
        assert started, beat_log.read_text()[-3000:]
        assert _wait_for(lambda: any(log_dir.glob("beat-schedule*")), 20)
