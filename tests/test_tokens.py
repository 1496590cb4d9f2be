"""Tokens: list (never secrets), revoke, optional expiry, from the CLI and from the admin REST endpoints; batches
and their items are visible only to their team (another team's look missing: 404) and to admins."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from typer.testing import CliRunner

from api.app import create_app
from api.security import hash_token, mint_token, new_token
from cli import app as kopa
from core.settings import Settings
from graph.embedded_store import EmbeddedStore
from graph.store import GraphStore


@pytest.fixture
def store(any_store: GraphStore) -> GraphStore:
    return any_store


@pytest.fixture
def client(store: GraphStore) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(bootstrap_token=SecretStr("boot-t"), redis_url=None), store)) as c:
        yield c


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_rest_list_create_revoke_expire(client: TestClient, store: GraphStore) -> None:
    admin = mint_token(store, "admin", "ops")
    reader = mint_token(store, "reader", "team-t")
    assert client.get("/v1/tokens", headers=bearer(reader)).status_code == 403
    assert client.post("/v1/tokens", json={"role": "admin"}, headers=bearer(reader)).status_code == 403

    made = client.post(
        "/v1/tokens", json={"role": "reader", "name": "team-new", "expires_in": "30d"}, headers=bearer(admin)
    )
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["token"].startswith("kopa_") and body["state"] == "active" and body["role"] == "reader"
    expires = datetime.fromisoformat(body["expires_at"])
    assert timedelta(days=29, hours=23) < expires - datetime.now(UTC) <= timedelta(days=30)
    assert client.get("/v1/apis", headers=bearer(body["token"])).status_code == 200

    listed = client.get("/v1/tokens", headers=bearer(admin))
    assert listed.status_code == 200
    rows = {t["id"]: t for t in listed.json()}
    assert body["id"] in rows and rows[body["id"]]["name"] == "team-new"
    text = listed.text
    assert body["token"] not in text and reader not in text and "token_hash" not in text
    assert hash_token(body["token"]) not in text  # not even the hashes leave the server

    revoked = client.delete(f"/v1/tokens/{body['id']}", headers=bearer(admin))
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked" and revoked.json()["revoked_at"]
    again = client.delete(f"/v1/tokens/{body['id']}", headers=bearer(admin))  # idempotent, same instant
    assert again.status_code == 200 and again.json()["revoked_at"] == revoked.json()["revoked_at"]
    refused = client.get("/v1/apis", headers=bearer(body["token"]))
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    assert client.delete("/v1/tokens/nope", headers=bearer(admin)).status_code == 404

    # an expired token is refused with a reason
    secret, record = new_token("reader", "team-old")
    store.add_token(record.model_copy(update={"expires_at": (datetime.now(UTC) - timedelta(seconds=1)).isoformat()}))
    old = client.get("/v1/apis", headers=bearer(secret))
    assert old.status_code == 401 and "expired" in old.json()["detail"]
    states = {t["id"]: t["state"] for t in client.get("/v1/tokens", headers=bearer(admin)).json()}
    assert states[record.id] == "expired" and states[body["id"]] == "revoked"

    for bad in (
        {"role": "root"},
        {"role": "reader", "expires_in": "0d"},
        {"role": "reader", "expires_in": "99999w"},
        {"role": "reader", "expires_in": "soon"},
        {"role": "reader", "name": "x" * 200},
    ):
        r = client.post("/v1/tokens", json=bad, headers=bearer(admin))
        assert r.status_code == 422 and r.json()["error"] == "invalid_input", (bad, r.text)


def test_batches_are_visible_to_their_team_only(client: TestClient, store: GraphStore) -> None:
    team_a = mint_token(store, "reader", "team-a-vis")
    team_a2 = mint_token(store, "reader", "team-a-vis")  # a second token of the same team
    team_b = mint_token(store, "reader", "team-b-vis")
    admin = mint_token(store, "admin", "ops")
    batch_id = "tb_vis_" + hash_token(team_a)[:8]
    store.save_batch(
        {
            "id": batch_id,
            "team": "team-a-vis",
            "status": "completed",
            "count": 1,
            "format": "record",
            "created_at": "2026-01-01T00:00:00+00:00",
            "produced": 1,
        }
    )
    store.add_trajectories(
        batch_id,
        [
            {
                "id": "t1",
                "seq": 0,
                "shape": "single",
                "n_steps": 0,
                "request": "r",
                "tools": [],
                "steps": [],
                "final_answer": "a",
            }
        ],
    )
    for token in (team_a, team_a2, admin):
        assert client.get(f"/v1/trajectory-batches/{batch_id}", headers=bearer(token)).status_code == 200
        items = client.get(f"/v1/trajectory-batches/{batch_id}/items", headers=bearer(token))
        assert items.status_code == 200 and json.loads(items.text.splitlines()[0])["id"] == "t1"
    for path in (f"/v1/trajectory-batches/{batch_id}", f"/v1/trajectory-batches/{batch_id}/items"):
        other = client.get(path, headers=bearer(team_b))
        missing = client.get(path.replace(batch_id, "tb_missing"), headers=bearer(team_b))
        assert other.status_code == 404 and missing.status_code == 404
        assert other.json()["detail"].replace(batch_id, "X") == missing.json()["detail"].replace("tb_missing", "X")


def test_cli_token_create_list_revoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOPA_STORE", "embedded")
    monkeypatch.setenv("KOPA_EMBEDDED_PATH", str(tmp_path / "cli.sqlite3"))
    from core.settings import get_settings

    get_settings.cache_clear()
    try:
        runner = CliRunner()
        made = runner.invoke(kopa, ["token", "create", "--role", "reader", "--name", "team-cli", "--expires-in", "30d"])
        assert made.exit_code == 0, made.output
        secret = made.stdout.strip()
        store = EmbeddedStore(tmp_path / "cli.sqlite3")
        record = store.find_token(hash_token(secret))
        assert record is not None and record.expires_at and record.name == "team-cli"
        listed = runner.invoke(kopa, ["token", "list"])
        assert listed.exit_code == 0 and record.id in listed.stdout and "active" in listed.stdout
        assert secret not in listed.stdout and record.token_hash not in listed.stdout
        revoked = runner.invoke(kopa, ["token", "revoke", record.id])
        assert revoked.exit_code == 0 and "revoked" in revoked.stdout
        assert "revoked" in runner.invoke(kopa, ["token", "list"]).stdout
        assert (store.find_token(hash_token(secret)) or record).state() == "revoked"
        for args in (
            ["token", "revoke", "nope"],
            ["token", "create", "--role", "reader", "--expires-in", "forever"],
            ["token", "create", "--role", "root"],
        ):
            bad = runner.invoke(kopa, args)
            assert bad.exit_code != 0 and (bad.exception is None or isinstance(bad.exception, SystemExit)), args
            assert bad.output.count("\n") <= 1 and "error:" in bad.output and "Traceback" not in bad.output, args
        store.close()
    finally:
        get_settings.cache_clear()
