"""Hardening, round two (issue 23): each failure measured from outside, reproduced and now passing.

Secret names by policy (registration 422, REST and CLI, and again at call time); no tool takeover between APIs
(both stores); pool exhaustion told apart from an outage (503 busy with Retry-After, real Neo4j); the production
guard of every process as one line; one host normalisation for overrides and egress; valid requests accepted;
and the benchmark guard on the batch path (issue 21, item 5)."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from neo4j import GraphDatabase
from pydantic import SecretStr, ValidationError

from api.app import create_app
from api.security import mint_token
from core.errors import InvalidInput
from core.settings import Neo4jSettings, Settings, find_override, parse_overrides
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.neo4j_store import Neo4jStore
from graph.openapi import parse_document
from graph.registry import register
from graph.store import GraphStore
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from synthesis.batches import BatchRequest, benchmark_guard, new_batch, run_batch
from synthesis.contamination import BenchFingerprints
from tests.support.helpers import Recorder, first_tool_outcome, free_port, verified_store

ROOT = Path(__file__).resolve().parents[1]
ADMIN = {"Authorization": "Bearer boot-two"}
DOCS = shipped_documents()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, EmbeddedStore]]:
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    with TestClient(create_app(Settings(bootstrap_token=SecretStr("boot-two"), redis_url=None), store)) as c:
        yield c, store
    store.close()


# ---------------------------------------------------------------------------------------------- 1. secret names
REFUSED = [
    "KOPA_BOOTSTRAP_TOKEN",
    "KOPA_NEO4J__PASSWORD",
    "KOPA_REDIS_URL",
    "KOPA_SANDBOX__ADMIN_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "GITHUB_TOKEN",
    "OPENAI_API_KEY",
    "PGPASSWORD",
    "HOME",
    "PATH",
    "SECRET_KEY",
    "bad-name",
    "X" * 200,
]


def test_registration_refuses_secret_names_outside_the_policy(client: tuple[TestClient, EmbeddedStore]) -> None:
    c, store = client
    doc = DOCS["StanReginCd"]
    for name in REFUSED:
        r = c.post("/v1/apis", params={"secret_name": name, "api_id": "stan"}, json=doc, headers=ADMIN)
        assert r.status_code == 422, (name, r.status_code, r.text)
        body = r.json()
        assert body["error"] == "invalid_input" and "secret name refused" in body["detail"], body
        assert body["locations"][0]["pointer"] == "/metadata/auth/secret"
        wrapped = c.post("/v1/apis", json={"document": doc, "metadata": {"auth": {"secret": name}}}, headers=ADMIN)
        assert wrapped.status_code == 422, (name, wrapped.text)
    assert store.list_apis()[1] == 0  # nothing stored
    # README's example and the sandbox's key variable still register
    for name in ("CORP_SERVICE_KEY", "KOPA_SERVICE_KEY", "LIBRARY_SERVICE_KEY", "KOPA_APIKEY_LIBRARY"):
        r = c.post(
            "/v1/apis",
            params={"secret_name": name, "api_id": f"stan-{name.lower().replace('_', '-')}"},
            json=doc,
            headers=ADMIN,
        )
        assert r.status_code == 201, (name, r.text)
    assert c.post("/v1/apis", json=DOCS["KorService2"], headers=ADMIN).status_code == 201  # none named: the default


def test_secret_policy_is_configurable_never_for_own_settings() -> None:
    s = Settings(secret_names=["DATA_GO_KR_*", "CORP_KEY"])
    assert s.secret_refusal("DATA_GO_KR_WEATHER") is None and s.secret_refusal("CORP_KEY") is None
    assert "not an allowed key variable" in (s.secret_refusal("OTHER_KEY") or "")
    assert s.secret_refusal("KOPA_SERVICE_KEY") is None  # verify.key_secret always
    loose = Settings(secret_names=["*"])
    for name in ("KOPA_BOOTSTRAP_TOKEN", "KOPA_NEO4J__PASSWORD", "AWS_SECRET_ACCESS_KEY", "KOPA_ENV"):
        assert loose.secret_refusal(name), name
    with pytest.raises(ValidationError, match="KOPA_VERIFY__KEY_SECRET"):
        Settings.model_validate({"verify": {"key_secret": "KOPA_BOOTSTRAP_TOKEN"}})


def test_kopa_register_refuses_a_credential_as_secret(tmp_path: Path) -> None:
    doc = tmp_path / "stan.json"
    doc.write_text(json.dumps(DOCS["StanReginCd"]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update({"KOPA_STORE": "embedded", "KOPA_EMBEDDED_PATH": str(tmp_path / "g.sqlite3"), "PYTHONPATH": str(ROOT)})

    def kopa(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cli", "register", str(doc), *args],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )

    bad = kopa("--secret-name", "AWS_SECRET_ACCESS_KEY")
    assert bad.returncode == 1 and "secret name refused" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    good = kopa("--secret-name", "CORP_SERVICE_KEY", "--api-id", "stan")
    assert good.returncode == 0, good.stderr


def test_a_stored_registration_from_before_the_policy_sends_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = "aws-canary-7f3e9b1c55"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", canary)
    settings, sandbox = sandbox_mode(Settings())
    store = EmbeddedStore(tmp_path / "old.sqlite3")
    # written as an older version did, without the policy: straight into the store
    api, tools = parse_document(
        DOCS["StanReginCd"],
        RegistrationMeta(api_id="stan", auth=AuthConfig(param="serviceKey", secret="AWS_SECRET_ACCESS_KEY")),
    )
    for t in tools:
        t.api_id = api.id
    api.tool_count = len(tools)
    store.apply_registration(api, tools, [], {})
    stored = store.get_api("stan")
    assert stored is not None and stored.auth.secret == "AWS_SECRET_ACCESS_KEY"
    recorder = Recorder(sandbox)

    async def go() -> tuple[dict[str, str], str]:
        executor = Executor(settings, MemoryEconomy(), {"stan": stored}, transport=recorder)
        try:
            blocked = executor.preflight()
            result = await executor.call(tools[0], {"locatadd_nm": "서울특별시"})
            return blocked, result.reason
        finally:
            await executor.aclose()

    blocked, reason = asyncio.run(go())
    assert "secret policy" in blocked["stan"] and "secret policy" in reason
    assert not any(canary in seen for seen in recorder.seen), "the credential went upstream"
    # direct use of the request builder never reads the refused variable either
    executor = Executor(settings, MemoryEconomy(), {"stan": stored}, transport=recorder)
    assert executor._auth(tools[0], stored)[1] is None
    asyncio.run(executor.aclose())
    store.close()


# ------------------------------------------------------------------------------------------ 2. no tool takeover
def test_one_document_under_three_api_ids_moves_no_tool(any_store: GraphStore) -> None:
    settings = Settings()
    doc = DOCS["StanReginCd"]
    ids = ["takeover-a", "takeover-b", "takeover-c"]
    for api_id in ids:
        any_store.delete_api(api_id)
    try:
        n = len(parse_document(doc, RegistrationMeta())[1])
        names: dict[str, set[str]] = {}
        for api_id in ids:
            register(any_store, settings, copy.deepcopy(doc), RegistrationMeta(api_id=api_id))
            for earlier in names:  # registering another API never takes a tool away
                assert {t.name for t in any_store.tools_of_api(earlier)} == names[earlier], (api_id, earlier)
            names[api_id] = {t.name for t in any_store.tools_of_api(api_id)}
            assert len(names[api_id]) == n, (api_id, names[api_id])
        assert not (names[ids[0]] & names[ids[1]]) and not (names[ids[1]] & names[ids[2]])
        assert not (names[ids[0]] & names[ids[2]])
        for api_id in ids:
            for name in names[api_id]:
                tool = any_store.get_tool(name)
                assert tool is not None and tool.api_id == api_id, (name, tool and tool.api_id)
        # re-registering keeps every name (stable), in any order
        for api_id in reversed(ids):
            result = register(any_store, settings, copy.deepcopy(doc), RegistrationMeta(api_id=api_id))
            assert {t["name"] for t in result.tools} == names[api_id]
            assert all(t["change"] == "unchanged" for t in result.tools)
    finally:
        for api_id in ids:
            any_store.delete_api(api_id)


# --------------------------------------------------------------------------------------- 4. pool exhaustion
def test_pool_exhaustion_is_busy_not_unreachable(neo4j_uri: str) -> None:
    store = Neo4jStore(Neo4jSettings(uri=neo4j_uri))
    store.init_schema()
    store.driver.close()  # the same store with a tiny pool, so 50 concurrent registrations must wait for it
    store.driver = GraphDatabase.driver(
        neo4j_uri,
        max_connection_pool_size=2,
        connection_acquisition_timeout=0.2,
        connection_timeout=2.0,
        notifications_min_severity="OFF",
    )
    docs = [DOCS[name] for name in sorted(DOCS)]
    try:
        with TestClient(create_app(Settings(bootstrap_token=SecretStr("boot-two"), redis_url=None), store)) as c:

            def post(i: int) -> Any:
                return c.post("/v1/apis", params={"api_id": f"pool-{i}"}, json=docs[i % len(docs)], headers=ADMIN)

            with ThreadPoolExecutor(50) as pool:
                answers = list(pool.map(post, range(50)))
        statuses = [r.status_code for r in answers]
        busy = [r for r in answers if r.status_code == 503]
        assert busy, f"no registration waited for the pool: {statuses}"
        assert set(statuses) <= {200, 201, 503}, statuses
        for r in busy:
            assert r.json()["error"] == "store_busy" and "retry" in r.json()["detail"], r.text
            assert "not reachable" not in r.text and r.headers.get("retry-after", "").isdigit(), r.headers
    finally:
        for i in range(50):
            store.delete_api(f"pool-{i}")
        store.close()


# ------------------------------------------------------------------------------------------ 5. production guard
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


# ------------------------------------------------------------------------------------- 7. host normalisation
def test_one_host_form_for_overrides_and_egress() -> None:
    overrides = parse_overrides(
        "apis.data.go.kr=http://h:1,https://api.odcloud.kr/api/1=http://b:1,Business.Juso.go.kr.=http://j:1"
    )
    for url, target in [
        ("https://apis.data.go.kr./1360000/x", "http://h:1"),
        ("https://APIS.DATA.GO.KR/1360000/x", "http://h:1"),
        ("https://apis.data.go.kr:443/1360000/x", "http://h:1"),
        ("https://api.odcloud.kr./api/1/op", "http://b:1"),
        ("https://api.odcloud.kr:443/api/1/op", "http://b:1"),
        ("https://business.juso.go.kr/addrlink", "http://j:1"),
    ]:
        found = find_override(overrides, url, None)
        assert found is not None and found.target == target, (url, found)
    assert find_override(overrides, "https://apis.data.go.kr:8443/x", None) is None  # another port: another server
    with pytest.raises(ValidationError, match="named twice"):
        Settings(upstream_overrides="apis.data.go.kr=http://a:1,APIS.data.go.kr.=http://b:1")


def test_a_trailing_dot_server_hits_the_override(tmp_path: Path) -> None:
    settings, sandbox = sandbox_mode(Settings())
    doc = copy.deepcopy(DOCS["StanReginCd"])
    doc["servers"] = [{"url": doc["servers"][0]["url"].replace("apis.data.go.kr", "apis.data.go.kr.")}]
    store = EmbeddedStore(tmp_path / "dot.sqlite3")
    result = register(store, settings, doc)
    assert "apis.data.go.kr." in result.api.server_url
    recorder = Recorder(sandbox)

    assert first_tool_outcome(settings, store, result.api, recorder, {"locatadd_nm": "서울특별시"}) in ("ok", "empty")
    assert recorder.seen and all("apis.data.go.kr" not in seen.split()[0] for seen in recorder.seen), recorder.seen
    store.close()


# ------------------------------------------------------------------------------------------ 8. valid requests
def test_valid_requests_are_accepted(client: tuple[TestClient, EmbeddedStore]) -> None:
    c, store = client
    reader = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-v')}"}
    r = c.post(
        "/v1/trajectory-batches", json={"count": 1, "min_steps": 1.0, "max_steps": 2.0, "seed": 3.0}, headers=reader
    )
    assert r.status_code == 202, r.text
    for bad in ({"min_steps": 1.5}, {"min_steps": "1"}, {"min_steps": True}):
        assert c.post("/v1/trajectory-batches", json={"count": 1, **bad}, headers=reader).status_code == 422, bad
    zero = c.post("/v1/tokens", json={"role": "reader", "expires_in": "0D"}, headers=ADMIN)
    assert zero.status_code == 422 and "zero" in zero.json()["detail"], zero.text
    assert c.post("/v1/tokens", json={"role": "reader", "expires_in": "1D"}, headers=ADMIN).status_code == 201
    doc = {**DOCS["StanReginCd"], "swagger": ""}
    r = c.post("/v1/apis", json=doc, headers=ADMIN)
    assert r.status_code == 201, r.text
    r = c.post("/v1/verification-runs", json={"mode": "celery"}, headers=ADMIN)
    assert r.status_code == 503, r.text
    assert r.json()["error"] == "queue_unavailable" and "KOPA_REDIS_URL" in r.json()["detail"]
    assert store.list_runs() == []  # nothing was queued or saved
    assert c.post("/v1/verification-runs", json={"budget": 5.0, "mode": "inprocess"}, headers=ADMIN).status_code == 202


# ------------------------------------------------------------------------ issue 21, item 5: the benchmark guard
def test_the_guard_reads_the_same_tasks_as_the_benchmark() -> None:
    from bench.overlap import fingerprints
    from bench.tasks import load_tasks

    ours, theirs = benchmark_guard(Settings()), fingerprints(load_tasks())
    assert sorted(ours.labels) == sorted(theirs.labels) and len(ours.labels) >= 100
    assert ours.programs == theirs.programs and set(ours.requests) == set(theirs.requests)


def test_a_batch_never_contains_a_benchmark_task(tmp_path: Path) -> None:
    settings, sandbox = sandbox_mode(Settings(redis_url=None))
    store = verified_store(tmp_path / "v.sqlite3", settings, sandbox)
    empty = tmp_path / "none"
    empty.mkdir()
    free = settings.model_copy(update={"batches": settings.batches.model_copy(update={"benchmark_tasks": empty})})
    first = new_batch(store, free, "team-g", BatchRequest(count=6, seed=11))
    asyncio.run(run_batch(store, free, first.id, transport=sandbox))
    produced = store.list_trajectories(first.id, 0, 100)[0]
    assert produced, "the verified graph produced nothing"
    # a benchmark whose tasks are exactly what that batch produced: the same batch again must keep none of them
    tasks = [
        {
            "id": f"made-{i}",
            "turns": [r["request"]],
            "gold": [{"id": f"s{j}", "tool": s["tool"], "args": {}} for j, s in enumerate(r["steps"])],
        }
        for i, r in enumerate(produced)
    ]
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "made.yaml").write_text(yaml.safe_dump(tasks, allow_unicode=True), encoding="utf-8")
    guarded = settings.model_copy(update={"batches": settings.batches.model_copy(update={"benchmark_tasks": folder})})
    guard: BenchFingerprints = benchmark_guard(guarded)
    assert all(guard.is_contaminated(r) for r in produced)
    again = new_batch(store, guarded, "team-g", BatchRequest(count=6, seed=11))
    done = asyncio.run(run_batch(store, guarded, again.id, transport=sandbox))
    kept = store.list_trajectories(again.id, 0, 100)[0]
    assert not [r["id"] for r in kept if guard.is_contaminated(r)], "a batch kept a benchmark task"
    assert done.benchmark_overlap is not None and done.benchmark_overlap >= 1
    # and with the shipped benchmark (the default): nothing of KOPA-Bench in a batch, even where the same batch
    # without a guard holds some (with this seed it does: what REST and Celery batches emitted before)
    shipped = benchmark_guard(settings)
    default = new_batch(store, settings, "team-g", BatchRequest(count=6, seed=11))
    asyncio.run(run_batch(store, settings, default.id, transport=sandbox))
    clean = store.list_trajectories(default.id, 0, 100)[0]
    assert clean and not [r["id"] for r in clean if shipped.is_contaminated(r)]
    store.close()


def test_invalid_input_location_for_refused_secret(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "s.sqlite3")
    with pytest.raises(InvalidInput) as info:
        register(
            store, Settings(), DOCS["StanReginCd"], RegistrationMeta(auth=AuthConfig(secret="KOPA_BOOTSTRAP_TOKEN"))
        )
    assert info.value.locations[0]["pointer"] == "/metadata/auth/secret"
    assert store.list_apis()[1] == 0
    store.close()
