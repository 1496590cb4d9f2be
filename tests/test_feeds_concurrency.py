"""Derived relationships under concurrency, on real Neo4j: concurrent refreshes of one tool pair (single saves and
bulk saves from several threads) leave exactly one FEEDS edge and one VERIFIED mirror per link; `repair` (and
`kopa graph repair`) rebuilds a graph written before they were keyed, where parallel edges had piled up."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.settings import Neo4jSettings
from graph.models import ApiRecord, FieldRecord, LinkRecord, ParamRecord, ToolRecord
from graph.neo4j_store import Neo4jStore

ROOT = Path(__file__).resolve().parents[1]


def _tools(api_id: str) -> tuple[ToolRecord, ToolRecord]:
    src = ToolRecord(
        name=f"{api_id}_src",
        api_id=api_id,
        op_key="GET /src",
        method="GET",
        url="http://x/src",
        fields=[FieldRecord(name="code", path="code"), FieldRecord(name="zone", path="zone")],
    )
    dst = ToolRecord(
        name=f"{api_id}_dst",
        api_id=api_id,
        op_key="GET /dst",
        method="GET",
        url="http://x/dst",
        params=[ParamRecord(name="code", required=True), ParamRecord(name="zone")],
    )
    return src, dst


@pytest.fixture
def pair(neo4j_uri: str) -> Iterator[tuple[Neo4jStore, str, list[LinkRecord]]]:
    store = Neo4jStore(Neo4jSettings(uri=neo4j_uri))
    store.init_schema()
    api_id = "feeds_" + uuid.uuid4().hex[:8]
    src, dst = _tools(api_id)
    store.apply_registration(ApiRecord(id=api_id, title="feeds", server_url="http://x"), [src, dst], [], {})
    links = [
        LinkRecord(
            id=f"{api_id}:{f}",
            source_tool=src.name,
            source_field=f,
            target_tool=dst.name,
            target_param=f"query:{f}",
            score=0.9,
        )
        for f in ("code", "zone")
    ]
    store.upsert_candidates(links)
    yield store, api_id, links
    store.delete_api(api_id)
    store.close()


def count(store: Neo4jStore, query: str, **params: object) -> int:
    return int(store.driver.execute_query(query, params, database_=store.db).records[0][0])


def feeds(store: Neo4jStore, api_id: str) -> int:
    return count(
        store,
        "MATCH (s:Tool {name: $s})-[f:FEEDS]->(t:Tool {name: $t}) RETURN count(f)",
        s=f"{api_id}_src",
        t=f"{api_id}_dst",
    )


def mirrors(store: Neo4jStore, link_id: str) -> int:
    return count(store, "MATCH ()-[v:VERIFIED {id: $id}]->() RETURN count(v)", id=link_id)


def test_concurrent_refreshes_leave_one_edge(pair: tuple[Neo4jStore, str, list[LinkRecord]]) -> None:
    store, api_id, links = pair
    verified = [lk.model_copy(update={"status": "verified"}) for lk in links]

    def hammer(worker: int) -> None:
        for i in range(30):
            if (worker + i) % 3 == 0:
                store.save_links(verified)  # the bulk path (REFRESH_FEEDS_MANY over pairs)
            else:
                store.save_link(verified[(worker + i) % 2])

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(hammer, range(4)))
    assert feeds(store, api_id) == 1
    assert all(mirrors(store, lk.id) == 1 for lk in links)
    edges = store.verified_edges()[f"{api_id}_src"]
    assert edges == {f"{api_id}_dst": sorted(lk.id for lk in links)}
    paths = store.sample_paths([f"{api_id}_src"], 1, 1, 10)
    assert paths == [[f"{api_id}_src", f"{api_id}_dst"]]  # one path, not one per parallel edge

    # concurrent demotions and promotions still end with at most one edge, matching the final link states
    refuted = [lk.model_copy(update={"status": "refuted"}) for lk in links]

    def flip(worker: int) -> None:
        for i in range(20):
            store.save_link((verified if (worker + i) % 2 else refuted)[i % 2])

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(flip, range(4)))
    store.save_links(refuted)
    assert feeds(store, api_id) == 0 and all(mirrors(store, lk.id) == 0 for lk in links)
    store.save_link(verified[0])
    assert feeds(store, api_id) == 1 and mirrors(store, verified[0].id) == 1


def test_repair_rebuilds_a_legacy_graph(pair: tuple[Neo4jStore, str, list[LinkRecord]], neo4j_uri: str) -> None:
    store, api_id, links = pair
    store.save_links([lk.model_copy(update={"status": "verified"}) for lk in links])
    # what the unkeyed DELETE+CREATE refresh left behind under load: parallel FEEDS without a key, doubled mirrors
    store.driver.execute_query(
        "MATCH (s:Tool {name: $s}), (t:Tool {name: $t}) UNWIND "
        "range(1, 40) AS i CREATE (s)-[:FEEDS {links: ['x']}]->(t)",
        {"s": f"{api_id}_src", "t": f"{api_id}_dst"},
        database_=store.db,
    )
    store.driver.execute_query(  # a mirror of a link that is not verified, and a second HAS_TOOL
        "MATCH (f:Field {id: $f}), (p:Param {id: $p}), (a:Api {id: $a}), (t:Tool {name: $s}) "
        "CREATE (f)-[:VERIFIED {id: 'stray-' + $a}]->(p), (a)-[:HAS_TOOL]->(t)",
        {"f": f"{api_id}_src|zone", "p": f"{api_id}_dst|query:code", "a": api_id, "s": f"{api_id}_src"},
        database_=store.db,
    )
    assert feeds(store, api_id) == 41
    assert len(store.sample_paths([f"{api_id}_src"], 1, 1, 100)) == 41

    # through the CLI, as an operator would run it
    env = {**os.environ, "KOPA_STORE": "neo4j", "KOPA_NEO4J__URI": neo4j_uri}
    out = subprocess.run(
        [sys.executable, "-m", "cli", "graph", "repair"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "FEEDS" in out.stdout and "Traceback" not in out.stderr
    assert feeds(store, api_id) == 1
    assert count(store, "MATCH ()-[v:VERIFIED {id: $id}]->() RETURN count(v)", id=f"stray-{api_id}") == 0
    assert (
        count(
            store, "MATCH (:Api {id: $a})-[r:HAS_TOOL]->(:Tool {name: $s}) RETURN count(r)", a=api_id, s=f"{api_id}_src"
        )
        == 1
    )
    assert store.sample_paths([f"{api_id}_src"], 1, 1, 100) == [[f"{api_id}_src", f"{api_id}_dst"]]
    again = store.repair()  # idempotent
    assert again["duplicate_structure_removed"] == 0 and again["stray_verified_removed"] == 0
    assert feeds(store, api_id) == 1
