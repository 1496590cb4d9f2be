"""The Celery round ledger against a real Redis: a round opens, its sources finish, one task closes it."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest
import redis

from workers.ledger import ROUND_TTL_S, RoundLedger

T = TypeVar("T")


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    r = redis.Redis.from_url(redis_url)
    yield r
    r.close()


@pytest.fixture
def run_id(client: redis.Redis) -> Iterator[str]:
    rid = "test-ledger-" + uuid.uuid4().hex[:10]
    yield rid
    keys = list(client.scan_iter(f"kopa:run:{rid}:*"))
    if keys:
        client.delete(*keys)


def together(n: int, work: Callable[[int], T]) -> list[T]:
    """Run `work(i)` in `n` threads released at the same instant, each with its own result slot."""
    barrier = threading.Barrier(n)
    results: dict[int, T] = {}

    def one(i: int) -> None:
        barrier.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == n, "a thread did not finish"
    return [results[i] for i in range(n)]


def test_open_records_every_source_as_outstanding(client: redis.Redis, run_id: str) -> None:
    ledger = RoundLedger(client)
    ledger.open(run_id, 0, ["a", "b", "c"])
    assert ledger.outstanding(run_id, 0) == {"a", "b", "c"}
    assert ledger.outstanding(run_id, 1) == set()  # rounds are kept apart
    ledger.open(run_id, 0, ["a", "b", "c"])  # a redelivered start adds nothing twice
    assert ledger.outstanding(run_id, 0) == {"a", "b", "c"}


def test_open_without_sources_is_refused(client: redis.Redis, run_id: str) -> None:
    with pytest.raises(ValueError):
        RoundLedger(client).open(run_id, 0, [])


def test_finish_counts_down_and_is_idempotent(client: redis.Redis, run_id: str) -> None:
    ledger = RoundLedger(client)
    ledger.open(run_id, 2, ["a", "b"])
    assert ledger.finish(run_id, 2, "a") == 1
    assert ledger.finish(run_id, 2, "a") == 1  # a redelivered task finishes nothing more
    assert ledger.outstanding(run_id, 2) == {"b"}
    assert ledger.finish(run_id, 2, "b") == 0
    assert ledger.outstanding(run_id, 2) == set()


def test_concurrent_finishes_leave_exactly_one_task_seeing_the_round_empty(
    client: redis.Redis, run_id: str, redis_url: str
) -> None:
    sources = [f"s{i}" for i in range(16)]
    RoundLedger(client).open(run_id, 0, sources)
    clients = [redis.Redis.from_url(redis_url) for _ in sources]  # one client each, as separate workers have
    lefts = together(len(sources), lambda i: RoundLedger(clients[i]).finish(run_id, 0, sources[i]))
    for c in clients:
        c.close()
    assert sorted(lefts) == list(range(len(sources))), lefts  # each count seen once: the last one sees 0


def test_only_one_concurrent_claim_of_the_closing_wins(client: redis.Redis, run_id: str, redis_url: str) -> None:
    n = 12
    clients = [redis.Redis.from_url(redis_url) for _ in range(n)]
    wins = together(n, lambda i: RoundLedger(clients[i]).claim_closing(run_id, 3))
    for c in clients:
        c.close()
    assert wins.count(True) == 1, wins
    assert not RoundLedger(client).claim_closing(run_id, 3)  # and it stays claimed
    assert RoundLedger(client).claim_closing(run_id, 4)  # another round has its own closing


def test_a_released_closing_is_claimed_again_by_the_retried_task(client: redis.Redis, run_id: str) -> None:
    ledger = RoundLedger(client)
    assert ledger.claim_closing(run_id, 0)
    assert not ledger.claim_closing(run_id, 0)
    ledger.release_closing(run_id, 0)  # the closing failed half-way
    assert ledger.claim_closing(run_id, 0)
    assert not ledger.claim_closing(run_id, 0)


def test_keys_use_the_economy_prefix_and_expire(client: redis.Redis, run_id: str) -> None:
    ledger = RoundLedger(client)
    ledger.open(run_id, 0, ["a"])
    ledger.claim_closing(run_id, 0)
    for key in (f"kopa:run:{run_id}:round:0:pending", f"kopa:run:{run_id}:round:0:done"):
        ttl = client.pttl(key)
        assert 0 < ttl <= ROUND_TTL_S * 1000, (key, ttl)
    other = RoundLedger(client, prefix="kopa-other")
    assert other.outstanding(run_id, 0) == set()


def test_a_forgotten_round_vanishes_after_its_ttl(client: redis.Redis, run_id: str) -> None:
    ledger = RoundLedger(client, ttl_s=1)
    ledger.open(run_id, 0, ["a", "b"])
    assert ledger.claim_closing(run_id, 0)
    time.sleep(1.3)
    assert ledger.outstanding(run_id, 0) == set()
    assert ledger.claim_closing(run_id, 0)  # the old claim has expired too
    assert list(client.scan_iter(f"kopa:run:{run_id}:round:0:pending")) == []
