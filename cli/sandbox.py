"""`kopa sandbox serve|keys|catalog`: the local sandbox of Korean public APIs."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Annotated, Any

import typer
import uvicorn

from cli.common import fail
from cli.serve import production_guard
from core.settings import get_settings
from sandbox.catalog import shipped_documents, shipped_swagger2, write_catalog
from sandbox.faults import parse_profile
from sandbox.ground_truth import load_ground_truth
from sandbox.keys import DEMO_KEY, KeyRegistry
from sandbox.world import get_world

app = typer.Typer(
    help="The local sandbox of Korean public APIs (the 'live' endpoints for tests and demos).", no_args_is_help=True
)


@app.command("serve")
def sandbox_serve(
    host: Annotated[str, typer.Option(help="Interface to listen on (loopback by default).")] = "",
    port: Annotated[int, typer.Option(help="TCP port.")] = 0,
    seed: Annotated[int | None, typer.Option(help="World seed: the same seed gives the same country.")] = None,
    faults: Annotated[
        str | None,
        typer.Option(help="Fault profile: none, latency50, flaky, drift, chaos, a JSON object, or NAME,key=value."),
    ] = None,
    now: Annotated[str | None, typer.Option(help="Sandbox clock: ISO instant (KST if naive) or 'live'.")] = None,
    gateway_mode: Annotated[str | None, typer.Option(help="'2026' (403 + XML/JSON) or 'classic' (200 + XML).")] = None,
    state_file: Annotated[Path | None, typer.Option(help="Keep quota counters here across restarts.")] = None,
    workers: Annotated[int, typer.Option(help="Server processes (quotas are then per process).")] = 1,
) -> None:
    """Serve the sandbox over HTTP, e.g. [bold]kopa sandbox serve --port 8090 --faults flaky[/bold].

    Try it:

    K=$(kopa sandbox keys --demo)

    curl "http://127.0.0.1:8090/1360000/VilageFcstInfoService_2.0/getVilageFcst?serviceKey=$K&dataType=JSON\
&base_date=20261015&base_time=1100&nx=60&ny=127"
    """
    production_guard(sandbox=True)  # the sandbox's admin token is a secret in production too
    if not 0 <= port <= 65535:
        fail(
            f"--port must be between 1 and 65535 (got {port})"
            if abs(port) < 10**12
            else "--port must be between 1 and 65535"
        )
    if workers < 1 or workers > 64:
        fail("--workers must be between 1 and 64")
    s = get_settings().sandbox
    updates: dict[str, Any] = {}
    for key, value in (
        ("host", host),
        ("port", port),
        ("seed", seed),
        ("faults", faults),
        ("now", now),
        ("gateway_mode", gateway_mode),
        ("state_file", state_file),
    ):
        if value not in (None, "", 0):
            updates[key] = value
    s = s.model_copy(update=updates)
    if not 1 <= s.port <= 65535:
        fail(f"the sandbox port must be between 1 and 65535 (KOPA_SANDBOX__PORT={s.port})")
    try:
        parse_profile(s.faults)
    except ValueError as exc:
        fail(str(exc))
    try:  # refuse a port that cannot be bound now, with one line, instead of a server that exits or hangs
        with socket.socket(socket.AF_INET6 if ":" in s.host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((s.host, s.port))
    except (OSError, OverflowError) as exc:
        fail(f"cannot listen on {s.host}:{s.port}: {getattr(exc, 'strerror', None) or exc}")
    for key, value in s.model_dump(mode="json").items():  # pass the resolved settings to worker processes
        if value is not None:
            os.environ[f"KOPA_SANDBOX__{key.upper()}"] = str(value)
    os.environ["KOPA_SANDBOX__ADMIN_TOKEN"] = s.admin_token.get_secret_value()
    typer.echo(
        f"KOPA sandbox on http://{s.host}:{s.port}  (seed {s.seed}, faults {s.faults}, "
        f"gateway {s.gateway_mode}); catalog at /_catalog",
        err=True,
    )
    uvicorn.run(
        "sandbox.app:create_app",
        factory=True,
        host=s.host,
        port=s.port,
        workers=workers,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )


@app.command("keys")
def sandbox_keys(demo: Annotated[bool, typer.Option(help="Print only the demo key (for scripts).")] = False) -> None:
    """Print the sandbox service keys (demo keys; more come from a keys file)."""
    if demo:
        typer.echo(DEMO_KEY)
        return
    for info in KeyRegistry.default(get_settings().sandbox.keys_file).keys.values():
        services = "all services" if info.services is None else ", ".join(sorted(info.services))
        typer.echo(f"{info.name:20} {info.key}  ({services})")


@app.command("catalog")
def sandbox_catalog(
    write: Annotated[bool, typer.Option(help="Regenerate the shipped catalog files from the declarations.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """Count (or regenerate) the OpenAPI catalog and the ground-truth links."""
    if write:
        for path in write_catalog():
            typer.echo(f"wrote {path}", err=True)
    docs, sw2 = shipped_documents(), shipped_swagger2()
    gt = load_ground_truth()
    counts = {
        "openapi_documents": len(docs),
        "operations": sum(len(d["paths"]) for d in docs.values()),
        "providers": len({d["info"]["x-provider-service"] for d in docs.values()}),
        "agencies": len({d["info"]["x-provider"] for d in docs.values()}),
        "swagger2_documents": len(sw2),
        "true_links": sum(1 for link in gt if link["kind"] == "true"),
        "decoy_links": sum(1 for link in gt if link["kind"] == "decoy"),
    }
    w = get_world(get_settings().sandbox.seed)
    counts.update(
        {
            "world_regions": len(w.regions),
            "world_addresses": len(w.buildings),
            "world_complexes": len(w.complexes),
            "world_air_stations": len(w.stations),
            "world_bus_stops": len(w.bus_stops),
            "world_bus_routes": len(w.bus_routes),
            "world_tour_sites": len(w.tour_sites),
            "world_facilities": len(w.facilities),
            "world_businesses": len(w.businesses),
            "world_drugs": len(w.drugs),
        }
    )
    if as_json:
        typer.echo(json.dumps(counts))
        return
    for key, value in counts.items():
        typer.echo(f"{key:20} {value}")
