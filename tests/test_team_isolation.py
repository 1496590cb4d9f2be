"""Teams kept apart: pool batches and verification runs.

* A `source: "pool"` batch draws only from the requesting team's own trajectories, on both stores, unless an admin
  shares a team's pool (`KOPA_BATCHES__SHARED_POOL`); over REST, team-b's pool batch holds none of team-a's
  trajectories, whose batch answers team-b 404.
* A verification run that a team's batch started (on demand) is that team's: the team and admins list and read it,
  any other reader gets 404 and does not see it in the list or the yield report. Runs an admin starts stay every
  reader's.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.security import mint_token
from core.settings import BatchSettings, Settings
from graph.embedded_store import EmbeddedStore
from graph.models import RunRecord
from graph.store import GraphStore
from synthesis.batches import BatchRequest, new_batch, run_batch
from tests.support.helpers import wait_batch
from tests.support.upstream import registered_store, upstream_settings


def _records(team: str, n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"tr_{team}_{i}", "seq": i, "shape": "single", "n_steps": 1, "request": f"{team} asks {i}"}
        for i in range(n)
    ]


def _stored_batch(store: GraphStore, team: str, n: int) -> str:
    batch_id = f"tb_{uuid.uuid4().hex[:12]}"
    store.save_batch(
        {"id": batch_id, "team": team, "status": "completed", "created_at": "2026-01-01T00:00:00", "format": "record"}
    )
    store.add_trajectories(batch_id, _records(team, n))
    return batch_id


def _pool(store: GraphStore, settings: Settings, team: str, count: int) -> list[dict[str, Any]]:
    batch = new_batch(store, settings, team, BatchRequest(count=count, shapes=["single"], source="pool", seed=5))
    done = asyncio.run(run_batch(store, settings, batch.id))
    assert done.status == "completed", done
    return store.list_trajectories(batch.id, 0, 1000)[0]


def test_pool_batches_draw_only_from_the_teams_own_trajectories(any_store: GraphStore) -> None:
    run = uuid.uuid4().hex[:8]  # the Neo4j store is shared: teams of this test only
    a, b, c = f"team-a-{run}", f"team-b-{run}", f"team-c-{run}"
    _stored_batch(any_store, a, 50)
    _stored_batch(any_store, b, 10)
    settings = Settings(redis_url=None, batches=BatchSettings(max_count=100))
    mine = _pool(any_store, settings, b, 50)
    assert len(mine) == 10 and all(r["id"].startswith(f"tr_{b}_") for r in mine), [r["id"] for r in mine]
    assert [r["seq"] for r in mine] == list(range(10))
    assert _pool(any_store, settings, c, 5) == []  # a team with no trajectories draws none of anyone else's
    # an admin shares team a's pool: every team's pool batches may draw it too; b's stays b's
    shared = settings.model_copy(update={"batches": settings.batches.model_copy(update={"shared_pool": a})})
    drawn = _pool(any_store, shared, b, 60)
    assert len(drawn) == 60 and {r["id"].split("_")[1] for r in drawn} == {a, b}
    assert all(r["id"].startswith(f"tr_{a}_") for r in _pool(any_store, shared, a, 100))


@pytest.fixture
def app(tmp_path: Path, sandbox_url: str) -> Iterator[tuple[TestClient, EmbeddedStore]]:
    settings = upstream_settings(sandbox_url)
    store = registered_store(tmp_path / "teams.sqlite3", settings)
    with TestClient(create_app(settings, store)) as c:
        yield c, store
    store.close()


def test_pool_batches_over_rest_keep_teams_apart(app: tuple[TestClient, EmbeddedStore]) -> None:
    c, store = app
    a = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-a')}"}
    b = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-b')}"}
    theirs = _stored_batch(store, "team-a", 50)
    _stored_batch(store, "team-b", 4)
    assert c.get(f"/v1/trajectory-batches/{theirs}", headers=b).status_code == 404
    r = c.post("/v1/trajectory-batches", json={"count": 50, "source": "pool", "shapes": ["single"]}, headers=b)
    assert r.status_code == 202, r.text
    done = wait_batch(c, r.json()["id"], b)
    drawn = store.list_trajectories(str(done["id"]), 0, 100)[0]
    assert done["produced"] == 4 and all(x["id"].startswith("tr_team-b_") for x in drawn), drawn
    assert c.get(f"/v1/trajectory-batches/{done['id']}", headers=a).status_code == 404


def test_a_teams_verification_runs_are_its_own(app: tuple[TestClient, EmbeddedStore]) -> None:
    c, store = app
    a = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-a')}"}
    b = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-b')}"}
    admin = {"Authorization": f"Bearer {mint_token(store, 'admin', 'ops')}"}
    # an on-demand batch of team-a starts a verification run: the run is team-a's
    r = c.post("/v1/trajectory-batches", json={"count": 4, "seed": 2, "on_demand": True}, headers=a)
    batch = wait_batch(c, r.json()["id"], a)
    run_id = str(batch["verification_run"])
    run = store.get_run(run_id)
    assert run is not None and run.team == "team-a" and run.calls.get("calls", 0) > 0, run
    # an admin's run is every reader's
    store.save_run(RunRecord(id="run_admin0001", status="completed", created_at="2026-01-01T00:00:00"))
    for who in (a, admin):
        got = c.get(f"/v1/verification-runs/{run_id}", headers=who)
        assert got.status_code == 200 and got.json()["calls_spent"] > 0, got.text
        assert run_id in {x["id"] for x in c.get("/v1/verification-runs", headers=who).json()}
    hidden = c.get(f"/v1/verification-runs/{run_id}", headers=b)
    missing = c.get("/v1/verification-runs/run_nosuchrun0", headers=b)
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["error"] == missing.json()["error"] == "not_found"
    listed = {x["id"] for x in c.get("/v1/verification-runs", headers=b).json()}
    assert run_id not in listed and "run_admin0001" in listed
    assert run_id not in {x["run"] for x in c.get("/v1/reports/yield", headers=b).json()["runs"]}
    assert run_id in {x["run"] for x in c.get("/v1/reports/yield", headers=a).json()["runs"]}
    assert "run_admin0001" in {x["run"] for x in c.get("/v1/reports/yield", headers=b).json()["runs"]}
