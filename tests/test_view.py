"""The one view of a tool result (execution/view.py): budget, order, note, idempotence."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from bench.records import AgentInfo
from core.clock import world_at
from execution.view import BUDGET, Budget, narrowing, tool_view, view_object, visible

SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "kma_get_vilage_fcst",
        "description": "forecast",
        "parameters": {
            "type": "object",
            "required": ["base_date", "base_time", "nx", "ny"],
            "properties": {
                "pageNo": {"type": "integer"},
                "numOfRows": {"type": "integer"},
                "dataType": {"type": "string", "enum": ["JSON", "XML"]},
                "base_date": {"type": "string"},
                "base_time": {"type": "string"},
                "nx": {"type": "integer"},
                "ny": {"type": "integer"},
            },
        },
    },
}


def forecast_rows(n: int) -> list[dict[str, Any]]:
    cats = ["TMP", "UUU", "VVV", "VEC", "WSD", "SKY", "PTY", "POP", "WAV", "PCP", "REH", "SNO"]
    return [
        {
            "baseDate": "20261015",
            "baseTime": "1100",
            "category": cats[i % 12],
            "fcstDate": "20261015",
            "fcstTime": f"{12 + i // 12:02d}00",
            "fcstValue": str(i),
            "nx": 60,
            "ny": 127,
        }
        for i in range(n)
    ]


def test_first_rows_in_order_with_total_and_a_note_naming_filters_and_paging() -> None:
    rows = forecast_rows(823)
    doc = json.loads(tool_view("ok", rows, tool=SPEC))
    assert doc["rows"] == 823 and doc["shown"] == BUDGET.rows
    assert doc["items"] == rows[: BUDGET.rows]  # the provider's order, from the first row
    assert "823" in doc["note"] and "pageNo" in doc["note"] and "numOfRows" in doc["note"]
    assert "base_time" in doc["note"] and "dataType" not in doc["note"]
    assert narrowing(SPEC) == (["base_date", "base_time", "nx", "ny"], ["pageNo", "numOfRows"])


def test_small_answers_are_whole_and_have_no_note() -> None:
    rows = forecast_rows(12)
    doc = json.loads(tool_view("ok", rows, tool=SPEC))
    assert doc == {"rows": 12, "shown": 12, "items": rows}


def test_budget_cuts_values_fields_and_message_size() -> None:
    wide = [{f"f{j}": "가" * 1000 for j in range(100)} for _ in range(5)]
    doc = view_object("ok", wide, tool=SPEC)
    assert all(len(r) == BUDGET.fields for r in doc["items"])
    assert all(len(v) == BUDGET.value_chars and v.endswith("…") for r in doc["items"] for v in r.values())
    assert doc["shown"] == 1  # one 32-field row of 300-character values is over the message cap on its own
    trades = [{f"k{j}": f"value-{i}-{j}" for j in range(32)} for i in range(50)]
    text = tool_view("ok", trades, tool=SPEC)
    assert len(text) <= BUDGET.message_chars
    assert json.loads(text)["shown"] < BUDGET.rows  # the character cap binds before the row cap


def test_visible_rows_and_total_render_the_same_text() -> None:
    for rows in (forecast_rows(823), forecast_rows(5), [{f"k{j}": "x" * 400 for j in range(100)} for _ in range(30)]):
        shown = visible(rows, tool=SPEC)
        assert tool_view("ok", shown, total=len(rows), tool=SPEC) == tool_view("ok", rows, tool=SPEC)


def test_empty_and_errors() -> None:
    assert json.loads(tool_view("empty", reason="NO_DATA")) == {"rows": 0, "items": [], "message": "NO_DATA"}
    assert json.loads(tool_view("ok", [])) == {"rows": 0, "items": [], "message": "no data"}
    assert json.loads(tool_view("invalid", reason="SERVICE_KEY_IS_NOT_REGISTERED")) == {
        "error": "invalid",
        "message": "SERVICE_KEY_IS_NOT_REGISTERED",
    }


def test_a_tool_without_paging_says_so() -> None:
    spec = {"function": {"name": "x", "parameters": {"properties": {}}}}
    doc = view_object("ok", forecast_rows(30), tool=spec, budget=Budget(rows=5))
    assert doc["shown"] == 5 and "no filter or paging" in doc["note"]


# ------------------------------------------------------------------------------------ one view, three consumers


class _Replaying:
    """A bench agent that makes the calls of one recorded trajectory, one step per turn, then answers."""

    name = "replaying"

    def __init__(self, steps: list[Any]) -> None:
        self.steps = list(steps)

    def describe(self) -> AgentInfo:
        return {"adapter": "test", "model": self.name}

    async def reply(self, ctx: Any) -> Any:
        from bench.agents import AgentReply, ToolCall

        if not self.steps:
            return AgentReply(content="끝")
        s = self.steps.pop(0)
        return AgentReply(tool_calls=[ToolCall(f"c{s.step}", s.tool, dict(s.arguments), "", "")])

    async def aclose(self) -> None:
        return None


def test_the_same_response_renders_identically_in_sft_grpo_and_the_benchmark(
    tmp_path: Any, verified_catalog: Any
) -> None:
    """A synthesised record's tool messages (the SFT row), a GRPO rollout's tool messages (the training environment,
    live against the sandbox) and a KOPA-Bench episode's tool messages (live against the same sandbox) are the same
    text for the same calls."""
    import asyncio

    from bench.backends import LiveBackend as BenchLive
    from bench.episode import run_episode
    from bench.tasks import Task
    from core.settings import Settings
    from execution.executor import Executor
    from execution.limits import MemoryEconomy
    from sandbox.inprocess import sandbox_mode
    from synthesis.engine import synthesize
    from synthesis.formats import to_trl
    from tests.support.helpers import copy_store
    from training.config import GrpoConfig
    from training.datasets import sft_row, toolset_key
    from training.environment import LiveBackend, environment_factories

    settings, transport = sandbox_mode(Settings())
    store = copy_store(verified_catalog, tmp_path / "g.sqlite3")
    tools = {t.name: t for t in store.all_tools()}
    apis = {a.id: a for a in store.list_apis(limit=100)[0]}

    async def synth() -> list[Any]:
        ex = Executor(settings, MemoryEconomy(), apis, transport=transport)
        try:
            out = await synthesize(store, settings, ex, count=16, seed=5, shapes=("chain",), extras={})
            return list(out["records"])
        finally:
            await ex.aclose()

    records = asyncio.run(synth())
    assert records
    grpo = LiveBackend(settings, tools, apis, transport=transport, economy=MemoryEconomy())
    compared = noted = 0
    try:
        classes, _ = environment_factories(records, grpo, max_calls=10)
        for rec in records:
            sft = [m["content"] for m in sft_row(rec)["messages"] if m["role"] == "tool"]
            assert sft == [m["content"] for m in to_trl(rec)["messages"] if m["role"] == "tool"]
            env = classes[toolset_key(rec)]()
            env.reset(trajectory_id=rec.id, now=rec.now)  # a GRPO row carries its record's clock
            rollout = [getattr(env, s.tool)(**s.arguments) for s in rec.steps]

            async def episode(rec: Any = rec) -> list[str]:
                ex = Executor(settings, MemoryEconomy(), apis, transport=transport)
                try:
                    task = Task.model_validate(
                        {
                            "id": "view",
                            "category": "single",
                            "persona": "citizen",
                            "turns": ["x"],
                            "tools": {"offered": [s.tool for s in rec.steps]},
                            "gold": [],
                            "facts": [],
                        }
                        | {"category": "irrelevance"}
                    )
                    ep = await run_episode(task, _Replaying(rec.steps), BenchLive(ex, tools), tools, now=datetime.now())
                    return [r["content"] for t in ep["turns"] for r in t["results"]]
                finally:
                    await ex.aclose()

            with world_at(datetime.fromisoformat(rec.now) if rec.now else None):  # the record's instant
                bench = asyncio.run(episode())
            assert len(sft) == len(rec.steps)  # chain records: one step per turn, no failed attempts
            assert sft == rollout == bench, rec.id
            compared += len(sft)
            noted += sum("note" in json.loads(x) for x in sft)
    finally:
        grpo.close()
    assert compared >= 16 and noted >= 1  # some responses are longer than the view: the note is compared too

    # records cut to their first row (the CPU run, perf/train_curves.py) are read the same way by rollouts that
    # show one row (grpo.view_rows=1); the default rollout would show more
    one_row = LiveBackend(
        settings,
        tools,
        apis,
        transport=transport,
        economy=MemoryEconomy(),
        budget=GrpoConfig(view_rows=1).view_budget(),
    )
    cut_more = 0
    try:
        for rec in records[:6]:
            steps = [
                s.model_copy(update={"response": s.response.model_copy(update={"items": s.response.items[:1]})})
                for s in rec.steps
            ]
            cut = rec.model_copy(update={"steps": steps})
            sft = [m["content"] for m in sft_row(cut)["messages"] if m["role"] == "tool"]
            classes, _ = environment_factories([cut], one_row, max_calls=10)
            env = classes[toolset_key(cut)]()
            env.reset(trajectory_id=cut.id, now=cut.now)
            assert sft == [getattr(env, s.tool)(**s.arguments) for s in cut.steps], cut.id
            cut_more += sum(len(s.response.items) > 1 for s in rec.steps)
    finally:
        one_row.close()
        store.close()
    assert cut_more >= 1
