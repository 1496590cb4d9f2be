"""`kopa synth` and `kopa demo`: trajectories over verified links, and the main job end to end."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import check_writable_dir, fail, guarded, open_configured_store, option
from cli.progress import synth_inprocess, verify_inprocess
from core.settings import Settings, get_settings
from execution.limits import MemoryEconomy, NoCache
from graph.conversions import register_conversions
from graph.models import RunRecord
from graph.registry import register
from graph.store import GraphStore
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from synthesis.batches import Batch
from synthesis.export import export_all, length_lines
from synthesis.quality import quality_lines
from synthesis.records import SHAPES, SynthesisRequest, SynthesisResult
from synthesis.report import write_report
from training.tiny import load_tokenizer as load_saved_tokenizer
from verification.runs import RunProgress, execute_run, new_run, run_progress

#: Most trajectories one `kopa synth` / `kopa demo` produces (absurd counts are refused before any work).
MAX_COUNT = 100_000
TokenizerOpt = Annotated[
    Path | None,
    typer.Option(
        "--tokenizer",
        help="A local tokenizer folder (the model's, or `kopa train tiny`'s): the export states its token lengths "
        "with its chat template (lengths.json, the dataset card).",
    ),
]


def load_tokenizer(path: Path | None) -> Any:
    """The tokenizer an export measures its token lengths with (None: characters only), refused before any work
    when it cannot be used."""
    if path is None:
        return None
    if not (path / "tokenizer.json").is_file():
        fail(f"--tokenizer {path} holds no tokenizer.json (give a local tokenizer folder)")
    try:
        tok = load_saved_tokenizer(path)
    except ImportError as exc:  # pragma: no cover - the dev and train extras have transformers
        fail(f"--tokenizer needs transformers (pip install -e '.[train]'): {exc}")
    if not getattr(tok, "chat_template", None):
        fail(f"--tokenizer {path} has no chat template to render the conversations with")
    return tok


@guarded
def synth_cmd(
    count: Annotated[int, typer.Option(help="How many executed trajectories to keep.")] = 200,
    shapes: Annotated[str, typer.Option(help=f"Comma-separated: {', '.join(SHAPES)} (default all).")] = "",
    min_steps: Annotated[int, typer.Option(help="Fewest steps.")] = 1,
    max_steps: Annotated[int, typer.Option(help="Most steps (<= 6).")] = 6,
    seed: Annotated[int, typer.Option(help="Sampling seed: the same seed and graph give the same trajectories.")] = 7,
    out: Annotated[Path, typer.Option(help="Export folder (JSONL per format and a datasets folder).")] = Path(
        ".kopa/synth"
    ),
    sandbox: Annotated[bool, typer.Option("--sandbox", help="Execute against an in-process sandbox.")] = False,
    baseline: Annotated[
        bool,
        typer.Option(
            "--baseline",
            help="Synthesise-then-filter (the ablation): walk every candidate link, verified or not, and "
            "keep what executes.",
        ),
    ] = False,
    on_demand: Annotated[
        bool,
        typer.Option(
            "--on-demand",
            help="Verify the links the plans traverse, once, before they run (instead of a full `kopa verify` "
            "first); they are saved with their evidence and reused by later runs and batches.",
        ),
    ] = False,
    tokenizer: TokenizerOpt = None,
) -> None:
    """Sample trajectories over verified links, execute them, and export them (trl, OpenAI, Hermes, ShareGPT,
    BFCL, Hugging Face datasets). Run [bold]kopa verify[/bold] first, or pass [bold]--on-demand[/bold] to verify
    only what the plans traverse; [bold]--baseline[/bold] makes the synthesise-then-filter data of the same budget
    for the ablation. When the graph yields fewer than --count, both paths say so ("282 of 300 requested: ...")."""
    request = SynthesisRequest.parse(
        {
            "count": count,
            "shapes": [s.strip() for s in shapes.split(",") if s.strip()],
            "min_steps": min_steps,
            "max_steps": max_steps,
            "seed": seed,
            "on_demand": on_demand,
        },
        most=MAX_COUNT,
        name=option,
    )
    check_writable_dir("--out", out)
    tok = load_tokenizer(tokenizer)
    settings = get_settings()
    transport = None
    if sandbox:
        settings, transport = sandbox_mode(settings)
    store = open_configured_store(settings)
    _check_links(store, baseline=baseline, on_demand=on_demand)
    result = synth_inprocess(store, settings, transport, request, unverified=baseline)
    config = {
        "count": count,
        "shapes": list(request.shape_names()),
        "seed": seed,
        "min_steps": min_steps,
        "max_steps": max_steps,
        "links": _links_label(baseline=baseline, on_demand=on_demand),
    }
    exported = export_all(out, result, store, settings, config, tokenizer=tok)
    _echo_synth_summary(result, exported, count, out)
    store.close()


def _check_links(store: GraphStore, *, baseline: bool, on_demand: bool) -> None:
    """Refuse a run with nothing to walk: no verified links (or no candidates for the baseline)."""
    if baseline and on_demand:
        fail("--baseline walks every candidate link unverified; it cannot be combined with --on-demand")
    links = store.stats()["links"]
    if not on_demand and not (sum(links.values()) if baseline else links.get("verified")):
        fail(
            "no candidate links yet: run `kopa verify` first"
            if baseline
            else "no verified links yet: run `kopa verify` first"
        )


def _links_label(*, baseline: bool, on_demand: bool) -> str:
    """Which links the exported config says the trajectories walked."""
    if baseline:
        return "all candidates (baseline)"
    return "verified on demand" if on_demand else "verified only"


def _echo_synth_summary(result: SynthesisResult, exported: dict[str, Any], count: int, out: Path) -> None:
    """The JSON summary on stdout; the shortfall (if any) and the export folder on stderr."""
    verification = result.verification
    typer.echo(
        json.dumps(
            {
                "kept": len(result.records),
                "requested": count,
                "discarded": len(result.discarded),
                "calls": result.calls,
                **({"verification": verification} if verification else {}),
                **{k: v for k, v in exported["distribution"].items() if k != "tool_counts"},
            },
            ensure_ascii=False,
        )
    )
    if result.shortfall:
        # the same on every path (EDGE, on demand, baseline): fewer kept than asked is said, not left silent
        typer.echo(result.shortfall, err=True)
    for line in length_lines(exported["lengths"]):
        typer.echo(line, err=True)
    typer.echo(f"exports in {out}", err=True)


@guarded
def demo(
    workdir: Annotated[Path, typer.Option(help="Where the embedded graph and outputs go.")] = Path(".kopa/demo"),
    count: Annotated[int, typer.Option(help="Trajectories to synthesise.")] = 300,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 7,
    tokenizer: TokenizerOpt = None,
) -> None:
    """The main job on the embedded default (no servers): register the sandbox catalog into a local graph file,
    derive candidate links, verify them by executing them against an in-process sandbox, synthesise and execute
    trajectories over verified links, export them, and write a report (Markdown + PNG plots).
    """
    request = SynthesisRequest.parse({"count": count, "seed": seed}, most=MAX_COUNT, name=option)
    tok = load_tokenizer(tokenizer)
    _fresh_workdir(workdir)
    settings = get_settings().model_copy(
        update={"store": "embedded", "embedded_path": workdir / "graph.sqlite3", "redis_url": None}
    )
    settings, transport = sandbox_mode(settings)
    store = open_configured_store(settings)
    _register_catalog(store, settings)
    run, p = _verify_catalog(store, settings, transport)
    # the baseline is a comparison on a scratch copy: it calls a sandbox of its own, so its uncached calls never
    # spend the daily quotas (tourism: 1,000 a day) the run itself synthesises against
    naive = _naive_baseline(settings, workdir, sandbox_mode(settings)[1])
    result = synth_inprocess(store, settings, transport, request)
    _save_demo_batch(store, result, request, run=run)
    config = {
        "count": count,
        "seed": seed,
        "shapes": list(request.shape_names()),
        "upstream": "in-process KOPA sandbox",
        "verification_run": run.id,
    }
    exported = export_all(workdir / "export", result, store, settings, config, tokenizer=tok)
    report = write_report(
        workdir / "report",
        stats={**store.stats()},
        run=p.model_dump(),
        naive=naive.model_dump(),
        synth=result,
        dist=exported["distribution"],
        exports=exported["paths"],
        config=config,
    )
    d = exported["distribution"]
    typer.echo(
        f"synthesised {d['trajectories']} trajectories ({', '.join(f'{k} {v}' for k, v in d['shapes'].items())}), "
        f"{len(result.discarded)} discarded; exports in {workdir / 'export'}; report: {report}"
    )
    for line in quality_lines(exported["quality"]):
        typer.echo(line)
    for line in length_lines(exported["lengths"]):
        typer.echo(line)
    store.close()


def _fresh_workdir(workdir: Path) -> None:
    """Clear the demo folder and prove it is writable, before any work starts."""
    if workdir.exists():
        try:
            shutil.rmtree(workdir)
        except OSError as exc:
            fail(f"--workdir {workdir} cannot be cleared: {exc.strerror or exc}")
    check_writable_dir("--workdir", workdir)


def _register_catalog(store: GraphStore, settings: Settings) -> None:
    """Register the shipped sandbox catalog and the built-in conversion tools, and say how much."""
    docs = shipped_documents()
    with typer.progressbar(sorted(docs.items()), label="registering the catalog", file=sys.stderr) as bar:
        for _, doc in bar:
            register(store, settings, doc)
    register_conversions(store, settings)  # the built-in kopa-convert tools (synthesis puts them where links project)
    stats = store.stats()
    typer.echo(f"registered {stats['apis']} APIs, {stats['active_tools']} tools into {settings.graph_file()}")


def _verify_catalog(store: GraphStore, settings: Settings, transport: Any) -> tuple[RunRecord, RunProgress]:
    """Verify every candidate link in process; the run and its progress figures."""
    run = verify_inprocess(store, settings, new_run(), transport)
    p = run_progress(store, run)
    typer.echo(
        f"verification {p.status}: {p.verified} verified, {p.refuted} refuted, "
        f"{p.inconclusive} inconclusive of {p.candidates} candidates; {p.calls_spent} calls "
        f"({p.calls_per_verified_link} per verified link)"
    )
    return run, p


def _naive_baseline(settings: Settings, workdir: Path, transport: Any) -> RunProgress:
    """The naive baseline (a fresh upstream call per link, no cache) on a scratch copy, for the yield plot."""
    scratch_settings = settings.model_copy(update={"embedded_path": workdir / "naive.sqlite3"})
    scratch = open_configured_store(scratch_settings)
    for doc in shipped_documents().values():
        register(scratch, scratch_settings, doc)
    naive_run = asyncio.run(
        execute_run(
            scratch, scratch_settings, new_run(), transport=transport, economy=NoCache(MemoryEconomy()), naive=True
        )
    )
    naive = run_progress(scratch, naive_run)
    scratch.close()
    (workdir / "naive.sqlite3").unlink(missing_ok=True)
    return naive


def _save_demo_batch(store: GraphStore, result: SynthesisResult, request: SynthesisRequest, *, run: RunRecord) -> None:
    """Record the demo's trajectories as the completed batch `tb_demo`."""
    fields = request.model_dump()
    fields["shapes"] = list(request.shape_names())
    Batch(
        **fields,
        id="tb_demo",
        team="demo",
        status="completed",
        produced=len(result.records),
        discarded=len(result.discarded),
        calls=result.calls,
        created_at=run.created_at,
        message="kopa demo",
    ).save(store)
    store.add_trajectories("tb_demo", [r.to_json() for r in result.records])
