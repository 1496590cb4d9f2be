"""Calling registered tools for real: URL rewriting to the configured upstream, the key from the environment,
the global rate limit and daily quota, the response cache, bounded concurrency, and a verdict per call.

Secrets never leave this module: the key is added to the outgoing request only, never to arguments, evidence,
cache keys or logs.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote, urlparse

import httpx

from core.errors import DisallowedHost
from core.payload import MAX_BODY
from core.settings import Settings
from execution.judge import Verdict, judge
from execution.limits import Economy
from graph.models import ApiRecord, ToolRecord

log = logging.getLogger("kopa.executor")
#: Pace at this share of a documented limit: arrival jitter on the way must not push an API over its limit.
PACING = 0.95


@dataclass
class CallResult:
    outcome: str
    items: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    code: str = ""
    status: int | None = None
    latency_ms: float = 0.0
    response_hash: str = ""
    cached: bool = False
    quota: bool = False
    url: str = ""
    items_path: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def definitive(self) -> bool:
        return self.outcome in ("ok", "empty", "invalid", "hostile")


def args_key(tool: ToolRecord, args: dict[str, Any]) -> str:
    raw = json.dumps([tool.name, tool.spec_hash, sorted((k, v) for k, v in args.items())], ensure_ascii=False,
                     sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class Executor:
    def __init__(self, settings: Settings, economy: Economy, apis: dict[str, ApiRecord], *,
                 transport: httpx.AsyncBaseTransport | None = None, run_id: str | None = None,
                 budget: int | None = None) -> None:
        self.settings = settings
        self.economy = economy
        self.apis = apis
        self.run_id = run_id
        self.budget = budget
        self.overrides = settings.override_map()
        self.allowed = {h.lower() for h in settings.allowed_hosts} | {
            (urlparse(u).hostname or "").lower() for u in self.overrides.values()}
        self._sem = asyncio.Semaphore(settings.verify.concurrency)
        limits = httpx.Limits(max_connections=settings.verify.concurrency * 2,
                              max_keepalive_connections=settings.verify.concurrency)
        self._client = httpx.AsyncClient(transport=transport, timeout=settings.verify.timeout_s, limits=limits,
                                         follow_redirects=False)
        self.exhausted_apis: set[str] = economy.exhausted()
        self._api_locks: dict[str, asyncio.Lock] = {}
        self._inflight: dict[str, asyncio.Future[CallResult]] = {}

    async def aclose(self) -> None:
        await self._client.aclose()

    @property
    def budget_left(self) -> bool:
        """Shared across workers: the run's call counter lives in the economy (Redis or memory)."""
        if self.budget is None:
            return True
        return self.economy.calls(self.run_id or "_").get("calls", 0) < self.budget

    def mark_exhausted(self, api: str) -> None:
        self.exhausted_apis.add(api)
        self.economy.mark_exhausted(api)

    def _url(self, tool: ToolRecord, api: ApiRecord | None) -> str:
        url = tool.url
        if api is not None and api.base_url:
            url = api.base_url.rstrip("/") + urlparse(url).path[len(urlparse(api.server_url).path):]
        parsed = urlparse(url)
        host = (parsed.hostname or "").lower()
        if host in self.overrides:
            url = self.overrides[host].rstrip("/") + parsed.path + (f"?{parsed.query}" if parsed.query else "")
        final = (urlparse(url).hostname or "").lower()
        if final not in self.allowed:
            raise DisallowedHost(f"{final} is not allow-listed")
        return url

    def _request(self, tool: ToolRecord, args: dict[str, Any], api: ApiRecord | None) -> dict[str, Any]:
        url = self._url(tool, api)
        query: dict[str, str] = {}
        body: dict[str, Any] = {}
        headers: dict[str, str] = {"Accept": "application/json, application/xml;q=0.9, */*;q=0.5"}
        by_name = {p.name: p for p in tool.params}
        for name, value in args.items():
            p = by_name.get(name)
            location = p.location if p else "query"
            if location == "body":
                body[name] = value
            elif location == "path":
                url = url.replace("{" + name + "}", quote(str(value), safe=""))
            elif location == "header":
                headers[name] = str(value)
            else:
                query[name] = str(value)
        if tool.format_param:
            fname, _, fvalue = tool.format_param.partition("=")
            query.setdefault(fname, fvalue)
        if tool.auth_param:
            secret_name = (api.auth.secret if api and api.auth.secret else None) or self.settings.verify.key_secret
            key = os.environ.get(secret_name)
            if key:
                query[tool.auth_param] = key
        req: dict[str, Any] = {"method": tool.method, "url": url, "params": query, "headers": headers}
        if tool.method != "GET" and body:
            req["json"] = body
        return req

    async def call(self, tool: ToolRecord, args: dict[str, Any]) -> CallResult:
        """One judged call. Identical calls already in flight in this process share one upstream request."""
        ckey = args_key(tool, args)
        pending = self._inflight.get(ckey)
        if pending is not None:
            shared = await asyncio.shield(pending)
            return CallResult(**{**asdict(shared), "cached": True}) if shared.definitive else shared
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self._inflight[ckey] = future
        try:
            result = await self._call(tool, args, ckey)
            future.set_result(result)
            return result
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it, no "never retrieved" warning
            raise
        finally:
            self._inflight.pop(ckey, None)

    async def _call(self, tool: ToolRecord, args: dict[str, Any], ckey: str) -> CallResult:
        api = self.apis.get(tool.api_id)
        hit = self.economy.cache_get(ckey)
        if hit is not None:
            self.economy.count(self.run_id or "_", "cache_hits")
            return CallResult(**{**hit, "cached": True})
        if tool.api_id in self.exhausted_apis:
            return CallResult("transient", reason="daily quota exhausted earlier in this run", quota=True)
        if not self.budget_left:
            return CallResult("transient", reason="run call budget exhausted", quota=True, code="budget")
        try:
            req = self._request(tool, args, api)
        except DisallowedHost as exc:
            return CallResult("invalid", reason=str(exc))
        rate = (api.rate_limit_per_s if api else None) or self.settings.verify.default_rate_per_s or None
        quota_key = f"{(api.auth.secret if api and api.auth.secret else self.settings.verify.key_secret)}:{tool.api_id}"
        if api and api.daily_quota and not self.economy.take_quota(quota_key, api.daily_quota):
            self.mark_exhausted(tool.api_id)
            return CallResult("transient", reason="daily quota of this API exhausted", quota=True)
        # One waiter per API in this process asks the shared bucket for a token (no thundering herd), and the
        # token is taken before a connection slot, so a slow API never holds slots that other APIs could use.
        async with self._api_locks.setdefault(tool.api_id, asyncio.Lock()):
            await self.economy.acquire(tool.api_id, rate * PACING if rate else None)
        async with self._sem:
            self.economy.count_call(self.run_id, tool.api_id)
            started = time.perf_counter()
            try:
                async with self._client.stream(**req) as resp:
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in resp.aiter_bytes():
                        size += len(chunk)
                        if size > MAX_BODY:
                            return CallResult("hostile", reason=f"response body over {MAX_BODY} bytes",
                                              status=resp.status_code, url=_redacted(req))
                        chunks.append(chunk)
                    content = b"".join(chunks)
                    status, ctype = resp.status_code, resp.headers.get("content-type", "")
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                return CallResult("transient", reason=f"{type(exc).__name__}: upstream did not answer",
                                  latency_ms=(time.perf_counter() - started) * 1000, url=_redacted(req))
        latency = (time.perf_counter() - started) * 1000
        inputs = {str(v) for v in args.values() if not isinstance(v, list)} | {
            str(x) for v in args.values() if isinstance(v, list) for x in v}
        verdict: Verdict = judge(status, content, ctype, envelope=tool.envelope, items_path=tool.items_path,
                                 declared_fields={f.name for f in tool.fields}, inputs=inputs)
        result = CallResult(verdict.outcome, verdict.items, verdict.reason, verdict.code, status, round(latency, 1),
                            hashlib.sha256(content).hexdigest()[:16], False, verdict.quota, _redacted(req),
                            verdict.items_path)
        if result.definitive:
            self.economy.cache_put(ckey, {k: v for k, v in asdict(result).items() if k != "cached"},
                                   self.settings.verify.cache_ttl_s)
        return result


def _redacted(req: dict[str, Any]) -> str:
    """The request URL without key material (for evidence)."""
    params = {k: v for k, v in req["params"].items() if not k.lower().endswith("key")}
    return str(httpx.URL(req["url"], params=params))
