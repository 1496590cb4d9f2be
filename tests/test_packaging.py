"""The wheel is what the image installs: build it, install it where the source tree cannot be seen, and check that
every package is there, every module imports from the wheel, the `kopa` entry point works for every process
command, and the API starts on the embedded store and answers /readyz."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from setuptools import find_packages  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[1]
EXCLUDE = ["tests*", "perf*", "infra*", "scripts*", "helm*", "docs*", "build*", "dist*"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(ROOT)], check=True, cwd=out, timeout=240)
    wheels = list(out.glob("kopa_edge-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def target(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    t = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(t), str(wheel)],
                   check=True, timeout=240)
    return t


def _run(target: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run Python with the wheel's target first on the path, from a folder outside the source tree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update(PYTHONPATH=str(target), KOPA_STORE="embedded", KOPA_DATA_DIR=str(target.parent / "data"),
               PYTHONSAFEPATH="1")
    return subprocess.run([sys.executable, *args], cwd=target.parent, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_wheel_ships_every_package_and_its_data(wheel: Path) -> None:
    expected = set(find_packages(str(ROOT), exclude=EXCLUDE))
    assert {"api.routes", "sandbox.providers", "execution", "verification", "synthesis", "cli"} <= expected
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n.rsplit("/", 1)[0].replace("/", ".") for n in names if n.endswith("/__init__.py")}
    assert expected <= shipped, expected - shipped
    assert not any(n.startswith(("tests/", "perf/")) for n in names)
    assert any(n.startswith("sandbox/catalog/") and n.endswith(".json") for n in names)
    assert "sandbox/ground_truth.json" in names and any(n.startswith("graph/browser/") for n in names)


def test_every_module_imports_from_the_wheel(target: Path) -> None:
    code = """
import importlib, json, pkgutil, sys
bad, where = [], set()
for pkg in %r:
    m = importlib.import_module(pkg)
    where.add(m.__file__.rsplit('/' + pkg + '/', 1)[0])
    for info in pkgutil.walk_packages(m.__path__, pkg + '.'):
        if info.name.endswith('__main__'):
            continue
        try:
            importlib.import_module(info.name)
        except Exception as exc:
            bad.append(f'{info.name}: {type(exc).__name__}: {exc}')
print(json.dumps({'bad': bad, 'where': sorted(where)}))
""".replace("%r", repr(sorted({p.split(".")[0] for p in find_packages(str(ROOT), exclude=EXCLUDE)})))
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
with TestClient(create_app()) as client:
    r = client.get('/readyz')
    print(r.status_code, r.json()['status'], len(client.get('/openapi.json').json()['paths']))
"""
    proc = _run(target, "-c", code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, ready, paths = proc.stdout.split()
    assert (status, ready) == ("200", "ready") and int(paths) >= 10
