"""Trajectory batches over HTTP: a reader token requests a batch, follows it, streams it as JSONL with
pagination in any export format; per-team limits answer 422 and 409."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from api.security import mint_token
from core.settings import BatchSettings, Settings
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.registry import register
from sandbox.catalog import REAL_HOSTS, shipped_documents
from sandbox.clock import DEFAULT_NOW
from sandbox.keys import DEMO_KEY
from tests.support.upstream import SERVICES
from verification.runs import execute_run, new_run


def registered(tmp_path: Path, sandbox_url: str) -> tuple[Settings, EmbeddedStore]:
    """Settings for the sandbox socket and a store with eight of its APIs registered, nothing verified."""
    os.environ.setdefault("KOPA_SERVICE_KEY", DEMO_KEY)
    settings = Settings(
        bootstrap_token=SecretStr("boot"),
        allowed_hosts=[*REAL_HOSTS, "127.0.0.1"],
        redis_url=None,
        upstream_overrides=",".join(f"{h}={sandbox_url}" for h in REAL_HOSTS),
        batches=BatchSettings(max_count=300, max_concurrent=1),
    )
    settings = settings.model_copy(
        update={"verify": settings.verify.model_copy(update={"now": DEFAULT_NOW.isoformat()})}
    )
    store = EmbeddedStore(tmp_path / "b.sqlite3")
    for name in SERVICES:
        register(store, settings, shipped_documents()[name])
    return settings, store


@pytest.fixture
def client(tmp_path: Path, sandbox_url: str) -> Iterator[tuple[TestClient, EmbeddedStore]]:
    settings, store = registered(tmp_path, sandbox_url)
    asyncio.run(execute_run(store, settings, new_run(), economy=MemoryEconomy()))
    with TestClient(create_app(settings, store)) as c:
        yield c, store
    store.close()


def test_a_batch_verifies_on_demand_in_the_api_process(tmp_path: Path, sandbox_url: str) -> None:
    """Without a task queue the API runs the batch itself; with `on_demand` it verifies the links the plans
    traverse first (no run before), and every trajectory uses verified links only."""
    settings, store = registered(tmp_path, sandbox_url)
    with TestClient(create_app(settings, store)) as c:
        h = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-a')}"}
        chains = {"count": 12, "seed": 2, "shapes": ["chain"]}
        plain = wait(c, c.post("/v1/trajectory-batches", json=chains, headers=h).json()["id"], h)
        assert plain["produced"] == 0 and "verify" in str(plain["message"]), plain  # nothing verified yet
        none = {"count": 3, "on_demand": True, "api_ids": ["no-such-api"]}  # nothing to draw from (schemathesis)
        empty = wait(c, c.post("/v1/trajectory-batches", json=none, headers=h).json()["id"], h)
        assert empty["status"] == "completed" and empty["produced"] == 0, empty
        r = c.post("/v1/trajectory-batches", json={**chains, "on_demand": True}, headers=h)
        batch = wait(c, r.json()["id"], h)
    assert batch["status"] == "completed" and batch["produced"] == 12 and batch["on_demand"], batch
    figures = batch["verification"]
    assert isinstance(figures, dict) and figures["verified"] > 0 and figures["calls"] > 0, figures
    verified = {lk.id for lk in store.list_links(status="verified", limit=100_000)[0]}
    assert len(verified) == figures["verified"]
    rows = store.list_trajectories(str(batch["id"]), 0, 100)[0]
    used = [set(row["metadata"]["verified_links"]) for row in rows if row["steps"]]  # extras may call nothing
    assert len(used) >= 10 and all(links and links <= verified for links in used), used
    store.close()


def wait(c: TestClient, batch_id: str, headers: dict[str, str]) -> dict[str, object]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        b = c.get(f"/v1/trajectory-batches/{batch_id}", headers=headers).json()
        if b["status"] in ("completed", "failed"):
            return b  # type: ignore[no-any-return]
        time.sleep(0.2)
    raise AssertionError("batch did not finish")


def test_batches_stream_paginate_and_limit(client: tuple[TestClient, EmbeddedStore]) -> None:
    c, store = client
    h = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-a')}"}
    assert c.post("/v1/trajectory-batches", json={"count": 301}, headers=h).status_code == 422
    assert c.post("/v1/trajectory-batches", json={"count": 5, "shapes": ["spiral"]}, headers=h).status_code == 422
    assert c.post("/v1/trajectory-batches", json={"count": 5}).status_code == 401
    store.save_batch({"id": "tb_running", "team": "team-a", "status": "running", "created_at": "2026-01-01"})
    busy = c.post("/v1/trajectory-batches", json={"count": 40}, headers=h)
    assert busy.status_code == 409 and busy.json()["error"] == "conflict"
    other = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-b')}"}
    assert c.post("/v1/trajectory-batches", json={"count": 2}, headers=other).status_code == 202  # limits are per team
    store.save_batch({"id": "tb_running", "team": "team-a", "status": "completed", "created_at": "2026-01-01"})
    r = c.post("/v1/trajectory-batches", json={"count": 40, "seed": 3, "format": "openai"}, headers=h)
    assert r.status_code == 202
    batch = wait(c, r.json()["id"], h)
    assert batch["status"] == "completed" and batch["produced"] == 40, batch
    page1 = c.get(f"/v1/trajectory-batches/{batch['id']}/items", params={"limit": 25}, headers=h)
    assert page1.headers["content-type"].startswith("application/x-ndjson")
    assert page1.headers["x-total-count"] == "40" and 'rel="next"' in page1.headers["link"]
    lines = [json.loads(x) for x in page1.text.splitlines()]
    assert len(lines) == 25 and lines[0]["messages"][1]["role"] == "user" and "parallel_tool_calls" in lines[0]
    page2 = c.get(f"/v1/trajectory-batches/{batch['id']}/items", params={"offset": 25, "format": "bfcl"}, headers=h)
    assert len(page2.text.splitlines()) == 15 and "link" not in page2.headers
    assert "ground_truth" in json.loads(page2.text.splitlines()[0])
    pooled = c.post(
        "/v1/trajectory-batches", json={"count": 10, "source": "pool", "shapes": ["chain", "single"]}, headers=h
    )
    done = wait(c, pooled.json()["id"], h)
    records = [
        json.loads(x)
        for x in c.get(
            f"/v1/trajectory-batches/{done['id']}/items", params={"format": "record"}, headers=h
        ).text.splitlines()
    ]
    assert records and all(rec["shape"] in ("chain", "single") for rec in records)
    assert c.get("/v1/trajectory-batches/tb_nope", headers=h).status_code == 404
