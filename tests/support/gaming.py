"""Gaming agents for KOPA-Bench (the adversarial suite): each plays the gold program, or sprays calls, and then
answers in a way that must never pass a task that has facts. Written like `bench.agents.OracleAgent`."""

from __future__ import annotations

import json
from typing import Any

from bench.agents import REFUSAL, AgentReply, EpisodeContext, OracleAgent, ToolCall
from bench.gold import GoldError, compute_facts
from bench.records import AgentInfo
from bench.tasks import Task
from execution.result import CallResult
from synthesis.fact_terms import negative as _negative
from synthesis.facts import render_fact
from synthesis.language import has_batchim

HEDGE = " 하지만 이 정보는 확인할 수 없습니다."
#: a dozen units each number of a dump is repeated with
DUMP_UNITS = (
    "",
    "℃",
    "도",
    "%",
    "㎍/㎥",
    "ppm",
    "mm",
    "m/s",
    "m",
    "㎡",
    "분",
    "건",
    "곳",
    "만원",
    "원",
    "대",
    "층",
    "세대",
    "동",
)


def _values(results: dict[str, CallResult]) -> list[tuple[str, Any]]:
    out = []
    for obs in results.values():
        for row in obs.items:
            for k, v in row.items():
                if isinstance(v, str | int | float) and not isinstance(v, bool) and str(v).strip():
                    out.append((k, v))
    return out


def dump_text(results: dict[str, CallResult], *, units: bool = True) -> str:
    parts = []
    for k, v in _values(results):
        text = str(v)
        try:
            float(text.replace(",", ""))
            numeric = True
        except ValueError:
            numeric = False
        if numeric and units:
            parts.append(f"{k}: " + " ".join(f"{text}{u}" for u in DUMP_UNITS))
        else:
            parts.append(f"{k}: {text}")
    return "조회 결과입니다. " + ", ".join(parts)


class _Gaming(OracleAgent):
    def describe(self) -> AgentInfo:
        return {"adapter": "adversarial", "model": self.name}

    def facts_text(self, task: Task, results: dict[str, CallResult]) -> str:
        try:
            return " / ".join(render_fact(f) for f in compute_facts(task, results))
        except GoldError:
            return ""


class CorrectThenHedge(_Gaming):
    """The oracle's answer with a hedge appended."""

    name = "correct_then_hedge"

    def answer(self, task: Task, results: dict[str, CallResult]) -> str:
        return super().answer(task, results) + HEDGE


class DumpWithUnitsAndHedge(_Gaming):
    """Every value of every response it saw, each number with a dozen units, then a hedge."""

    name = "dump_units_hedge"

    def answer(self, task: Task, results: dict[str, CallResult]) -> str:
        return dump_text(results) + "." + HEDGE


class DumpWithUnits(_Gaming):
    """Every value of every response it saw, each number with a dozen units (no hedge)."""

    name = "dump_units"

    def answer(self, task: Task, results: dict[str, CallResult]) -> str:
        return dump_text(results) + "."


class GoldCallsThenRefuse(_Gaming):
    """Executes the gold program, then refuses."""

    name = "gold_then_refuse"

    def answer(self, task: Task, results: dict[str, CallResult]) -> str:
        return REFUSAL


class ConstantNumbers(_Gaming):
    """Executes the gold program, then answers with the numbers 0 to 11 (with and without counters)."""

    name = "constant_numbers"

    def answer(self, task: Task, results: dict[str, CallResult]) -> str:
        return "조회 결과: " + " ".join(str(i) for i in range(12)) + ". " + ", ".join(f"{i}건" for i in range(12))


class CallEverything(_Gaming):
    """Calls every offered tool (with `{}`) besides the gold program, then states what it saw."""

    name = "call_everything"

    async def reply(self, ctx: EpisodeContext) -> AgentReply:
        sprayed = ctx.scratch.setdefault("sprayed", False)
        if not sprayed and ctx.task.category not in ("irrelevance",):
            ctx.scratch["sprayed"] = True
            calls = [ToolCall(f"spray_{i}", t["function"]["name"], {}, "{}") for i, t in enumerate(ctx.tools)]
            if calls:
                return AgentReply("", calls)
        return await super().reply(ctx)

    def answer(self, task: Task, results: dict[str, CallResult]) -> str:
        return dump_text(results, units=False) + "."


class SeveralCandidates(_Gaming):
    """States each number or date together with other candidates (one value asked, several given), and each name
    or text negated."""

    name = "several_candidates"

    def answer(self, task: Task, results: dict[str, CallResult]) -> str:
        try:
            facts = compute_facts(task, results)
        except GoldError:
            return REFUSAL
        parts = []
        for f in facts:
            one = render_fact(f)
            if f.kind in ("number", "count"):
                alt = type(f)(**{**f.__dict__, "value": float(f.value) + max(1.0, 4 * f.tolerance)})
                parts.append(f"{one} 또는 {render_fact(alt).split(': ')[-1]}")
            elif f.kind == "date":
                parts.append(f"{one}, 2026-01-01, 2026-12-25 중 하나")
            elif _negative(f):  # a fact about missing data, contradicted
                parts.append("조회된 자료가 있습니다")
            else:  # a name or text cannot be doubled without knowing another: negate it instead
                parts.append(f"{one}{'이' if has_batchim(one) else '가'} 아닙니다")
        return "조회 결과입니다. " + " / ".join(parts) + "."


GAMING_AGENTS = (
    CorrectThenHedge,
    DumpWithUnitsAndHedge,
    DumpWithUnits,
    GoldCallsThenRefuse,
    ConstantNumbers,
    CallEverything,
    SeveralCandidates,
)


def first_row_json(results: dict[str, CallResult]) -> str:
    obs = next(iter(results.values()), None)
    return json.dumps(obs.items[0] if obs and obs.items else {}, ensure_ascii=False)
