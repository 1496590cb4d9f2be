"""verification/controls.py over a scripted engine (no calls leave the process): a filter that answers the same
without it is vacuous, a required parameter whose value is ignored is vacuous, a control lost to a fault leaves the
link inconclusive, and what shows a parameter honoured (`_honoured`) or pairs a filter with a partner (`_pairs`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from execution.result import CallResult, Outcome
from graph.models import LinkRecord, ParamRecord, RunRecord, ToolRecord
from verification.controls import _honoured, _pairs, control, without
from verification.trials import Trial

ROWS = [{"name": "종로구"}, {"name": "중구"}]
OTHER_ROWS = [{"name": "해운대구"}]


def answer(rows: list[dict[str, Any]]) -> CallResult:
    return CallResult(Outcome.OK, items=rows, response_hash=repr(rows))


@dataclass
class Engine:
    """The Verifier protocol, with calls answered by `reply` and every call's arguments kept."""

    reply: Callable[[dict[str, Any]], CallResult]
    tools: dict[str, ToolRecord] = field(default_factory=dict)
    run: RunRecord = field(default_factory=lambda: RunRecord(id="run-1"))
    answers: dict[str, list[tuple[dict[str, str], frozenset[str]]]] = field(default_factory=dict)
    honoured: set[tuple[str, str]] = field(default_factory=set)
    control_locks: dict[tuple[str, str], asyncio.Lock] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    joint: list[Trial] = field(default_factory=list)

    async def call(self, tool: ToolRecord, args: dict[str, Any]) -> CallResult:
        self.calls.append(args)
        return self.reply(args)

    async def trials(
        self, link: LinkRecord, target: ToolRecord, rows: list[dict[str, Any]], joint: dict[str, LinkRecord]
    ) -> list[Trial]:
        return self.joint


def target(required: bool) -> ToolRecord:
    params = [ParamRecord(name="code", required=required), ParamRecord(name="numOfRows")]
    return ToolRecord(name="tgt", api_id="a", op_key="GET /t", method="GET", url="http://t/t", params=params)


VERDICT = LinkRecord(
    id="l1",
    source_tool="src",
    source_field="code",
    target_tool="tgt",
    target_param="query:code",
    status="verified",
    reason="2 of 2 values worked",
)
BEFORE = VERDICT.model_copy(update={"status": "candidate", "verified_at": "earlier"})


def trials(*rows: list[dict[str, Any]]) -> list[Trial]:
    return [Trial(f"1111{i}", {"code": f"1111{i}", "numOfRows": "30"}, answer(r)) for i, r in enumerate(rows)]


def check(engine: Engine, required: bool, tried: list[Trial]) -> LinkRecord:
    tool = target(required)
    engine.tools[tool.name] = tool
    return asyncio.run(control(engine, VERDICT, tool, tried, BEFORE, [], []))


def test_a_filter_that_answers_the_same_without_it_is_vacuous() -> None:
    engine = Engine(lambda args: answer(ROWS))
    v = check(engine, False, trials(ROWS, ROWS))
    assert (v.status, v.reason) == ("refuted", "vacuous: the call answers the same without code")
    assert v.verified_at == "earlier" and v.evidence["control"]["same_answer"] is True
    assert engine.calls[0] == {"numOfRows": "30"}  # the control drops the linked parameter only


def test_a_filter_whose_absence_changes_the_answer_stays_verified() -> None:
    engine = Engine(lambda args: answer(OTHER_ROWS))
    v = check(engine, False, trials(ROWS, ROWS))
    assert v.status == "verified" and v.reason == "2 of 2 values worked; without code: ok"
    assert v.evidence["control"]["kind"] == "without"


def test_a_filter_honoured_for_another_value_is_kept() -> None:
    """The same answer without it, but another value of its shape answers otherwise: the value agrees with the
    rest of the call, and the provider honours the filter."""
    engine = Engine(lambda args: answer(OTHER_ROWS if args.get("code") == "22221" else ROWS))
    v = check(engine, False, trials(ROWS, ROWS))
    assert v.status == "verified" and "code=22221 answers ok: the filter is honoured" in v.reason
    assert v.evidence["control"]["kind"] == "other_value"


def test_a_control_lost_to_a_fault_never_refutes() -> None:
    engine = Engine(lambda args: CallResult(Outcome.TRANSIENT, reason="timeout"))
    v = check(engine, False, trials(ROWS, ROWS))
    assert (v.status, v.needs_reverify, v.verified_at) == ("inconclusive", True, "earlier")
    assert v.reason == "control call without code failed transiently: timeout"


def test_a_fault_while_trying_another_value_keeps_the_link_open() -> None:
    transient = CallResult(Outcome.TRANSIENT, reason="503")
    engine = Engine(lambda args: transient if "code" in args else answer(ROWS))
    v = check(engine, False, trials(ROWS, ROWS))
    assert v.status == "inconclusive" and v.reason == "control call with code=22221 failed transiently: 503"


def test_a_required_parameter_whose_values_answered_differently_is_honoured_without_a_call() -> None:
    engine = Engine(lambda args: pytest.fail("no control call is needed"))
    v = check(engine, True, trials(ROWS, OTHER_ROWS))
    assert v.status == "verified" and v.evidence["control"]["kind"] == "values_differ"
    assert engine.honoured == {("tgt", "code")}


def test_a_required_parameter_whose_value_is_ignored_is_vacuous() -> None:
    engine = Engine(lambda args: answer(ROWS))
    v = check(engine, True, trials(ROWS, ROWS))
    assert v.status == "refuted"
    assert v.reason == "vacuous: code=22221, 66665 answer the same as the linked value (the provider ignores it)"
    assert [c["code"] for c in engine.calls] == ["22221", "66665"] and not engine.honoured


def test_a_required_parameter_another_value_of_which_answers_otherwise_is_kept() -> None:
    engine = Engine(lambda args: answer(OTHER_ROWS if args["code"] == "66665" else ROWS))
    v = check(engine, True, trials(ROWS, ROWS))
    assert v.status == "verified" and v.reason.endswith("; code=66665: ok, another answer")
    assert engine.honoured == {("tgt", "code")}


def test_a_required_control_lost_to_a_fault_is_inconclusive() -> None:
    engine = Engine(lambda args: CallResult(Outcome.TRANSIENT, reason="quota"))
    v = check(engine, True, trials(ROWS, ROWS))
    assert (v.status, v.needs_reverify) == ("inconclusive", True)
    assert v.reason == "control call with code=22221 failed transiently: quota"


def test_without_tells_same_from_differs_from_transient() -> None:
    tool, (first,) = target(False), trials(ROWS)
    for reply, expected in [
        (answer(ROWS), "same"),
        (answer(OTHER_ROWS), "differs"),
        (CallResult(Outcome.EMPTY), "differs"),
        (CallResult(Outcome.TRANSIENT), "transient"),
    ]:
        engine = Engine(lambda args: reply)  # noqa: B023 (called inside this iteration)
        outcome, got, args = asyncio.run(without(engine, tool, first, "code"))
        assert (outcome, got, args) == (expected, reply, {"numOfRows": "30"})


def test_honoured_when_every_row_carries_the_value_asked() -> None:
    rows = [{"code": "11110", "n": "a"}, {"n": "b", "sgg": "11110"}]
    (mine,) = [Trial("11110", {"code": "11110"}, answer(rows))]
    assert _honoured(Engine(lambda a: answer([])), "tgt", "code", mine)
    (other,) = [Trial("11110", {"code": "11110"}, answer([*rows, {"n": "c"}]))]
    assert not _honoured(Engine(lambda a: answer([])), "tgt", "code", other)


def test_honoured_when_this_run_saw_another_value_answer_otherwise() -> None:
    (mine,) = trials(ROWS)
    seen = answer(ROWS)
    rows_of = frozenset(
        repr(sorted((k, str(v)) for k, v in r.items())) for r in seen.items
    )  # what the engine records of an answer (trials.row_set)
    other_rows = frozenset({repr([("name", "해운대구")])})
    same_page = {"code": "26110", "numOfRows": "30"}
    assert _honoured(Engine(lambda a: seen, answers={"tgt": [(same_page, other_rows)]}), "tgt", "code", mine)
    assert not _honoured(Engine(lambda a: seen, answers={"tgt": [(same_page, rows_of)]}), "tgt", "code", mine)
    # the same value, or another input changed too, shows nothing
    assert not _honoured(
        Engine(lambda a: seen, answers={"tgt": [({"code": "11110", "numOfRows": "30"}, other_rows)]}),
        "tgt",
        "code",
        mine,
    )
    assert not _honoured(
        Engine(lambda a: seen, answers={"tgt": [({**same_page, "year": "2024"}, other_rows)]}), "tgt", "code", mine
    )
    # a larger page (the tool's sample) that holds our rows could come from a provider that ignores the value
    bigger = {"code": "26110", "numOfRows": "100"}
    assert not _honoured(Engine(lambda a: seen, answers={"tgt": [(bigger, rows_of | other_rows)]}), "tgt", "code", mine)
    assert _honoured(Engine(lambda a: seen, answers={"tgt": [(bigger, other_rows)]}), "tgt", "code", mine)
    assert _honoured(Engine(lambda a: seen, honoured={("tgt", "code")}), "tgt", "code", mine)


def sibling(field_name: str, param: str, score: float, source_tool: str = "src") -> LinkRecord:
    return LinkRecord(
        id=f"{field_name}->{param}",
        source_tool=source_tool,
        source_field=field_name,
        target_tool="grid",
        target_param=f"query:{param}",
        score=score,
    )


def grid_tool(*names: str) -> ToolRecord:
    """A grid service whose parameters are optional, but `yReq`."""
    params = [ParamRecord(name=n, required=n == "yReq") for n in names]
    return ToolRecord(name="grid", api_id="a", op_key="GET /g", method="GET", url="http://t/g", params=params)


def test_partners_are_two_optional_parameters_of_the_same_stem_from_the_same_source_best_first() -> None:
    grid = grid_tool("xPos", "yPos", "posY", "pos", "yReq", "other")
    link = sibling("x", "xPos", 0.9)
    siblings = [
        sibling("lat", "yPos", 0.5),
        sibling("y", "yPos", 0.8),  # the best partner for yPos
        sibling("y2", "yPos", 0.7),  # yPos is taken already
        sibling("y", "posY", 0.6),  # posY shares the stem pos: the second partner
        sibling("y", "pos", 0.55),  # a third: two partners at most
        sibling("y", "yReq", 0.9),  # required: not a filter to pair
        sibling("y", "other", 0.9),  # another stem
        sibling("x", "yPos", 0.9),  # the linked field itself
        sibling("y", "yPos", 0.99, source_tool="elsewhere"),  # another source's row
    ]
    pairs = _pairs(link, grid, siblings)
    assert [{k: s.id for k, s in p.items()} for p in pairs] == [{"query:yPos": "y->yPos"}, {"query:posY": "y->posY"}]


def test_a_filter_that_works_only_with_its_partner_is_verified_jointly() -> None:
    """xPos alone is ignored (the same answer without it, and for another value), xPos with yPos selects."""
    grid = grid_tool("xPos", "yPos")
    link = sibling("x", "xPos", 0.9).model_copy(update={"status": "verified", "reason": "2 of 2 values worked"})
    alone = [Trial("60", {"xPos": "60"}, answer(ROWS)), Trial("61", {"xPos": "61"}, answer(ROWS))]
    paired = [Trial(x, {"xPos": x, "yPos": "127"}, answer(OTHER_ROWS)) for x in ("60", "61")]
    engine = Engine(lambda args: answer(OTHER_ROWS if {"xPos", "yPos"} <= set(args) else ROWS), joint=paired)
    engine.tools["grid"] = grid
    partner = sibling("y", "yPos", 0.8)
    v = asyncio.run(control(engine, link, grid, alone, link, [], [partner]))
    assert v.status == "verified" and v.evidence["mode"] == "joint"
    assert v.reason == "2 of 2 values worked (digits2 2/2); without xPos: ok"  # the joint trials' verdict
    assert engine.calls[-1] == {"yPos": "127"}
    lone = asyncio.run(control(Engine(engine.reply, tools=engine.tools), link, grid, alone, link, [], []))
    assert lone.status == "refuted" and lone.reason == "vacuous: the call answers the same without xPos"
