"""The KOPA EDGE REST service. `create_app()` builds it; clients (store, Redis) are created once, in the lifespan."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import redis
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.bodylimit import BodyLimit
from api.routes import apis, batches, browser, tokens, tools, verification
from core.egress import hide_addresses
from core.errors import KopaError, invalid_input
from core.json_types import JsonObject
from core.logging import install_redaction
from core.settings import Settings, get_settings
from graph.store import GraphStore, open_store
from workers.celery_app import make_celery

log = logging.getLogger("kopa.api")

DESCRIPTION = """
Register public-institution APIs (OpenAPI 3 / Swagger 2.0), browse the tools derived from them, and (next) the
links between them that were verified by execution.

Authenticate with `Authorization: Bearer <token>`; mint tokens with `kopa token create --role admin|reader`.
Errors always look like `{"error": "...", "detail": "..."}`.
"""


class State:
    def __init__(self, settings: Settings, store: GraphStore) -> None:
        self.settings = settings
        self.store = store
        self.redis: Any = None
        self.celery: Any = None  # one Celery client per process (created in the lifespan when Redis is configured)
        self.background: set[asyncio.Task[Any]] = set()
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "kopa_http_requests_total", "HTTP requests", ["method", "route", "status"], registry=self.registry
        )
        self.latency = Histogram("kopa_http_request_seconds", "HTTP request latency", ["route"], registry=self.registry)
        self.errors = Counter(
            "kopa_http_server_errors_total",
            "Responses with a 5xx status (unhandled errors too)",
            ["route"],
            registry=self.registry,
        )
        self.ready_redis: Any = None  # a client with short timeouts, for /readyz only
        self.pings: dict[str, asyncio.Future[Any]] = {}  # one readiness probe in flight per dependency


async def _probe(state: State, name: str, fn: Callable[[], Any], timeout_s: float) -> str:
    """Run a blocking check in a thread, answer within `timeout_s`; a check still hanging from an earlier probe is
    not started again (no pile-up of threads while a dependency hangs)."""
    pending = state.pings.get(name)
    if pending is None or pending.done():
        pending = asyncio.ensure_future(asyncio.to_thread(fn))
        pending.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved even if nobody waits
        state.pings[name] = pending
    try:
        await asyncio.wait_for(asyncio.shield(pending), timeout_s)
        return "ok"
    except TimeoutError:
        return f"unavailable: no answer within {timeout_s:g} s"
    except Exception as exc:  # the reason without the dependency's address (the log has it)
        log.warning("readiness probe %s failed: %s", name, exc)
        return f"unavailable: {type(exc).__name__}: {hide_addresses(str(exc))[:200]}"


TAGS = [
    {"name": "apis", "description": "Register and manage API documents"},
    {"name": "tools", "description": "Tools derived from registered operations"},
    {"name": "verification", "description": "Verification runs, links and evidence, reports"},
    {"name": "trajectories", "description": "Batches of executed trajectories for teams"},
    {"name": "operations", "description": "Health, readiness and metrics"},
]


def create_app(settings: Settings | None = None, store: GraphStore | None = None) -> FastAPI:
    """The service: clients opened in the lifespan, errors mapped to `{"error", "detail"}`, requests measured,
    bodies bounded, then the routers and the operations endpoints."""
    settings = settings or get_settings()
    install_redaction()
    settings.check_production()  # ProductionRefused, a ConfigurationError
    app = FastAPI(
        title="KOPA EDGE",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=_lifespan(settings, store),
        openapi_tags=TAGS,
    )
    _map_errors(app)
    app.middleware("http")(_measure)
    app.add_middleware(BodyLimit, default=settings.max_body_bytes, per_prefix={"/v1/apis": settings.max_document_bytes})
    _add_routers(app)
    _add_operations(app)
    app.openapi = _openapi(app, settings)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI, settings: Settings) -> Callable[[], JsonObject]:
    """FastAPI's document (built once, then cached), with the bounds that come from the settings written in."""
    build = app.openapi

    def openapi() -> JsonObject:
        schema = build()
        batches.state_bounds(schema, settings)
        return schema

    return openapi


# --- lifespan: the clients of one process -------------------------------------------------------------------


Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def _lifespan(settings: Settings, store: GraphStore | None) -> Lifespan:
    """Open the store (unless one was given) and the Redis and Celery clients at startup; close them at
    shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own_store = store is None
        st = store or open_store(settings)
        st.init_schema()
        app.state.kopa = _open_clients(State(settings, st))
        try:
            yield
        finally:
            await _close_clients(app.state.kopa)
            if own_store:
                st.close()

    return lifespan


def _open_clients(state: State) -> State:
    settings = state.settings
    if settings.redis_url:
        state.redis = redis.Redis.from_url(settings.redis_url, socket_timeout=2, socket_connect_timeout=2)
        short = min(settings.ready_timeout_s, 2.0)
        state.ready_redis = redis.Redis.from_url(
            settings.redis_url, socket_timeout=short, socket_connect_timeout=short, retry_on_timeout=False
        )
        state.celery = make_celery(settings)
    return state


async def _close_clients(state: State) -> None:
    pending = list(state.background)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)  # cancelled work records itself as failed
    for client in (state.redis, state.ready_redis):
        if client is not None:
            client.close()
    if state.celery is not None:
        state.celery.close()


# --- error mapping: every error is {"error": ..., "detail": ...} --------------------------------------------


def _map_errors(app: FastAPI) -> None:
    app.exception_handler(KopaError)(_kopa_error)
    app.exception_handler(RequestValidationError)(_validation_error)
    app.exception_handler(StarletteHTTPException)(_http_error)
    app.exception_handler(Exception)(_unexpected)


async def _kopa_error(_: Request, exc: KopaError) -> JSONResponse:
    retry = getattr(exc, "retry_after_s", None)  # StoreBusy: busy, not away
    return JSONResponse(
        exc.to_dict(), status_code=exc.status_code, headers={"Retry-After": str(retry)} if retry else None
    )


async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
    # the words every entry uses for a record that fails validation (core.errors.invalid_input): a bad batch
    # request reads the same here as from `kopa synth`
    problem = invalid_input(exc.errors())
    return JSONResponse(problem.to_dict(), status_code=problem.status_code)


async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    names = {404: "not_found", 405: "method_not_allowed", 400: "bad_request", 413: "payload_too_large"}
    return JSONResponse(
        {"error": names.get(exc.status_code, "http_error"), "detail": str(exc.detail)},
        status_code=exc.status_code,
        headers=getattr(exc, "headers", None),
    )


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error")
    return JSONResponse(
        {"error": "internal_error", "detail": "unexpected server error; see the server log"}, status_code=500
    )


# --- measuring: counts, latency and 5xx per route, one log line per request ---------------------------------


async def _measure(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    start = time.perf_counter()
    state: State | None = getattr(request.app.state, "kopa", None)
    try:
        response = await call_next(request)
    except Exception:
        # unhandled: rendered as 500 by the outermost handler; counted here, so 500s show in /metrics
        path = getattr(request.scope.get("route"), "path", "unmatched")
        if state is not None:
            state.requests.labels(request.method, path, "500").inc()
            state.errors.labels(path).inc()
            state.latency.labels(path).observe(time.perf_counter() - start)
        raise
    route = request.scope.get("route")
    path = getattr(route, "path", "unmatched")
    if state is not None:
        state.requests.labels(request.method, path, str(response.status_code)).inc()
        state.latency.labels(path).observe(time.perf_counter() - start)
        if response.status_code >= 500:
            state.errors.labels(path).inc()
    log.info(
        "%s %s -> %s",
        request.method,
        path,
        response.status_code,
        extra={
            "method": request.method,
            "path": path,
            "status": response.status_code,
            "duration_ms": round((time.perf_counter() - start) * 1000, 1),
        },
    )
    return response


# --- routers and the operations endpoints -------------------------------------------------------------------


def _add_routers(app: FastAPI) -> None:
    for module in (apis, batches, tools, verification, tokens, browser):
        app.include_router(module.router)


def _add_operations(app: FastAPI) -> None:
    app.get("/healthz", tags=["operations"], summary="Liveness")(healthz)
    app.get(
        "/readyz",
        tags=["operations"],
        summary="Readiness: the graph store and Redis (when configured)",
        description="200 when every dependency answers; 503 within about a second when one does not.",
    )(readyz)
    app.get(
        "/metrics",
        tags=["operations"],
        summary="Prometheus metrics",
        responses={
            200: {
                "content": {"text/plain": {"schema": {"type": "string"}}},
                "description": "Prometheus text exposition format",
            }
        },
    )(metrics_endpoint)


def healthz() -> dict[str, str]:
    return {"status": "ok"}


async def readyz(request: Request) -> JSONResponse:
    state: State = request.app.state.kopa
    timeout = state.settings.ready_timeout_s
    names = [state.store.backend]
    probes = [_probe(state, state.store.backend, state.store.ping, timeout)]
    if state.ready_redis is not None:
        names.append("redis")
        probes.append(_probe(state, "redis", state.ready_redis.ping, timeout))
    results = await asyncio.gather(*probes)
    checks = dict(zip(names, results, strict=True))
    ok = all(v == "ok" for v in checks.values())
    return JSONResponse({"status": "ready" if ok else "not_ready", "checks": checks}, status_code=200 if ok else 503)


def metrics_endpoint(request: Request) -> Response:
    return Response(generate_latest(request.app.state.kopa.registry), media_type=CONTENT_TYPE_LATEST)
