"""`kopa graph init|stats|reset` and `kopa register`: the tool graph store and what goes into it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from cli.common import fail, open_configured_store
from core.errors import KopaError
from core.settings import get_settings
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import load_document
from graph.registry import register

app = typer.Typer(help="The tool graph store (Neo4j or the embedded file).", no_args_is_help=True)


@app.command("init")
def graph_init() -> None:
    """Create constraints and indexes (idempotent) in the configured store."""
    store = open_configured_store()
    typer.echo(f"schema ready in the {store.backend} store")
    store.close()


@app.command("stats")
def graph_stats() -> None:
    """Counts of APIs, tools and links by status."""
    store = open_configured_store()
    typer.echo(json.dumps(store.stats(), ensure_ascii=False, indent=1))
    store.close()


@app.command("reset")
def graph_reset(yes: Annotated[bool, typer.Option("--yes", help="Confirm deleting everything.")] = False) -> None:
    """Delete every API, tool, link and token from the configured store."""
    if not yes:
        fail("this deletes the whole graph; add --yes to confirm")
    store = open_configured_store()
    store.reset()
    typer.echo(f"{store.backend} store emptied")
    store.close()


def register_cmd(
    documents: Annotated[list[Path], typer.Argument(help="OpenAPI 3 / Swagger 2.0 files (JSON or YAML).")],
    base_url: Annotated[str | None, typer.Option(help="Override the documents' server URL.")] = None,
    secret_name: Annotated[str | None, typer.Option(help="NAME of the environment variable holding the key.")] = None,
) -> None:
    """Register API documents straight into the configured store (the REST API does the same over HTTP)."""
    settings = get_settings()
    store = open_configured_store(settings)
    meta = RegistrationMeta(base_url=base_url, auth=AuthConfig(secret=secret_name) if secret_name else None)
    failed = 0
    for path in documents:
        try:
            result = register(store, settings, load_document(path.read_bytes()), meta)
        except (KopaError, OSError) as exc:
            failed += 1
            where = "; ".join(f"{loc['pointer']}: {loc['message']}" for loc in getattr(exc, "locations", [])[:5])
            typer.secho(f"{path}: {exc} {where}", fg=typer.colors.RED, err=True)
            continue
        changes = {c: sum(1 for t in result.tools if t["change"] == c) for c in ("new", "changed", "unchanged")}
        typer.echo(f"{path.name}: {result.api.id} {changes} retired={len(result.retired)} flagged={result.flagged_links}")
    store.close()
    if failed:
        raise typer.Exit(1)
