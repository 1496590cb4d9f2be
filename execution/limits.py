"""Call economy shared by every worker: global per-API rate limits, per-key daily quotas, a response cache and
call counters. Redis-backed (shared by all Celery workers) or in-memory (the embedded default, one process).

Celery's own `rate_limit` is per worker; here the token bucket lives in Redis and is updated atomically by a Lua
script using Redis' clock, so two workers together never exceed an API's limit.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from typing import Any, Protocol

import redis
import redis.asyncio as aredis

from core.settings import Settings

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


def today() -> str:
    return datetime.now(UTC).strftime("%Y%m%d")


class Economy(Protocol):
    async def acquire(self, api: str, rate_per_s: float | None) -> None: ...
    def take_quota(self, key: str, limit: int | None) -> bool: ...
    def count_call(self, run_id: str | None, api: str) -> None: ...
    def calls(self, run_id: str) -> dict[str, int]: ...
    def cache_get(self, key: str) -> dict[str, Any] | None: ...
    def cache_put(self, key: str, value: dict[str, Any], ttl_s: int) -> None: ...
    def count(self, run_id: str, name: str, n: int = 1) -> None: ...
    def mark_exhausted(self, api: str) -> None: ...
    def exhausted(self) -> set[str]: ...
    def block_api(self, run_id: str, api: str, why: str) -> None: ...
    def blocked_apis(self, run_id: str) -> dict[str, str]: ...


class MemoryEconomy:
    """One process: asyncio token buckets, dict counters, dict cache with TTL."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._quota: dict[str, int] = {}
        self._calls: dict[str, dict[str, int]] = {}
        self._cache: dict[str, tuple[float, dict[str, Any]]] = {}
        self._exhausted: dict[str, str] = {}
        self._blocked: dict[str, dict[str, str]] = {}

    def block_api(self, run_id: str, api: str, why: str) -> None:
        self._blocked.setdefault(run_id, {}).setdefault(api, why)

    def blocked_apis(self, run_id: str) -> dict[str, str]:
        return dict(self._blocked.get(run_id, {}))

    def mark_exhausted(self, api: str) -> None:
        self._exhausted[api] = today()

    def exhausted(self) -> set[str]:
        return {a for a, day in self._exhausted.items() if day == today()}

    async def acquire(self, api: str, rate_per_s: float | None) -> None:
        if not rate_per_s:
            return
        lock = self._locks.setdefault(api, asyncio.Lock())
        async with lock:
            burst = max(1.0, rate_per_s)
            tokens, ts = self._buckets.get(api, (burst, time.monotonic()))
            now = time.monotonic()
            tokens = min(burst, tokens + (now - ts) * rate_per_s)
            if tokens < 1:
                await asyncio.sleep((1 - tokens) / rate_per_s)
                now = time.monotonic()
                tokens = 1.0
            self._buckets[api] = (tokens - 1, now)

    def take_quota(self, key: str, limit: int | None) -> bool:
        slot = f"{key}|{today()}"
        used = self._quota.get(slot, 0)
        if limit and used >= limit:
            return False
        self._quota[slot] = used + 1
        return True

    def count_call(self, run_id: str | None, api: str) -> None:
        self.count(run_id or "_", f"api:{api}")
        self.count(run_id or "_", "calls")

    def count(self, run_id: str, name: str, n: int = 1) -> None:
        bucket = self._calls.setdefault(run_id, {})
        bucket[name] = bucket.get(name, 0) + n

    def calls(self, run_id: str) -> dict[str, int]:
        return dict(self._calls.get(run_id, {}))

    def cache_get(self, key: str) -> dict[str, Any] | None:
        hit = self._cache.get(key)
        if hit is None or hit[0] < time.monotonic():
            return None
        return hit[1]

    def cache_put(self, key: str, value: dict[str, Any], ttl_s: int) -> None:
        self._cache[key] = (time.monotonic() + ttl_s, value)


class RedisEconomy:
    """Shared by all workers through Redis."""

    def __init__(self, url: str, prefix: str = "kopa") -> None:
        self.url = url
        self.r = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=10)
        self.prefix = prefix
        self._quota = self.r.register_script(QUOTA)
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

    def cache_get(self, key: str) -> dict[str, Any] | None:
        raw: Any = self.r.get(f"{self.prefix}:cache:{key}")
        return json.loads(raw) if raw else None

    def cache_put(self, key: str, value: dict[str, Any], ttl_s: int) -> None:
        self.r.set(f"{self.prefix}:cache:{key}", json.dumps(value, ensure_ascii=False), ex=max(1, ttl_s))


class NoCache:
    """Wraps an economy and disables its response cache (the naive baseline of the yield benchmark)."""

    def __init__(self, inner: Economy) -> None:
        self.inner = inner

    async def acquire(self, api: str, rate_per_s: float | None) -> None:
        await self.inner.acquire(api, rate_per_s)

    def take_quota(self, key: str, limit: int | None) -> bool:
        return self.inner.take_quota(key, limit)

    def count_call(self, run_id: str | None, api: str) -> None:
        self.inner.count_call(run_id, api)

    def calls(self, run_id: str) -> dict[str, int]:
        return self.inner.calls(run_id)

    def cache_get(self, key: str) -> dict[str, Any] | None:
        return None

    def cache_put(self, key: str, value: dict[str, Any], ttl_s: int) -> None:
        return None

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


def economy_for(settings: Settings) -> Economy:
    """The call economy of this process: shared through Redis when configured (every worker and API process sees
    one rate limit, quota, cache and counters), else in memory."""
    return RedisEconomy(settings.redis_url) if settings.redis_url else MemoryEconomy()
