"""`kopa serve`, `kopa worker`, `kopa beat`: the long-running processes (one image, chosen by the command)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
import uvicorn

from api.app import create_app
from cli.common import fail
from core.errors import ConfigurationError
from core.logging import setup_logging
from core.settings import get_settings
from workers.celery_app import QUEUES, celery_app


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
) -> None:
    """Run the REST API (OpenAPI docs at /docs)."""
    production_guard()
    settings = get_settings()
    setup_logging(settings.log_level, settings.log_json)
    typer.echo(f"KOPA EDGE API on http://{host}:{port}  (docs: /docs, store: {settings.store})", err=True)
    if settings.store == "neo4j":
        # what a person's browser can reach (a wildcard listen address is not a URL); Neo4j allow-lists the host
        base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::', '') else host}:{port}/browser"
        typer.echo(
            f"Neo4j Browser: {settings.neo4j.browser_url}  then run  :style {base}/kopa.grass  and  "
            f":play {base}/guide.html  (saved queries: drop {base}/favorites.zip onto it)",
            err=True,
        )
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")


def production_guard(*, sandbox: bool = False) -> None:
    """With KOPA_ENV=production, default tokens and secrets stop the process with one line and exit 2 (every
    long-running process calls it first; `sandbox`: the process serves the sandbox, its admin token counts)."""
    try:
        get_settings().check_production(sandbox=sandbox)
    except ConfigurationError as exc:  # ProductionRefused, and settings that do not validate
        fail(exc.detail)


def _need_redis() -> None:
    production_guard()
    if not get_settings().redis_url:
        fail("Celery needs a broker: set KOPA_REDIS_URL (e.g. redis://127.0.0.1:16379/0)")


def worker(
    queues: Annotated[
        str, typer.Option(help=f"Comma-separated queues to consume: {', '.join(QUEUES)} (default all).")
    ] = "",
    concurrency: Annotated[int, typer.Option(help="Worker processes (each paces upstream APIs through Redis).")] = 2,
    pool: Annotated[str, typer.Option(help="Celery pool: prefork, solo or threads.")] = "prefork",
    loglevel: Annotated[str, typer.Option(help="Log level.")] = "INFO",
) -> None:
    """Run a Celery worker: verification rounds and batch synthesis,
    e.g. [bold]kopa worker --queues verification[/bold].

    Workers share the graph store and Redis (rate limits, quotas, cache), so any number can run side by side."""
    _need_redis()
    chosen = [q.strip() for q in queues.split(",") if q.strip()] or list(QUEUES)
    unknown = sorted(set(chosen) - set(QUEUES))
    if unknown:
        fail(f"unknown queue(s) {', '.join(unknown)}; choose among {', '.join(QUEUES)}")
    if concurrency < 1:
        fail("--concurrency must be at least 1")
    celery_app.worker_main(
        [
            "worker",
            "--loglevel",
            loglevel,
            "--concurrency",
            str(concurrency),
            "--pool",
            pool,
            "--queues",
            ",".join(chosen),
        ]
    )


def beat(
    schedule_file: Annotated[Path, typer.Option(help="Where beat keeps its schedule state (writable).")] = Path(
        "/tmp/kopa-celerybeat-schedule"
    ),
    loglevel: Annotated[str, typer.Option(help="Log level.")] = "INFO",
) -> None:
    """Run the scheduler that re-verifies stale links (exactly one per deployment)."""
    _need_redis()
    celery_app.start(["beat", "--loglevel", loglevel, "--schedule", str(schedule_file)])
