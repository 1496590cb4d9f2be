"""A sandbox of its own on a loopback socket that counts every request it serves, by path: what reached "the
upstream", whichever process, run or batch sent it (tests of quotas and call budgets)."""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from core.settings import BatchSettings, SandboxSettings, Settings
from graph.embedded_store import EmbeddedStore
from graph.models import RegistrationMeta
from graph.registry import register
from sandbox.app import SandboxApp
from sandbox.catalog import REAL_HOSTS, shipped_documents
from sandbox.clock import DEFAULT_NOW
from sandbox.keys import DEMO_KEY
from tests.support.helpers import served

#: The eight services the batch tests register (tests/test_api_batches.py), enough for chains and fan-ins.
SERVICES = (
    "StanReginCd",
    "RTMSDataSvcAptTrade",
    "RTMSDataSvcAptTradeDev",
    "BldRgstHubService",
    "AptListService4",
    "AptBasisInfoServiceV5",
    "VilageFcstInfoService_2.0",
    "juso-addrlink",
)


class Counting:
    """ASGI middleware: counts each HTTP request by path, then serves it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.paths: Counter[str] = Counter()
        self._lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            with self._lock:
                self.paths[scope["path"]] += 1
        await self.app(scope, receive, send)

    def calls(self, fragment: str = "") -> int:
        """Requests whose path contains `fragment` (all of them for "")."""
        with self._lock:
            return sum(n for path, n in self.paths.items() if fragment in path and not path.startswith("/healthz"))


class Upstream:
    def __init__(self, url: str, counting: Counting) -> None:
        self.url, self.counting = url, counting

    def calls(self, fragment: str = "") -> int:
        return self.counting.calls(fragment)


@contextmanager
def counting_sandbox() -> Iterator[Upstream]:
    """A fresh sandbox (default seed) behind uvicorn in a thread, counting requests."""
    counting = Counting(SandboxApp(SandboxSettings()))
    with served(counting, lifespan="off") as url:
        yield Upstream(url, counting)


def upstream_settings(url: str, **batches: Any) -> Settings:
    """Settings for the embedded store (no Redis, whatever the environment says) with every real host pointed at
    `url`; `batches` replaces BatchSettings fields."""
    os.environ.setdefault("KOPA_SERVICE_KEY", DEMO_KEY)
    settings = Settings(
        bootstrap_token=SecretStr("boot"),
        allowed_hosts=[*REAL_HOSTS, "127.0.0.1"],
        redis_url=None,
        store="embedded",
        upstream_overrides=",".join(f"{h}={url}" for h in REAL_HOSTS),
        batches=BatchSettings(max_count=300, max_concurrent=2, **batches),
    )
    return settings.model_copy(update={"verify": settings.verify.model_copy(update={"now": DEFAULT_NOW.isoformat()})})


def registered_store(
    path: Path, settings: Settings, quotas: dict[str, int] | None = None, services: tuple[str, ...] = SERVICES
) -> EmbeddedStore:
    """An embedded store with `services` registered (nothing verified); `quotas`: daily quotas by service."""
    store = EmbeddedStore(path)
    for name in services:
        quota = (quotas or {}).get(name)
        register(store, settings, shipped_documents()[name], RegistrationMeta(daily_quota=quota) if quota else None)
    return store
