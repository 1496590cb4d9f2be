"""Made-up services for rule and portal tests: a document's query parameters, one verification run over a document
registered from a dict and served by an in-process app (tests/unit/graph/test_link_rules.py,
tests/unit/verification/test_coinciding_systems.py), settings for a service on loopback and the check that a key
leaks nowhere (tests/test_portal_*.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from core.settings import Settings
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import LinkRecord, RegistrationMeta
from graph.registry import register
from graph.store import all_links
from verification.runs import execute_run, new_run


def local_settings(upstream: str, path: Path) -> Settings:
    """Settings for a made-up service on loopback: an embedded store at `path`, the service's address allowed."""
    return Settings(embedded_path=path, allowed_hosts=["127.0.0.1"], local_upstreams=[upstream])


def assert_no_secret(label: str, data: str | bytes, canary: str) -> None:
    """`canary` (a key) appears nowhere in `data`, whole or as a 34-character slice of its middle."""
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    for needle in (canary, canary[6:40]):
        assert needle not in text, f"the key in {label}: ...{text[max(0, text.find(needle) - 100) :][:200]}"


def query_param(name: str, description: str, *, required: bool = False, example: str | None = None) -> dict[str, Any]:
    """A string query parameter of an OpenAPI 3 document."""
    out: dict[str, Any] = {"name": name, "in": "query", "required": required, "description": description}
    out["schema"] = {"type": "string"}
    if example is not None:
        out["example"] = example
    return out


def response_schema(props: dict[str, str]) -> dict[str, Any]:
    """The responses of an operation answering `{"result": {"data": [rows]}}`, each row of string fields `props`
    (name -> description)."""
    row = {"type": "object", "properties": {k: {"type": "string", "description": d} for k, d in props.items()}}
    body = {
        "type": "object",
        "properties": {"result": {"type": "object", "properties": {"data": {"type": "array", "items": row}}}},
    }
    return {"200": {"description": "ok", "content": {"application/json": {"schema": body}}}}


def verify_made_up(
    tmp_path: Path,
    host: str,
    document: dict[str, Any],
    app: Any,
    before: Callable[[EmbeddedStore], None] | None = None,
) -> list[LinkRecord]:
    """Register `document` (its servers on `host`) into a fresh embedded store, let `before` add to the store (the
    candidates a test wants decided), run one verification against `app` in process, and return every link."""
    f = tmp_path / "g.sqlite3"
    local = host.split(".", 1)[0] + ".local"
    settings = Settings(
        store="embedded", embedded_path=f, upstream_overrides=f"{host}=http://{local}", allowed_hosts=[host, local]
    )
    store = EmbeddedStore(f)
    try:
        register(store, settings, document, RegistrationMeta())
        if before is not None:
            before(store)
        run = asyncio.run(
            execute_run(store, settings, new_run(), transport=httpx.ASGITransport(app=app), economy=MemoryEconomy())
        )
        assert run.status == "completed", run.message
        return all_links(store)
    finally:
        store.close()
