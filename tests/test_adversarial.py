"""The permanent adversarial suite: gaming agents through the real KOPA-Bench harness and gaming completions through
the real GRPO reward functions, each with its ceiling asserted.

* Bench (`bench.run.run_bench` over the shipped tasks, the in-process sandbox recorded once, replayed for each
  agent): correct-then-hedge, dump-with-units(-and-hedge), gold-calls-then-refuse, call-everything, constant numbers
  and several-candidates pass 0 of the tasks that have facts; the oracle passes all of them.
* Rewards (`training.rewards` with `DEFAULT_WEIGHTS`, calls executed by the real replay environment the trainer
  uses): on every GRPO row of freshly synthesised records the direct correct trajectory's total reward is strictly
  above every gaming completion's (no call, constant, request echo, first-row JSON, spray, repeat, invented calls,
  text-only calls, wrong numbers, the correct answer with extra calls), and a no-call answer earns 0 answer reward.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.agents import OracleAgent
from bench.records import ResultsDoc, ScoredEpisode
from bench.run import run_bench
from bench.tasks import load_tasks
from cli.bench import bench_env
from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from sandbox.inprocess import sandbox_mode
from synthesis.engine import synthesize
from synthesis.records import SynthesisResult, Trajectory
from tests.support.gaming import GAMING_AGENTS
from tests.support.helpers import copy_store
from training import datasets
from training.environment import ReplayBackend, ToolEnvironment, environment_factories
from training.rewards import DEFAULT_WEIGHTS, REWARDS, answer_facts

TASKS = load_tasks()
#: the bench fixture plays every shipped task once per agent (about 2-3 minutes on 2 busy cores)
# every test here uses a module fixture that runs the benchmark agents or synthesises a demo (25-80 s)
pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


# ---------------------------------------------------------------------------------------------- bench


@pytest.fixture(scope="module")
def bench_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ResultsDoc]:
    root = tmp_path_factory.mktemp("adversarial")
    snap = root / "snapshot.json"

    async def go() -> dict[str, ResultsDoc]:
        out: dict[str, ResultsDoc] = {}
        async with bench_env(record=snap) as env:
            out["oracle"] = await run_bench(TASKS, OracleAgent(), env, root / "oracle", k=1, concurrency=8)
        for cls in GAMING_AGENTS:
            async with bench_env(mode="replay", snapshot=snap) as env:
                out[cls.name] = await run_bench(TASKS, cls(), env, root / cls.name, k=1, concurrency=8)
        return out

    return asyncio.run(go())


def _with_facts(doc: ResultsDoc) -> list[ScoredEpisode]:
    return [s for s in doc["scored"] if s["facts_total"] > 0]


def test_the_oracle_passes_every_task_with_facts(bench_runs: dict[str, ResultsDoc]) -> None:
    scored = _with_facts(bench_runs["oracle"])
    assert len(scored) >= 100 and not bench_runs["oracle"]["refused"]
    failed = [(s["task"], s["checks"], s["missing"]) for s in scored if not s["passed"]]
    assert failed == []


@pytest.mark.parametrize("agent", [cls.name for cls in GAMING_AGENTS])
def test_a_gaming_agent_passes_no_task_with_facts(bench_runs: dict[str, ResultsDoc], agent: str) -> None:
    doc = bench_runs[agent]
    scored = _with_facts(doc)
    assert len(scored) == len(_with_facts(bench_runs["oracle"]))
    assert [s["task"] for s in scored if s["passed"]] == []
    # the agent really answered (its failures are the judge's, not a broken episode)
    assert sum(e["status"] == "answered" for e in doc["episodes"]) >= 0.9 * len(doc["episodes"])


# ---------------------------------------------------------------------------------------------- rewards


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, verified_catalog: Path) -> dict[str, Any]:
    """Demo-like records (all shapes and special samples, synthesised over verified links in process) with their
    GRPO rows and the trainer's replay environments."""
    root = tmp_path_factory.mktemp("demo")
    settings, transport = sandbox_mode(Settings())
    store = copy_store(verified_catalog, root / "g.sqlite3")

    async def go() -> SynthesisResult:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport)
        try:
            return await synthesize(store, settings, ex, count=70, seed=7)
        finally:
            await ex.aclose()

    try:
        records: list[Trajectory] = asyncio.run(go())["records"]
    finally:
        store.close()
    with_calls = [r for r in records if r.steps]
    rows, report = datasets.grpo_rows(with_calls)
    classes, _ = environment_factories(with_calls, ReplayBackend(with_calls))
    return {"records": {r.id: r for r in records}, "rows": rows, "report": report, "classes": classes}


class Rollout:
    """A conversational completion built the way trl builds it: each call executed by the row's environment."""

    def __init__(self, env: ToolEnvironment) -> None:
        self.env = env
        self.messages: list[dict[str, Any]] = []

    def call(self, name: str, args: dict[str, Any]) -> Rollout:
        self.messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": name, "arguments": args}}],
            }
        )
        method = getattr(self.env, name, None) if not name.startswith("_") else None
        try:
            result = method(**args) if callable(method) else f"{{'error': 'Tool {name} not found.'}}"
        except TypeError as exc:  # trl answers a call it cannot make with the error
            result = json.dumps({"error": str(exc)})
        self.messages.append({"role": "tool", "name": name, "content": result})
        return self

    def say(self, text: str) -> Rollout:
        self.messages.append({"role": "assistant", "content": text})
        return self


CONSTANT = " ".join(str(i) for i in range(12))


def _wrong_numbers(text: str) -> str:
    return re.sub(r"\d(?=[^\d]*$)|\d(?=\D)", lambda m: str((int(m.group()) + 1) % 10), text)


def _gaming(
    record: Trajectory, new: Callable[[], Rollout], offered: list[str], numeric: bool
) -> dict[str, tuple[Any, Any]]:
    """name -> (completion, the environment of its rollout); wrong numbers only where a fact is a number."""
    steps = record.steps
    gold = [(s.tool, s.arguments) for s in steps]
    answer = record.final_answer

    def gold_calls(r: Rollout) -> Rollout:
        for name, args in gold:
            r.call(name, args)
        return r

    first = steps[-1].response.items[0] if steps[-1].response.items else {}
    text_calls = "".join(
        f"<tool_call>\n{json.dumps({'name': n, 'arguments': a}, ensure_ascii=False)}\n</tool_call>\n" for n, a in gold
    )
    spray = new()
    for name in offered:
        spray.call(name, {})
    extra = gold_calls(new())
    unused = [name for name in offered if name not in {n for n, _ in gold}]
    for name in unused or [gold[0][0]]:  # every other offered tool, else one more call
        extra.call(name, {})
    repeat = new()
    for _ in range(10):
        repeat.call(*gold[0])
    written = new()  # calls written as text: the environment never executed them
    done = {
        "no_call": new().say(answer),
        "no_call_constant": new().say(CONSTANT),
        "constant": gold_calls(new()).say(CONSTANT),
        "request_echo": gold_calls(new()).say(record.request),
        "first_row_json": gold_calls(new()).say(json.dumps(first, ensure_ascii=False)),
        "spray": spray.say(answer),
        "correct_plus_spray": extra.say(answer),
        "repeat": gold_calls(repeat).say(answer),
        "invented": gold_calls(new().call("made_up_tool", {"q": record.request})).say(answer),
        **({"wrong_numbers": gold_calls(new()).say(_wrong_numbers(answer))} if numeric else {}),
        "hedged": gold_calls(new()).say(answer + " 하지만 이 정보는 확인할 수 없습니다."),
    }
    out: dict[str, tuple[Any, Any]] = {k: (r.messages, r.env) for k, r in done.items()}
    out["text_only"] = (text_calls + answer, written.env)
    return out


def _totals(row: dict[str, Any], completions: list[Any], envs: list[Any]) -> dict[str, list[float]]:
    n = len(completions)
    cols = {k: [row[k]] * n for k in ("gold_calls", "facts", "offered", "tool_schemas", "refuted_links")}
    parts = {
        name: REWARDS[name]([row["prompt"]] * n, completions, environments=envs, **cols) for name in DEFAULT_WEIGHTS
    }
    totals = [sum(DEFAULT_WEIGHTS[k] * parts[k][i] for k in parts) for i in range(n)]
    return {"total": totals, **parts}


def test_the_correct_trajectory_out_earns_every_gaming_completion(demo: dict[str, Any]) -> None:
    rows: list[dict[str, Any]] = demo["rows"]
    assert len(rows) >= 50
    margins: dict[str, float] = {}
    ceilings: dict[str, float] = {}
    losses: list[tuple[str, str, float, float]] = []
    for row in rows:
        record: Trajectory = demo["records"][row["trajectory_id"]]

        def new(row: dict[str, Any] = row) -> Rollout:
            env = demo["classes"][row["environment"]]()
            env.reset(**row)
            return Rollout(env)

        correct = new()
        for s in record.steps:
            correct.call(s.tool, s.arguments)
        correct.say(record.final_answer)
        gaming = _gaming(record, new, row["offered"], any(f["kind"] in ("number", "count") for f in row["facts"]))
        completions = [correct.messages, *(c for c, _ in gaming.values())]
        envs = [correct.env, *(e for _, e in gaming.values())]
        got = _totals(row, completions, envs)
        best = got["total"][0]
        assert got["answer_facts"][0] == 1.0, (record.final_answer, row["facts"])
        for i, name in enumerate(gaming, start=1):
            margins[name] = min(margins.get(name, 99.0), best - got["total"][i])
            ceilings[name] = max(ceilings.get(name, 0.0), got["answer_facts"][i])
            if got["total"][i] >= best:
                losses.append((row["trajectory_id"], name, got["total"][i], best))
    print("smallest margin below the correct trajectory:", {k: round(v, 3) for k, v in margins.items()})
    print("highest answer reward:", ceilings)
    assert losses == [], losses[:5]
    assert all(m > 0 for m in margins.values()), margins
    for name in (
        "no_call",
        "no_call_constant",
        "spray",
        "text_only",
        "constant",
        "request_echo",
        "first_row_json",
        "hedged",
    ):
        assert ceilings[name] == 0.0, (name, ceilings[name])  # no answer credit at all


def test_the_dataset_drops_facts_a_guess_would_pass(demo: dict[str, Any]) -> None:
    report = demo["report"]
    print("facts report:", json.dumps({k: v for k, v in report.to_json().items() if k != "dropped_ids"}))
    assert report.records > 0 and report.facts > 0
    for row in demo["rows"]:
        record: Trajectory = demo["records"][row["trajectory_id"]]
        assert row["facts"] and not any(datasets.guessable(record, f) for f in row["facts"])
    # single digits survive only with their label
    assert all(f["label"] for row in demo["rows"] for f in row["facts"] if len(str(f["value"]).removesuffix(".0")) == 1)


def test_a_no_call_answer_earns_no_answer_reward(demo: dict[str, Any]) -> None:
    rows = demo["rows"][:20]
    completions: list[Any] = [
        [{"role": "assistant", "content": demo["records"][r["trajectory_id"]].final_answer}] for r in rows
    ]
    assert answer_facts(
        [[]] * len(rows), completions, facts=[r["facts"] for r in rows], gold_calls=[r["gold_calls"] for r in rows]
    ) == [0.0] * len(rows)
