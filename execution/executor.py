"""Calling registered tools for real: URL rewriting to the configured upstream, the key from the environment,
the global rate limit and daily quota, the response cache, bounded concurrency, and a verdict per call.

Secrets never leave this module, by construction: the request built here carries the key only in a private
request extension; `UpstreamTransport`, below httpx's own logging, adds it to the copy that goes on the wire. So
the URL httpx logs, the URL kept as evidence, cache entries, reasons and rows never contain it (rows and reasons
an upstream echoes are scrubbed of the key too). Every request also passes the egress policy (core.egress): the
host by name, then the address actually connected to.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from copy import deepcopy
from dataclasses import replace
from typing import Any
from urllib.parse import quote, urlparse

import httpx

from core.clock import world_now
from core.egress import EgressPolicy
from core.errors import DisallowedHost
from core.logging import install_redaction, register_secret, scrub
from core.payload import MAX_BODY
from core.settings import Settings, canonical_base, find_override
from execution.canonical import canonical_call, scalar_text
from execution.judge import KEY_REFUSED, judge
from execution.limits import Economy
from execution.request_parts import RequestParts, redacted_url
from execution.result import CallResult, Outcome
from graph import envelopes
from graph.conversions import answer as local_answer
from graph.conversions import is_conversion
from graph.models import ApiRecord, ToolRecord

log = logging.getLogger("kopa.executor")
install_redaction()
#: Request extension carrying what UpstreamTransport adds on the wire: {"query": {...}, "headers": {...}}.
SECRET_EXT = "kopa_secret"
#: Result codes that mean "the key was refused": gateway 20 (not approved), 30 (not registered), 31 (expired)
AUTH_REFUSED = {"20", "30", "31", "401", "403", KEY_REFUSED}
#: Pace at this share of a documented limit: arrival jitter on the way must not push an API over its limit.
PACING = 0.95


class UpstreamTransport(httpx.AsyncBaseTransport):
    """Checks every request against the egress policy and adds the secret parameters to the copy it sends.

    With `pin` (the network transport), the host is resolved once, every address checked, and the connection made
    to the checked address (Host header and TLS server name stay the name), so DNS cannot rebind in between.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport, policy: EgressPolicy, *, pin: bool) -> None:
        self.inner = inner
        self.policy = policy
        self.pin = pin

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        target = self.policy.target(request.url)
        extensions = {k: v for k, v in request.extensions.items() if k != SECRET_EXT}
        secret: dict[str, dict[str, str]] = request.extensions.get(SECRET_EXT) or {}
        url = request.url
        for name, value in (secret.get("path") or {}).items():  # `/{KEY}/json/...`: the segment left as a placeholder
            placeholder = quote("{" + name + "}", safe="").encode()
            url = url.copy_with(raw_path=url.raw_path.replace(placeholder, quote(value, safe="").encode()))
        if secret.get("query"):
            url = url.copy_merge_params(secret["query"])
        headers = request.headers.copy()
        for name, value in (secret.get("headers") or {}).items():
            headers[name] = value
        if secret.get("cookies"):  # an apiKey `in: cookie`: added to any Cookie header, on the wire copy only
            jar = [headers["Cookie"]] if "Cookie" in headers else []
            headers["Cookie"] = "; ".join(jar + [f"{n}={quote(v, safe='')}" for n, v in secret["cookies"].items()])
        if self.pin:
            address = await self.policy.pinned_address(target)
            if address != target.host:
                url = url.copy_with(host=address)
                if target.scheme == "https":
                    extensions["sni_hostname"] = target.host
        wire = httpx.Request(request.method, url, headers=headers, stream=request.stream, extensions=extensions)
        return await self.inner.handle_async_request(wire)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _form_value(value: Any) -> str | list[str]:
    """A body value as a form field: booleans as true/false, arrays as repeated fields, objects as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [x for v in value for x in _as_list(_form_value(v))]
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _as_list(value: str | list[str]) -> list[str]:
    return value if isinstance(value, list) else [value]


#: The largest text an argument may hold (UTF-8 bytes), and all of a call's arguments together: no public API takes
#: more in one call, and httpx refuses a URL over 64 KiB. Deeper nesting than `MAX_ARGUMENT_DEPTH` is refused too.
MAX_ARGUMENT_BYTES = 64 * 1024
MAX_ARGUMENT_DEPTH = 16
#: Integers beyond this many bits (about 308 digits) are no API's parameter (and past 4,300 digits no str()).
MAX_INTEGER_BITS = 1024


def _text_problem(where: str, text: str) -> tuple[int, str | None]:
    """(UTF-8 size, why the text cannot be sent or None)."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        return 0, (
            f"{where} holds a lone surrogate (U+{ord(text[exc.start]):04X} at position {exc.start}), which is not "
            "text; send valid Unicode text"
        )
    if size > MAX_ARGUMENT_BYTES:
        return size, f"{where} is {size:,} bytes, over the {MAX_ARGUMENT_BYTES:,} an argument may hold; send less"
    return size, None


def _label(name: str) -> str:
    """A parameter name as a reason may quote it (bounded, surrogates escaped)."""
    return name if name.isascii() and name.isprintable() and len(name) <= 60 else repr(name[:60])


def argument_problem(args: Any) -> str | None:
    """Why a call's arguments cannot be sent (None when they can): what a model may send but no request can carry,
    said so that the caller can fix it. Checked before any cache, rate limit or quota: text with a lone surrogate
    (UTF-8 has none), a value over MAX_ARGUMENT_BYTES or all of them together, NaN and infinities (JSON has none),
    integers of hundreds of digits, nesting past MAX_ARGUMENT_DEPTH, non-text parameter names, other objects."""
    if not isinstance(args, dict):
        return f"the arguments must be an object of parameter names and values, got a {type(args).__name__}"
    total = 0
    todo: list[tuple[str, Any, int]] = []
    for name, value in args.items():
        if not isinstance(name, str):
            return f"parameter names are text, got a {type(name).__name__}"
        size, why = _text_problem("a parameter name", name)
        if why:
            return why
        total += size
        todo.append((_label(name), value, 0))
    while todo:
        where, value, depth = todo.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return f"{where} is nested more than {MAX_ARGUMENT_DEPTH} levels deep; send a flat value"
        if isinstance(value, str):
            size, why = _text_problem(where, value)
            if why:
                return why
            total += size
        elif value is None or isinstance(value, bool):
            total += 5
        elif isinstance(value, int):
            if value.bit_length() > MAX_INTEGER_BITS:
                return f"{where} is an integer of more than 300 digits; send the number the API documents"
            total += value.bit_length() // 3 + 2
        elif isinstance(value, float):
            if not math.isfinite(value):
                return f"{where} is {value}, not a finite number; send a number"
            total += 24
        elif isinstance(value, list | tuple):
            total += 2 + len(value)
            if total <= MAX_ARGUMENT_BYTES:
                todo.extend((f"{where}[{i}]", v, depth + 1) for i, v in enumerate(value))
        elif isinstance(value, dict):
            total += 2 + len(value)
            for k, v in value.items() if total <= MAX_ARGUMENT_BYTES else []:
                if not isinstance(k, str):
                    return f"{where} has a key that is a {type(k).__name__}; object keys are text"
                size, why = _text_problem(f"a key of {where}", k)
                if why:
                    return why
                total += size
                todo.append((f"{where}.{_label(k)}", v, depth + 1))
        else:
            return f"{where} is a {type(value).__name__}; send text, a number, true/false, a list or an object"
        if total > MAX_ARGUMENT_BYTES:
            return f"the arguments come to more than {MAX_ARGUMENT_BYTES:,} bytes together; send less"
    return None


def args_key(tool: ToolRecord, args: dict[str, Any]) -> str:
    """The response cache's key of a call: its canonical request (`execution.canonical`) of this version of the
    tool's spec, at the simulated instant when there is one."""
    instant = world_now()  # a simulated world's answer depends on the instant asked about
    raw = json.dumps(
        [tool.name, tool.spec_hash, canonical_call(tool, args), *([instant.isoformat()] if instant else [])],
        ensure_ascii=False,
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class Executor:
    def __init__(
        self,
        settings: Settings,
        economy: Economy,
        apis: dict[str, ApiRecord],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        run_id: str | None = None,
        budget: int | None = None,
    ) -> None:
        self.settings = settings
        self.economy = economy
        self.apis = apis
        self.run_id = run_id
        self.budget = budget
        self.overrides = settings.overrides()
        self.policy = EgressPolicy.from_settings(settings)
        self._sem = asyncio.Semaphore(settings.verify.concurrency)
        limits = httpx.Limits(
            max_connections=settings.verify.concurrency * 2, max_keepalive_connections=settings.verify.concurrency
        )
        # An injected transport (the in-process sandbox) opens no sockets; the network one connects only to
        # checked addresses.
        inner = transport or httpx.AsyncHTTPTransport(limits=limits)
        self._client = httpx.AsyncClient(
            transport=UpstreamTransport(inner, self.policy, pin=transport is None),
            timeout=settings.verify.timeout_s,
            follow_redirects=False,
        )
        self._secrets: set[str] = set()
        self.exhausted_apis: set[str] = economy.exhausted()
        #: APIs no call goes to for the rest of this run, with the reason (a key that is missing or refused). A
        #: refusal is shared through the economy, so every worker of the run (and its closing) knows it.
        self.blocked_apis: dict[str, str] = economy.blocked_apis(run_id) if run_id else {}
        for api in apis.values():  # the secret policy again at call time: a registration stored before it sends no key
            refused = self._refused_secret(api)
            if refused:
                self.blocked_apis.setdefault(api.id, refused)
        self._api_locks: dict[str, asyncio.Lock] = {}
        self._inflight: dict[str, asyncio.Future[CallResult]] = {}

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> Executor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """`async with Executor(...) as ex:` closes its connections however the block ends."""
        await self.aclose()

    @property
    def budget_left(self) -> bool:
        """Shared across workers: the run's call counter lives in the economy (Redis or memory)."""
        if self.budget is None:
            return True
        return self.economy.calls(self.run_id or "_").get("calls", 0) < self.budget

    def _secret_name(self, api: ApiRecord) -> str:
        return api.auth.secret or self.settings.verify.key_secret

    def _refused_secret(self, api: ApiRecord) -> str | None:
        """Why the API's registration may not read its key variable (Settings.secret_refusal), or None."""
        if api.auth.scheme == "none" or not api.auth.secret:
            return None
        why = self.settings.secret_refusal(api.auth.secret)
        return (
            (
                f"the registration's key variable is refused by the secret policy ({why}); register the API "
                "again with an allowed --secret-name"
            )
            if why
            else None
        )

    def preflight(self, api_ids: set[str] | None = None) -> dict[str, str]:
        """Before any call: an API whose document or registration asks for a key, while the key's environment
        variable is not set, is blocked for the run with the reason (rather than spending calls that cannot work)."""
        for api in self.apis.values():
            if api_ids is not None and api.id not in api_ids:
                continue
            needs_key = api.auth.scheme != "none" and bool(api.auth.param or api.auth.secret)
            name = self._secret_name(api)
            if needs_key and not os.environ.get(name):
                self.blocked_apis[api.id] = (
                    f"the key environment variable {name} is not set; export it (the "
                    "registration names it) and start the run again"
                )
        return dict(self.blocked_apis)

    def _block_on_refused_key(self, api: ApiRecord | None, result: CallResult) -> None:
        """The provider refused the key (gateway 20/30/31, HTTP 401/403): every further call would fail alike."""
        if api is None or result.outcome != Outcome.TRANSIENT or result.code not in AUTH_REFUSED:
            return
        why = (
            f"the provider refused the key ({result.reason}); check {self._secret_name(api)} and that the key is "
            "approved for this service (new data.go.kr keys can take an hour to activate)"
        )
        self.blocked_apis.setdefault(api.id, why)
        if self.run_id:
            self.economy.block_api(self.run_id, api.id, why)

    def mark_exhausted(self, api: str) -> None:
        self.exhausted_apis.add(api)
        self.economy.mark_exhausted(api)

    def _url(self, tool: ToolRecord, api: ApiRecord | None) -> str:
        url = tool.url
        if (
            api is not None
            and api.base_url
            and not canonical_base(api.server_url).startswith(canonical_base(api.base_url))
        ):
            # base_url replaces the documented server (a server written relative to it already lies under it)
            url = api.base_url.rstrip("/") + urlparse(url).path[len(urlparse(api.server_url).path) :]
        override = find_override(self.overrides, url, api.id if api else None)
        if override is not None:
            url = override.rewrite(url, (api.base_url or api.server_url) if api else url)
        self.policy.target(url)  # by name here; the address when connecting
        return url

    def _auth(self, tool: ToolRecord, api: ApiRecord | None) -> tuple[set[str], str | None, str]:
        """(names of auth parameters, the key or None, where it goes: "query", "headers" or "cookies")."""
        names = {n for n in (tool.auth_param, api.auth.param if api else None) if n}
        if api is not None and api.auth.scheme == "none":
            return names, None, "query"
        where = {"header_key": "headers", "cookie_key": "cookies"}.get(api.auth.scheme if api else "", "query")
        secret_name = (api.auth.secret if api and api.auth.secret else None) or self.settings.verify.key_secret
        key = None if api is not None and self._refused_secret(api) else (os.environ.get(secret_name) or None)
        if key:
            register_secret(key)
            self._secrets.add(key)
        return names, key, where

    def _request(self, tool: ToolRecord, args: dict[str, Any], api: ApiRecord | None) -> RequestParts:
        url = self._url(tool, api)
        query: dict[str, str] = {}
        body: dict[str, Any] = {}
        headers: dict[str, str] = {"Accept": "application/json, application/xml;q=0.9, */*;q=0.5"}
        by_name = {p.name: p for p in tool.params}
        auth_names, key, where = self._auth(tool, api)
        lowered = {n.lower() for n in auth_names}
        for name, value in args.items():
            if name.lower() in lowered:
                continue  # a caller can never set (or learn) the key through arguments
            p = by_name.get(name)
            location = p.location if p else "query"
            # on the wire, a scalar is its canonical text (what the cache key names): " 60", "60.0" and 60 for an
            # integer parameter all go out as 60
            text = str(
                value if isinstance(value, list | tuple | dict) else scalar_text(value, p.type if p else "string")
            )
            if location == "body":
                body[name] = value
            elif location == "path":
                url = url.replace("{" + name + "}", quote(text, safe=""))
            elif location == "header":
                if any(c in text for c in "\r\n\0"):  # no header injection, whatever the transport checks
                    raise ValueError(f"header {name[:60]!r} may not hold a line break or NUL")
                headers[name] = text
            else:
                query[name] = text
        url = _without_unfilled_tail(url, tool, args)
        if tool.format_param:
            fname, _, fvalue = tool.format_param.partition("=")
            query.setdefault(fname, fvalue)
        req: RequestParts = {"method": tool.method, "url": url, "params": query, "headers": headers}
        param = tool.auth_param or (api.auth.param if api else None)
        if tool.key_in_path:
            where = "path"  # the evidence URL keeps the placeholder; the transport puts the key in the wire copy
        if key and param:
            req["extensions"] = {SECRET_EXT: {where: {param: key}}}
        if tool.method != "GET" and body:
            media = tool.body_media or "application/json"
            if media == "application/x-www-form-urlencoded":
                req["data"] = {k: _form_value(v) for k, v in body.items()}
            elif media == "multipart/form-data":
                req["files"] = [(k, (None, x)) for k, v in body.items() for x in _as_list(_form_value(v))]
            else:
                req["json"] = body
        return req

    @asynccontextmanager
    async def _admitted(self, api_id: str, rate: float | None) -> AsyncIterator[None]:
        """A connection slot for one call of `api_id`, paced by the shared bucket. One waiter per API in this
        process asks for a token (no thundering herd) before any slot, so a slow API never holds slots that other
        APIs could use; it keeps the API's turn until it has its slot, so tokens never pile up waiting for slots
        and leave together (a burst over the provider's limit)."""
        async with self._api_locks.setdefault(api_id, asyncio.Lock()):
            await self.economy.acquire(api_id, rate)
            await self._sem.acquire()
        try:
            yield
        finally:
            self._sem.release()

    async def call(self, tool: ToolRecord, args: dict[str, Any]) -> CallResult:
        """One judged call. Identical calls already in flight in this process share one upstream request.
        Arguments no request can carry come back `invalid` with the reason, before any cache, limit or quota."""
        problem = argument_problem(args)
        if problem:
            return CallResult(Outcome.INVALID, reason=problem, code="invalid_argument")
        if is_conversion(tool):
            return self._local(tool, args)
        ckey = args_key(tool, args)
        pending = self._inflight.get(ckey)
        if pending is not None:
            shared = await asyncio.shield(pending)
            return replace(shared, items=deepcopy(shared.items), cached=True) if shared.definitive else shared
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

    def _local(self, tool: ToolRecord, args: dict[str, Any]) -> CallResult:
        """A built-in conversion tool (graph.conversions), answered in process: no network, egress, key, rate
        limit, quota or cache; counted apart from upstream calls (`local_calls`)."""
        started = time.perf_counter()
        ans = local_answer(tool.name, args)
        self.economy.count(self.run_id or "_", "local_calls")
        try:
            url = str(httpx.URL(tool.url, params={k: str(v) for k, v in args.items() if v is not None}))
        except (httpx.InvalidURL, UnicodeError, ValueError):  # arguments too long for a URL: the tool's own
            url = tool.url
        return CallResult(
            Outcome(ans.outcome),
            ans.items,
            ans.reason,
            ans.code,
            status=ans.status,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            response_hash=hashlib.sha256(json.dumps(ans.items, sort_keys=True).encode()).hexdigest()[:16],
            url=url,
        )

    async def _call(self, tool: ToolRecord, args: dict[str, Any], ckey: str) -> CallResult:
        api = self.apis.get(tool.api_id)
        hit = self.economy.cache_get(ckey)
        if hit is not None:
            self.economy.count(self.run_id or "_", "cache_hits")
            return replace(hit, cached=True)
        if tool.api_id in self.blocked_apis:
            return CallResult(Outcome.TRANSIENT, reason=self.blocked_apis[tool.api_id], code="blocked")
        if tool.api_id in self.exhausted_apis:
            return CallResult(Outcome.TRANSIENT, reason="daily quota exhausted earlier in this run", quota=True)
        if not self.budget_left:
            return CallResult(Outcome.TRANSIENT, reason="run call budget exhausted", quota=True, code="budget")
        try:
            req = self._request(tool, args, api)
            # built here, before the quota and the rate limit: arguments that make no request (a URL over httpx's
            # limit once percent-encoded, a header that is not Latin-1) cost nothing
            request = self._client.build_request(**req)
        except DisallowedHost as exc:
            return CallResult(Outcome.INVALID, reason=str(exc))
        except (httpx.InvalidURL, UnicodeError, ValueError, TypeError) as exc:
            return CallResult(
                Outcome.INVALID,
                reason=f"these arguments make no valid request ({type(exc).__name__}: {str(exc)[:120]}); send "
                "shorter plain-text values",
                code="invalid_argument",
            )
        rate = (api.rate_limit_per_s if api else None) or self.settings.verify.default_rate_per_s or None
        quota_key = f"{(api.auth.secret if api and api.auth.secret else self.settings.verify.key_secret)}:{tool.api_id}"
        spent = self.economy.draw_allowance()  # a team's daily call budget (limits.Allowance), before the API's
        if spent:
            return CallResult(Outcome.TRANSIENT, reason=spent, quota=True, code="budget")
        if api and api.daily_quota and not self.economy.take_quota(quota_key, api.daily_quota):
            self.economy.return_allowance()  # not sent: the budget keeps the call
            self.mark_exhausted(tool.api_id)
            return CallResult(Outcome.TRANSIENT, reason="daily quota of this API exhausted", quota=True)
        async with self._admitted(tool.api_id, rate * PACING if rate else None):
            self.economy.count_call(self.run_id, tool.api_id)
            started = time.perf_counter()
            fetched = await self._fetch(request, req, started)
        if isinstance(fetched, CallResult):
            return fetched
        status, content, ctype = fetched
        latency = (time.perf_counter() - started) * 1000
        sent = canonical_call(tool, args).values()  # the verdict is one of the call's canonical form (its cache key)
        inputs = {str(v) for v in sent if not isinstance(v, list)} | {
            str(x) for v in sent if isinstance(v, list) for x in v
        }
        verdict = judge(
            status,
            content,
            ctype,
            envelope=tool.envelope,
            items_path=tool.items_path,
            declared_fields={f.name for f in tool.fields},
            inputs=inputs,
        )
        result = replace(
            verdict,
            items=scrub(verdict.items, self._secrets),
            reason=scrub(verdict.reason, self._secrets),
            code=scrub(verdict.code, self._secrets),
            next_token=scrub(verdict.next_token, self._secrets),
            status=status,
            latency_ms=round(latency, 1),
            response_hash=hashlib.sha256(content).hexdigest()[:16],
            url=redacted_url(req),
        )
        result = _page_position(tool, args, result)
        self._block_on_refused_key(api, result)
        if result.definitive:
            self.economy.cache_put(ckey, result, self.settings.verify.cache_ttl_s)
        return result

    async def _fetch(
        self, request: httpx.Request, req: RequestParts, started: float
    ) -> tuple[int, bytes, str] | CallResult:
        """Send one request (built from `req`) and read its body, bounded by MAX_BODY: (status, body, content type),
        or the result of a call that failed on the way (refused host, no answer, a body too large)."""
        try:
            resp = await self._client.send(request, stream=True)
            try:
                chunks: list[bytes] = []
                size = 0
                async for chunk in resp.aiter_bytes():
                    size += len(chunk)
                    if size > MAX_BODY:
                        return CallResult(
                            Outcome.HOSTILE,
                            reason=f"response body over {MAX_BODY} bytes",
                            status=resp.status_code,
                            url=redacted_url(req),
                        )
                    chunks.append(chunk)
                return resp.status_code, b"".join(chunks), resp.headers.get("content-type", "")
            finally:
                await resp.aclose()
        except DisallowedHost as exc:
            return CallResult(Outcome.INVALID, reason=str(exc), url=redacted_url(req))
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            return CallResult(
                Outcome.TRANSIENT,
                reason=f"{type(exc).__name__}: upstream did not answer",
                latency_ms=(time.perf_counter() - started) * 1000,
                url=redacted_url(req),
            )


def _without_unfilled_tail(url: str, tool: ToolRecord, args: dict[str, Any]) -> str:
    """The URL without the optional trailing path segments the call leaves out (`.../1/5/{GU}` -> `.../1/5`)."""
    optional = {
        "{" + p.name + "}" for p in tool.params if p.location == "path" and not p.required and p.name not in args
    }
    while optional:
        head, _, last = url.rstrip("/").rpartition("/")
        if last not in optional:
            break
        url = head
    return url


def _page_position(tool: ToolRecord, args: dict[str, Any], result: CallResult) -> CallResult:
    """A call paged by index range (`/{START_INDEX}/{END_INDEX}`) or by offset (`offset=20&limit=10`) answers rows
    from the position it asked for: the position of its first row, unless the response said its own or the total
    stated cannot hold the rows there. An answer that flags `hasNext` without a token names its next page by number
    (`graph.envelopes.next_page`)."""
    params = [(p.name, p.type) for p in tool.params]
    if result.ok and result.more and not result.next_token:
        default = next((p.default for p in tool.params if p.name == envelopes.next_param(params)), None)
        result = replace(result, next_token=envelopes.next_page(params, args, default))
    if not result.ok or result.first != 1:
        return result
    first = envelopes.first_position(params, args)
    if first is None or (result.total is not None and result.total < first - 1 + len(result.items)):
        return result
    return replace(result, first=first)
