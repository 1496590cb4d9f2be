"""Replay scores the model, not its spelling: a call matches a recording after canonicalisation by the tool's spec
(documented defaults, argument order, number and text forms of one value, auth parameters ignored), a page the
recording covers is served from it exactly as the upstream pages it, and any other call is a replay miss, counted
apart from the model's failures. Every run goes through the real harness (bench.run.run_bench) over the
in-process sandbox."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bench.agents import OracleAgent
from bench.backends import LiveBackend, ReplayBackend, Snapshot, SnapshotError
from bench.gold import execute_gold
from bench.run import BenchEnv, run_bench
from bench.tasks import SHIPPED_TASKS, GoldStep, Task, load_tasks
from cli.bench import bench_env
from execution.canonical import call_key, canonical_call
from execution.result import CallResult, Outcome
from graph.conversions import TOOL_NAMES as CONVERSION_TOOLS
from graph.models import ToolRecord
from graph.specs import function_spec
from synthesis.records import StepResponse, Trajectory, TrajectoryStep
from training.environment import ReplayBackend as GrpoReplay

FIXTURES = Path(__file__).parent / "fixtures" / "bench"
TASKS = load_tasks(FIXTURES)
TIMING = ("model_ms", "harness_ms")


class RespellingOracle(OracleAgent):
    """The gold program written as a different spelling of the same requests: every documented default of the
    offered spec added (`pageNo=1`, `numOfRows=10`, ...), integers as text, numeric text as numbers, the added
    integer defaults as "1.0", the arguments in reverse order, and a made-up key in the auth parameter."""

    name = "oracle_respelled"

    def __init__(self, registry: dict[str, ToolRecord]) -> None:
        self.registry = registry
        self.respelled = 0
        self.sent: list[tuple[str, dict[str, Any]]] = []  # every call as sent

    def adjust(
        self, task: Task, step: GoldStep, args: dict[str, Any], results: dict[str, CallResult], scratch: dict[str, Any]
    ) -> dict[str, Any]:
        rec = self.registry[step.tool]
        visible = set(rec.json_schema.get("properties", {}))
        types = {p.name: p.type for p in rec.params}
        out: dict[str, Any] = {}
        for k, v in args.items():
            if types.get(k) in ("integer", "number") and isinstance(v, str) and v.isdigit():
                out[k] = int(v)
            elif isinstance(v, int) and not isinstance(v, bool):
                out[k] = str(v)
            else:
                out[k] = v
        for p in rec.params:
            if p.name in visible and p.default is not None and p.name not in out:
                out[p.name] = f"{p.default}.0" if p.type == "integer" else p.default
        if rec.auth_param:
            out[rec.auth_param] = "not-the-key"
        out = dict(reversed(list(out.items())))
        if out != args:
            self.respelled += 1
        self.sent.append((step.tool, out))
        return out


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _strip(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in s.items() if k not in TIMING} for s in doc["scored"]]


async def _bench(
    tasks: list[Task], agent: Any, out: Path, k: int, *, spelling_only: bool = False, **env: Any
) -> dict[str, Any]:
    async with bench_env(**env) as e:
        if spelling_only:  # the replay of before: byte-identical canonical_args, no spec
            assert isinstance(e.backend, ReplayBackend)
            e = BenchEnv(e.registry, ReplayBackend(e.backend.snapshot), e.now, e.meta)
        if callable(agent):
            agent = agent(e.registry)
        doc: dict[str, Any] = dict(await run_bench(tasks, agent, e, out, k=k, concurrency=4, resume=False))
        doc["agent_obj"] = agent
        return doc


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("replay")
    snap = root / "snapshot.json"
    out: dict[str, Any] = {"snapshot": snap}
    out["live"] = run(_bench(TASKS, OracleAgent(), root / "live", 3, record=snap))
    out["replay"] = run(_bench(TASKS, OracleAgent(), root / "replay", 3, mode="replay", snapshot=snap))
    out["respelled"] = run(_bench(TASKS, RespellingOracle, root / "respelled", 3, mode="replay", snapshot=snap))
    out["spelling_only"] = run(
        _bench(TASKS, RespellingOracle, root / "spelling", 1, mode="replay", snapshot=snap, spelling_only=True)
    )
    return out


def test_oracle_pass3_is_1_live_and_in_replay(runs: dict[str, Any]) -> None:
    for mode in ("live", "replay"):
        o = runs[mode]["scores"]["overall"]
        assert runs[mode]["scores"]["k"] == 3 and o["episodes"] == 3 * len(TASKS), mode
        assert o["pass_hat_k"] == 1.0 and o["replay_misses"] == 0 and o["failures"] == {}, mode
    assert _strip(runs["live"]) == _strip(runs["replay"])


def test_a_respelled_oracle_scores_the_same_in_replay(runs: dict[str, Any]) -> None:
    agent: RespellingOracle = runs["respelled"]["agent_obj"]
    assert agent.respelled >= 3 * (len(TASKS) - 2)  # every task with calls was respelled, every trial
    calls = [c for e in runs["respelled"]["episodes"] for c in e["calls"]]
    assert any(c["args"] and "pageNo" in c["args"] for c in calls)  # the defaults really went out
    o = runs["respelled"]["scores"]["overall"]
    assert o["pass_hat_k"] == 1.0 and o["replay_misses"] == 0
    assert o["arg_accuracy"] == o["provenance_accuracy"] == 1.0  # arguments compare canonically too
    same = ("passed", "checks", "failure", "facts_hit", "calls", "arg_accuracy", "provenance_accuracy")
    assert [{k: s[k] for k in same} for s in runs["respelled"]["scored"]] == [
        {k: s[k] for k in same} for s in runs["replay"]["scored"]
    ]


def _grpo_record(snap: Snapshot, registry: dict[str, ToolRecord]) -> Trajectory:
    """The recordings of a snapshot as the steps of one GRPO record (its own offered function specs)."""
    steps: list[TrajectoryStep] = []
    for e in snap.entries.values():
        if e["outcome"] not in (Outcome.OK, Outcome.EMPTY):
            continue
        items = list(e.get("items", []))
        response = StepResponse(
            rows=e.get("total") or len(items), first=e.get("first") or 1, items=items, shown=list(range(len(items)))
        )
        n = len(steps) + 1
        steps.append(TrajectoryStep(step=n, tool=e["tool"], arguments=e["args"], provenance={}, response=response))
    tools = [function_spec(registry[t]) for t in sorted({s.tool for s in steps})]
    return Trajectory(
        id="snap", request="", shape="chain", n_steps=len(steps), tools=tools, steps=steps, final_answer=""
    )


def test_a_respelled_oracle_finds_every_recording_in_grpo_replay_too(runs: dict[str, Any]) -> None:
    """GRPO's replay over the same recordings (training.environment.ReplayBackend, the steps of a record) answers
    every call of the respelled oracle that the benchmark's replay answers: one canonical call, one lookup
    (execution/replay.py), given the registry as the benchmark's replay is. By the records' function specs alone,
    what those specs do not state (the defaults added by the respelling, `numOfRows=10`, and the auth parameter
    it fills) is all that misses."""
    agent: RespellingOracle = runs["respelled"]["agent_obj"]
    snap = Snapshot.load(runs["snapshot"])
    bench = ReplayBackend(snap, agent.registry)
    record = _grpo_record(snap, agent.registry)
    grpo = GrpoReplay([record], tools=agent.registry)
    by_schema = GrpoReplay([record])
    sent = [(t, a) for t, a in agent.sent if t not in CONVERSION_TOOLS]
    assert len(sent) >= 3 * (len(TASKS) - 2)
    answered = [(t, a) for t, a in sent if not asyncio.run(bench.call(t, a)).miss]
    assert answered == sent
    assert [(t, a) for t, a in answered if "error" in grpo.run("snap", t, a)] == []
    for t, a in answered:
        if "error" in by_schema.run("snap", t, a):
            spec = by_schema.specs[t]["function"]["parameters"]
            tool = agent.registry[t]
            unstated = {p.name for p in tool.params if p.default is not None} | {str(tool.auth_param)}
            assert set(canonical_call(spec, a)) - set(canonical_call(tool, a)) <= unstated, (t, a)


def test_byte_identical_replay_would_have_missed_the_respelled_calls(runs: dict[str, Any]) -> None:
    """The same respelled agent against spelling-only matching: the misses the canonicalisation removes, each
    counted apart from the failures and attributed as a replay miss."""
    o = runs["spelling_only"]["scores"]["overall"]
    assert o["replay_misses"] > 0 and o["pass_hat_k"] < 0.5
    failed = [s for s in runs["spelling_only"]["scored"] if not s["passed"]]
    assert failed and all(s["failure"] == "replay_miss" for s in failed)
    assert o["failures"] == {"replay_miss": len(failed)} and o["replay_miss_episodes"] >= len(failed)


def test_canonical_call_by_the_spec() -> None:
    async def go() -> dict[str, ToolRecord]:
        async with bench_env() as env:
            return env.registry

    reg = run(go())
    kma = reg["kma_get_vilage_fcst"]
    base = {"base_date": "20261015", "base_time": "0500", "nx": 60, "ny": 127}
    same = [
        {**base, "pageNo": 1},
        {**base, "nx": "60", "ny": "127.0"},
        {**base, "pageNo": "1.0", "serviceKey": "x"},
        dict(reversed(list(base.items()))),
        {**base, "dataType": "json"},
        {**base, "ny": 127.0, "ServiceKey": "y"},
    ]
    assert all(canonical_call(kma, a) == canonical_call(kma, base) for a in same)
    differ = [
        {**base, "pageNo": 2},
        {**base, "nx": 61},
        {**base, "dataType": "XML"},
        {**base, "base_time": "500"},
        {**base, "extra": "1"},
    ]
    assert all(canonical_call(kma, a) != canonical_call(kma, base) for a in differ)
    # text parameters keep their text: zero-padding and codes are the model's job, never canonicalised away
    bld = reg["molit_get_br_title_info"]
    assert next(p.type for p in bld.params if p.name == "bun") == "string"
    assert canonical_call(bld, {"bun": "0012"}) != canonical_call(bld, {"bun": "12"})
    assert canonical_call(bld, {"bun": 12}) == canonical_call(bld, {"bun": "12"})
    # an integer parameter reads the number, whatever its spelling; a leading zero makes a code, which upstreams
    # answer apart (the sandbox's juso finds no building at buldSlno=0000, one at 0)
    juso = reg["juso_addr_coord_api"]
    assert canonical_call(juso, {"buldMnnm": " 185"}) == canonical_call(juso, {"buldMnnm": 185.0})
    assert canonical_call(juso, {"buldSlno": "0000"}) != canonical_call(juso, {"buldSlno": 0})


def test_a_page_the_recording_covers_is_served_as_live_pages_it() -> None:
    """A recorded 1000-row forecast serves `pageNo=3&numOfRows=10` with exactly the rows a live call gets; a page
    reaching past the recorded rows, or a bigger page than recorded, is a miss."""

    async def go() -> None:
        snap = Snapshot()
        async with bench_env() as env:
            assert isinstance(env.backend, LiveBackend)
            live = LiveBackend(env.backend.executor, env.registry, record=snap)
            base = {"base_date": env.now.strftime("%Y%m%d"), "base_time": "0500", "nx": 60, "ny": 127}
            whole = await live.call("kma_get_vilage_fcst", {**base, "numOfRows": 1000})
            assert whole.ok and 100 < len(whole.items) < 1000
            first10 = await env.backend.call("kma_get_vilage_fcst", {**base, "numOfRows": 10, "pageNo": 1})
            pages = {
                p: await env.backend.call("kma_get_vilage_fcst", {**base, "numOfRows": 10, "pageNo": p}) for p in (3, 7)
            }
            replay = ReplayBackend(snap, env.registry)
            for p, want in pages.items():
                got = await replay.call("kma_get_vilage_fcst", {**base, "numOfRows": "10", "pageNo": str(p)})
                assert (got.outcome, got.items) == (want.outcome, want.items) and not got.miss, p
            got = await replay.call("kma_get_vilage_fcst", {**base, "numOfRows": 10})
            assert got.items == first10.items and replay.paged == 3
            n = len(whole.items)
            beyond = await replay.call("kma_get_vilage_fcst", {**base, "numOfRows": 1000, "pageNo": 2})
            bigger = await replay.call("kma_get_vilage_fcst", {**base, "numOfRows": n + 50})
            assert beyond.miss and bigger.miss and len(replay.misses) == 2
            assert replay.misses[0]["args"]["pageNo"] == "2"

    run(go())


@pytest.mark.skipif(not any(SHIPPED_TASKS.glob("*.yaml")), reason="no shipped tasks")
def test_shipped_tasks_oracle_and_respelled_oracle_in_replay(tmp_path: Path) -> None:
    """The figures of the closing note on the shipped task set: oracle pass^3 live and in replay, and the
    respelled oracle in replay (`pytest tests/test_bench_replay.py -k shipped -s` prints them)."""
    tasks = load_tasks()

    async def gold_ok() -> set[str]:
        async with bench_env() as env:
            ok = set()
            for t in tasks:
                try:
                    await execute_gold(t, env.backend, env.now)
                    ok.add(t.id)
                except Exception:  # a task other work refuses is not this test's subject
                    continue
            return ok

    valid = run(gold_ok())
    tasks = [t for t in tasks if t.id in valid]
    snap = tmp_path / "snap.json"
    live = run(_bench(tasks, OracleAgent(), tmp_path / "live", 3, record=snap))
    replay = run(_bench(tasks, OracleAgent(), tmp_path / "replay", 3, mode="replay", snapshot=snap))
    resp = run(_bench(tasks, RespellingOracle, tmp_path / "resp", 3, mode="replay", snapshot=snap))
    figures = {
        name: (d["scores"]["overall"]["pass_hat_k"], d["scores"]["overall"]["replay_misses"])
        for name, d in (("live", live), ("replay", replay), ("respelled replay", resp))
    }
    print(f"\nshipped tasks {len(tasks)}: pass^3 and replay misses {figures}")
    assert all(v == (1.0, 0) for v in figures.values()), figures


def test_snapshot_entries_keep_their_shape_and_an_unknown_outcome_is_refused(tmp_path: Path) -> None:
    """A snapshot entry keeps the replayed part of a result (what version 1 files hold), not the executor's
    timing; such a file replays as the one CallResult, and an entry with an outcome no code knows is refused."""
    rec = Snapshot()
    rec.put("t", {"q": "2"}, CallResult(Outcome.OK, [{"a": 1}], latency_ms=3.2, status=200, url="http://x/t?q=2"))
    rec.put("t", {"q": "3"}, CallResult(Outcome.TRANSIENT, reason="HTTP 503"))  # never recorded
    assert [set(e) for e in rec.entries.values()] == [{"tool", "args", "outcome", "items", "reason", "code"}]
    entry = {"tool": "t", "args": {"q": "1"}, "outcome": "empty", "items": [], "reason": "03 NO_DATA", "code": "03"}
    snap = Snapshot({call_key("t", None, {"q": "1"}): entry})
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"version": 1, "id": snap.id, "entries": snap.entries}), encoding="utf-8")
    got = asyncio.run(ReplayBackend(Snapshot.load(path)).call("t", {"q": 1}))
    assert got.outcome is Outcome.EMPTY and got.code == "03" and not got.miss
    miss = asyncio.run(ReplayBackend(Snapshot.load(path)).call("t", {"q": 4}))
    assert miss.outcome is Outcome.ERROR and miss.miss
    bad = Snapshot({"k": {**entry, "outcome": "maybe"}})
    path.write_text(json.dumps({"version": 1, "id": bad.id, "entries": bad.entries}), encoding="utf-8")
    with pytest.raises(SnapshotError, match="no known outcome"):
        Snapshot.load(path)
