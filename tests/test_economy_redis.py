"""The shared call economy against a real Redis: one rate limit and one quota for all workers."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

from execution.limits import RedisEconomy
from execution.result import CallResult, Outcome


def test_global_rate_limit_holds_across_processes_sharing_redis(redis_url: str) -> None:
    api = "api-" + uuid.uuid4().hex[:6]
    rate, seconds = 20.0, 2.0
    counts: list[int] = []

    def worker() -> None:
        eco = RedisEconomy(redis_url)  # each worker has its own client, as separate processes would

        async def go() -> int:
            n = 0
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                await eco.acquire(api, rate)
                n += 1
            return n

        counts.append(asyncio.run(go()))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = sum(counts)
    assert total <= rate * seconds * 1.05 + rate / 10 + 1, counts
    assert total >= rate * seconds * 0.8, counts


def test_quota_cache_counters(redis_url: str) -> None:
    a, b = RedisEconomy(redis_url), RedisEconomy(redis_url)
    key = "k-" + uuid.uuid4().hex[:6]
    assert [a.take_quota(key, 3), b.take_quota(key, 3), a.take_quota(key, 3)] == [True, True, True]
    assert not b.take_quota(key, 3)
    a.cache_put("c-" + key, CallResult(Outcome.OK, items=[{"n": 1}]), 60)
    assert b.cache_get("c-" + key) == CallResult(Outcome.OK, items=[{"n": 1}])
    run = "run-" + key
    a.count_call(run, "api1")
    b.count_call(run, "api1")
    assert a.calls(run) == {"api:api1": 2, "calls": 2}
    a.mark_exhausted("api-" + key)
    assert "api-" + key in b.exhausted()
