"""Quotas and budgets that hold on every store.

* A daily quota of 4 gives the upstream exactly 4 calls across verification runs, fresh and on-demand batches and a
  restart, on the embedded store (no Redis): every run and batch of a process shares one economy, and its daily
  counters live in a ledger beside the embedded graph's file. The old default (a fresh in-memory economy per run)
  sends more on the same sequence.
* Per-API rate limits are one token bucket per process, whichever run or batch asks.
* A team's batches draw every upstream call, on-demand verification included, from the team's daily budget
  (`KOPA_BATCHES__TEAM_DAILY_CALLS`, per team `KOPA_BATCHES__TEAM_BUDGETS`): a batch that spends the rest stops
  calling and says why; the next is refused with 429, Retry-After and the reason, also after a restart; pool batches
  and other teams are not affected. With Redis the budget is one counter for every process.

Calls are counted where they arrive: at a sandbox of the test's own that counts requests by path.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.security import mint_token
from core.settings import Settings
from execution.limits import (
    Allowance,
    MemoryEconomy,
    RedisEconomy,
    economy_for,
    quota_file_for,
    team_allowance,
    team_allowance_key,
)
from graph.embedded_store import EmbeddedStore
from tests.support.helpers import wait_batch
from tests.support.upstream import Upstream, counting_sandbox, registered_store, upstream_settings
from verification.runs import execute_run, new_run

#: The service under a daily quota of 4, as its requests' paths name it at the sandbox (about 24 calls per run
#: without a quota), and the service that feeds it its region codes: chains of two.
QUOTA_SERVICE, QUOTA_PATH = "RTMSDataSvcAptTrade", "/RTMSDataSvcAptTrade/"
CHAIN = ("StanReginCd", QUOTA_SERVICE)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with counting_sandbox() as up:
        yield up


def no_cache(settings: Settings) -> Settings:
    """Every run and batch asks the upstream again (a cache TTL of 0), and rounds go again without waiting: what
    holds the calls down is the quota alone."""
    verify = settings.verify.model_copy(update={"cache_ttl_s": 0, "backoff_s": 0.01})
    return settings.model_copy(update={"verify": verify})


def test_a_daily_quota_of_4_holds_across_runs_batches_and_a_restart(tmp_path: Path, upstream: Upstream) -> None:
    settings = no_cache(upstream_settings(upstream.url))
    store = registered_store(tmp_path / "q.sqlite3", settings, {QUOTA_SERVICE: 4}, CHAIN)
    api_id = next(a.id for a in store.list_apis(limit=100)[0] if a.daily_quota == 4)
    assert economy_for(settings, store) is economy_for(settings, store)  # one economy per process and store
    # verification runs as the API and the CLI start them (the process's economy, no economy handed in)
    runs = [asyncio.run(execute_run(store, settings, new_run(scope="all"))) for _ in range(3)]
    after_runs = upstream.calls(QUOTA_PATH)
    with TestClient(create_app(settings, store)) as c:
        h = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-a')}"}
        batches = [
            wait_batch(c, c.post("/v1/trajectory-batches", json=body, headers=h).json()["id"], h)
            for body in (
                {"count": 10, "seed": 1},
                {"count": 10, "seed": 2, "on_demand": True},
                {"count": 6, "seed": 3, "shapes": ["chain"], "on_demand": True},
            )
        ]
    # a restart: a new process has an economy of its own, over the same ledger beside the graph
    ledger = quota_file_for(settings, store)
    assert ledger is not None and ledger.exists() and ledger.parent == tmp_path
    restarted = asyncio.run(execute_run(store, settings, new_run(scope="all"), economy=MemoryEconomy(ledger)))
    total = upstream.calls(QUOTA_PATH)
    print(f"\nupstream calls to {QUOTA_SERVICE} under a daily quota of 4: {total} (runs {after_runs}, then batches)")
    assert total == 4, upstream.counting.paths
    assert after_runs == 4  # the first run spent it; the later runs and every batch were refused before sending
    assert all(b["status"] == "completed" for b in batches), batches
    for b in batches[1:]:  # on demand: verification wanted the API too, and was refused before sending
        demand = store.get_run(str(b["verification_run"]))
        assert demand is not None and demand.status == "paused" and api_id in demand.message, demand
    for run in [*runs[1:], restarted]:
        assert run.status == "paused" and api_id in run.message and "quota" in run.message, run.message
        assert run.calls.get(f"api:{api_id}", 0) == 0, run.calls


def test_a_fresh_economy_per_run_broke_the_quota(tmp_path: Path, upstream: Upstream) -> None:
    """The contrast: the same runs, each with a fresh in-memory economy (the default before), send the upstream more
    than the quota. This is what the test above would count if the economy still reset per run."""
    settings = no_cache(upstream_settings(upstream.url))
    store = registered_store(tmp_path / "old.sqlite3", settings, {QUOTA_SERVICE: 4}, CHAIN)
    for _ in range(3):
        asyncio.run(execute_run(store, settings, new_run(scope="all"), economy=MemoryEconomy()))
    print(f"\nupstream calls to {QUOTA_SERVICE} with an economy per run: {upstream.calls(QUOTA_PATH)}")
    assert upstream.calls(QUOTA_PATH) == 12


def test_a_rate_limit_is_one_bucket_for_every_run_of_a_process(tmp_path: Path) -> None:
    """Two runs' executors draw from one token bucket per API: 30 calls at 10/s (burst 10) take about 2 s,
    whether one run or two ask (two fresh economies, the old default, let both burst: about 1 s)."""
    settings = upstream_settings("http://127.0.0.1:9")
    store = EmbeddedStore(tmp_path / "rate.sqlite3")
    first, second = economy_for(settings, store), economy_for(settings, store)

    async def calls(economies: list[Any]) -> float:
        start = time.monotonic()
        await asyncio.gather(*(economies[i % 2].acquire("api", 10.0) for i in range(30)))
        return time.monotonic() - start

    shared = asyncio.run(calls([first, second]))
    apart = asyncio.run(calls([MemoryEconomy(), MemoryEconomy()]))
    print(f"\n30 calls at 10/s: {shared:.2f} s through the process's economy, {apart:.2f} s through two")
    assert first is second and shared >= 1.8 and apart < 1.5, (shared, apart)


def test_a_team_budget_stops_a_batch_and_refuses_the_next(tmp_path: Path, upstream: Upstream) -> None:
    settings = upstream_settings(upstream.url, team_budgets="team-b=40")
    store = registered_store(tmp_path / "budget.sqlite3", settings)  # nothing verified: on demand spends a lot
    with TestClient(create_app(settings, store)) as c:
        b = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-b')}"}
        before = upstream.calls()
        r = c.post("/v1/trajectory-batches", json={"count": 12, "seed": 2, "on_demand": True}, headers=b)
        assert r.status_code == 202, r.text
        stopped = wait_batch(c, r.json()["id"], b)
        spent = upstream.calls() - before
        print(f"\nteam-b budget 40: the on-demand batch sent {spent} upstream calls; {stopped['message']}")
        assert spent == 40, spent
        assert stopped["status"] == "completed" and "budget" in stopped["message"], stopped
        assert stopped["budget"]["drawn"] == 40 and stopped["budget"]["exhausted"], stopped["budget"]
        assert stopped["budget"]["left_today"] == 0 and stopped["budget"]["refused"] > 0
        refused = c.post("/v1/trajectory-batches", json={"count": 5}, headers=b)
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"] == "budget_exhausted" and "40" in refused.json()["detail"]
        assert 0 < int(refused.headers["retry-after"]) <= 86_400
        # pool batches cost no call; another team has its own budget
        assert c.post("/v1/trajectory-batches", json={"count": 5, "source": "pool"}, headers=b).status_code == 202
        other = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-c')}"}
        r = c.post("/v1/trajectory-batches", json={"count": 3, "seed": 4, "on_demand": True}, headers=other)
        assert r.status_code == 202, r.text
        theirs = wait_batch(c, r.json()["id"], other)
        assert theirs["budget"]["drawn"] > 0 and not theirs["budget"]["exhausted"], theirs
        assert upstream.calls() - before == 40 + theirs["budget"]["drawn"]  # every call drawn, none more
    # a restart of the API: the budget is in the ledger beside the graph, not in the process
    restarted_settings = settings.model_copy()
    with TestClient(create_app(restarted_settings, store)) as c:
        b = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-b')}"}
        assert c.post("/v1/trajectory-batches", json={"count": 5}, headers=b).status_code == 429
    store.close()


def test_the_team_budget_settings() -> None:
    s = Settings(redis_url=None).batches
    assert s.team_daily_calls == 20_000 and s.team_budget("anyone") == 20_000
    s = s.model_copy(update={"team_budgets": "team-a=5,team-b=0"})
    assert (s.team_budget("team-a"), s.team_budget("team-b"), s.team_budget("team-c")) == (5, 0, 20_000)
    with pytest.raises(ValueError, match="whole number"):
        Settings(batches={"team_budgets": "team-a=lots"})
    unlimited = Settings(redis_url=None, batches={"team_daily_calls": 0})
    assert team_allowance(MemoryEconomy(), unlimited, "team-a") is None


def test_a_team_budget_is_one_counter_for_every_process_in_redis(redis_url: str) -> None:
    team = f"team-{uuid.uuid4().hex[:8]}"
    settings = Settings(redis_url=redis_url, batches={"team_budgets": f"{team}=3"})
    a = team_allowance(RedisEconomy(redis_url), settings, team)
    b = team_allowance(RedisEconomy(redis_url), settings, team)  # another worker process
    assert isinstance(a, Allowance) and isinstance(b, Allowance)
    draws = [a.draw_allowance(), b.draw_allowance(), a.draw_allowance(), b.draw_allowance()]
    assert draws[:3] == [None, None, None] and draws[3] is not None and "budget of 3" in draws[3]
    b.return_allowance()  # a call the API's own quota refused is given back
    assert a.draw_allowance() is None and a.used() == 3 and a.left() == 0
    RedisEconomy(redis_url).r.delete(f"kopa:quota:{team_allowance_key(team)}:{time.strftime('%Y%m%d', time.gmtime())}")
