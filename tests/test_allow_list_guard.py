"""The production guard: allow-list entries that name loopback, unspecified,
link-local, private-use, wildcard or unqualified hosts are refused at start in production, each named with what to
write instead (and that advice works: a KOPA_LOCAL_UPSTREAMS entry is enough for a local upstream); `*` is never
an allow-list entry; `celery ... beat` and `kopa beat` refuse before Celery prints its banner; every process
(sandbox, API, worker, beat, a bare Celery worker) refuses in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from core.egress import EgressPolicy
from core.errors import ConfigurationError, DisallowedHost
from core.settings import ProductionRefused, Settings, get_settings
from tests.support.helpers import free_port
from workers.celery_app import GuardedBeat, celery_app

ROOT = Path(__file__).resolve().parents[1]
STRONG = "x7Gk2pQ9vL4mN8rT1wZ5"

#: entry -> (why, what to write instead), as the guard's line names them
REFUSED = {
    "vm": (
        "vm (an unqualified name)",
        "write its fully qualified name (vm.example.go.kr), or KOPA_LOCAL_UPSTREAMS=vm:PORT",
    ),
    "redis": ("redis (an unqualified name)", "KOPA_LOCAL_UPSTREAMS=redis:PORT"),
    "0.0.0.0": ("0.0.0.0 (an unspecified address)", "it is a listen address, never an upstream"),
    "::": (":: (an unspecified address)", "it is a listen address, never an upstream"),
    "localhost": ("localhost (a loopback name)", "KOPA_LOCAL_UPSTREAMS=localhost:PORT"),
    "*.localhost": ("*.localhost (a wildcard over loopback names)", "KOPA_LOCAL_UPSTREAMS=HOST:PORT"),
    "api.localhost": ("api.localhost (a loopback name)", "KOPA_LOCAL_UPSTREAMS=api.localhost:PORT"),
    "127.0.0.1": ("127.0.0.1 (a loopback address)", "KOPA_LOCAL_UPSTREAMS=127.0.0.1:PORT"),
    "127.1": ("127.1 (a loopback address)", "KOPA_LOCAL_UPSTREAMS=127.0.0.1:PORT"),
    "2130706433": ("2130706433 (a loopback address)", "KOPA_LOCAL_UPSTREAMS=127.0.0.1:PORT"),
    "::1": ("::1 (a loopback address)", "KOPA_LOCAL_UPSTREAMS=[::1]:PORT"),
    "::ffff:127.0.0.1": ("::ffff:127.0.0.1 (a loopback address)", "KOPA_LOCAL_UPSTREAMS=127.0.0.1:PORT"),
    "169.254.169.254": ("169.254.169.254 (a link-local address)", "remove it"),
    "fe80::1": ("fe80::1 (a link-local address)", "remove it"),
    "metadata.google.internal": ("metadata.google.internal (a cloud metadata name)", "remove it"),
    "*.kr": ("*.kr (a wildcard over a whole top-level domain)", "write the API's own domain, e.g. *.data.example.kr"),
    "*.vm": ("*.vm (a wildcard over a whole top-level domain)", "write the API's own domain"),
    "*.127.0.0.1": ("*.127.0.0.1 (a wildcard over an address)", "write the address itself, 127.0.0.1"),
    "gw.lan": ("gw.lan (a private-use domain, .lan)", "KOPA_LOCAL_UPSTREAMS=gw.lan:PORT"),
    "api.corp.internal": (
        "api.corp.internal (a private-use domain, .internal)",
        "KOPA_LOCAL_UPSTREAMS=api.corp.internal:PORT",
    ),
    "gateway.kopa.svc.cluster.local": ("(a private-use domain, .local)", "gateway.kopa.svc.cluster.local:PORT"),
    "router.home.arpa": ("(a private-use domain, .home.arpa)", "KOPA_LOCAL_UPSTREAMS=router.home.arpa:PORT"),
    "*.test": ("*.test (a wildcard over a whole top-level domain)", "write the API's own domain"),
    "*.corp.internal": ("(a private-use domain, .internal)", "KOPA_LOCAL_UPSTREAMS=HOST:PORT"),
}
ACCEPTED = ["open.example.go.kr", "*.data.example.kr", "203.0.113.10", "apis.data.go.kr", "api.example.com"]


@pytest.mark.parametrize("entry", sorted(REFUSED))
def test_production_names_each_local_entry_and_what_to_write_instead(entry: str) -> None:
    why, instead = REFUSED[entry]
    with pytest.raises(ProductionRefused) as err:
        Settings(env="production", allowed_hosts=[entry]).check_production()
    line = str(err.value)
    assert "\n" not in line and line.startswith("refusing to start with KOPA_ENV=production: KOPA_ALLOWED_HOSTS")
    assert why in line and instead in line, line
    Settings(env="dev", allowed_hosts=[entry]).check_production()  # the sandbox and the tests use such entries


def test_public_qualified_entries_pass_and_several_bad_ones_are_one_line() -> None:
    Settings(env="production", allowed_hosts=ACCEPTED).check_production()
    entries = ["vm", "0.0.0.0", "*.localhost", "gw.lan", "127.0.0.1", "redis", "::1"]
    with pytest.raises(ProductionRefused) as err:
        Settings(env="production", allowed_hosts=[*ACCEPTED, *entries]).check_production()
    line = str(err.value)
    assert "\n" not in line and "and 2 more" in line, line  # five named, the count of the rest
    for entry in entries[:5]:
        assert f"{entry} (" in line, (entry, line)
    assert "open.example.go.kr" not in line


@pytest.mark.parametrize("entry", ["*", "*.*", "**", "*."])
def test_a_bare_wildcard_is_never_an_allow_list_entry(entry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("KOPA_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KOPA_ALLOWED_HOSTS", f"open.example.go.kr,{entry}")
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigurationError) as err:
            get_settings()
    finally:
        get_settings.cache_clear()
    line = err.value.detail
    assert "\n" not in line and line.startswith("invalid settings: KOPA_ALLOWED_HOSTS: "), line
    assert "would allow every host" in line and "*.example.go.kr for the subdomains of one domain" in line, line


def test_a_settings_error_without_a_field_names_its_variable_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's `KOPA_: ...`: a model-wide check's message is not prefixed with an empty variable name."""
    for name in [n for n in os.environ if n.startswith("KOPA_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KOPA_VERIFY__KEY_SECRET", "AWS_SECRET_ACCESS_KEY")
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigurationError) as err:
            get_settings()
    finally:
        get_settings.cache_clear()
    assert "KOPA_: " not in err.value.detail and "KOPA_VERIFY__KEY_SECRET: AWS_SECRET_ACCESS_KEY" in err.value.detail


def test_the_advice_works_a_local_upstream_entry_alone_reaches_that_port_only() -> None:
    """What the guard says to write instead of `KOPA_ALLOWED_HOSTS=127.0.0.1` or `=vm` passes the guard and lets
    exactly that host:port through egress (by name and by address), no other port."""
    port = free_port()
    settings = Settings(env="production", local_upstreams=[f"127.0.0.1:{port}", "vm:8080"])
    settings.check_production()
    policy = EgressPolicy.from_settings(settings)
    assert policy.check_url(f"http://127.0.0.1:{port}/x", resolve=True).port == port
    assert policy.check_url("http://vm:8080/x").host == "vm"
    for url in (f"http://127.0.0.1:{port + 1}/x", "http://vm:8081/x", "http://vm/x", "http://localhost:8080/x"):
        with pytest.raises(DisallowedHost) as err:
            policy.check_url(url, resolve=True)
        assert "KOPA_LOCAL_UPSTREAMS as " in err.value.detail or "internal address" in err.value.detail, url
    # the refusal names the entry that would allow it
    with pytest.raises(DisallowedHost, match=r"KOPA_LOCAL_UPSTREAMS as vm:8081"):
        policy.check_url("http://vm:8081/x")
    with pytest.raises(DisallowedHost, match=r"KOPA_LOCAL_UPSTREAMS as \[::1\]:9000"):
        policy.check_url("http://[::1]:9000/x")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update(
        {
            "KOPA_EMBEDDED_PATH": str(tmp_path / "g.sqlite3"),
            "KOPA_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",  # nothing listens: no shared service is used
            "PYTHONPATH": str(ROOT),
            **extra,
        }
    )
    return env


def test_kopa_serve_names_the_entries_and_the_remedy_in_one_line(tmp_path: Path) -> None:
    env = _env(tmp_path, KOPA_ENV="production", KOPA_ALLOWED_HOSTS="open.example.go.kr,0.0.0.0,gw.lan")
    got = subprocess.run(
        [sys.executable, "-m", "cli", "serve"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    lines = [line for line in got.stderr.splitlines() if line.strip()]
    assert got.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: refusing to start"), got.stderr
    assert "0.0.0.0 (an unspecified address)" in lines[0] and "KOPA_LOCAL_UPSTREAMS=gw.lan:PORT" in lines[0]


BEATS = {
    "celery": ["-m", "celery", "-A", "workers.celery_app", "beat", "--schedule", "schedule"],
    "kopa": ["-m", "cli", "beat", "--schedule-file", "schedule"],
}


@pytest.mark.parametrize("how", sorted(BEATS))
@pytest.mark.parametrize(
    "setting",
    [{"KOPA_BOOTSTRAP_TOKEN": "a" * 32}, {"KOPA_ALLOWED_HOSTS": "vm"}],
    ids=["weak-token", "local-host"],
)
def test_beat_refuses_before_its_banner(how: str, setting: dict[str, str], tmp_path: Path) -> None:
    env = _env(tmp_path, KOPA_ENV="production", **setting)
    got = subprocess.run(
        [sys.executable, *BEATS[how]], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    out = got.stdout + got.stderr
    ours = [line for line in got.stderr.splitlines() if line.startswith("error:")]
    assert got.returncode != 0, out
    assert len(ours) == 1 and "refusing to start with KOPA_ENV=production" in ours[0], out
    assert next(iter(setting)) in ours[0], out
    # no banner, no configuration block, no log line and no schedule file: nothing started
    assert "celery beat v" not in out and "LocalTime" not in out and "Configuration ->" not in out, out
    assert "WARNING/MainProcess" not in out and "Traceback" not in out, out
    assert not list(tmp_path.glob("schedule*")), list(tmp_path.iterdir())
    if how == "kopa":
        assert [line for line in got.stderr.splitlines() if line.strip()] == ours, got.stderr


def test_beat_still_starts_outside_production(tmp_path: Path) -> None:
    """The guard costs dev nothing: beat prints its banner and runs (stopped once it has)."""
    proc = subprocess.Popen(
        [sys.executable, *BEATS["celery"]],
        env=_env(tmp_path, KOPA_ENV="dev", KOPA_BOOTSTRAP_TOKEN="a" * 32),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen = ""
    try:
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        while "celery beat v" not in seen and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            seen += line
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    assert "celery beat v" in seen, seen


def test_the_app_builds_its_beat_from_the_guarded_class() -> None:
    assert issubclass(celery_app.Beat, GuardedBeat)
    beat = celery_app.Beat(loglevel="INFO", schedule="/nonexistent/schedule")  # dev settings here: no refusal
    assert isinstance(beat, GuardedBeat) and beat.app is celery_app


def test_weak_tokens_still_refused_with_local_hosts_in_one_line() -> None:
    settings = Settings(env="production", bootstrap_token=SecretStr("ab" * 8), allowed_hosts=["vm"])
    with pytest.raises(ProductionRefused) as err:
        settings.check_production()
    assert "KOPA_BOOTSTRAP_TOKEN" in str(err.value) and "vm (an unqualified name)" in str(err.value)
    Settings(env="production", bootstrap_token=SecretStr(STRONG), allowed_hosts=ACCEPTED).check_production()


def test_the_guard_is_one_line_for_weak_tokens_and_local_hosts(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update(
        {
            "KOPA_ENV": "production",
            "KOPA_BOOTSTRAP_TOKEN": "a" * 32,
            "KOPA_ALLOWED_HOSTS": "vm,*.localhost",
            "KOPA_EMBEDDED_PATH": str(tmp_path / "g.sqlite3"),
            "PYTHONPATH": str(ROOT),
        }
    )
    got = subprocess.run(
        [sys.executable, "-m", "cli", "serve"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    lines = [line for line in got.stderr.splitlines() if line.strip()]
    assert got.returncode != 0 and len(lines) == 1 and lines[0].startswith("error:"), got.stderr
    assert "KOPA_BOOTSTRAP_TOKEN is a low-entropy value" in lines[0] and "KOPA_ALLOWED_HOSTS" in lines[0], lines


@pytest.mark.parametrize(
    "argv",
    [
        ["-m", "cli", "sandbox", "serve", "--port", "0"],
        ["-m", "cli", "serve"],
        ["-m", "cli", "worker"],
        ["-m", "cli", "beat"],
        ["-m", "celery", "-A", "workers.celery_app", "worker", "--pool=solo"],
    ],
)
def test_production_guard_on_every_process_is_one_line(argv: list[str], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update(
        {
            "KOPA_ENV": "production",
            "KOPA_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
            "KOPA_EMBEDDED_PATH": str(tmp_path / "g.sqlite3"),
            "PYTHONPATH": str(ROOT),
        }
    )
    if argv[2] != "sandbox":
        env["KOPA_BOOTSTRAP_TOKEN"] = "change-me"
    got = subprocess.run([sys.executable, *argv], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    ours = [line for line in got.stderr.splitlines() if line.startswith("error:")]
    assert got.returncode != 0, got.stderr
    assert len(ours) == 1 and "refusing to start with KOPA_ENV=production" in ours[0], got.stderr
    assert "Traceback" not in got.stderr, got.stderr
    if argv[2] == "sandbox":
        assert "KOPA_SANDBOX__ADMIN_TOKEN" in ours[0]
    if argv[1] == "cli":  # our own commands print that one line and nothing else (celery warns about root first)
        assert [line for line in got.stderr.splitlines() if line.strip()] == ours, got.stderr
