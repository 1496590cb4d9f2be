"""Call economy shared by every worker: global per-API rate limits, per-key daily quotas, per-team daily call
budgets, a response cache and call counters. Redis-backed (shared by all Celery workers) or in-memory (the
embedded default: one economy per process, its daily counters in a SQLite ledger beside the embedded graph).

Celery's own `rate_limit` is per worker; here the token bucket lives in Redis and is updated atomically by a Lua
script using Redis' clock, so two workers together never exceed an API's limit.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
from datetime import UTC, datetime, timedelta
from datetime import time as dt_time
from pathlib import Path
from typing import Any, Protocol

import redis
import redis.asyncio as aredis

from core.json_types import JsonObject
from core.settings import Settings, parse_pairs
from execution.result import CallResult
from graph.embedded_store import EmbeddedStore

TOKEN_BUCKET = """
local key = KEYS[1]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', key, 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil then tokens = burst; ts = now end
tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', key, 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', key, math.ceil(burst * 1000 / rate) * 2 + 1000)
return wait
"""

QUOTA = """
local used = redis.call('INCR', KEYS[1])
if used == 1 then redis.call('EXPIRE', KEYS[1], 172800) end
if tonumber(ARGV[1]) > 0 and used > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return -1
end
return used
"""

REFUND = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used > 0 then return redis.call('DECR', KEYS[1]) end
return 0
"""


def today() -> str:
    return datetime.now(UTC).strftime("%Y%m%d")


def seconds_to_tomorrow() -> int:
    """Seconds until 00:00 UTC, when every daily counter (quotas, team budgets) starts again."""
    now = datetime.now(UTC)
    return max(1, int((datetime.combine(now.date() + timedelta(days=1), dt_time(), UTC) - now).total_seconds()))


def cache_entry(result: CallResult) -> JsonObject:
    """A cached answer as JSON (what an economy stores): the result, less whether it came from the cache."""
    return {k: v for k, v in result.to_json().items() if k != "cached"}


class Economy(Protocol):
    async def acquire(self, api: str, rate_per_s: float | None) -> None: ...
    def take_quota(self, key: str, limit: int | None) -> bool: ...
    def refund_quota(self, key: str) -> None: ...
    def quota_used(self, key: str) -> int: ...
    def draw_allowance(self) -> str | None: ...
    def return_allowance(self) -> None: ...
    def count_call(self, run_id: str | None, api: str) -> None: ...
    def calls(self, run_id: str) -> dict[str, int]: ...
    def cache_get(self, key: str) -> CallResult | None: ...
    def cache_put(self, key: str, value: CallResult, ttl_s: int) -> None: ...
    def count(self, run_id: str, name: str, n: int = 1) -> None: ...
    def mark_exhausted(self, api: str) -> None: ...
    def exhausted(self) -> set[str]: ...
    def block_api(self, run_id: str, api: str, why: str) -> None: ...
    def blocked_apis(self, run_id: str) -> dict[str, str]: ...


LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS quota (key TEXT NOT NULL, day TEXT NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (key, day));
CREATE TABLE IF NOT EXISTS exhausted (api TEXT NOT NULL, day TEXT NOT NULL, PRIMARY KEY (api, day));
"""


class QuotaLedger:
    """Daily counters (per-key quotas, team budgets, exhausted APIs) in a SQLite file beside the embedded graph:
    every process on that store shares them, and a restart keeps them. Each change is one atomic statement, so two
    processes together never take more than the limit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(LEDGER_SCHEMA)
            # counters of days gone by are never read again (Redis lets them expire after two days)
            old = (datetime.now(UTC) - timedelta(days=2)).strftime("%Y%m%d")
            self._conn.execute("DELETE FROM quota WHERE day < ?", (old,))
            self._conn.execute("DELETE FROM exhausted WHERE day < ?", (old,))

    def take(self, key: str, limit: int | None) -> bool:
        """One more unit of `key` today, unless `limit` (> 0) units are taken already."""
        cap = int(limit or 0)
        with self._lock:
            cur = self._conn.execute(
                "INSERT INTO quota (key, day, used) VALUES (?, ?, 1) ON CONFLICT (key, day) "
                "DO UPDATE SET used = used + 1 WHERE ? <= 0 OR used < ?",
                (key, today(), cap, cap),
            )
            return cur.rowcount == 1

    def refund(self, key: str) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE quota SET used = used - 1 WHERE key = ? AND day = ? AND used > 0", (key, today())
            )

    def used(self, key: str) -> int:
        with self._lock:
            row = self._conn.execute("SELECT used FROM quota WHERE key = ? AND day = ?", (key, today())).fetchone()
        return int(row[0]) if row else 0

    def mark_exhausted(self, api: str) -> None:
        with self._lock:
            self._conn.execute("INSERT OR IGNORE INTO exhausted (api, day) VALUES (?, ?)", (api, today()))

    def exhausted(self) -> set[str]:
        with self._lock:
            return {r[0] for r in self._conn.execute("SELECT api FROM exhausted WHERE day = ?", (today(),))}

    def close(self) -> None:
        with self._lock:
            self._conn.close()


#: Entries the in-memory response cache keeps (the oldest go first); Redis bounds its cache with maxmemory.
MAX_CACHE_ENTRIES = 50_000


class MemoryEconomy:
    """One process: token buckets, dict counters, a bounded dict cache with TTL. With `quota_file`, the daily
    counters (quotas, team budgets, exhausted APIs) live in that SQLite file (`QuotaLedger`) instead, shared by
    every process on it and kept across restarts; `economy_for` gives every run and batch of a process one
    economy, so nothing resets per run."""

    def __init__(self, quota_file: Path | None = None) -> None:
        self._ledger = QuotaLedger(quota_file) if quota_file is not None else None
        self._mutex = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}
        self._quota: dict[str, int] = {}
        self._calls: dict[str, dict[str, int]] = {}
        self._cache: dict[str, tuple[float, dict[str, Any]]] = {}
        self._exhausted: dict[str, str] = {}
        self._blocked: dict[str, dict[str, str]] = {}

    @property
    def quota_file(self) -> Path | None:
        return self._ledger.path if self._ledger is not None else None

    def block_api(self, run_id: str, api: str, why: str) -> None:
        self._blocked.setdefault(run_id, {}).setdefault(api, why)

    def blocked_apis(self, run_id: str) -> dict[str, str]:
        return dict(self._blocked.get(run_id, {}))

    def mark_exhausted(self, api: str) -> None:
        if self._ledger is not None:
            self._ledger.mark_exhausted(api)
        else:
            self._exhausted[api] = today()

    def exhausted(self) -> set[str]:
        if self._ledger is not None:
            return self._ledger.exhausted()
        return {a for a, day in self._exhausted.items() if day == today()}

    def _take_token(self, api: str, rate_per_s: float) -> float:
        """A token of `api`'s bucket (0.0), or the seconds until one is due. Thread-safe: one process's event
        loops share the buckets."""
        with self._mutex:
            burst = max(1.0, rate_per_s)
            now = time.monotonic()
            tokens, ts = self._buckets.get(api, (burst, now))
            tokens = min(burst, tokens + (now - ts) * rate_per_s)
            if tokens >= 1:
                self._buckets[api] = (tokens - 1, now)
                return 0.0
            self._buckets[api] = (tokens, now)
            return (1 - tokens) / rate_per_s

    async def acquire(self, api: str, rate_per_s: float | None) -> None:
        if not rate_per_s:
            return
        while True:
            wait = self._take_token(api, rate_per_s)
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    def take_quota(self, key: str, limit: int | None) -> bool:
        if self._ledger is not None:
            return self._ledger.take(key, limit)
        with self._mutex:
            slot = f"{key}|{today()}"
            used = self._quota.get(slot, 0)
            if limit and used >= limit:
                return False
            self._quota[slot] = used + 1
            return True

    def refund_quota(self, key: str) -> None:
        if self._ledger is not None:
            self._ledger.refund(key)
            return
        with self._mutex:
            slot = f"{key}|{today()}"
            if self._quota.get(slot, 0) > 0:
                self._quota[slot] -= 1

    def quota_used(self, key: str) -> int:
        if self._ledger is not None:
            return self._ledger.used(key)
        return self._quota.get(f"{key}|{today()}", 0)

    def draw_allowance(self) -> str | None:
        return None  # no allowance of its own: `Allowance` adds one

    def return_allowance(self) -> None:
        return None

    def count_call(self, run_id: str | None, api: str) -> None:
        self.count(run_id or "_", f"api:{api}")
        self.count(run_id or "_", "calls")

    def count(self, run_id: str, name: str, n: int = 1) -> None:
        with self._mutex:
            bucket = self._calls.setdefault(run_id, {})
            bucket[name] = bucket.get(name, 0) + n

    def calls(self, run_id: str) -> dict[str, int]:
        return dict(self._calls.get(run_id, {}))

    def cache_get(self, key: str) -> CallResult | None:
        hit = self._cache.get(key)
        if hit is None or hit[0] < time.monotonic():
            return None
        return CallResult.from_json(hit[1])

    def cache_put(self, key: str, value: CallResult, ttl_s: int) -> None:
        with self._mutex:
            self._cache.pop(key, None)
            self._cache[key] = (time.monotonic() + ttl_s, cache_entry(value))
            while len(self._cache) > MAX_CACHE_ENTRIES:
                self._cache.pop(next(iter(self._cache)))


class RedisEconomy:
    """Shared by all workers through Redis."""

    def __init__(self, url: str, prefix: str = "kopa") -> None:
        self.url = url
        self.r = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=10)
        self.prefix = prefix
        self._quota = self.r.register_script(QUOTA)
        self._refund = self.r.register_script(REFUND)
        self._async: dict[int, Any] = {}

    def _bucket_script(self) -> Any:
        """An asyncio Redis client and script per event loop (each Celery task runs its own loop)."""
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._async:
            client = aredis.Redis.from_url(self.url, socket_timeout=5, socket_connect_timeout=5)
            self._async = {loop_id: (client, client.register_script(TOKEN_BUCKET))}
        return self._async[loop_id][1]

    def mark_exhausted(self, api: str) -> None:
        self.r.set(f"{self.prefix}:exhausted:{today()}:{api}", 1, ex=2 * 86400)

    def exhausted(self) -> set[str]:
        prefix = f"{self.prefix}:exhausted:{today()}:"
        return {
            k.decode()[len(prefix) :] if isinstance(k, bytes) else str(k)[len(prefix) :]
            for k in self.r.scan_iter(prefix + "*")
        }

    async def acquire(self, api: str, rate_per_s: float | None) -> None:
        if not rate_per_s:
            return
        script = self._bucket_script()
        while True:
            wait_ms = int(await script(keys=[f"{self.prefix}:rl:{api}"], args=[rate_per_s, 1.0]))
            if wait_ms <= 0:
                return
            await asyncio.sleep(wait_ms / 1000)

    def take_quota(self, key: str, limit: int | None) -> bool:
        used = int(self._quota(keys=[f"{self.prefix}:quota:{key}:{today()}"], args=[limit or 0]))
        return used >= 0

    def refund_quota(self, key: str) -> None:
        self._refund(keys=[f"{self.prefix}:quota:{key}:{today()}"])

    def quota_used(self, key: str) -> int:
        raw: Any = self.r.get(f"{self.prefix}:quota:{key}:{today()}")
        return int(raw) if raw else 0

    def draw_allowance(self) -> str | None:
        return None

    def return_allowance(self) -> None:
        return None

    def count_call(self, run_id: str | None, api: str) -> None:
        pipe = self.r.pipeline()
        pipe.hincrby(f"{self.prefix}:run:{run_id or '_'}:calls", f"api:{api}", 1)
        pipe.hincrby(f"{self.prefix}:run:{run_id or '_'}:calls", "calls", 1)
        pipe.execute()

    def block_api(self, run_id: str, api: str, why: str) -> None:
        key = f"{self.prefix}:run:{run_id}:blocked"
        self.r.hsetnx(key, api, why)
        self.r.expire(key, 7 * 86400)

    def blocked_apis(self, run_id: str) -> dict[str, str]:
        raw: Any = self.r.hgetall(f"{self.prefix}:run:{run_id}:blocked")
        return {
            (k.decode() if isinstance(k, bytes) else str(k)): (v.decode() if isinstance(v, bytes) else str(v))
            for k, v in raw.items()
        }

    def count(self, run_id: str, name: str, n: int = 1) -> None:
        self.r.hincrby(f"{self.prefix}:run:{run_id}:calls", name, n)

    def calls(self, run_id: str) -> dict[str, int]:
        raw: Any = self.r.hgetall(f"{self.prefix}:run:{run_id}:calls")
        return {(k.decode() if isinstance(k, bytes) else str(k)): int(v) for k, v in raw.items()}

    def cache_get(self, key: str) -> CallResult | None:
        raw: Any = self.r.get(f"{self.prefix}:cache:{key}")
        return CallResult.from_json(json.loads(raw)) if raw else None

    def cache_put(self, key: str, value: CallResult, ttl_s: int) -> None:
        self.r.set(f"{self.prefix}:cache:{key}", json.dumps(cache_entry(value), ensure_ascii=False), ex=max(1, ttl_s))


class Wrapped:
    """An economy that hands everything to `inner` (the base of NoCache and Allowance)."""

    def __init__(self, inner: Economy) -> None:
        self.inner = inner

    async def acquire(self, api: str, rate_per_s: float | None) -> None:
        await self.inner.acquire(api, rate_per_s)

    def take_quota(self, key: str, limit: int | None) -> bool:
        return self.inner.take_quota(key, limit)

    def refund_quota(self, key: str) -> None:
        self.inner.refund_quota(key)

    def quota_used(self, key: str) -> int:
        return self.inner.quota_used(key)

    def draw_allowance(self) -> str | None:
        return self.inner.draw_allowance()

    def return_allowance(self) -> None:
        self.inner.return_allowance()

    def count_call(self, run_id: str | None, api: str) -> None:
        self.inner.count_call(run_id, api)

    def calls(self, run_id: str) -> dict[str, int]:
        return self.inner.calls(run_id)

    def cache_get(self, key: str) -> CallResult | None:
        return self.inner.cache_get(key)

    def cache_put(self, key: str, value: CallResult, ttl_s: int) -> None:
        self.inner.cache_put(key, value, ttl_s)

    def count(self, run_id: str, name: str, n: int = 1) -> None:
        self.inner.count(run_id, name, n)

    def mark_exhausted(self, api: str) -> None:
        self.inner.mark_exhausted(api)

    def exhausted(self) -> set[str]:
        return self.inner.exhausted()

    def block_api(self, run_id: str, api: str, why: str) -> None:
        self.inner.block_api(run_id, api, why)

    def blocked_apis(self, run_id: str) -> dict[str, str]:
        return self.inner.blocked_apis(run_id)


class NoCache(Wrapped):
    """Wraps an economy and disables its response cache (the naive baseline of the yield benchmark)."""

    def cache_get(self, key: str) -> CallResult | None:
        return None

    def cache_put(self, key: str, value: CallResult, ttl_s: int) -> None:
        return None


class Allowance(Wrapped):
    """An economy that also draws every upstream call from a daily allowance shared by whoever names the same
    `key`: a team's call budget for its batches (`team_allowance`). The allowance is counted like a quota, in
    Redis or in the embedded store's ledger, so it holds across batches, processes and restarts; a call it
    refuses is never sent. Everything else is the inner economy's, its cache included."""

    def __init__(self, inner: Economy, key: str, limit: int, refusal: str) -> None:
        super().__init__(inner)
        self.key, self.limit, self.refusal = key, limit, refusal
        #: calls this holder drew, and calls it was refused (the batch reports both)
        self.drawn = 0
        self.refused = 0

    def draw_allowance(self) -> str | None:
        if self.inner.take_quota(self.key, self.limit):
            self.drawn += 1
            return None
        self.refused += 1
        return self.refusal

    def return_allowance(self) -> None:
        self.drawn -= 1
        self.inner.refund_quota(self.key)

    def used(self) -> int:
        """Units of the allowance taken today, by every holder."""
        return self.inner.quota_used(self.key)

    def left(self) -> int:
        return max(0, self.limit - self.used())

    def spent(self) -> bool | None:
        """Whether today's allowance is used up; None when its counter cannot be read now (Redis away): every
        call still draws from it, so nothing is sent past it either way."""
        try:
            return self.left() <= 0
        except (redis.RedisError, sqlite3.Error, OSError):
            return None


def team_allowance_key(team: str) -> str:
    return f"team-budget:{team}"


def team_allowance(economy: Economy, settings: Settings, team: str) -> Allowance | None:
    """`economy` drawing from `team`'s daily budget of upstream calls (`batches.team_budget`), or None when the
    team has no budget (0: unlimited)."""
    limit = settings.batches.team_budget(team)
    if not limit:
        return None
    where = "TEAM_BUDGETS" if team in parse_pairs(settings.batches.team_budgets) else "TEAM_DAILY_CALLS"
    return Allowance(
        economy,
        team_allowance_key(team),
        limit,
        f"team {team!r} spent its daily budget of {limit:,} upstream calls (KOPA_BATCHES__{where}); "
        "it renews at 00:00 UTC",
    )


_SHARED: dict[tuple[int, str], MemoryEconomy] = {}
_SHARED_LOCK = threading.Lock()
#: Economies kept for stores of this process (a server has one; a test process opens many, the oldest go).
MAX_SHARED = 64


def quota_file_for(settings: Settings, store: object | None = None) -> Path | None:
    """Where the daily counters of an embedded store live: beside its SQLite file (`graph.sqlite3` ->
    `graph.quota.sqlite3`). None for Neo4j without Redis (one process's memory)."""
    if isinstance(store, EmbeddedStore):
        path = Path(store.path)
    elif store is None and settings.store == "embedded":
        path = settings.graph_file()
    else:
        return None
    return path.with_name(f"{path.stem}.quota{path.suffix or '.sqlite3'}")


def shared_memory_economy(quota_file: Path | None) -> MemoryEconomy:
    """The one in-memory economy of this process for `quota_file` (every run and batch of the process shares its
    buckets, cache and counters; the daily counters live in the file when there is one)."""
    key = (os.getpid(), str(quota_file.resolve()) if quota_file is not None else "")
    with _SHARED_LOCK:
        economy = _SHARED.get(key)
        if economy is None:
            economy = _SHARED[key] = MemoryEconomy(quota_file)
            while len(_SHARED) > MAX_SHARED:  # dropped, not closed: whoever still holds one keeps using it
                _SHARED.pop(next(iter(_SHARED)))
        return economy


def economy_for(settings: Settings, store: object | None = None) -> Economy:
    """The call economy of this process: shared through Redis when configured (every worker and API process sees
    one rate limit, quota, cache and counters), else the process's one in-memory economy, whose daily quotas and
    team budgets live beside the embedded store's file (`store`, else the configured one), so that they hold
    across runs, batches, processes and restarts. Neo4j without Redis keeps them in this process's memory."""
    if settings.redis_url:
        return RedisEconomy(settings.redis_url)
    return shared_memory_economy(quota_file_for(settings, store))
