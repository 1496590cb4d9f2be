"""Shared fixtures. Infrastructure comes from the environment (set by .ci/run or scripts/services.sh):

* KOPA_TEST_SANDBOX_URL: a running sandbox (otherwise one is started per session on a free port);
* KOPA_TEST_NEO4J_URI: a Neo4j 5 server (bolt://...);
* KOPA_TEST_REDIS_URL: a Redis server.

Without them, infrastructure tests are skipped locally; with CI=true they fail instead, so CI can never pass
by skipping them.

Markers (declared in pyproject.toml) are applied from the fixtures a test uses, so they cannot drift: `neo4j`
(neo4j_uri), `redis` (redis_url), `sandbox_server` (sandbox_url, live), `celery` (test files that start worker
processes); `slow` and `gpu` are set by hand. Select with `-m`, e.g. `pytest -m "not neo4j and not redis"` for a
machine without servers; `gpu` tests run only with `-m gpu`. `quarantine(reason=...)` (CONTRIBUTING.md, the
flaky-test policy) still runs a test but reports its failure as an expected one, with the reason, on every run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from core.settings import Neo4jSettings, SandboxSettings, Settings
from graph.embedded_store import EmbeddedStore
from graph.neo4j_store import Neo4jStore
from graph.store import GraphStore
from sandbox.app import SandboxApp
from sandbox.inprocess import sandbox_mode
from tests.support.helpers import sandbox_process, verified_store

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
FIXTURE_MARKERS = {
    "neo4j_uri": "neo4j",
    "redis_url": "redis",
    "sandbox_url": "sandbox_server",
    "live": "sandbox_server",
}
CELERY_FILES = {"test_celery.py"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        for fixture, marker in FIXTURE_MARKERS.items():
            if fixture in names:
                item.add_marker(marker)
        if item.path.name in CELERY_FILES:
            item.add_marker("celery")
        quarantined = item.get_closest_marker("quarantine")
        if quarantined is not None:
            reason = quarantined.kwargs.get("reason", "")
            if not reason:
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.quarantine(reason=...) needs its reason")
            item.add_marker(pytest.mark.xfail(reason=f"quarantined: {reason}", strict=False))


def need(var: str, what: str) -> str:
    value = os.environ.get(var)
    if not value:
        message = f"{what} is not configured: set {var} (scripts/services.sh start prints it)"
        if IN_CI:
            pytest.fail(message + " — CI must run every infrastructure test")
        pytest.skip(message)
    return value


@pytest.fixture(scope="session")
def sandbox_url() -> Iterator[str]:
    url = os.environ.get("KOPA_TEST_SANDBOX_URL")
    if url:
        yield url.rstrip("/")
        return
    with sandbox_process() as started:
        yield started


@pytest.fixture(scope="session")
def live(sandbox_url: str) -> Iterator[httpx.Client]:
    """A client to the sandbox over a real socket."""
    with httpx.Client(base_url=sandbox_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def sandbox_app() -> SandboxApp:
    return SandboxApp(SandboxSettings())


@pytest.fixture(scope="session")
def local(sandbox_app: SandboxApp) -> Iterator[httpx.Client]:
    """An in-process client (no socket) for bulk consistency checks."""
    transport = httpx.ASGITransport(app=sandbox_app)  # type: ignore[arg-type]
    import asyncio

    loop = asyncio.new_event_loop()

    class SyncASGI(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            async def run() -> httpx.Response:
                resp = await transport.handle_async_request(request)
                body = await resp.aread()
                return httpx.Response(resp.status_code, headers=resp.headers, content=body)

            return loop.run_until_complete(run())

    with httpx.Client(transport=SyncASGI(), base_url="http://sandbox") as client:
        yield client
    loop.close()


@pytest.fixture(scope="session")
def verified_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped catalog registered and verified once per session, in process (`sandbox_mode(Settings())`, an
    embedded store): the file of that store. A test opens its own copy (`tests.support.helpers.copy_store`)
    instead of verifying the catalog from scratch."""
    settings, transport = sandbox_mode(Settings())
    path = tmp_path_factory.mktemp("verified_catalog") / "g.sqlite3"
    verified_store(path, settings, transport).close()
    return path


@pytest.fixture(scope="session")
def oracle_bench() -> dict[str, Any]:
    """Every KOPA-Bench task's executed gold program and oracle episode against the in-process sandbox, computed once
    per session (the context `kopa bench judge-eval` judges an answer in): `tasks`, `gold`, `episodes`, `now` and
    `tools`. Shared by the tests that judge answers in it; none may change it."""
    import asyncio

    from bench.judge_eval import oracle_episodes
    from bench.tasks import load_tasks
    from cli.bench import bench_env

    tasks = load_tasks()

    async def go() -> dict[str, Any]:
        async with bench_env() as env:
            gold, episodes = await oracle_episodes(tasks, env)
            return {"tasks": tasks, "gold": gold, "episodes": episodes, "now": env.now, "tools": env.registry}

    return asyncio.run(go())


@pytest.fixture(scope="session")
def neo4j_uri() -> str:
    return need("KOPA_TEST_NEO4J_URI", "Neo4j")


@pytest.fixture(scope="session")
def redis_url() -> str:
    return need("KOPA_TEST_REDIS_URL", "Redis")


@pytest.fixture(params=["embedded", "neo4j"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    """Each store in turn: the embedded SQLite file, then the real Neo4j (schema initialised, not reset)."""
    if request.param == "embedded":
        s: GraphStore = EmbeddedStore(tmp_path / "any.sqlite3")
    else:
        s = Neo4jStore(Neo4jSettings(uri=request.getfixturevalue("neo4j_uri")))
        s.init_schema()
    yield s
    s.close()


@pytest.fixture
def embedded_app(tmp_path: Path) -> Iterator[tuple[TestClient, EmbeddedStore]]:
    """An app on an embedded store without Redis (its own response cache), and the store; bootstrap token
    `boot-two`."""
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    with TestClient(create_app(Settings(bootstrap_token=SecretStr("boot-two"), redis_url=None), store)) as c:
        yield c, store
    store.close()
