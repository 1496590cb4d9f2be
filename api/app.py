"""The KOPA EDGE REST service. `create_app()` builds it; clients (store, Redis) are created once, in the lifespan."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import redis
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

from api.routes import apis, batches, browser, tools, verification
from core.errors import KopaError, StoreUnavailable
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
        self.requests = Counter("kopa_http_requests_total", "HTTP requests", ["method", "route", "status"],
                                registry=self.registry)
        self.latency = Histogram("kopa_http_request_seconds", "HTTP request latency", ["route"], registry=self.registry)


def create_app(settings: Settings | None = None, store: GraphStore | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own_store = store is None
        st = store or open_store(settings)
        st.init_schema()
        app.state.kopa = State(settings, st)
        if settings.redis_url:
            app.state.kopa.redis = redis.Redis.from_url(settings.redis_url, socket_timeout=2)
            app.state.kopa.celery = make_celery(settings)
        try:
            yield
        finally:
            for task in list(app.state.kopa.background):
                task.cancel()
            if app.state.kopa.redis is not None:
                app.state.kopa.redis.close()
            if app.state.kopa.celery is not None:
                app.state.kopa.celery.close()
            if own_store:
                st.close()

    app = FastAPI(title="KOPA EDGE", version="0.1.0", description=DESCRIPTION, lifespan=lifespan,
                  openapi_tags=[{"name": "apis", "description": "Register and manage API documents"},
                                {"name": "tools", "description": "Tools derived from registered operations"},
                                {"name": "verification", "description": "Verification runs, links and evidence, reports"},
                                {"name": "trajectories", "description": "Batches of executed trajectories for teams"},
                                {"name": "operations", "description": "Health, readiness and metrics"}])

    @app.exception_handler(KopaError)
    async def kopa_error(_: Request, exc: KopaError) -> JSONResponse:
        return JSONResponse(exc.to_dict(), status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        locations = [{"pointer": "/" + "/".join(str(p) for p in e["loc"]), "message": e["msg"]} for e in exc.errors()]
        return JSONResponse({"error": "invalid_input", "detail": "the request is invalid; see locations",
                             "locations": locations}, status_code=422)

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return JSONResponse({"error": "internal_error", "detail": "unexpected server error; see the server log"},
                            status_code=500)

    @app.middleware("http")
    async def metrics(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        start = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        state: State | None = getattr(request.app.state, "kopa", None)
        if state is not None:
            state.requests.labels(request.method, path, str(response.status_code)).inc()
            state.latency.labels(path).observe(time.perf_counter() - start)
        log.info("%s %s -> %s", request.method, path, response.status_code,
                 extra={"method": request.method, "path": path, "status": response.status_code,
                        "duration_ms": round((time.perf_counter() - start) * 1000, 1)})
        return response

    app.include_router(apis.router)
    app.include_router(batches.router)
    app.include_router(tools.router)
    app.include_router(verification.router)
    app.include_router(browser.router)

    @app.get("/healthz", tags=["operations"], summary="Liveness")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["operations"], summary="Readiness: the graph store and Redis (when configured)")
    def readyz(request: Request) -> JSONResponse:
        state: State = request.app.state.kopa
        checks: dict[str, str] = {}
        ok = True
        try:
            state.store.ping()
            checks[state.store.backend] = "ok"
        except (StoreUnavailable, Exception) as exc:
            checks[state.store.backend] = f"unavailable: {exc}"
            ok = False
        if state.redis is not None:
            try:
                state.redis.ping()
                checks["redis"] = "ok"
            except Exception as exc:
                checks["redis"] = f"unavailable: {exc}"
                ok = False
        return JSONResponse({"status": "ready" if ok else "not_ready", "checks": checks}, status_code=200 if ok else 503)

    @app.get("/metrics", tags=["operations"], summary="Prometheus metrics")
    def metrics_endpoint(request: Request) -> Response:
        return Response(generate_latest(request.app.state.kopa.registry), media_type=CONTENT_TYPE_LATEST)

    return app
