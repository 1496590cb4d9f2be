"""`kopa`: the command line of KOPA EDGE.

Every command reads the one settings object (environment variables `KOPA_*`); options override it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from core.settings import Settings, get_settings

app = typer.Typer(
    help="KOPA EDGE: register public APIs, verify tool links by execution, synthesise trajectories.",
    no_args_is_help=True, rich_markup_mode="rich", pretty_exceptions_enable=False,
)
sandbox_app = typer.Typer(help="The local sandbox of Korean public APIs (the 'live' endpoints for tests and demos).",
                          no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")
graph_app = typer.Typer(help="The tool graph store (Neo4j or the embedded file).", no_args_is_help=True)
app.add_typer(graph_app, name="graph")
token_app = typer.Typer(help="Bearer tokens for the REST API.", no_args_is_help=True)
app.add_typer(token_app, name="token")


def _fail(message: str, code: int = 2) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


@sandbox_app.command("serve")
def sandbox_serve(
    host: Annotated[str, typer.Option(help="Interface to listen on (loopback by default).")] = "",
    port: Annotated[int, typer.Option(help="TCP port.")] = 0,
    seed: Annotated[int | None, typer.Option(help="World seed: the same seed gives the same country.")] = None,
    faults: Annotated[str | None, typer.Option(
        help="Fault profile: none, latency50, flaky, drift, chaos, a JSON object, or NAME,key=value.")] = None,
    now: Annotated[str | None, typer.Option(help="Sandbox clock: ISO instant (KST if naive) or 'live'.")] = None,
    gateway_mode: Annotated[str | None, typer.Option(help="'2026' (403 + XML/JSON) or 'classic' (200 + XML).")] = None,
    state_file: Annotated[Path | None, typer.Option(help="Keep quota counters here across restarts.")] = None,
    workers: Annotated[int, typer.Option(help="Server processes (quotas are then per process).")] = 1,
) -> None:
    """Serve the sandbox over HTTP, e.g. [bold]kopa sandbox serve --port 8090 --faults flaky[/bold].

    Try it: curl "http://127.0.0.1:8090/1360000/VilageFcstInfoService_2.0/getVilageFcst?serviceKey=$(kopa sandbox keys --demo)&dataType=JSON&base_date=20261015&base_time=1100&nx=60&ny=127"
    """
    import os

    import uvicorn

    from sandbox.faults import parse_profile

    s = get_settings().sandbox
    updates: dict[str, Any] = {}
    for key, value in (("host", host), ("port", port), ("seed", seed), ("faults", faults), ("now", now),
                       ("gateway_mode", gateway_mode), ("state_file", state_file)):
        if value not in (None, "", 0):
            updates[key] = value
    s = s.model_copy(update=updates)
    try:
        parse_profile(s.faults)
    except ValueError as exc:
        _fail(str(exc))
    for key, value in s.model_dump(mode="json").items():  # pass the resolved settings to worker processes
        if value is not None:
            os.environ[f"KOPA_SANDBOX__{key.upper()}"] = str(value)
    os.environ["KOPA_SANDBOX__ADMIN_TOKEN"] = s.admin_token.get_secret_value()
    typer.echo(f"KOPA sandbox on http://{s.host}:{s.port}  (seed {s.seed}, faults {s.faults}, "
               f"gateway {s.gateway_mode}); catalog at /_catalog", err=True)
    uvicorn.run("sandbox.app:create_app", factory=True, host=s.host, port=s.port, workers=workers,
                log_level="warning", access_log=False, lifespan="on")


@sandbox_app.command("keys")
def sandbox_keys(demo: Annotated[bool, typer.Option(help="Print only the demo key (for scripts).")] = False) -> None:
    """Print the sandbox service keys (demo keys; more come from a keys file)."""
    from sandbox.keys import DEMO_KEY, KeyRegistry

    if demo:
        typer.echo(DEMO_KEY)
        return
    for info in KeyRegistry.default(get_settings().sandbox.keys_file).keys.values():
        services = "all services" if info.services is None else ", ".join(sorted(info.services))
        typer.echo(f"{info.name:20} {info.key}  ({services})")


@sandbox_app.command("catalog")
def sandbox_catalog(
    write: Annotated[bool, typer.Option(help="Regenerate the shipped catalog files from the declarations.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """Count (or regenerate) the OpenAPI catalog and the ground-truth links."""
    from sandbox.catalog import shipped_documents, shipped_swagger2, write_catalog
    from sandbox.ground_truth import load_ground_truth

    if write:
        for path in write_catalog():
            typer.echo(f"wrote {path}", err=True)
    docs, sw2 = shipped_documents(), shipped_swagger2()
    gt = load_ground_truth()
    counts = {
        "openapi_documents": len(docs), "operations": sum(len(d["paths"]) for d in docs.values()),
        "providers": len({d["info"]["x-provider-service"] for d in docs.values()}),
        "agencies": len({d["info"]["x-provider"] for d in docs.values()}), "swagger2_documents": len(sw2),
        "true_links": sum(1 for link in gt if link["kind"] == "true"),
        "decoy_links": sum(1 for link in gt if link["kind"] == "decoy"),
    }
    from sandbox.world import get_world

    w = get_world(get_settings().sandbox.seed)
    counts.update({
        "world_regions": len(w.regions), "world_addresses": len(w.buildings), "world_complexes": len(w.complexes),
        "world_air_stations": len(w.stations), "world_bus_stops": len(w.bus_stops), "world_bus_routes": len(w.bus_routes),
        "world_tour_sites": len(w.tour_sites), "world_facilities": len(w.facilities),
        "world_businesses": len(w.businesses), "world_drugs": len(w.drugs),
    })
    if as_json:
        typer.echo(json.dumps(counts))
        return
    for key, value in counts.items():
        typer.echo(f"{key:20} {value}")


def _store(settings: Settings | None = None) -> Any:
    from core.errors import StoreUnavailable
    from graph.store import open_store

    settings = settings or get_settings()
    try:
        store = open_store(settings)
        store.init_schema()
    except StoreUnavailable as exc:
        _fail(f"{exc}\n  start Neo4j with `bash scripts/services.sh start`, or use KOPA_STORE=embedded")
    return store


@graph_app.command("init")
def graph_init() -> None:
    """Create constraints and indexes (idempotent) in the configured store."""
    store = _store()
    typer.echo(f"schema ready in the {store.backend} store")
    store.close()


@graph_app.command("stats")
def graph_stats() -> None:
    """Counts of APIs, tools and links by status."""
    store = _store()
    typer.echo(json.dumps(store.stats(), ensure_ascii=False, indent=1))
    store.close()


@graph_app.command("reset")
def graph_reset(yes: Annotated[bool, typer.Option("--yes", help="Confirm deleting everything.")] = False) -> None:
    """Delete every API, tool, link and token from the configured store."""
    if not yes:
        _fail("this deletes the whole graph; add --yes to confirm")
    store = _store()
    store.reset()
    typer.echo(f"{store.backend} store emptied")
    store.close()


@app.command("register")
def register_cmd(
    documents: Annotated[list[Path], typer.Argument(help="OpenAPI 3 / Swagger 2.0 files (JSON or YAML).")],
    base_url: Annotated[str | None, typer.Option(help="Override the documents' server URL.")] = None,
    secret_name: Annotated[str | None, typer.Option(help="NAME of the environment variable holding the key.")] = None,
) -> None:
    """Register API documents straight into the configured store (the REST API does the same over HTTP)."""
    from core.errors import KopaError
    from graph.models import AuthConfig, RegistrationMeta
    from graph.openapi import load_document
    from graph.registry import register

    settings = get_settings()
    store = _store(settings)
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


@token_app.command("create")
def token_create(
    role: Annotated[str, typer.Option(help="admin (register/delete APIs, start runs) or reader (read, request batches).")],
    name: Annotated[str, typer.Option(help="A label to recognise the token by.")] = "",
) -> None:
    """Mint a bearer token. It is printed once; only its hash is stored."""
    from api.security import mint_token

    if role not in ("admin", "reader"):
        _fail("--role must be admin or reader")
    store = _store()
    typer.echo(mint_token(store, role, name))  # type: ignore[arg-type]
    store.close()


@app.command("serve")
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
) -> None:
    """Run the REST API (OpenAPI docs at /docs)."""
    import uvicorn

    from api.app import create_app
    from core.logging import setup_logging

    settings = get_settings()
    setup_logging(settings.log_level, settings.log_json)
    typer.echo(f"KOPA EDGE API on http://{host}:{port}  (docs: /docs, store: {settings.store})", err=True)
    if settings.store == "neo4j":
        typer.echo(f"Neo4j Browser: {settings.neo4j.browser_url}  (style: :style http://{host}:{port}/browser/kopa.grass)",
                   err=True)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")


def sandbox_mode(settings: Settings) -> tuple[Settings, Any]:
    """Settings and an in-process transport that point every real host at an in-process sandbox."""
    import os

    import httpx

    from sandbox.app import SandboxApp
    from sandbox.catalog import REAL_HOSTS
    from sandbox.clock import DEFAULT_NOW
    from sandbox.keys import DEMO_KEY

    os.environ.setdefault(settings.verify.key_secret, DEMO_KEY)
    overrides = ",".join(f"{h}=http://sandbox.local" for h in REAL_HOSTS)
    settings = settings.model_copy(update={
        "upstream_overrides": overrides, "allowed_hosts": [*settings.allowed_hosts, "sandbox.local"],
        "verify": settings.verify.model_copy(update={"now": settings.verify.now or DEFAULT_NOW.isoformat()}),
    })
    return settings, httpx.ASGITransport(app=SandboxApp(settings.sandbox))  # type: ignore[arg-type]


def verify_inprocess(store: Any, settings: Settings, run: Any, transport: Any = None) -> Any:
    """Run a verification in this process with a progress bar; returns the finished run."""
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from workers.runs import execute_run

    counts = {"verified": 0, "refuted": 0, "inconclusive": 0}
    with Progress(TextColumn("[bold]verifying"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn(), transient=False) as bar:
        task = bar.add_task("", total=None)

        def tick(link: Any) -> None:
            counts[link.status] = counts.get(link.status, 0) + 1
            bar.update(task, advance=1, total=max(run.candidates, sum(counts.values())),
                       description=f"✔ {counts['verified']}  ✘ {counts['refuted']}  ? {counts['inconclusive']}")

        return asyncio.run(execute_run(store, settings, run, transport=transport, progress=tick))


@app.command("verify")
def verify_cmd(
    api: Annotated[list[str] | None, typer.Option(help="Only these API ids (repeatable).")] = None,
    budget: Annotated[int | None, typer.Option(help="Stop cleanly after this many upstream calls.")] = None,
    scope: Annotated[str, typer.Option(help="pending (new/inconclusive/flagged), stale (old verified), or all.")] = "pending",
    celery: Annotated[bool, typer.Option("--celery", help="Queue the run for Celery workers and follow it.")] = False,
    sandbox: Annotated[bool, typer.Option("--sandbox", help="Call an in-process sandbox instead of the real hosts.")] = False,
) -> None:
    """Verify candidate links by executing them; derives candidates first. Progress is shown as it goes.

    Examples: [bold]kopa verify --sandbox[/bold] (embedded, no servers), [bold]kopa verify --celery --budget 500[/bold].
    """
    import time

    from workers.runs import new_run, run_progress

    if scope not in ("pending", "stale", "all"):
        _fail("--scope must be pending, stale or all")
    settings = get_settings()
    transport = None
    if sandbox:
        settings, transport = sandbox_mode(settings)
    store = _store(settings)
    run = new_run(api or [], budget, scope, "celery" if celery else "inprocess")
    if celery:
        if not settings.redis_url:
            _fail("--celery needs KOPA_REDIS_URL and running workers (celery -A workers.celery_app worker)")
        from workers.tasks import start_round

        store.save_run(run)
        start_round.delay(run.id)
        typer.echo(f"queued {run.id}; following it (Ctrl-C leaves it running)", err=True)
        while True:
            p = run_progress(store, store.get_run(run.id) or run)
            typer.echo(f"\r{p['status']:9} verified {p['verified']:4}  refuted {p['refuted']:4}  "
                       f"inconclusive {p['inconclusive']:3}  calls {p['calls_spent']:5}", nl=False, err=True)
            if p["status"] in ("completed", "paused", "failed"):
                typer.echo("", err=True)
                break
            time.sleep(1)
    else:
        run = verify_inprocess(store, settings, run, transport)
    p = run_progress(store, store.get_run(run.id) or run)
    typer.echo(json.dumps({k: p[k] for k in ("id", "status", "message", "candidates", "verified", "refuted",
                                             "inconclusive", "calls_spent", "cache_hits", "calls_per_verified_link")},
                          ensure_ascii=False))
    if p["unreachable"]:
        typer.echo(f"unreachable tools: {', '.join(u['tool'] + ' (' + ', '.join(u['blocked_by']) + ')' for u in p['unreachable'])}",
                   err=True)
    store.close()


def synth_inprocess(store: Any, settings: Settings, transport: Any, *, count: int, shapes: tuple[str, ...],
                    min_steps: int, max_steps: int, seed: int) -> dict[str, Any]:
    """Synthesise trajectories in this process with a progress bar."""
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from training.synthesis import synthesize
    from workers.executor import Executor
    from workers.limits import MemoryEconomy

    apis = {a.id: a for a in store.list_apis(limit=100_000)[0]}

    async def go() -> dict[str, Any]:
        executor = Executor(settings, MemoryEconomy(), apis, transport=transport)
        with Progress(TextColumn("[bold]synthesising"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as bar:
            task = bar.add_task("", total=count)
            try:
                return await synthesize(store, settings, executor, count=count, shapes=shapes, min_steps=min_steps,
                                        max_steps=max_steps, seed=seed, progress=lambda _r: bar.advance(task))
            finally:
                await executor.aclose()

    return asyncio.run(go())


def export_all(out: Path, result: dict[str, Any], store: Any, settings: Settings, config: dict[str, Any]) -> dict[str, Any]:
    from training.export import write_all, write_hf_dataset
    from training.synthesis import TRIM_RULE, VerifiedGraph, distribution

    graph = VerifiedGraph(store, settings)
    dist = distribution(result["records"], len(graph.links), len(graph.tools))
    paths = {k: str(v) for k, v in write_all(out, result["records"]).items()}
    card_config = {**config, "graph_snapshot": result["snapshot"], "engine": "edge-0.1", "trim_rule": TRIM_RULE}
    paths["hf"] = str(write_hf_dataset(out / "hf", result["records"], config=card_config,
                                       stats={k: v for k, v in dist.items() if k != "tool_counts"}))
    return {"distribution": dist, "paths": paths}


@app.command("synth")
def synth_cmd(
    count: Annotated[int, typer.Option(help="How many executed trajectories to keep.")] = 200,
    shapes: Annotated[str, typer.Option(help="Comma-separated: single, chain, fan_in, parallel (default all).")] = "",
    min_steps: Annotated[int, typer.Option(help="Fewest steps.")] = 1,
    max_steps: Annotated[int, typer.Option(help="Most steps (<= 6).")] = 6,
    seed: Annotated[int, typer.Option(help="Sampling seed: the same seed and graph give the same trajectories.")] = 7,
    out: Annotated[Path, typer.Option(help="Export folder (JSONL per format and a datasets folder).")] = Path(".kopa/synth"),
    sandbox: Annotated[bool, typer.Option("--sandbox", help="Execute against an in-process sandbox.")] = False,
) -> None:
    """Sample trajectories over verified links, execute them, and export them (trl, OpenAI, Hermes, ShareGPT,
    BFCL, Hugging Face datasets). Run [bold]kopa verify[/bold] first."""
    from training.synthesis import SHAPES

    chosen = tuple(s.strip() for s in shapes.split(",") if s.strip()) or SHAPES
    if set(chosen) - set(SHAPES) or not 1 <= min_steps <= max_steps <= 6:
        _fail(f"--shapes must be among {', '.join(SHAPES)} and 1 <= --min-steps <= --max-steps <= 6")
    settings = get_settings()
    transport = None
    if sandbox:
        settings, transport = sandbox_mode(settings)
    store = _store(settings)
    if not store.stats()["links"].get("verified"):
        _fail("no verified links yet: run `kopa verify` first")
    result = synth_inprocess(store, settings, transport, count=count, shapes=chosen, min_steps=min_steps,
                             max_steps=max_steps, seed=seed)
    exported = export_all(out, result, store, settings, {"count": count, "shapes": list(chosen), "seed": seed,
                                                         "min_steps": min_steps, "max_steps": max_steps})
    typer.echo(json.dumps({"kept": len(result["records"]), "discarded": len(result["discarded"]),
                           "calls": result["calls"], **{k: v for k, v in exported["distribution"].items()
                                                        if k != "tool_counts"}}, ensure_ascii=False))
    typer.echo(f"exports in {out}", err=True)
    store.close()


@app.command("demo")
def demo(
    workdir: Annotated[Path, typer.Option(help="Where the embedded graph and outputs go.")] = Path(".kopa/demo"),
    count: Annotated[int, typer.Option(help="Trajectories to synthesise.")] = 300,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 7,
) -> None:
    """The main job on the embedded default (no servers): register the sandbox catalog into a local graph file,
    derive candidate links, verify them by executing them against an in-process sandbox, synthesise and execute
    trajectories over verified links, export them, and write a report (Markdown + PNG plots).
    """
    import asyncio
    import shutil

    from graph.registry import register
    from sandbox.catalog import shipped_documents
    from training.report import write_report
    from training.synthesis import SHAPES
    from workers.limits import MemoryEconomy, NoCache
    from workers.runs import execute_run, new_run, run_progress

    if workdir.exists():
        shutil.rmtree(workdir)
    settings = get_settings().model_copy(update={"store": "embedded", "embedded_path": workdir / "graph.sqlite3",
                                                 "redis_url": None})
    settings, transport = sandbox_mode(settings)
    store = _store(settings)
    docs = shipped_documents()
    with typer.progressbar(sorted(docs.items()), label="registering the catalog", file=sys.stderr) as bar:
        for _, doc in bar:
            register(store, settings, doc)
    stats = store.stats()
    typer.echo(f"registered {stats['apis']} APIs, {stats['active_tools']} tools into {settings.graph_file()}")
    run = verify_inprocess(store, settings, new_run(), transport)
    p = run_progress(store, run)
    typer.echo(f"verification {p['status']}: {p['verified']} verified, {p['refuted']} refuted, "
               f"{p['inconclusive']} inconclusive of {p['candidates']} candidates; {p['calls_spent']} calls "
               f"({p['calls_per_verified_link']} per verified link)")
    # the naive baseline (a fresh upstream call per link, no cache) on a scratch copy, for the yield plot
    scratch_settings = settings.model_copy(update={"embedded_path": workdir / "naive.sqlite3"})
    scratch = _store(scratch_settings)
    for doc in shipped_documents().values():
        register(scratch, scratch_settings, doc)
    naive_run = asyncio.run(execute_run(scratch, scratch_settings, new_run(), transport=transport,
                                        economy=NoCache(MemoryEconomy()), naive=True))
    naive = run_progress(scratch, naive_run)
    scratch.close()
    (workdir / "naive.sqlite3").unlink(missing_ok=True)
    result = synth_inprocess(store, settings, transport, count=count, shapes=SHAPES, min_steps=1, max_steps=6,
                             seed=seed)
    store.save_batch({"id": "tb_demo", "team": "demo", "status": "completed", "count": count, "shapes": list(SHAPES),
                      "min_steps": 1, "max_steps": 6, "api_ids": [], "seed": seed, "format": "trl", "source": "fresh",
                      "produced": len(result["records"]), "discarded": len(result["discarded"]),
                      "calls": result["calls"], "created_at": run.created_at, "message": "kopa demo"})
    store.add_trajectories("tb_demo", result["records"])
    config = {"count": count, "seed": seed, "shapes": list(SHAPES), "upstream": "in-process KOPA sandbox",
              "verification_run": run.id}
    exported = export_all(workdir / "export", result, store, settings, config)
    report = write_report(workdir / "report", stats=store.stats(), run=p, naive=naive, synth=result,
                          dist=exported["distribution"], exports=exported["paths"], config=config)
    d = exported["distribution"]
    typer.echo(f"synthesised {d['trajectories']} trajectories ({', '.join(f'{k} {v}' for k, v in d['shapes'].items())}), "
               f"{len(result['discarded'])} discarded; exports in {workdir / 'export'}; report: {report}")
    store.close()


def main() -> None:  # pragma: no cover
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


__all__ = ["Settings", "app"]
