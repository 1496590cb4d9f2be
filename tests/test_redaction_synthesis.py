"""Redaction by construction, the rest of the path: after verification, synthesis and export with a
canary key — against the sandbox over a socket and an upstream that echoes the request — the key is in no export
file, in no stored trajectory, and nowhere in the Neo4j graph (every node and relationship property)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from core.settings import Neo4jSettings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.neo4j_store import Neo4jStore
from synthesis.engine import synthesize
from synthesis.export import export_all
from synthesis.records import SynthesisResult
from tests.test_redaction import (
    CANARY,
    SECRET_NAME,
    assert_clean,
    canary_sandbox,
    echo_server,
    register_all,
    settings_for,
)
from verification.runs import execute_run, new_run

__all__ = ["canary_sandbox", "echo_server"]  # the module fixtures, shared with tests/test_redaction.py


def test_canary_nowhere_after_synthesis_exports_and_in_neo4j(
    canary_sandbox: str, echo_server: str, tmp_path: Path, neo4j_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SECRET_NAME, CANARY)
    settings = settings_for(canary_sandbox, echo_server, tmp_path / "unused.sqlite3").model_copy(
        update={"store": "neo4j", "neo4j": Neo4jSettings(uri=neo4j_uri)}
    )
    store = Neo4jStore(settings.neo4j)
    store.init_schema()
    store.reset()
    try:
        register_all(store, settings, echo_server)
        run = asyncio.run(execute_run(store, settings, new_run(), economy=MemoryEconomy()))
        assert run.status == "completed" and store.stats()["links"].get("verified")

        async def go() -> SynthesisResult:
            ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]})
            try:
                return await synthesize(store, settings, ex, count=12, seed=5)
            finally:
                await ex.aclose()

        result = asyncio.run(go())
        assert result["records"], result["discarded"][:5]  # the key worked: trajectories were executed
        store.add_trajectories("tb_canary", [r.to_json() for r in result["records"]])
        export_all(tmp_path / "export", result, store, settings, {"seed": 5})
        files = [f for f in (tmp_path / "export").rglob("*") if f.is_file()]
        assert any(f.name == "trl.jsonl" for f in files) and any("hf" in f.parts for f in files)
        for f in files:
            assert_clean(f"export {f.relative_to(tmp_path)}", f.read_bytes())
        assert_clean("stored trajectories", json.dumps(store.list_trajectories("tb_canary", 0, 100)[0]))
        with GraphDatabase.driver(neo4j_uri) as driver:
            nodes, _, _ = driver.execute_query("MATCH (n) RETURN labels(n) AS l, properties(n) AS p")
            rels, _, _ = driver.execute_query("MATCH ()-[r]->() RETURN type(r) AS t, properties(r) AS p")
        assert len(nodes) > 50 and len(rels) > 50
        assert_clean("Neo4j nodes", json.dumps([dict(r) for r in nodes], default=str, ensure_ascii=False))
        assert_clean("Neo4j relationships", json.dumps([dict(r) for r in rels], default=str, ensure_ascii=False))
    finally:
        store.reset()
        store.close()
