"""Runs that tell the truth about keys: an API whose key environment variable is missing gets no
call at all, and an API whose key the provider refuses (gateway 30) is stopped at its first answer; the run says
which and why, and fails when no API in scope could be called."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.settings import Settings
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta, RunRecord
from graph.registry import register
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from verification.runs import execute_run, new_run


def _run(tmp_path: Path, docs: dict[str, str | None]) -> tuple[RunRecord, EmbeddedStore]:
    settings, transport = sandbox_mode(Settings())
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    for name, secret in docs.items():
        register(
            store,
            settings,
            shipped_documents()[name],
            RegistrationMeta(auth=AuthConfig(secret=secret)) if secret else None,
        )
    run = asyncio.run(execute_run(store, settings, new_run(), transport=transport, economy=MemoryEconomy()))
    return run, store


def test_a_missing_key_variable_spends_no_call_and_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KOPA_APIKEY_NOT_SET", raising=False)
    run, store = _run(tmp_path, {"StanReginCd": "KOPA_APIKEY_NOT_SET"})
    assert run.status == "failed", (run.status, run.message)
    assert "KOPA_APIKEY_NOT_SET is not set" in run.message
    assert run.calls.get("calls", 0) == 0
    assert run.unreachable and all("KOPA_APIKEY_NOT_SET" in str(u) for u in run.unreachable)
    store.close()


def test_a_refused_key_stops_its_api_and_the_others_go_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOPA_APIKEY_WRONG", "this-key-was-never-issued-0123456789")
    run, store = _run(tmp_path, {"StanReginCd": "KOPA_APIKEY_WRONG", "MsrstnInfoInqireSvc": None})
    api = next(a.id for a in store.list_apis(limit=10)[0] if "StanReginCd" in a.server_url)
    assert run.status == "completed", run.message
    assert "refused the key" in run.message and api in run.message
    # the first answers (at most the calls already in flight) and no more
    assert run.calls.get(f"api:{api}", 0) <= Settings().verify.concurrency
    assert run.calls.get("calls", 0) > run.calls.get(f"api:{api}", 0)  # the other APIs were verified
    store.close()
