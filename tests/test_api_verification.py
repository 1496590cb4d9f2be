"""Verification over the REST API (in-process mode), against the sandbox over a real socket."""

from __future__ import annotations

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
from core.settings import Settings
from graph.embedded_store import EmbeddedStore
from sandbox.catalog import REAL_HOSTS, shipped_documents
from sandbox.clock import DEFAULT_NOW
from sandbox.keys import DEMO_KEY


@pytest.fixture
def client(tmp_path: Path, sandbox_url: str) -> Iterator[tuple[TestClient, EmbeddedStore]]:
    os.environ.setdefault("KOPA_SERVICE_KEY", DEMO_KEY)
    settings = Settings(
        bootstrap_token=SecretStr("boot"),
        upstream_overrides=",".join(f"{h}={sandbox_url}" for h in REAL_HOSTS),
        allowed_hosts=[*REAL_HOSTS, "127.0.0.1"],
        redis_url=None,  # a cache of its own: the shared Redis may hold every answer already (no call spent)
    )
    settings = settings.model_copy(
        update={"verify": settings.verify.model_copy(update={"now": DEFAULT_NOW.isoformat()})}
    )
    store = EmbeddedStore(tmp_path / "api.sqlite3")
    with TestClient(create_app(settings, store)) as c:
        c.headers["Authorization"] = "Bearer boot"
        for name in ("StanReginCd", "RTMSDataSvcAptTrade", "RTMSDataSvcAptTradeDev", "BldRgstHubService"):
            assert c.post("/v1/apis", json=shipped_documents()[name]).status_code == 201
        yield c, store
    store.close()


def test_run_links_and_reports(client: tuple[TestClient, EmbeddedStore]) -> None:
    c, store = client
    reader = mint_token(store, "reader")
    denied = c.post("/v1/verification-runs", json={}, headers={"Authorization": f"Bearer {reader}"})
    assert denied.status_code == 403
    assert c.post("/v1/verification-runs", json={"api_ids": ["nope"]}).status_code == 404
    assert c.post("/v1/verification-runs", json={"budget": 0}).status_code == 422
    r = c.post("/v1/verification-runs", json={"mode": "inprocess"})
    assert r.status_code == 202
    run_id = r.json()["id"]
    deadline = time.monotonic() + 60
    while True:
        p = c.get(f"/v1/verification-runs/{run_id}", headers={"Authorization": f"Bearer {reader}"}).json()
        if p["status"] in ("completed", "paused", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert p["status"] == "completed", p
    assert p["verified"] > 0 and p["calls_spent"] > 0 and p["calls_per_verified_link"]
    page = c.get("/v1/links", params={"status": "verified", "tool": "molit_get_rtms_data_svc_apt_trade"}).json()
    assert page["total"] > 0
    link = page["items"][0]
    assert (
        link["target_tool"] == "molit_get_rtms_data_svc_apt_trade"
        or link["source_tool"] == "molit_get_rtms_data_svc_apt_trade"
    )
    one = c.get(f"/v1/links/{link['id']}").json()
    assert one["evidence"]["examples"] and one["history"]
    assert DEMO_KEY not in json.dumps(one)
    assert c.get("/v1/links/lk_missing").status_code == 404
    yields = c.get("/v1/reports/yield").json()
    assert yields["runs"][0]["run"] == run_id and yields["runs"][0]["calls"] == p["calls_spent"]
    drift = c.get("/v1/reports/drift").json()
    assert set(drift) >= {"changes", "flagged_for_reverification", "vanished_fields"}
    assert c.get("/v1/verification-runs").json()[0]["id"] == run_id
