"""The sandbox in this process: settings that point every real host at it, and an ASGI transport for httpx.

Used by `kopa demo`, `kopa verify --sandbox`, `kopa synth --sandbox`, tests and perf scripts; never by the engines.
"""

from __future__ import annotations

import os

import httpx

from core.clock import WORLD_NOW_HEADER, world_now
from core.settings import Settings
from sandbox.app import SandboxApp
from sandbox.catalog import REAL_HOSTS
from sandbox.clock import DEFAULT_NOW
from sandbox.keys import DEMO_KEY

LOCAL_HOST = "sandbox.local"


def sandbox_mode(settings: Settings) -> tuple[Settings, httpx.AsyncBaseTransport]:
    """Settings and an in-process transport that point every real host at an in-process sandbox."""
    os.environ.setdefault(settings.verify.key_secret, DEMO_KEY)
    overrides = ",".join(f"{h}=http://{LOCAL_HOST}" for h in REAL_HOSTS)
    settings = settings.model_copy(
        update={
            "upstream_overrides": overrides,
            "allowed_hosts": [*settings.allowed_hosts, LOCAL_HOST],
            "local_upstreams": [*settings.local_upstreams, LOCAL_HOST],
            "verify": settings.verify.model_copy(update={"now": settings.verify.now or DEFAULT_NOW.isoformat()}),
            # the world answers any instant of its last year: trajectories span days, hours and seasons
            "batches": settings.batches.model_copy(update={"clock_days": settings.batches.clock_days or 365}),
        }
    )
    return settings, WorldClockTransport(httpx.ASGITransport(app=SandboxApp(settings.sandbox)))  # type: ignore[arg-type]


class WorldClockTransport(httpx.AsyncBaseTransport):
    """The in-process sandbox asked at the conversation's instant (`core.clock.world_at`), so a synthesis run's
    trajectories can span days and hours against one world."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        instant = world_now()
        if instant is not None:
            request.headers[WORLD_NOW_HEADER] = instant.isoformat()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
