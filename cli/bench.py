"""`kopa bench`: KOPA-Bench. run (tasks x k trials through an agent, live or replay), check (validate tasks by
executing their gold programs), compare (side-by-side tables of several runs), overlap (a dataset vs the benchmark).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from bench.agents import REFERENCE_AGENTS, Agent, OpenAIChatAgent, TransformersAgent
from bench.backends import Backend, LiveBackend, ReplayBackend, Snapshot, SnapshotError
from bench.check import REFUSAL_CLASSES, CheckResult, check_tasks
from bench.compare import compare_all
from bench.gold import clock_now
from bench.overlap import overlap_report
from bench.report import write_report
from bench.run import BenchEnv, BenchError, run_bench
from bench.tasks import Task, TaskError, check_tools, load_tasks, task_set_hash
from cli.bfcl import bfcl_cmd
from cli.common import fail
from core.settings import Settings, get_settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.conversions import register_conversions
from graph.embedded_store import EmbeddedStore
from graph.models import ApiRecord, ToolRecord
from graph.registry import register
from graph.store import all_links
from sandbox.catalog import REAL_HOSTS, shipped_documents
from sandbox.inprocess import sandbox_mode

app = typer.Typer(
    help="KOPA-Bench: institutional tool-calling tasks over the public APIs, scored by execution.", no_args_is_help=True
)

# ---------------------------------------------------------------------------------------------- environment


def catalog_registry(settings: Settings) -> tuple[dict[str, ToolRecord], dict[str, ApiRecord], str]:
    """The shipped catalog registered into a scratch embedded store: (tools, apis, graph snapshot id)."""
    with tempfile.TemporaryDirectory(prefix="kopa-bench-") as tmp:
        store = EmbeddedStore(Path(tmp) / "graph.sqlite3")
        for doc in shipped_documents().values():
            register(store, settings, doc)
        register_conversions(store, settings)  # the built-in kopa-convert tools, answered in process
        tools = {t.name: t for t in store.all_tools()}
        apis = {a.id: a for a in store.list_apis(limit=1000)[0]}
        verified = sorted(lk.id for lk in all_links(store, status="verified"))
        store.close()
    raw = json.dumps([sorted(f"{t.name}:{t.spec_hash}" for t in tools.values()), verified])
    return tools, apis, "g_" + hashlib.sha256(raw.encode()).hexdigest()[:12]


def live_settings(base: Settings, url: str) -> Settings:
    """Settings that point every real host at a running sandbox (or any emulator) at `url`."""
    host = httpx.URL(url).host
    overrides = ",".join(f"{h}={url.rstrip('/')}" for h in REAL_HOSTS)
    return base.model_copy(update={"upstream_overrides": overrides, "allowed_hosts": [*base.allowed_hosts, host]})


@asynccontextmanager
async def bench_env(
    *,
    mode: str = "live",
    live: str | None = None,
    snapshot: Path | None = None,
    record: Path | None = None,
    settings: Settings | None = None,
) -> AsyncIterator[BenchEnv]:
    """The benchmark's tools and backend: live through the executor (an in-process sandbox, or `live` URL), or
    replay from `snapshot`. With `record`, a live run writes every definitive response into a snapshot."""
    base = settings or get_settings()
    sandbox_settings, transport = sandbox_mode(base)
    cfg = live_settings(sandbox_settings, live) if live else sandbox_settings
    tools, apis, graph_snapshot = catalog_registry(cfg)
    now = clock_now(cfg.verify.now)
    executor: Executor | None = None
    recorder: Snapshot | None = None
    backend: Backend
    if mode == "replay":
        if snapshot is None:
            raise SnapshotError("replay mode needs --snapshot FILE (record one with a live run and --record)")
        snap = Snapshot.load(snapshot)
        backend = ReplayBackend(snap, tools)  # calls match recordings by the tools' specs
        meta = {"upstream": f"replay of {snapshot}", "snapshot": snap.id}
    else:
        executor = Executor(cfg, MemoryEconomy(), apis, transport=None if live else transport)
        recorder = Snapshot() if record else None
        backend = LiveBackend(executor, tools, record=recorder)
        meta = {"upstream": live or "in-process KOPA sandbox"}
    meta.update({"graph_snapshot": graph_snapshot, "clock": now.isoformat()})
    try:
        yield BenchEnv(tools, backend, now, meta)
    finally:
        if recorder is not None and record is not None:
            recorder.save(record)
        if executor is not None:
            await executor.aclose()


def _load(tasks_dir: Path | None, only: str) -> list[Task]:
    try:
        tasks = load_tasks(tasks_dir)
    except TaskError as exc:
        fail(exc.detail)
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    if wanted:
        tasks = [t for t in tasks if t.id in wanted or t.category in wanted]
    if not tasks:
        fail(f"no tasks in {tasks_dir or 'the shipped task folder'}" + (f" matching {only}" if only else ""))
    return tasks


def make_agent(
    agent: str,
    *,
    url: str = "",
    model: str = "",
    model_dir: Path | None = None,
    temperature: float = 0.0,
    top_p: float | None = None,
    max_tokens: int = 1024,
    timeout: float = 120.0,
    seed: int = 0,
    api_key_env: str | None = None,
) -> Agent:
    if agent in REFERENCE_AGENTS:
        return REFERENCE_AGENTS[agent]()
    if agent == "openai":
        if not url or not model:
            fail("--agent openai needs --url (the server, e.g. http://127.0.0.1:8000/v1) and --model")
        return OpenAIChatAgent(
            url,
            model,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed=seed,
            timeout_s=timeout,
            api_key_env=api_key_env,
        )
    if agent == "transformers":
        if model_dir is None:
            fail("--agent transformers needs --model-dir (a local transformers model directory)")
        try:
            return TransformersAgent(
                model_dir, max_new_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed
            )
        except FileNotFoundError as exc:
            fail(str(exc))
    fail(f"--agent must be one of {', '.join([*REFERENCE_AGENTS, 'openai', 'transformers'])}")


# ---------------------------------------------------------------------------------------------- commands


@app.command("run")
def run_cmd(
    agent: Annotated[str, typer.Option(help="oracle | no_tool | wrong_calls | openai | transformers")] = "oracle",
    url: Annotated[str, typer.Option(help="OpenAI-compatible server (vLLM, llama.cpp, Ollama, TGI).")] = "",
    model: Annotated[str, typer.Option(help="Model name the server serves.")] = "",
    model_dir: Annotated[Path | None, typer.Option(help="Local transformers model directory.")] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature (0: greedy).")] = 0.0,
    top_p: Annotated[float | None, typer.Option(help="Nucleus sampling.")] = None,
    max_tokens: Annotated[int, typer.Option(help="Most tokens per model turn.")] = 1024,
    timeout: Annotated[float, typer.Option(help="Seconds per model request.")] = 120.0,
    api_key_env: Annotated[str | None, typer.Option(help="Environment variable holding the endpoint's key.")] = None,
    tasks: Annotated[
        Path | None, typer.Option(help="A folder of task YAML files (default: the shipped tasks).")
    ] = None,
    only: Annotated[str, typer.Option(help="Comma-separated task ids or categories.")] = "",
    k: Annotated[int, typer.Option(help="Trials per task.")] = 3,
    concurrency: Annotated[int, typer.Option(help="Episodes in parallel.")] = 4,
    max_turns: Annotated[int, typer.Option(help="Most model turns per user turn.")] = 8,
    mode: Annotated[str, typer.Option(help="live (execute) or replay (from --snapshot).")] = "live",
    live: Annotated[str | None, typer.Option(help="Base URL of a running sandbox (default: in process).")] = None,
    snapshot: Annotated[Path | None, typer.Option(help="Snapshot file to replay.")] = None,
    record: Annotated[Path | None, typer.Option(help="Write a replay snapshot of a live run here.")] = None,
    out: Annotated[Path, typer.Option(help="Results folder (resumable).")] = Path(".kopa/bench/run"),
    resume: Annotated[bool, typer.Option(help="Resume from the folder's finished episodes.")] = True,
    seed: Annotated[int, typer.Option(help="Sampling and bootstrap seed.")] = 0,
) -> None:
    """Run KOPA-Bench: every task k times through the agent; writes results.json, episodes.jsonl and report.md."""
    if mode not in ("live", "replay"):
        fail("--mode must be live or replay")
    task_list = _load(tasks, only)
    bot = make_agent(
        agent,
        url=url,
        model=model,
        model_dir=model_dir,
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        timeout=timeout,
        seed=seed,
        api_key_env=api_key_env,
    )

    async def go() -> dict[str, Any]:
        try:
            async with bench_env(mode=mode, live=live, snapshot=snapshot, record=record) as env:
                return await run_bench(
                    task_list,
                    bot,
                    env,
                    out,
                    k=k,
                    concurrency=concurrency,
                    max_turns=max_turns,
                    seed=seed,
                    resume=resume,
                )
        finally:
            await bot.aclose()

    try:
        doc = asyncio.run(go())
    except (BenchError, SnapshotError) as exc:
        fail(exc.detail)
    report = write_report(out, doc)
    o = doc["scores"]["overall"]
    typer.echo(
        json.dumps(
            {
                "agent": bot.name,
                "mode": mode,
                "tasks": o["tasks"],
                "episodes": o["episodes"],
                "pass_hat_k": o["pass_hat_k"],
                "pass_at_k": o["pass_at_k"],
                "by_category": {c: v["pass_hat_k"] for c, v in doc["scores"]["by_category"].items()},
                "refused_tasks": len(doc["refused"]),
                "failures": o["failures"],
                "replay_misses": o["replay_misses"],
                "replay_miss_episodes": o["replay_miss_episodes"],
                "harness_ms_per_task": o["harness_ms_per_task"],
            },
            ensure_ascii=False,
        )
    )
    for tid, reason in sorted(doc["refused"].items()):
        typer.echo(f"refused {tid}: {reason}", err=True)
    typer.echo(f"results in {out / 'results.json'}; report: {report}", err=True)


@app.command("check")
def check_cmd(
    tasks: Annotated[
        Path | None, typer.Option(help="A folder of task YAML files (default: the shipped tasks).")
    ] = None,
    only: Annotated[str, typer.Option(help="Comma-separated task ids or categories.")] = "",
    live: Annotated[str | None, typer.Option(help="Base URL of a running sandbox (default: in process).")] = None,
) -> None:
    """Validate tasks: the schema, the tool names, their gold programs executed against the sandbox, and solvable by
    construction (bench/check.py): a task is refused when its gold program fails, a fact or linked argument is not
    in the view of its gold responses, a `where` is ambiguous, an argument breaks the tool's spec, a fact is trivial
    or a constant answer passes, or an irrelevance task asks for what a model does itself."""
    task_list = _load(tasks, only)

    async def go() -> tuple[dict[str, CheckResult], list[str]]:
        async with bench_env(live=live) as env:
            errors = check_tools(task_list, set(env.registry))
            bad = {e.split(": task ")[1].split(":")[0] for e in errors if ": task " in e}
            results = await check_tasks([t for t in task_list if t.id not in bad], env.backend, env.now, env.registry)
            return results, errors

    results, errors = asyncio.run(go())
    for e in errors:
        typer.echo(f"invalid {e}", err=True)
    refused = {tid: r for tid, r in results.items() if r.refused}
    for _tid, r in sorted(refused.items()):
        for p in r.problems:
            typer.echo(f"refused {p}", err=True)
    counts: dict[str, int] = {}
    for t in task_list:
        counts[t.category] = counts.get(t.category, 0) + 1
    classes: dict[str, int] = {}
    for r in refused.values():
        for p in r.problems:
            kind = p.split(": ", 2)[1] if p.count(": ") >= 2 else "gold"
            kind = kind if kind in REFUSAL_CLASSES else "gold"
            classes[kind] = classes.get(kind, 0) + 1
    valid = [r for r in results.values() if not r.refused]
    typer.echo(
        json.dumps(
            {
                "tasks": len(task_list),
                "valid": len(valid),
                "refused": len(refused),
                "invalid": len(errors),
                "by_category": counts,
                "refusals": classes,
                "three_plus_calls": sum(1 for r in valid if r.calls >= 3),
                "task_set_hash": task_set_hash(task_list),
            },
            ensure_ascii=False,
        )
    )
    if refused or errors:
        raise typer.Exit(1)


@app.command("compare")
def compare_cmd(
    runs: Annotated[list[Path], typer.Argument(help="KOPA-Bench results folders and BFCL run folders to compare.")],
    out: Annotated[Path | None, typer.Option(help="Also write the Markdown tables here.")] = None,
) -> None:
    """Side-by-side tables of several runs: one row per run folder with KOPA-Bench pass^k / pass@k next to BFCL's
    overall and groups (a BFCL run joins the one KOPA-Bench run of its model), then KOPA-Bench per category, per
    number of gold calls and the diagnostics; every column says its k when the runs differ in k.

    Example:
    [bold]kopa bench compare runs/9b runs/9b-tuned runs/27b runs/9b-bfcl runs/9b-tuned-bfcl runs/27b-bfcl[/bold]"""
    try:
        text = compare_all(runs)
    except BenchError as exc:
        fail(exc.detail)
    if out:
        out.write_text(text, encoding="utf-8")
    typer.echo(text)


@app.command("overlap")
def overlap_cmd(
    dataset: Annotated[Path, typer.Argument(help="A trajectory JSONL (kopa synth export).")],
    tasks: Annotated[
        Path | None, typer.Option(help="A folder of task YAML files (default: the shipped tasks).")
    ] = None,
    threshold: Annotated[float, typer.Option(help="Character 3-gram Jaccard of a near-duplicate request.")] = 0.8,
) -> None:
    """How much of a trajectory dataset overlaps the benchmark (same tool sequence with the same slot values, or a
    near-duplicate request)."""
    task_list = _load(tasks, "")
    try:
        report = overlap_report(dataset, task_list, threshold=threshold)
    except BenchError as exc:
        fail(exc.detail)
    typer.echo(json.dumps(report, ensure_ascii=False))


app.command("bfcl")(bfcl_cmd)  # BFCL transfer evaluation, with bfcl-eval's own checkers (cli/bfcl.py)
