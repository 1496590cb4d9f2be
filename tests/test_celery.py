"""Verification through real Celery workers, a real Redis broker, real Neo4j and the sandbox over a socket:
the same verdicts as in process; a worker killed with SIGKILL, Redis restarted and Neo4j restarted mid-run, and
the run still completes with no outcome lost or duplicated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from core.settings import Neo4jSettings, Settings
from graph.neo4j_store import Neo4jStore
from sandbox.catalog import REAL_HOSTS
from sandbox.clock import DEFAULT_NOW
from sandbox.keys import DEMO_KEY
from tests.support.helpers import (
    celery_worker_command,
    free_port,
    register_catalog,
    terminate,
    uvicorn_command,
    verified_store,
    wait_batch,
    wait_healthy,
)
from verification.runs import new_run
from workers.celery_app import make_celery

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = ["apis.data.go.kr", "api.odcloud.kr", "business.juso.go.kr", "127.0.0.1"]


class DurableRedis:
    """A Redis of this test module, with an append-only file so that a restart keeps the queued messages."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.dir = workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                if redis.Redis.from_url(self.url).ping():
                    return
            except redis.RedisError:
                time.sleep(0.1)
        raise RuntimeError("redis did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(20)
            self.proc = None


@pytest.fixture(scope="module")
def durable_redis(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[DurableRedis]:
    r = DurableRedis(tmp_path_factory.mktemp("redis"))
    r.start()
    yield r
    r.stop()


def worker_env(neo4j_uri: str, redis_url: str, sandbox_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "KOPA_STORE": "neo4j",
        "KOPA_NEO4J__URI": neo4j_uri,
        "KOPA_REDIS_URL": redis_url,
        "KOPA_UPSTREAM_OVERRIDES": ",".join(f"{h}={sandbox_url}" for h in REAL_HOSTS),
        "KOPA_ALLOWED_HOSTS": json.dumps(ALLOWED),
        "KOPA_SERVICE_KEY": DEMO_KEY,
        "KOPA_VERIFY__NOW": DEFAULT_NOW.isoformat(),
        "KOPA_VERIFY__VISIBILITY_TIMEOUT_S": "20",
        "KOPA_VERIFY__BACKOFF_S": "0.05",
    }


def start_worker(env: dict[str, str], name: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        celery_worker_command(name), env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    terminate(proc, 20)


@pytest.fixture(scope="module")
def settings(neo4j_uri: str, durable_redis: DurableRedis, sandbox_url: str) -> Settings:
    return Settings(
        store="neo4j",
        neo4j=Neo4jSettings(uri=neo4j_uri),
        redis_url=durable_redis.url,
        upstream_overrides=",".join(f"{h}={sandbox_url}" for h in REAL_HOSTS),
        allowed_hosts=ALLOWED,
    )


@pytest.fixture(scope="module")
def baseline(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The verified set of an in-process run against the same sandbox socket."""
    os.environ.setdefault("KOPA_SERVICE_KEY", DEMO_KEY)
    s = settings.model_copy(update={"verify": settings.verify.model_copy(update={"now": DEFAULT_NOW.isoformat()})})
    store = verified_store(tmp_path_factory.mktemp("base") / "g.sqlite3", s)
    ids = {lk.id for lk in store.list_links(status="verified", limit=100_000)[0]}
    store.close()
    assert len(ids) > 400
    return ids


@pytest.fixture
def graph(settings: Settings) -> Iterator[Neo4jStore]:
    store = Neo4jStore(settings.neo4j)
    store.init_schema()
    store.reset()
    register_catalog(store, settings)
    yield store
    store.close()


def submit(settings: Settings, store: Neo4jStore) -> str:
    run = new_run(mode="celery")
    store.save_run(run)
    make_celery(settings).send_task("kopa.start_round", args=[run.id])
    return run.id


def wait(store: Neo4jStore, run_id: str, timeout: float = 240, until: Any = None) -> Any:
    deadline = time.monotonic() + timeout
    run = None
    while time.monotonic() < deadline:
        try:
            run = store.get_run(run_id)
            if until is not None:
                if until(run):
                    return run
            elif run is not None and run.status in ("completed", "paused", "failed"):
                return run
        except Exception:
            pass
        time.sleep(0.5)
    state = run.model_dump(include={"status", "message", "round", "pending_sources", "calls"}) if run else None
    raise AssertionError(f"run {run_id} did not finish in {timeout}s; last seen: {state}")


def check_outcomes(store: Neo4jStore, run_id: str, baseline: set[str]) -> None:
    links = store.list_links(limit=100_000)[0]
    got = {lk.id for lk in links if lk.status == "verified"}
    diff = [
        (lk.id, lk.status, lk.reason, lk.source_tool, lk.source_field, lk.target_tool, lk.target_param, lk.history)
        for lk in links
        if (lk.id in got) != (lk.id in baseline)
    ]
    assert got == baseline, diff[:6]
    assert not [lk for lk in links if lk.status in ("candidate", "inconclusive")]
    for lk in links:
        entries = Counter((h["run"], h["status"]) for h in lk.history)
        assert all(n == 1 for n in entries.values()), (lk.id, lk.history)


def test_celery_run_matches_in_process(settings: Settings, graph: Neo4jStore, baseline: set[str]) -> None:
    env = worker_env(settings.neo4j.uri, settings.redis_url or "", settings.override_map()["apis.data.go.kr"])
    workers = [start_worker(env, "w1"), start_worker(env, "w2")]
    try:
        run_id = submit(settings, graph)
        run = wait(graph, run_id)
        assert run.status == "completed", run.message
        check_outcomes(graph, run_id, baseline)
        counts = graph.run_counts(run_id)
        assert counts.get("verified") == len(baseline)
    finally:
        for w in workers:
            stop(w)


@pytest.mark.slow
@pytest.mark.timeout(600)  # the killed worker's task comes back only after the visibility timeout, then restores
def test_sigkill_redis_and_neo4j_restarts_mid_run(
    settings: Settings, graph: Neo4jStore, baseline: set[str], durable_redis: DurableRedis
) -> None:
    env = worker_env(settings.neo4j.uri, durable_redis.url, settings.override_map()["apis.data.go.kr"])
    a, b = start_worker(env, "victim"), start_worker(env, "survivor")
    try:
        run_id = submit(settings, graph)
        wait(graph, run_id, until=lambda r: r is not None and sum(graph.run_counts(run_id).values()) >= 40)
        a.send_signal(signal.SIGKILL)
        a.wait(10)
        durable_redis.stop()
        time.sleep(1)
        durable_redis.start()
        subprocess.run(
            ["bash", str(ROOT / "scripts/services.sh"), "restart-neo4j"],
            check=True,
            env={**os.environ},
            capture_output=True,
        )
        run = wait(graph, run_id, timeout=480)
        assert run.status == "completed", run.message
        check_outcomes(graph, run_id, baseline)
    finally:
        stop(a)
        stop(b)


def test_batches_over_http_through_a_celery_worker(settings: Settings, graph: Neo4jStore) -> None:
    """A reader token requests a trajectory batch over HTTP; a Celery worker verifies nothing new, synthesises
    it against Neo4j and the sandbox, and the team streams it back; beat's re-verification task runs too."""
    from fastapi.testclient import TestClient
    from pydantic import SecretStr

    from api.app import create_app
    from api.security import mint_token

    env = worker_env(settings.neo4j.uri, settings.redis_url or "", settings.override_map()["apis.data.go.kr"])
    worker = start_worker(env, "batcher")
    try:
        run_id = submit(settings, graph)
        run = wait(graph, run_id)
        assert run.status == "completed", run.message
        api_settings = settings.model_copy(update={"bootstrap_token": SecretStr("b")})
        with TestClient(create_app(api_settings, graph)) as c:
            h = {"Authorization": f"Bearer {mint_token(graph, 'reader', 'team-celery')}"}
            r = c.post("/v1/trajectory-batches", json={"count": 30, "seed": 5}, headers=h)
            assert r.status_code == 202
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                batch = c.get(f"/v1/trajectory-batches/{r.json()['id']}", headers=h).json()
                if batch["status"] in ("completed", "failed"):
                    break
                time.sleep(0.5)
            assert batch["status"] == "completed" and batch["produced"] == 30, batch
            lines = c.get(f"/v1/trajectory-batches/{batch['id']}/items", headers=h).text.splitlines()
            assert len(lines) == 30 and json.loads(lines[0])["messages"][1]["role"] == "user"
        make_celery(settings).send_task("kopa.reverify_stale")
        stale = wait(
            graph,
            "",
            timeout=60,
            until=lambda _r: any(x.scope == "stale" and x.status == "completed" for x in graph.list_runs(10)),
        )
        del stale
    finally:
        stop(worker)


def _batch(c: Any, headers: dict[str, str], body: dict[str, Any], timeout: float = 240) -> dict[str, Any]:
    """Request a batch over HTTP and wait until it is completed or failed."""
    r = c.post("/v1/trajectory-batches", json=body, headers=headers)
    assert r.status_code == 202, r.text
    return wait_batch(c, r.json()["id"], headers, timeout)


def test_a_batch_verifies_on_demand_through_a_celery_worker(
    settings: Settings, graph: Neo4jStore, baseline: set[str]
) -> None:
    """No verification run first: a batch sent with `on_demand` has the Celery worker verify the links its plans
    traverse (saved in Neo4j with their evidence, under the batch's verification run) and synthesise over them only.
    A later batch reuses them: none is asked about again. The links it verified are ones a full run verifies."""
    from fastapi.testclient import TestClient
    from pydantic import SecretStr

    from api.app import create_app
    from api.security import mint_token

    env = worker_env(settings.neo4j.uri, settings.redis_url or "", settings.override_map()["apis.data.go.kr"])
    worker = start_worker(env, "demander")
    try:
        assert not graph.list_links(status="verified", limit=1)[0]
        api_settings = settings.model_copy(update={"bootstrap_token": SecretStr("b")})
        with TestClient(create_app(api_settings, graph)) as c:
            h = {"Authorization": f"Bearer {mint_token(graph, 'reader', 'team-demand')}"}
            refused = c.post("/v1/trajectory-batches", json={"on_demand": True, "source": "pool"}, headers=h)
            assert refused.status_code == 422 and "on_demand" in refused.text, refused.text
            first = _batch(c, h, {"count": 20, "seed": 3, "on_demand": True})
            assert first["status"] == "completed" and first["produced"] == 20 and first["on_demand"], first
            figures = first["verification"]
            # calls: upstream calls verification paid for; 0 when the shared call cache (Redis) already held them
            assert figures["links_asked"] >= figures["verified"] > 0 and isinstance(figures["calls"], int), figures
            verified = graph.list_links(status="verified", limit=100_000)[0]
            assert len(verified) == figures["verified"]
            assert all(lk.last_run == first["verification_run"] and lk.evidence for lk in verified)
            run = graph.get_run(first["verification_run"])
            assert run is not None and run.status == "completed", run
            # every link a trajectory of the batch uses was verified before it ran
            used = {
                lid
                for line in graph.list_trajectories(first["id"], 0, 100)[0]
                for lid in line["metadata"]["verified_links"]
            }
            assert used and used <= {lk.id for lk in verified}
            second = _batch(c, h, {"count": 20, "seed": 4, "on_demand": True})
            assert second["status"] == "completed" and second["produced"] == 20, second
        again = {lk.id: lk for lk in graph.list_links(status="verified", limit=100_000)[0]}
        assert all(again[lk.id].last_run == first["verification_run"] for lk in verified)  # reused, not re-asked
        stray = {lk.id for lk in verified} - baseline
        assert len(stray) <= len(verified) // 10, stray  # what a full in-process run verifies
    finally:
        stop(worker)


def test_celery_takes_every_round_the_in_process_run_takes(settings: Settings, tmp_path: Path) -> None:
    """The unseen family needs three rounds in process: a search reached only through an optional filter, then tools
    fed by the links verified out of it. Through Celery the task that closes a round decides with the whole run's
    state, so the run takes the same rounds and reaches the same verdicts (before, it stopped after one)."""
    from graph.models import AuthConfig, RegistrationMeta
    from graph.registry import register
    from graph.store import all_links
    from tests.unseen import harness as unseen
    from tests.unseen.app import KEY

    local = unseen.run_unseen(tmp_path / "g.sqlite3")
    assert local.rounds >= 2 and local.verified_true, local.summary()
    port = free_port()
    app = subprocess.Popen(
        uvicorn_command("tests.unseen.app:create_app", port),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    store = Neo4jStore(settings.neo4j)
    env = {
        **worker_env(settings.neo4j.uri, settings.redis_url or "", url),
        "KOPA_UPSTREAM_OVERRIDES": ",".join(f"{h}={url}" for h in unseen.HOSTS),
        "KOPA_ALLOWED_HOSTS": json.dumps([*unseen.HOSTS, "127.0.0.1"]),
        unseen.SECRET: KEY,
    }
    env.pop("KOPA_VERIFY__NOW")
    worker = start_worker(env, "rounds")
    try:
        assert wait_healthy(url, app), "the unseen family did not start"
        store.init_schema()
        store.reset()
        reg = settings.model_copy(
            update={"upstream_overrides": env["KOPA_UPSTREAM_OVERRIDES"], "allowed_hosts": [*unseen.HOSTS, "127.0.0.1"]}
        )
        for doc in unseen.documents().values():
            register(store, reg, doc, RegistrationMeta(auth=AuthConfig(secret=unseen.SECRET)))
        run = wait(store, submit(settings, store), timeout=300)
        assert run.status == "completed", run.message
        true_hit, decoys, missed = unseen.score_links(all_links(store), store.all_tools())
        assert run.round + 1 == local.rounds, (run.unreachable, run.extra_seeds)
        assert (sorted(true_hit), decoys) == (sorted(local.verified_true), local.verified_decoys), missed
    finally:
        stop(worker)
        stop(app)
        store.reset()
        store.close()
