"""What every command group shares: one-line errors and the configured store."""

from __future__ import annotations

from typing import NoReturn

import typer

from core.errors import StoreUnavailable
from core.settings import Settings, get_settings
from graph.store import GraphStore, open_store


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one red `error:` line and exit non-zero."""
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def open_configured_store(settings: Settings | None = None) -> GraphStore:
    settings = settings or get_settings()
    try:
        store = open_store(settings)
        store.init_schema()
    except StoreUnavailable as exc:
        fail(f"{exc}\n  start Neo4j with `bash scripts/services.sh start`, or use KOPA_STORE=embedded")
    return store
