"""One canonical call (execution/canonical.py) and one replay lookup (execution/replay.py): the executor's response
cache, the benchmark's replay, GRPO's replay and the GRPO rewards agree on respelled calls: an integer sent as text,
a documented default sent or omitted, the arguments in another order, surrounding whitespace. A call that asks for
something else is another call to all four. Everything runs over the in-process sandbox (bench_env)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bench.backends import LiveBackend, ReplayBackend, Snapshot
from cli.bench import bench_env
from execution.canonical import canonical_call
from execution.result import CallResult
from graph.models import ToolRecord
from graph.specs import function_spec
from synthesis.records import StepResponse, Trajectory, TrajectoryStep
from training import environment, rewards

TOOL = "kma_get_vilage_fcst"


def respellings(base: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        "integer as text": {**base, "nx": str(base["nx"]), "ny": f"{base['ny']}.0"},
        "default sent": {**base, "pageNo": 1},
        "default sent as text": {**base, "pageNo": " 1"},
        "order": dict(reversed(list(base.items()))),
        "whitespace": {**base, "base_date": f" {base['base_date']} ", "base_time": "0500 ", "nx": f" {base['nx']}"},
        "all at once": dict(reversed(list({**base, "pageNo": "1", "nx": f"{base['nx']} ", "ny": "127"}.items()))),
    }


def others(base: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        "another place": {**base, "nx": base["nx"] + 1},
        "another page": {**base, "pageNo": 2},
        "a text's zero dropped": {**base, "base_time": "500"},
        "a leading zero on a number (a code)": {**base, "nx": f"0{base['nx']}"},
    }


def record_of(tool: ToolRecord, args: dict[str, Any], result: CallResult) -> Trajectory:
    items = [dict(r) for r in result.items]
    step = TrajectoryStep(
        step=1,
        tool=tool.name,
        arguments=args,
        provenance={},
        response=StepResponse(rows=result.total or len(items), items=items, shown=list(range(len(items)))),
    )
    return Trajectory(
        id="r1",
        request="",
        shape="single",
        n_steps=1,
        tools=[function_spec(tool)],
        steps=[step],
        final_answer="",
    )


def gold_credit(tool: ToolRecord, gold: dict[str, Any], sent: dict[str, Any]) -> float:
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": tool.name, "arguments": sent}}],
    }
    completion: list[dict[str, Any]] = [
        call,
        {"role": "tool", "name": tool.name, "content": json.dumps({"rows": 1, "items": [{}]})},
    ]
    gold_calls = [{"step": 1, "tool": tool.name, "arguments": gold, "provenance": {}, "depends_on": []}]
    return rewards.gold_arguments(
        [[]], [completion], gold_calls=[gold_calls], tool_schemas=[{tool.name: tool.json_schema}]
    )[0]


def test_the_cache_both_replays_and_the_reward_agree_on_respelled_calls() -> None:
    async def go() -> None:
        async with bench_env() as env:
            assert isinstance(env.backend, LiveBackend)
            executor = env.backend.executor
            tool = env.registry[TOOL]
            base = {"base_date": env.now.strftime("%Y%m%d"), "base_time": "0500", "nx": 60, "ny": 127, "numOfRows": 10}
            first = await executor.call(tool, base)
            assert first.ok and first.items and not first.cached
            snap = Snapshot()
            snap.put(TOOL, base, first, tool)
            bench = ReplayBackend(snap, env.registry)
            grpo = environment.ReplayBackend([record_of(tool, base, first)])
            recorded = grpo.run("r1", TOOL, base)
            assert "error" not in recorded
            for why, args in respellings(base).items():
                assert canonical_call(tool, args) == canonical_call(tool, base), why
                cached = await executor.call(tool, args)
                assert cached.cached and cached.items == first.items, why
                replayed = await bench.call(TOOL, args)
                assert not replayed.miss and replayed.items == first.items, why
                assert grpo.run("r1", TOOL, args) == recorded, why
                assert gold_credit(tool, base, args) == 1.0, why
            for why, args in others(base).items():
                assert canonical_call(tool, args) != canonical_call(tool, base), why
                fresh = await executor.call(tool, args)
                assert not fresh.cached, why
                assert (await bench.call(TOOL, args)).miss, why
                assert "error" in grpo.run("r1", TOOL, args), why
                # the reward grades the gold arguments: an argument beyond them (another page) is not its business
                assert gold_credit(tool, base, args) < 1.0 or why == "another page", why
            assert not bench.paged

    asyncio.run(go())


def test_a_page_a_recorded_listing_holds_is_served_by_both_replays() -> None:
    """`pageNo=2&numOfRows=5` from a recorded `numOfRows=20`: the same rows from the benchmark's replay and from
    GRPO's, and the rows a live call gets; a page past the recorded rows is a miss to both."""

    async def go() -> None:
        async with bench_env() as env:
            assert isinstance(env.backend, LiveBackend)
            executor = env.backend.executor
            tool = env.registry[TOOL]
            base = {"base_date": env.now.strftime("%Y%m%d"), "base_time": "0500", "nx": 60, "ny": 127}
            whole = await executor.call(tool, {**base, "numOfRows": 20})
            live = await executor.call(tool, {**base, "numOfRows": 5, "pageNo": 2})
            assert whole.ok and len(whole.items) == 20 and live.ok
            snap = Snapshot()
            snap.put(TOOL, {**base, "numOfRows": 20}, whole, tool)
            bench = ReplayBackend(snap, env.registry)
            grpo = environment.ReplayBackend([record_of(tool, {**base, "numOfRows": 20}, whole)])
            page = {**base, "numOfRows": "5", "pageNo": "2"}
            got = await bench.call(TOOL, page)
            assert got.items == live.items and got.first == 6 and bench.paged == 1
            view = grpo.run("r1", TOOL, page)
            assert "error" not in view and view == grpo.run("r1", TOOL, {**page, "pageNo": 2})
            past = {**base, "numOfRows": 5, "pageNo": 5}
            assert (await bench.call(TOOL, past)).miss and "error" in grpo.run("r1", TOOL, past)

    asyncio.run(go())


def test_a_function_spec_alone_knows_the_first_page_and_the_types() -> None:
    """Where only the model-facing schema is at hand (GRPO's records, the rewards' `tool_schemas`), the types and
    the first page still canonicalise; defaults the schema does not state (numOfRows=10) need the tool's record."""

    async def go() -> ToolRecord:
        async with bench_env() as env:
            return env.registry[TOOL]

    tool = asyncio.run(go())
    schema = tool.json_schema
    base = {"base_date": "20261015", "base_time": "0500", "nx": 60, "ny": 127}
    assert canonical_call(schema, {**base, "pageNo": "1", "nx": " 60"}) == canonical_call(schema, base)
    assert canonical_call(tool, {**base, "numOfRows": 10}) == canonical_call(tool, base)
    assert canonical_call(schema, {**base, "numOfRows": 10}) != canonical_call(schema, base)
