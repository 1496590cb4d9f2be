"""Controls of a link that trials verified: a filter proves nothing when the call answers the same without it, a
required parameter nothing when its value is ignored (another value of the same shape answers the same). A control
call that fails transiently leaves the link inconclusive; one that answers the same refutes it as vacuous."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from core.json_types import JsonObject
from execution.result import CallResult
from execution.seeds import PAGE_SIZE_PARAMS
from graph.concepts import stem
from graph.models import LinkRecord, RunRecord, ToolRecord
from verification.trials import Trial, other_values, row_set, same_answer
from verification.verdicts import convincing, judge


class Verifier(Protocol):
    """What a control needs of the engine: its tools and run, judged calls, trials of a link, and what this run
    has learnt of the parameters providers honour."""

    tools: dict[str, ToolRecord]
    run: RunRecord
    answers: dict[str, list[tuple[dict[str, str], frozenset[str]]]]
    honoured: set[tuple[str, str]]
    control_locks: dict[tuple[str, str], asyncio.Lock]

    async def call(self, tool: ToolRecord, args: dict[str, Any]) -> CallResult: ...

    async def trials(
        self, link: LinkRecord, target: ToolRecord, rows: list[dict[str, Any]], joint: dict[str, LinkRecord]
    ) -> list[Trial]: ...


async def control(
    engine: Verifier,
    verdict: LinkRecord,
    target: ToolRecord,
    trials: list[Trial],
    before: LinkRecord,
    rows: list[dict[str, Any]],
    siblings: list[LinkRecord],
) -> LinkRecord:
    """An optional filter proves nothing when the call answers the same without it (a provider that ignores an
    unknown or mistyped filter, an all-optional search whose other filter did the work): the control call
    drops the linked parameter; the same rows mean the link is vacuous, not verified. Before calling it
    vacuous: a filter that works only in a pair (xPos with yPos, a 시군구 code with its 시도 code) is tried
    with its partner from the same row, and an enumerated filter whose value is the provider's default is
    controlled with another value of its enumeration."""
    pname = verdict.target_param.split(":", 1)[1]
    param = next((p for p in target.params if p.name == pname), None)
    evidence = dict(verdict.evidence)
    first = next(t for t in trials if t.result.ok)
    if param is None or param.required:
        # one control at a time per parameter: the first that shows it honoured spares the calls of the others
        async with engine.control_locks.setdefault((target.name, pname), asyncio.Lock()):
            return await _control_required(engine, verdict, before, trials, first, param, evidence)
    outcome, answer, args = await without(engine, target, first, pname)
    doubts: list[str] = []  # a control lost to a transient fault might have shown the filter works: never refute
    if outcome == "same":
        # the same answer without the filter: the provider ignores it, or our value is consistent with the
        # rest of the call (a 시도 code of the very point searched around). A value of the same shape tells.
        agrees = await _other_value_differs(engine, verdict, target, first, param, evidence, doubts)
        if agrees is not None:
            return agrees
        joint_verdict, last = await _with_partner(engine, verdict, target, before, rows, siblings, doubts)
        if last is not None:
            outcome, answer, args = last
        if joint_verdict is not None:
            verdict = joint_verdict
            evidence = dict(verdict.evidence)
    evidence["control"] = {
        "kind": "without",
        "input": args,
        "outcome": answer.outcome,
        "rows": len(answer.items),
        "same_answer": outcome == "same",
    }
    if outcome == "transient" or (outcome == "same" and doubts):
        reason = doubts[0] if doubts else f"control call without {pname} failed transiently: {answer.reason}"
        return _inconclusive(verdict, before, evidence, reason)
    if outcome == "same":
        return verdict.model_copy(
            update={
                "evidence": evidence,
                "status": "refuted",
                "verified_at": before.verified_at,
                "reason": f"vacuous: the call answers the same without {pname}",
            }
        )
    return verdict.model_copy(
        update={"evidence": evidence, "reason": verdict.reason + f"; without {pname}: {answer.outcome}"}
    )


async def _other_value_differs(
    engine: Verifier,
    verdict: LinkRecord,
    target: ToolRecord,
    first: Trial,
    param: Any,
    evidence: dict[str, Any],
    doubts: list[str],
) -> LinkRecord | None:
    """The verdict kept when another value of the filter's shape answers otherwise (the filter is honoured and the
    linked value agrees with the rest of the call); None when there is no such value or it answers the same."""
    pname = param.name
    other = next(iter(other_values(param, first.inputs.get(pname))), None)
    if other is None:
        return None
    alt = await engine.call(target, {**first.inputs, pname: other})
    if not alt.definitive:
        doubts.append(f"control call with {pname}={other} failed transiently: {alt.reason}")
        return None
    if alt.ok and same_answer(alt, first.result):
        return None
    evidence["control"] = {
        "kind": "other_value",
        "input": {**first.inputs, pname: other},
        "outcome": alt.outcome,
        "rows": len(alt.items),
        "same_answer": False,
    }
    return verdict.model_copy(
        update={
            "evidence": evidence,
            "reason": verdict.reason
            + (
                f"; same answer without {pname}, but {pname}={other} "
                f"answers {alt.outcome}: the filter is "
                "honoured and the linked value agrees with the rest of the call"
            ),
        }
    )


async def _with_partner(
    engine: Verifier,
    verdict: LinkRecord,
    target: ToolRecord,
    before: LinkRecord,
    rows: list[dict[str, Any]],
    siblings: list[LinkRecord],
    doubts: list[str],
) -> tuple[LinkRecord | None, tuple[str, CallResult, JsonObject] | None]:
    """A filter that works only in a pair: partners are tried in turn, each whose joint trials convince with a
    control call without the filter, until one answers otherwise. Returns the joint verdict of that partner (None
    when none does) and the last control made (None when no partner convinced)."""
    pname = verdict.target_param.split(":", 1)[1]
    last: tuple[str, CallResult, dict[str, Any]] | None = None
    for joint in _pairs(verdict, target, siblings):
        joint_trials = await engine.trials(before, target, rows[:2], joint)
        lost = next((t for t in joint_trials if not t.result.definitive), None)
        if lost is not None:
            doubts.append(f"a joint trial with {', '.join(joint)} failed transiently: {lost.result.reason}")
        ok = next((t for t in joint_trials if t.result.ok), None)
        if ok is None or not convincing(joint_trials):
            continue
        last = await without(engine, target, ok, pname)
        if last[0] == "transient":
            doubts.append(f"control call without {pname} failed transiently: {last[1].reason}")
            last = ("same", *last[1:])
        if last[0] == "differs":
            return judge(engine.run.id, before, joint_trials, "joint"), last
    return None, last


def _inconclusive(verdict: LinkRecord, before: LinkRecord, evidence: dict[str, Any], reason: str) -> LinkRecord:
    """A control lost to a transient fault: neither verified nor refuted, to be verified again (the link keeps
    the time it was last verified)."""
    return verdict.model_copy(
        update={
            "evidence": evidence,
            "status": "inconclusive",
            "needs_reverify": True,
            "verified_at": before.verified_at,
            "reason": reason,
        }
    )


async def _control_required(
    engine: Verifier,
    verdict: LinkRecord,
    before: LinkRecord,
    trials: list[Trial],
    first: Trial,
    param: Any,
    evidence: dict[str, Any],
) -> LinkRecord:
    """A required parameter cannot be dropped, but its value can be ignored (a provider that answers the same
    list whatever the code). Trials that answered differently for different values already show that the value
    selects; otherwise one call with a value of the same shape must answer differently, or the link is vacuous."""
    target, pname = engine.tools[verdict.target_tool], verdict.target_param.split(":", 1)[1]
    answers = {frozenset(row_set(t.result.items)) for t in trials if t.result.ok}
    if len(answers) >= 2 or _honoured(engine, target.name, pname, first):
        engine.honoured.add((target.name, pname))
        evidence["control"] = {
            "kind": "values_differ",
            "answers": max(2, len(answers)),
            "note": f"{pname} is required; another value of it, the rest of the call the same, gave another answer",
        }
        return verdict.model_copy(update={"evidence": evidence})
    others = other_values(param, first.inputs.get(pname))
    if not others:
        evidence["control"] = {
            "kind": "required",
            "note": f"{pname} is required and has no value of the same shape to compare with",
        }
        return verdict.model_copy(update={"evidence": evidence})
    for other in others:
        # vacuous only when every value of the same shape answers exactly like the linked one
        args = {**first.inputs, pname: other}
        alt = await engine.call(target, args)
        same = alt.ok and same_answer(alt, first.result)
        evidence["control"] = {
            "kind": "other_value",
            "input": args,
            "outcome": alt.outcome,
            "rows": len(alt.items),
            "same_answer": same,
        }
        if not alt.definitive:
            reason = f"control call with {pname}={other} failed transiently: {alt.reason}"
            return _inconclusive(verdict, before, evidence, reason)
        if not same:
            engine.honoured.add((target.name, pname))
            return verdict.model_copy(
                update={
                    "evidence": evidence,
                    "reason": verdict.reason + (f"; {pname}={other}: {alt.outcome}, another answer"),
                }
            )
    return verdict.model_copy(
        update={
            "evidence": evidence,
            "status": "refuted",
            "verified_at": before.verified_at,
            "reason": f"vacuous: {pname}={', '.join(others)} answer the same as the "
            "linked value (the provider ignores it)",
        }
    )


def _honoured(engine: Verifier, tool: str, pname: str, trial: Trial) -> bool:
    """Whether `tool` is known to honour `pname`: this run has seen it (a property of the provider, not of one
    link: a control of another link into it answered differently), every row of the answer carries the value,
    or a call made shows it (the same call with another value of it, every other input equal, answered
    differently)."""
    if (tool, pname) in engine.honoured:
        return True
    value = str(trial.inputs.get(pname))
    rows = trial.result.items
    if len(value) >= 2 and rows and all(any(str(v) == value for v in r.values()) for r in rows):
        # every row answered carries the value asked for: another value could not get these rows back
        return True
    mine = frozenset(row_set(trial.result.items))
    paging = {k: str(v) for k, v in trial.inputs.items() if k in PAGE_SIZE_PARAMS}
    rest = {k: str(v) for k, v in trial.inputs.items() if k != pname and k not in PAGE_SIZE_PARAMS}
    for inputs, answer in engine.answers.get(tool, []):
        if pname not in inputs or inputs[pname] == value:
            continue
        if {k: v for k, v in inputs.items() if k != pname and k not in PAGE_SIZE_PARAMS} != rest:
            continue
        # the same page: any other answer; a page of another size (the tool's sample): rows it could not hold,
        # since a provider that ignored the value would answer with rows of the same list
        same_page = {k: v for k, v in inputs.items() if k in PAGE_SIZE_PARAMS} == paging
        if (answer != mine) if same_page else not mine <= answer:
            return True
    return False


async def without(engine: Verifier, target: ToolRecord, trial: Trial, pname: str) -> tuple[str, CallResult, JsonObject]:
    args: JsonObject = {k: v for k, v in trial.inputs.items() if k != pname}
    control = await engine.call(target, args)
    if not control.definitive:
        return "transient", control, args
    return ("same" if control.ok and same_answer(control, trial.result) else "differs"), control, args


def _pairs(link: LinkRecord, target: ToolRecord, siblings: list[LinkRecord]) -> list[dict[str, LinkRecord]]:
    """Partners for an optional filter: the best sibling link into another optional parameter of the target,
    those of the same stem (xPos/yPos) or the same concept family first; two at most."""
    pname = link.target_param.split(":", 1)[1]
    optional = {p.key(): p for p in target.params if not p.required and p.name != pname}
    mine = stem(pname)
    options = [
        s
        for s in siblings
        if s.target_tool == target.name
        and s.target_param in optional
        and s.source_field != link.source_field
        and s.source_tool == link.source_tool
    ]
    options = [s for s in options if stem(s.target_param.split(":", 1)[1]) == mine]
    options.sort(key=lambda s: (-s.score, s.id))
    out: list[dict[str, LinkRecord]] = []
    for s in options:
        if all(s.target_param not in j for j in out):
            out.append({s.target_param: s})
        if len(out) >= 2:
            break
    return out
