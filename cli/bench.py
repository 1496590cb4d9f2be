"""`kopa bench`: KOPA-Bench. run (tasks x k trials through an agent, live or replay), check (validate tasks by
executing their gold programs and scoring the oracle's answer), tools (the tool names a task may use), compare
(side-by-side tables of several runs), overlap (a dataset vs the benchmark).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from bench.check import REFUSAL_CLASSES, CheckResult
from bench.compare import MARGIN, compare_all
from bench.environment import MODES, catalog_registry, make_agent, open_env, select_tasks, validate_tasks
from bench.judge_eval import CORPUS, evaluate, load_corpus, oracle_episodes, render
from bench.overlap import overlap_report
from bench.records import CheckSummary, ResultsDoc, RunSummary
from bench.report import write_report
from bench.run import BenchEnv, BenchError, run_bench
from bench.serve_local import serve as serve_local
from bench.tasks import InvalidTask, Task, TaskError, load_task_report, task_set_hash
from cli.bfcl import bfcl_cmd
from cli.common import fail, guarded
from core.settings import Settings, get_settings
from sandbox.catalog import REAL_HOSTS, shipped_documents
from sandbox.inprocess import sandbox_mode

app = typer.Typer(
    help="KOPA-Bench: institutional tool-calling tasks over the public APIs, scored by execution.", no_args_is_help=True
)
TASKS_OPTION = typer.Option(help="A folder of task YAML files (default: the shipped tasks).")
ONLY_OPTION = typer.Option(help="Comma-separated task ids or categories.")
LIVE_OPTION = typer.Option(help="Base URL of a running sandbox (default: in process).")

# ---------------------------------------------------------------------------------------------- the upstream


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
    """The benchmark environment (bench.environment.open_env) over the KOPA sandbox's catalog and clock: calls go
    to the sandbox in process, or to the one running at `live`; `replay` answers from `snapshot`."""
    cfg, in_process = sandbox_mode(settings or get_settings())  # the sandbox's demo key and frozen clock
    transport: httpx.AsyncBaseTransport | None = in_process
    upstream = "in-process KOPA sandbox"
    if live:
        cfg, transport, upstream = live_settings(cfg, live), None, live
    docs = shipped_documents().values()
    opened = open_env(cfg, docs, mode=mode, transport=transport, upstream=upstream, snapshot=snapshot, record=record)
    async with opened as env:
        yield env


# ---------------------------------------------------------------------------------------------- commands


@app.command("run")
@guarded
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
    tasks: Annotated[Path | None, TASKS_OPTION] = None,
    only: Annotated[str, ONLY_OPTION] = "",
    k: Annotated[int, typer.Option(help="Trials per task.")] = 3,
    concurrency: Annotated[int, typer.Option(help="Episodes in parallel.")] = 4,
    max_turns: Annotated[int, typer.Option(help="Most model turns per user turn.")] = 8,
    mode: Annotated[str, typer.Option(help="live (execute) or replay (from --snapshot).")] = "live",
    live: Annotated[str | None, LIVE_OPTION] = None,
    snapshot: Annotated[Path | None, typer.Option(help="Snapshot file to replay.")] = None,
    record: Annotated[Path | None, typer.Option(help="Write a replay snapshot of a live run here.")] = None,
    out: Annotated[Path, typer.Option(help="Results folder (resumable).")] = Path(".kopa/bench/run"),
    resume: Annotated[bool, typer.Option(help="Resume from the folder's finished episodes.")] = True,
    seed: Annotated[int, typer.Option(help="Sampling and bootstrap seed.")] = 0,
) -> None:
    """Run KOPA-Bench: every task k times through the agent; writes results.json, episodes.jsonl and report.md."""
    if mode not in MODES:
        fail(f"--mode must be {' or '.join(MODES)}")
    task_list = select_tasks(tasks, only)
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

    async def go() -> ResultsDoc:
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

    doc = asyncio.run(go())
    report = write_report(out, doc)
    typer.echo(json.dumps(run_summary(doc, bot.name, mode), ensure_ascii=False))
    for tid, reason in sorted(doc["refused"].items()):
        typer.echo(f"refused {tid}: {reason}", err=True)
    typer.echo(f"results in {out / 'results.json'}; report: {report}", err=True)


def run_summary(doc: ResultsDoc, agent: str, mode: str) -> RunSummary:
    """The one JSON line `kopa bench run` prints: the overall scores of a results document."""
    o = doc["scores"]["overall"]
    return {
        "agent": agent,
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
    }


def check_selection(tasks_dir: Path | None, only: str = "") -> tuple[list[Task], list[InvalidTask]]:
    """The tasks `kopa bench check` checks and the ones the loader refused, both narrowed to `only` (ids or
    categories): a schema error refuses its task (or its file) and the others are still checked."""
    try:
        task_list, invalid = load_task_report(tasks_dir)
    except TaskError as exc:
        raise BenchError(exc.detail) from None
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    if wanted:
        task_list = [t for t in task_list if t.id in wanted or t.category in wanted]
        invalid = [i for i in invalid if i.id in wanted or i.category in wanted]
    if not task_list and not invalid:
        raise BenchError(
            f"no tasks in {tasks_dir or 'the shipped task folder'}" + (f" matching {only}" if only else "")
        )
    return task_list, invalid


@app.command("check")
@guarded
def check_cmd(
    tasks: Annotated[Path | None, TASKS_OPTION] = None,
    only: Annotated[str, ONLY_OPTION] = "",
    live: Annotated[str | None, LIVE_OPTION] = None,
) -> None:
    """Validate tasks: the schema, the tool names, their gold programs executed against the sandbox, solvable by
    construction (bench/check.py), and the oracle's answer scored: a task is refused when its gold program fails, a
    fact or linked argument is not in the view of its gold responses, a `where` is ambiguous, an argument breaks the
    tool's spec, a fact is trivial or a constant answer passes, an irrelevance task asks for what a model does
    itself, or the oracle's own answer fails it. A task with a schema error or an unknown tool is invalid; the
    others are still checked. Exits 1 when any task is invalid or refused."""
    task_list, invalid = check_selection(tasks, only)

    async def go() -> tuple[dict[str, CheckResult], list[str]]:
        if not task_list:
            return {}, []
        async with bench_env(live=live) as env:
            return await validate_tasks(task_list, env)

    results, errors = asyncio.run(go())
    for i in invalid:
        typer.echo(f"invalid {i.message}", err=True)
    for e in errors:
        typer.echo(f"invalid {e}", err=True)
    refused = {tid: r for tid, r in results.items() if r.refused}
    for _tid, r in sorted(refused.items()):
        for p in r.problems:
            typer.echo(f"refused {p}", err=True)
    typer.echo(json.dumps(check_summary(task_list, results, errors, invalid), ensure_ascii=False))
    if refused or errors or invalid:
        raise typer.Exit(1)


def _tool_error_task(line: str) -> str:
    """The task id a `check_tools` line names (`FILE: task ID: tools: ...`)."""
    return line.split(": task ", 1)[1].split(":", 1)[0] if ": task " in line else line


def check_summary(
    tasks: list[Task],
    results: dict[str, CheckResult],
    errors: list[str],
    invalid: list[InvalidTask] | None = None,
) -> CheckSummary:
    """The one JSON line `kopa bench check` prints, counting tasks (not problem lines): every task (`tasks`) is
    `valid`, `refused` (its gold program, solvability or the oracle's answer) or `invalid` (a schema error, a file
    the loader cannot read, or an unknown tool); tasks by category; refused tasks by class (a task counts once
    per class it is refused for)."""
    invalid = invalid or []
    refused = [r for r in results.values() if r.refused]
    valid = [r for r in results.values() if not r.refused]
    bad_tools = {_tool_error_task(e) for e in errors}
    counts: dict[str, int] = {}
    for t in tasks:
        counts[t.category] = counts.get(t.category, 0) + 1
    for i in invalid:
        if i.category:
            counts[i.category] = counts.get(i.category, 0) + 1
    classes: dict[str, int] = {}
    for r in refused:
        kinds = set()
        for p in r.problems:
            kind = p.split(": ", 2)[1] if p.count(": ") >= 2 else "gold"
            kinds.add(kind if kind in REFUSAL_CLASSES else "gold")
        for kind in kinds:
            classes[kind] = classes.get(kind, 0) + 1
    return {
        "tasks": len(tasks) + len(invalid),
        "valid": len(valid),
        "refused": len(refused),
        "invalid": len(invalid) + len(bad_tools),
        "by_category": counts,
        "refusals": dict(sorted(classes.items())),
        "three_plus_calls": sum(1 for r in valid if r.calls >= 3),
        "task_set_hash": task_set_hash(tasks),
    }


def tool_rows(settings: Settings | None = None) -> list[dict[str, str]]:
    """The benchmark's registry (the sandbox catalog and the built-in conversion tools, what `kopa bench check` and
    `run` load tasks against): one row per tool name with its API id and a one-line description."""
    cfg, _ = sandbox_mode(settings or get_settings())
    tools, apis, _ = catalog_registry(cfg, shipped_documents().values())
    rows = []
    for name, t in sorted(tools.items()):
        text = (t.summary or t.description or t.intent or "").strip().splitlines()
        api = apis.get(t.api_id)
        rows.append(
            {
                "name": name,
                "api": t.api_id,
                "api_title": str(getattr(api, "title", "") or ""),
                "description": text[0] if text else "",
            }
        )
    return rows


@app.command("tools")
@guarded
def tools_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list instead of the table.")] = False,
) -> None:
    """The tool names a task may use in `tools.offered`, `gold[].tool` and `must_not_call`: the benchmark's
    registry (the sandbox catalog and the kopa_convert_* conversion tools), each with its API id and a one-line
    description."""
    rows = tool_rows()
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False))
        return
    width = max(len(r["name"]) for r in rows)
    api_width = max(len(r["api"]) for r in rows)
    for r in rows:
        typer.echo(f"{r['name']:<{width}}  {r['api']:<{api_width}}  {r['description']}")
    typer.echo(f"{len(rows)} tools", err=True)


@app.command("compare")
@guarded
def compare_cmd(
    runs: Annotated[list[Path], typer.Argument(help="KOPA-Bench results folders and BFCL run folders to compare.")],
    out: Annotated[Path | None, typer.Option(help="Also write the Markdown tables here.")] = None,
    reference: Annotated[
        str | None, typer.Option(help="Model to compare every other with (paired bootstrap), e.g. untuned-27b.")
    ] = None,
    margin: Annotated[
        float, typer.Option(help="Non-inferiority margin of 'nearly matches', as a pass-rate difference.")
    ] = MARGIN,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    training: Annotated[
        Path | None,
        typer.Option(
            help="The training data (records.jsonl or export folder): split pass rates by overlap (exact tool "
            "sequence seen / tools seen / unseen)."
        ),
    ] = None,
    heldout_provider: Annotated[
        str | None,
        typer.Option(
            help="A provider one tuned arm never saw in training (a tool-name prefix, e.g. airkorea): pass rates "
            "on the tasks that call its tools and on the others."
        ),
    ] = None,
) -> None:
    """Side-by-side tables of several runs: one row per run folder with KOPA-Bench pass^k / pass@k next to BFCL's
        overall and groups (a BFCL run joins the one KOPA-Bench run of its model), then KOPA-Bench per category, per
        number of gold calls and the diagnostics; every column says its k when the runs differ in k. Runs of one model
    with several seeds (names ending -s<seed>) are aggregated as mean ± spread; with --reference, each model is tested
    against it by a paired bootstrap over tasks, "nearly matches" meaning non-inferior within --margin.

        Example:
        [bold]kopa bench compare runs/9b runs/9b-tuned runs/27b runs/9b-bfcl runs/9b-tuned-bfcl runs/27b-bfcl[/bold]"""
    text = compare_all(
        runs, reference=reference, margin=margin, seed=seed, training=training, heldout_provider=heldout_provider
    )
    if out:
        out.write_text(text, encoding="utf-8")
    typer.echo(text)


@app.command("serve-local")
def serve_local_cmd(
    model_dir: Annotated[Path, typer.Option(help="Local transformers model directory (config.json, tokenizer).")],
    served_model_name: Annotated[str, typer.Option(help="The model name requests must use.")] = "local",
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    chat_template_kwargs: Annotated[
        str, typer.Option(help="Default chat-template arguments, JSON (e.g. '{\"enable_thinking\": false}').")
    ] = "",
) -> None:
    """An OpenAI-compatible endpoint (/v1/chat/completions, /v1/models) over a local model with HF `generate`,
    where vLLM cannot run (CPU, the experiment's rehearsal); tool calls in the text are returned as `tool_calls`
    (Hermes JSON or Qwen3.5 XML, the reader the benchmark and the training probes use)."""
    try:
        serve_local(model_dir, served_model_name, host=host, port=port, chat_template_kwargs=chat_template_kwargs)
    except (FileNotFoundError, ValueError, OSError) as exc:
        fail(str(exc).splitlines()[0])


@app.command("overlap")
@guarded
def overlap_cmd(
    dataset: Annotated[
        Path,
        typer.Argument(
            help="Trajectory records: an export folder (kopa synth --out, kopa demo's export/) or its records.jsonl."
        ),
    ],
    tasks: Annotated[Path | None, TASKS_OPTION] = None,
    threshold: Annotated[float, typer.Option(help="Character 3-gram Jaccard of a near-duplicate request.")] = 0.8,
) -> None:
    """How much of a trajectory dataset overlaps the benchmark (same tool sequence with the same slot values, or a
    near-duplicate request). An export folder is read through its records.jsonl, the file training reads; the file
    read is named on stderr and in the report's `dataset`."""
    report = overlap_report(dataset, select_tasks(tasks), threshold=threshold)
    typer.echo(f"read {report['dataset']}", err=True)
    typer.echo(json.dumps(report, ensure_ascii=False))


@app.command("judge-eval")
@guarded
def judge_eval_cmd(
    corpus: Annotated[Path, typer.Option(help="A labelled answer corpus: a folder of *.jsonl or one file.")] = CORPUS,
    show: Annotated[int, typer.Option(help="Disagreements to print.")] = 20,
    out: Annotated[Path | None, typer.Option(help="Write the full report (JSON) here.")] = None,
) -> None:
    """The judge measured on labelled answers (bench/judge_eval.py): each answer judged in its task's oracle
    episode (the same tool results and clock); recall on the correct answers and false passes on the wrong ones,
    overall, per class and per category, and the answers it disagrees on."""
    items = load_corpus(corpus)
    task_list = select_tasks(None)

    async def go() -> dict[str, Any]:
        async with bench_env() as env:
            gold, episodes = await oracle_episodes(task_list, env)
            return evaluate(items, {t.id: t for t in task_list}, gold, episodes, tools=env.registry, now=env.now)

    report = asyncio.run(go())
    if out:
        out.write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    typer.echo(render(report, show=show))


app.command("bfcl")(bfcl_cmd)  # BFCL transfer evaluation, with bfcl-eval's own checkers (cli/bfcl.py)
