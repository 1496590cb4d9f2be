"""`kopa graph init|stats|reset` and `kopa register`: the tool graph store and what goes into it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
import yaml
from pydantic import ValidationError

from cli.common import fail, guarded, one_line, open_configured_store, read_text_document
from core.errors import KopaError, StoreUnavailable
from core.settings import get_settings
from graph.conversions import API_ID as CONVERT_API_ID
from graph.conversions import register_conversions
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import load_document
from graph.openapi_report import understood_line
from graph.registry import register

app = typer.Typer(help="The tool graph store (Neo4j or the embedded file).", no_args_is_help=True)


@app.command("init")
@guarded
def graph_init() -> None:
    """Create constraints and indexes (idempotent) in the configured store."""
    store = open_configured_store()
    typer.echo(f"schema ready in the {store.backend} store")
    store.close()


@app.command("stats")
@guarded
def graph_stats() -> None:
    """Counts of APIs, tools and links by status."""
    store = open_configured_store()
    typer.echo(json.dumps(store.stats(), ensure_ascii=False, indent=1))
    store.close()


@app.command("reset")
@guarded
def graph_reset(yes: Annotated[bool, typer.Option("--yes", help="Confirm deleting everything.")] = False) -> None:
    """Delete every API, tool, link and token from the configured store."""
    if not yes:
        fail("this deletes the whole graph; add --yes to confirm")
    store = open_configured_store()
    store.reset()
    typer.echo(f"{store.backend} store emptied")
    store.close()


@app.command("repair")
def graph_repair() -> None:
    """Rebuild derived relationships (one FEEDS per verified tool pair, one VERIFIED per verified link, no parallel
    structural edges) in a graph written by an older version or damaged by concurrent refreshes. Idempotent."""
    store = open_configured_store()
    try:
        counts = store.repair()
    except KopaError as exc:
        fail(exc.detail)
    finally:
        store.close()
    typer.echo(
        f"FEEDS edges: {counts['feeds_before']} -> {counts['feeds_after']}; VERIFIED mirrors: "
        f"{counts['duplicate_verified_removed']} duplicate and {counts['stray_verified_removed']} stray removed, "
        f"{counts['missing_verified_added']} added; {counts['duplicate_structure_removed']} parallel "
        f"HAS_TOOL/HAS_PARAM/PRODUCES removed ({store.backend} store)"
    )


@app.command("conversions")
@guarded
def graph_conversions() -> None:
    """Register (or update) the built-in coordinate conversion tools (API kopa-convert: WGS84, UTM-K, TM and the
    KMA grid), answered in process with no network call. Idempotent; `kopa demo` and `kopa bench` do it themselves."""
    store = open_configured_store()
    try:
        result = register_conversions(store, get_settings())
    finally:
        store.close()
    changes = {c: sum(1 for t in result.tools if t["change"] == c) for c in ("new", "changed", "unchanged")}
    typer.echo(f"{CONVERT_API_ID}: {changes} tools {', '.join(t['name'] for t in result.tools)}")


def register_cmd(
    documents: Annotated[list[Path], typer.Argument(help="OpenAPI 3 / Swagger 2.0 files (JSON or YAML).")],
    base_url: Annotated[str | None, typer.Option(help="Override the documents' server URL.")] = None,
    secret_name: Annotated[str | None, typer.Option(help="NAME of the environment variable holding the key.")] = None,
    auth_param: Annotated[str | None, typer.Option(help="Query parameter carrying the key (e.g. serviceKey).")] = None,
    api_id: Annotated[
        str | None,
        typer.Option(
            help="Stable API id (one document only); an upstream override can name it (KOPA_UPSTREAM_OVERRIDES=ID=URL)."
        ),
    ] = None,
) -> None:
    """Register API documents straight into the configured store (the REST API does the same over HTTP).
    A file that cannot be registered gets one error line; the others are still registered (exit 1 if any failed)."""
    settings = get_settings()
    try:
        if api_id and len(documents) > 1:
            fail("--api-id names one API: give one document with it")
        auth = AuthConfig(secret=secret_name, param=auth_param) if secret_name or auth_param else None
        meta = RegistrationMeta(api_id=api_id, base_url=base_url, auth=auth)
    except ValidationError as exc:
        fail("; ".join(f"--{'-'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()))
    store = open_configured_store(settings)
    failed = 0
    try:
        for path in documents:
            try:
                result = register(store, settings, load_document(read_text_document(path)), meta)
            except StoreUnavailable as exc:
                fail(exc.detail)  # every further file would fail the same way
            except KopaError as exc:
                failed += 1
                where = "; ".join(f"{loc['pointer']}: {loc['message']}" for loc in getattr(exc, "locations", [])[:5])
                typer.secho(
                    f"{path}: {one_line(exc.detail)}{' (' + one_line(where) + ')' if where else ''}",
                    fg=typer.colors.RED,
                    err=True,
                )
                continue
            except RecursionError:
                failed += 1
                typer.secho(f"{path}: the document is nested too deeply", fg=typer.colors.RED, err=True)
                continue
            except (ValueError, TypeError, MemoryError, yaml.YAMLError) as exc:
                failed += 1  # unreadable text, numbers past the parser's limit, ...
                typer.secho(f"{path}: {one_line(str(exc)) or type(exc).__name__}", fg=typer.colors.RED, err=True)
                continue
            except Exception as exc:  # one bad file never stops the others, and never prints a traceback
                failed += 1
                typer.secho(
                    f"{path}: could not be registered ({type(exc).__name__}: {one_line(str(exc), 200)})",
                    fg=typer.colors.RED,
                    err=True,
                )
                continue
            changes = {c: sum(1 for t in result.tools if t["change"] == c) for c in ("new", "changed", "unchanged")}
            typer.echo(
                f"{path.name}: {result.api.id} {changes} retired={len(result.retired)} flagged={result.flagged_links}"
            )
            for u in result.understood:
                typer.echo("  " + understood_line(u))
    finally:
        store.close()
    if failed:
        typer.secho(f"{failed} of {len(documents)} documents not registered", fg=typer.colors.RED, err=True)
        raise typer.Exit(1)
