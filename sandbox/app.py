"""The sandbox HTTP server: a small ASGI application (no framework on the hot path).

Every operation lives at its real path under one base URL; gateway behaviour (keys, quotas, retired services,
gateway error envelopes) sits in front of the provider handlers, and fault injection wraps both.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl

import orjson

from core.clock import WORLD_NOW_HEADER
from core.settings import SandboxSettings, Settings, parse_pairs
from sandbox.catalog import build_catalog
from sandbox.clock import KST, Clock, parse_instant
from sandbox.faults import FaultDecision, FaultInjector, parse_profile
from sandbox.keys import KeyRegistry, QuotaBook
from sandbox.openapi_doc import Catalog
from sandbox.providers import all_operations
from sandbox.render import render_gateway_error, render_provider_error, render_success
from sandbox.spec import Operation, ProviderError, Request
from sandbox.world import get_world

log = logging.getLogger("kopa.sandbox")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

MAX_BODY = 1 << 20
MAX_ROWS = 10_000
_INT = re.compile(r"^-?[0-9]+$")
_NUM = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
HTML_5XX = {
    500: b"<html><head><title>500 Internal Server Error</title></head>"
    b"<body><h1>500 Internal Server Error</h1></body></html>",
    502: b"<html><head><title>502 Bad Gateway</title></head>"
    b"<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
    503: b"<html><head><title>503 Service Temporarily Unavailable</title></head>"
    b"<body><h1>503 Service Temporarily Unavailable</h1></body></html>",
}


class Response:
    __slots__ = ("body", "content_type", "headers", "status")

    def __init__(self, status: int, body: bytes, content_type: str, headers: list[tuple[bytes, bytes]] | None = None):
        self.status, self.body, self.content_type, self.headers = status, body, content_type, headers or []


def _json(status: int, doc: Any) -> Response:
    return Response(status, orjson.dumps(doc), "application/json")


class SandboxApp:
    """ASGI app. Build with `SandboxApp(SandboxSettings(...))`; `app.state` holds clock, faults and quotas."""

    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = s = settings or SandboxSettings()
        self.seed = s.seed
        self.world = get_world(s.seed)
        self.clock = Clock(s.now)
        self.faults = FaultInjector(parse_profile(s.faults), s.seed)
        self.keys = KeyRegistry.default(s.keys_file)
        self.quota = QuotaBook(s.state_file, {k: int(v) for k, v in parse_pairs(s.quotas).items()}, s.per_second_limit)
        self.gateway_mode = s.gateway_mode
        self.ops: dict[str, Operation] = {op.path: op for op in all_operations()}
        self.retired: dict[str, str] = {}
        for op in self.ops.values():
            for old in op.retired:
                self.retired[f"/{op.provider.key}/{old}"] = op.service
        self._catalog: Catalog | None = None
        #: Recent requests (monotonic time, service) for rate measurements: GET /_sandbox/requests.
        self.request_log: deque[tuple[float, str]] = deque(maxlen=200_000)

    # ------------------------------------------------------------------ ASGI
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            resp = await self.handle(scope, receive)
        except Exception:  # never a stack trace to the client
            log.exception("sandbox failure")
            resp = Response(500, HTML_5XX[500], "text/html")
        headers = [
            (b"content-type", resp.content_type.encode()),
            (b"content-length", str(len(resp.body)).encode()),
            *resp.headers,
        ]
        await send({"type": "http.response.start", "status": resp.status, "headers": headers})
        await send({"type": "http.response.body", "body": resp.body})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                self.quota.flush()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def handle(self, scope: Scope, receive: Receive) -> Response:
        path: str = scope["path"]
        method: str = scope["method"]
        raw_qs: bytes = scope.get("query_string", b"")
        if path.startswith("/_sandbox/"):
            return await self._admin(scope, receive, path, method)
        if path.startswith("/_catalog") or path == "/healthz":
            return self._meta(path)
        op = self.ops.get(path)
        if op is None:
            return self._unknown_path(path, raw_qs)
        body: Any = None
        if method == "POST":
            raw = await _read_body(receive)
            if raw is None:
                return _json(413, {"status_code": "TOO_LARGE_REQUEST", "message": "요청 본문이 너무 큽니다."})
            try:
                body = orjson.loads(raw) if raw else None
            except orjson.JSONDecodeError:
                body = _BadJson
        try:
            params = dict(
                parse_qsl(raw_qs.decode("latin-1"), keep_blank_values=True, encoding="utf-8", errors="strict")
            )
        except UnicodeDecodeError:  # not UTF-8: answer in the requested format that we can still read
            lenient = dict(parse_qsl(raw_qs.decode("latin-1"), keep_blank_values=True, errors="replace"))
            return self._provider_error(op, *op.provider.invalid_error, fmt=self._format(op, lenient))
        fmt = self._format(op, params)
        if op.method != method:
            return (
                self._gateway(op, "04", fmt)
                if op.provider.gateway == "datagokr"
                else _json(405, {"status_code": "HTTP_ERROR", "message": "허용되지 않은 HTTP 메소드"})
            )

        self.request_log.append((time.monotonic(), op.service))
        decision = self.faults.decide(op.service)
        if decision.delay_s:
            await asyncio.sleep(decision.delay_s)
        if decision.hang:
            await asyncio.sleep(self.faults.profile.timeout_s)
            return self._gateway(op, "05", fmt)
        if decision.status_5xx:
            return Response(decision.status_5xx, HTML_5XX[decision.status_5xx], "text/html")
        if decision.throttle and op.provider.gateway == "datagokr":
            return self._gateway(op, decision.throttle, fmt)

        denied = self._authorise(op, params, fmt)
        if denied is not None:
            return denied
        resp = self._serve(op, params, body, fmt, decision, at=self._instant(scope))
        if decision.truncate and resp.status == 200:
            resp.body = resp.body[: max(1, len(resp.body) // 2)]
        elif decision.malformed and resp.status == 200:
            resp.body = b"\xff\xfe<" + resp.body[:40] + b"\x00{{"
        return resp

    def _instant(self, scope: Scope) -> datetime | None:
        """The instant a request asks the world about (`core.clock.WORLD_NOW_HEADER`, sent by the in-process
        transport of a synthesis run whose trajectories span days): an ISO instant up to 400 days before the clock,
        never after it. A real API answers at real time; this simulates asking it on another day."""
        raw = next((v for k, v in scope.get("headers", []) if k.decode("latin-1").lower() == WORLD_NOW_HEADER), None)
        if raw is None:
            return None
        try:
            at = parse_instant(raw.decode("latin-1").strip()).astimezone(KST)
        except ValueError:
            return None
        base = self.clock.now()
        return at if base - timedelta(days=400) <= at <= base else None

    # ------------------------------------------------------------------ gateway
    def _format(self, op: Operation, params: dict[str, str]) -> str:
        p = op.provider
        if len(p.formats) == 1:
            return p.formats[0]
        value = params.get(p.format_param or "", "").strip().lower()
        return value if value in p.formats else p.formats[0]

    def _gateway(self, op: Operation, code: str, fmt: str) -> Response:
        status, body, ctype = render_gateway_error(code, mode=self.gateway_mode, fmt=fmt)
        return Response(status, body, ctype)

    def _unknown_path(self, path: str, raw_qs: bytes) -> Response:
        prefix = "/".join(path.split("/")[:3])
        if prefix in self.retired:
            fmt = "json" if b"json" in raw_qs.lower() else "xml"
            status, body, ctype = render_gateway_error("12", mode=self.gateway_mode, fmt=fmt)
            return Response(status, body, ctype)
        return Response(404, b"<html><body><h1>404 Not Found</h1></body></html>", "text/html")

    def _authorise(self, op: Operation, params: dict[str, str], fmt: str) -> Response | None:
        p = op.provider
        if p.gateway == "juso":
            info = self.keys.get(params.pop("confmKey", ""))
            if info is None:
                return self._provider_error(op, "E0001", "승인되지 않은 KEY 입니다.", fmt=fmt)
            return None
        key = params.pop("serviceKey", None)
        if key is None:
            key = params.pop("ServiceKey", None)
        if p.gateway == "odcloud":
            if not key or self.keys.get(key) is None:
                return _json(401, {"code": -4, "msg": "등록되지 않은 인증키 입니다."})
            self.quota.take(key, op.service, self.clock.now().strftime("%Y%m%d"), p.daily_quota)
            return None
        if not key:
            return self._gateway(op, "20N" if self.gateway_mode == "2026" else "30", fmt)
        info = self.keys.get(key)
        if info is None:
            return self._gateway(op, "30", fmt)
        if not info.allows(op.service):
            return self._gateway(op, "20", fmt)
        over = self.quota.take(key, op.service, self.clock.now().strftime("%Y%m%d"), p.daily_quota)
        if over:
            return self._gateway(op, over, fmt)
        return None

    # ------------------------------------------------------------------ provider
    def _provider_error(self, op: Operation, code: str, msg: str, *, fmt: str, status: int = 200) -> Response:
        body, ctype = render_provider_error(op, code, msg, fmt=fmt)
        return Response(status, body, ctype)

    def _serve(
        self,
        op: Operation,
        params: dict[str, str],
        body: Any,
        fmt: str,
        decision: FaultDecision,
        *,
        at: datetime | None = None,
    ) -> Response:
        p = op.provider
        if not p.validates_itself:
            err = _validate(op, params)
            if err is not None:
                return self._provider_error(op, *(p.missing_error if err == "missing" else p.invalid_error), fmt=fmt)
        page_name, rows_name = p.paging
        try:
            page = int(params.get(page_name) or 1)
            rows = int(params.get(rows_name) or (10 if op.paged else 1))
        except ValueError:
            return self._provider_error(op, *p.invalid_error, fmt=fmt)
        if page < 1 or rows < 1:
            return self._provider_error(op, *p.invalid_error, fmt=fmt)
        if p.envelope == "juso":
            rows = min(rows, 100)
        rows = min(rows, MAX_ROWS)
        if decision.error200:
            return (
                self._provider_error(op, "01", "APPLICATION_ERROR", fmt=fmt)
                if p.gateway == "datagokr"
                else Response(
                    500,
                    orjson.dumps({"status_code": "INTERNAL_ERROR", "message": "API 서버에 문제가 발생하였음"}),
                    "application/json",
                )
            )
        if body is _BadJson:
            body = None
        req = Request(params=params, body=body, world=self.world, now=at or self.clock.now(), seed=self.seed)
        try:
            result = op.handler(req)
        except ProviderError as exc:
            return self._provider_error(op, exc.code, exc.message, fmt=fmt, status=exc.http_status)
        items, total = result.items, result.total
        if total is None:
            total = len(items)
            if op.paged:
                items = items[(page - 1) * rows : page * rows]
        if not items and total == 0 and p.empty == "header_only":
            return self._provider_error(op, "03", "NO_DATA", fmt=fmt)
        drift = self.faults.drift_for(op.op_id)
        if drift:
            items = [{drift.get(k, k): v for k, v in it.items()} for it in items]
        out, ctype = render_success(
            op, items, fmt=fmt, page=page, rows=rows if op.paged else max(1, len(items)), total=total
        )
        return Response(200, out, ctype)

    # ------------------------------------------------------------------ meta and admin
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = build_catalog()
        return self._catalog

    def _meta(self, path: str) -> Response:
        if path == "/healthz":
            return _json(200, {"status": "ok", "operations": len(self.ops), "seed": self.seed})
        cat = self.catalog()
        if path in ("/_catalog", "/_catalog/"):
            return _json(
                200,
                {
                    "services": [
                        {
                            "id": k,
                            "title": d["info"]["title"],
                            "openapi": f"/_catalog/{k}.json",
                            "operations": len(d["paths"]),
                        }
                        for k, d in cat["openapi"].items()
                    ],
                    "swagger2": [f"/_catalog/swagger2/{k}.json" for k in cat["swagger2"]],
                    "hosts": cat["hosts"],
                },
            )
        m = re.fullmatch(r"/_catalog/(swagger2/)?([A-Za-z0-9_.\-]+)\.json", path)
        if m:
            docs = cat["swagger2" if m.group(1) else "openapi"]
            if m.group(2) in docs:
                return _json(200, docs[m.group(2)])
        return _json(404, {"error": "not_found", "detail": f"no catalog document at {path}; see /_catalog"})

    async def _admin(self, scope: Scope, receive: Receive, path: str, method: str) -> Response:
        token = dict(scope.get("headers") or []).get(b"x-sandbox-admin", b"").decode()
        if not hmac.compare_digest(token, self.settings.admin_token.get_secret_value()):
            return _json(401, {"error": "unauthorized", "detail": "send the admin token in X-Sandbox-Admin"})
        raw = await _read_body(receive) if method in ("PUT", "POST") else b""
        try:
            payload = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            return _json(400, {"error": "invalid_json", "detail": "the body must be a JSON object"})
        if path == "/_sandbox/faults":
            if method == "PUT":
                try:
                    self.faults.set_profile(parse_profile(payload.get("profile", payload)))
                except (ValueError, TypeError) as exc:
                    return _json(400, {"error": "invalid_profile", "detail": str(exc)})
            return _json(200, asdict(self.faults.profile))
        if path == "/_sandbox/clock":
            if method == "PUT":
                try:
                    self.clock.set(str(payload.get("now", "")))
                except ValueError as exc:
                    return _json(400, {"error": "invalid_time", "detail": str(exc)})
            return _json(200, self.clock.describe())
        if path == "/_sandbox/quota":
            return _json(200, self.quota.usage())
        if path == "/_sandbox/requests":
            if method == "DELETE":
                self.request_log.clear()
            now = time.monotonic()
            return _json(200, {"now": now, "requests": [[round(t, 4), s] for t, s in self.request_log]})
        if path == "/_sandbox/quota/reset" and method == "POST":
            self.quota.reset()
            return _json(200, self.quota.usage())
        return _json(404, {"error": "not_found", "detail": f"no admin endpoint {method} {path}"})


class _BadJsonType:
    pass


_BadJson = _BadJsonType()


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        msg = await receive()
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not msg.get("more_body"):
            return b"".join(chunks)


def _validate(op: Operation, params: dict[str, str]) -> str | None:
    fmt_name = op.provider.format_param
    paging = set(op.provider.paging)
    for p in op.params:
        if p.name in paging or p.name == fmt_name or p.name in ("serviceKey", "confmKey"):
            continue
        value = params.get(p.name)
        if value is None or value == "":
            if p.required:
                return "missing"
            continue
        if p.type == "integer" and not _INT.match(value):
            return "invalid"
        if p.type == "number" and not _NUM.match(value):
            return "invalid"
        if p.pattern and not re.fullmatch(p.pattern.strip("^$"), value):
            return "invalid"
        if p.enum and value not in p.enum:
            return "invalid"
    return None


def create_app(settings: SandboxSettings | None = None) -> SandboxApp:
    """ASGI factory (`uvicorn --factory sandbox.app:create_app`); reads KOPA_SANDBOX__* when no settings given."""
    return SandboxApp(settings or Settings().sandbox)
