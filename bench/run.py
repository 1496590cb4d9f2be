"""`kopa bench run`: tasks x k trials through one agent, parallel across episodes, resumable.

The results folder holds `run.json` (what ran), `episodes.jsonl` (one line per finished episode, appended and
fsynced as each finishes, so a crash never loses a recorded episode; a torn last line is ignored on resume),
`gold.json` (the executed gold programs and their facts), `results.json` and the Markdown report.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from bench.agents import Agent
from bench.backends import Backend
from bench.episode import DEFAULT_MAX_TURNS, run_episode
from bench.gold import GoldError, execute_gold
from bench.records import EnvMeta, EpisodeRecord, GoldRecord, ResultsDoc, RunMeta
from bench.scores import aggregate, score_episode
from bench.tasks import Task, task_set_hash
from core.errors import KopaError
from graph.models import ToolRecord, utcnow


class BenchError(KopaError):
    status_code = 422
    code = "bench_error"


@dataclass
class BenchEnv:
    registry: dict[str, ToolRecord]
    backend: Backend
    now: datetime
    meta: EnvMeta


async def prepare_gold(
    tasks: list[Task], backend: Backend, now: datetime, *, concurrency: int = 8
) -> tuple[dict[str, GoldRecord], dict[str, str]]:
    """Execute every task's gold program: (gold by task id, refusal reason by task id)."""
    sem = asyncio.Semaphore(concurrency)
    gold: dict[str, GoldRecord] = {}
    refused: dict[str, str] = {}

    async def one(t: Task) -> None:
        async with sem:
            try:
                gold[t.id] = (await execute_gold(t, backend, now)).to_json()
            except GoldError as exc:
                refused[t.id] = exc.detail

    await asyncio.gather(*(one(t) for t in tasks))
    return gold, refused


def read_episodes(path: Path) -> list[EpisodeRecord]:
    """Finished episodes of a results file; a torn or corrupt line (a crash mid-write) is skipped."""
    if not path.exists():
        return []
    out: list[EpisodeRecord] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(doc, dict) and "task" in doc and "trial" in doc:
            out.append(cast(EpisodeRecord, doc))  # a line `_Writer.write` wrote
    return out


class _Writer:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size:
            with path.open("rb") as fh:  # a torn last line must not glue onto the next record
                fh.seek(-1, os.SEEK_END)
                torn = fh.read(1) != b"\n"
            if torn:
                with path.open("a", encoding="utf-8") as fh:
                    fh.write("\n")
        self.fh = path.open("a", encoding="utf-8")

    def write(self, ep: EpisodeRecord) -> None:
        self.fh.write(json.dumps(ep, ensure_ascii=False, default=str) + "\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def close(self) -> None:
        self.fh.close()


def _harness_failure(task: Task, trial: int, agent: Agent, mode: str, exc: BaseException) -> EpisodeRecord:
    return {
        "task": task.id,
        "category": task.category,
        "trial": trial,
        "agent": agent.name,
        "mode": mode,
        "status": "harness_error",
        "error": f"{type(exc).__name__}: {exc}"[:500],
        "final_answer": "",
        "first_reply": None,
        "offered": [],
        "distractors": [],
        "turns": [],
        "calls": [],
        "replay_misses": 0,
        "tokens": {"prompt": 0, "completion": 0},
        "agent_notes": {},
        "model_ms": 0.0,
        "harness_ms": 0.0,
    }


async def run_bench(
    tasks: list[Task],
    agent: Agent,
    env: BenchEnv,
    out: Path,
    *,
    k: int = 3,
    concurrency: int = 4,
    max_turns: int = DEFAULT_MAX_TURNS,
    seed: int = 0,
    resume: bool = True,
    progress: Any = None,
) -> ResultsDoc:
    """Run (or resume) the benchmark into `out` and return the results document (also written to results.json)."""
    if k < 1 or concurrency < 1 or max_turns < 1:
        raise BenchError("k, concurrency and max turns must be at least 1")
    out.mkdir(parents=True, exist_ok=True)
    tset = task_set_hash(tasks)
    run_file = out / "run.json"
    ep_file = out / "episodes.jsonl"
    started_at = utcnow()
    if run_file.exists() and resume:
        old = json.loads(run_file.read_text(encoding="utf-8"))
        same = {"agent": agent.name, "task_set_hash": tset, "mode": env.backend.mode}
        for key, value in same.items():
            if old.get(key) != value:
                raise BenchError(
                    f"{out} holds a run with another {key} ({old.get(key)} != {value}): "
                    "use another --out or --no-resume"
                )
        started_at = old.get("started_at", started_at)
    else:
        ep_file.unlink(missing_ok=True)
    run_meta: RunMeta = {
        "agent": agent.name,
        "model": agent.describe(),
        "mode": env.backend.mode,
        "task_set_hash": tset,
        "tasks": len(tasks),
        "k": k,
        "max_turns": max_turns,
        "seed": seed,
        **env.meta,
        "started_at": started_at,
    }
    run_file.write_text(json.dumps(run_meta, ensure_ascii=False, indent=1, default=str), encoding="utf-8")

    gold, refused = await prepare_gold(tasks, env.backend, env.now)
    (out / "gold.json").write_text(
        json.dumps({"gold": gold, "refused": refused}, ensure_ascii=False, indent=1, default=str), encoding="utf-8"
    )
    done = {(e["task"], int(e["trial"])) for e in read_episodes(ep_file)}
    jobs = [(t, trial) for t in tasks if t.id in gold for trial in range(k) if (t.id, trial) not in done]
    writer = _Writer(ep_file)
    sem = asyncio.Semaphore(concurrency)
    started = time.perf_counter()

    async def one(task: Task, trial: int) -> None:
        async with sem:
            try:
                ep = await run_episode(
                    task, agent, env.backend, env.registry, now=env.now, trial=trial, max_turns=max_turns
                )
            except Exception as exc:  # a harness bug is recorded as a failed episode, the run goes on
                ep = _harness_failure(task, trial, agent, env.backend.mode, exc)
            writer.write(ep)
            if progress:
                progress(ep)

    try:
        await asyncio.gather(*(one(t, trial) for t, trial in jobs))
    finally:
        writer.close()
    return finish(
        out,
        tasks,
        run_meta,
        gold,
        refused,
        k,
        seed=seed,
        wall_s=time.perf_counter() - started,
        resumed=len(done),
        tools=env.registry,
    )


def finish(
    out: Path,
    tasks: list[Task],
    run_meta: RunMeta,
    gold: dict[str, GoldRecord],
    refused: dict[str, str],
    k: int,
    *,
    seed: int = 0,
    wall_s: float = 0.0,
    resumed: int = 0,
    tools: dict[str, ToolRecord] | None = None,
) -> ResultsDoc:
    by_id = {t.id: t for t in tasks}
    latest: dict[tuple[str, int], EpisodeRecord] = {}
    for e in read_episodes(out / "episodes.jsonl"):
        if e["task"] in gold and e["task"] in by_id and int(e["trial"]) < k:
            latest[(e["task"], int(e["trial"]))] = e
    episodes = [latest[key] for key in sorted(latest)]
    clock = run_meta.get("clock")
    now = datetime.fromisoformat(clock) if isinstance(clock, str) and clock else None
    scored = [score_episode(by_id[e["task"]], gold[e["task"]], e, tools, now=now) for e in episodes]
    scores = aggregate(scored, k, seed=seed)
    doc: ResultsDoc = {
        "run": {
            **run_meta,
            "finished_at": utcnow(),
            "wall_s": round(wall_s, 3),
            "resumed_episodes": resumed,
            "episodes": len(episodes),
            "refused_tasks": len(refused),
        },
        "scores": scores,
        "refused": refused,
        "gold": gold,
        "scored": scored,
        "episodes": episodes,
    }
    (out / "results.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    return doc
