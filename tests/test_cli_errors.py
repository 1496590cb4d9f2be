"""The CLI on bad input: one clear `error:` line (or one line per bad file) and a non-zero exit, never a traceback;
good files in the same `kopa register` call still register; absurd counts and unwritable folders are refused
before any work; an impossible port is refused instead of a hanging server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from cli import app as kopa
from core.settings import get_settings
from graph.embedded_store import EmbeddedStore
from sandbox.catalog import shipped_documents

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "cli.sqlite3"
    monkeypatch.setenv("KOPA_STORE", "embedded")
    monkeypatch.setenv("KOPA_EMBEDDED_PATH", str(path))
    monkeypatch.delenv("KOPA_REDIS_URL", raising=False)
    get_settings.cache_clear()
    yield path
    get_settings.cache_clear()


def one_error_line(result: Result) -> str:
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert "Traceback" not in result.output
    return lines[0]


def hostile_files(folder: Path) -> dict[str, Path]:
    doc = shipped_documents()["StanReginCd"]
    text = json.dumps(doc, ensure_ascii=False)
    files = {
        "binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
        "latin1": ("openapi: 3.0.0\ninfo:\n  title: Caf\xe9 \xe0 la carte\n  version: '1'\npaths: {}\n").encode(
            "latin-1"
        ),
        "nested_json": ("[" * 100_000 + "]" * 100_000).encode(),
        "nested_yaml": ("a:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(3000))).encode(),
        "huge_int": (
            '{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {}, "x-n": ' + "9" * 50_000 + "}"
        ).encode(),
        "empty": b"",
        "utf16_no_bom": text.encode("utf-16-le"),
    }
    out = {}
    for name, data in files.items():
        out[name] = folder / f"{name}.json"
        out[name].write_bytes(data)
    out["missing"] = folder / "missing.json"
    out["folder"] = folder / "sub"
    out["folder"].mkdir()
    out["good"] = folder / "good.json"
    out["good"].write_text(text, encoding="utf-8")
    out["good_utf16"] = folder / "good_utf16.json"  # UTF-16 with a byte-order mark is text: it registers
    out["good_utf16"].write_bytes(
        json.dumps(shipped_documents()["RTMSDataSvcAptTrade"], ensure_ascii=False).encode("utf-16")
    )
    return out


def test_register_bad_files_one_line_each_good_ones_still_register(embedded: Path, tmp_path: Path) -> None:
    files = hostile_files(tmp_path)
    bad = [n for n in files if not n.startswith("good")]
    order = [files["binary"], files["good"], *(files[n] for n in bad if n != "binary"), files["good_utf16"]]
    env = {**os.environ, "KOPA_STORE": "embedded", "KOPA_EMBEDDED_PATH": str(embedded)}
    env.pop("KOPA_REDIS_URL", None)
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "cli", "register", *map(str, order)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - start
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout, out.stderr
    err_lines = [line for line in out.stderr.splitlines() if line.strip()]
    for name in bad:
        mine = [line for line in err_lines if line.startswith(str(files[name]) + ":")]
        assert len(mine) == 1, (name, err_lines)
    assert err_lines[-1] == f"{len(bad)} of {len(order)} documents not registered"
    assert len(err_lines) == len(bad) + 1, err_lines
    # one line per registered file; what was understood of each operation follows it, indented
    files_out = [line for line in out.stdout.splitlines() if not line.startswith(" ")]
    assert {"good.json", "good_utf16.json"} == {line.split(":")[0] for line in files_out}
    assert len(out.stdout.splitlines()) > len(files_out) and "; paging " in out.stdout
    store = EmbeddedStore(embedded)
    assert store.stats()["apis"] == 2
    store.close()
    assert took < 60


def test_synth_counts_and_out_checked_before_work(embedded: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for count in ("0", "-5", str(10**23), "100001"):
        start = time.monotonic()
        line = one_error_line(runner.invoke(kopa, ["synth", "--count", count, "--out", str(tmp_path / "o")]))
        assert "--count" in line and time.monotonic() - start < 5
    assert not (tmp_path / "o").exists()  # refused before anything was created
    (tmp_path / "file").write_text("x")
    for out in ("/proc/forbidden", str(tmp_path / "file"), str(tmp_path / "file" / "below")):
        line = one_error_line(runner.invoke(kopa, ["synth", "--count", "5", "--out", out]))
        assert "--out" in line and "not a writable folder" in line, line
    assert not EmbeddedStore(embedded).stats()["apis"]  # no work was done (nothing opened or written)
    line = one_error_line(runner.invoke(kopa, ["demo", "--count", "0", "--workdir", str(tmp_path / "d")]))
    assert "--count" in line


def test_other_commands_refuse_bad_input(embedded: Path) -> None:
    runner = CliRunner()
    for port in ("99999", "-1", "65536", str(10**30)):
        start = time.monotonic()
        line = one_error_line(runner.invoke(kopa, ["sandbox", "serve", "--port", port]))
        assert "--port" in line and time.monotonic() - start < 5
    assert "--workers" in one_error_line(runner.invoke(kopa, ["sandbox", "serve", "--port", "18999", "--workers", "0"]))
    assert "--budget" in one_error_line(runner.invoke(kopa, ["verify", "--budget", "0"]))
    assert "no API" in one_error_line(runner.invoke(kopa, ["verify", "--api", "nope"]))
    assert "--scope" in one_error_line(runner.invoke(kopa, ["verify", "--scope", "everything"]))
    assert "--yes" in one_error_line(runner.invoke(kopa, ["graph", "reset"]))


def test_neo4j_away_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.helpers import free_port

    monkeypatch.setenv("KOPA_STORE", "neo4j")
    monkeypatch.setenv("KOPA_NEO4J__URI", f"bolt://127.0.0.1:{free_port()}")
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        for args in (["graph", "stats"], ["graph", "repair"], ["token", "list"], ["token", "revoke", "x"]):
            start = time.monotonic()
            line = one_error_line(runner.invoke(kopa, args))
            assert "not reachable" in line and time.monotonic() - start < 15, (args, line)
    finally:
        get_settings.cache_clear()
