"""Executing a plan for real through the same executor as verification, and what the model is shown of each
response.

Rows are never reordered for the model: a step shows the one view (`execution.view.visible`: the provider's first
rows), and the row a later step or the answer uses must be among them because the query narrowed to it: it is the
only row, the user's words single it out (`synthesis.routes.user_row`), the provider orders rows by distance from
the asked point, or every shown row gives the same values to what follows. Otherwise the step fails with that reason
and the plan is retried with other user values. A final step whose rows no word singles out answers about the set.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from execution.executor import Executor
from execution.result import CallResult
from execution.seeds import coerce, param_schema
from execution.view import VIEW_RULE, visible
from graph import transforms
from graph.models import ToolRecord
from synthesis import conditions
from synthesis.needs import default_needs
from synthesis.plans import VerifiedGraph
from synthesis.records import Condition, Plan, Step, StepResponse, TrajectoryStep
from synthesis.routes import user_row

TRIM_RULE = VIEW_RULE


@dataclass
class Outcome:
    steps: list[TrajectoryStep] | None
    reason: str = ""
    failed_links: list[str] = field(default_factory=list)
    calls: int = 0
    instant: datetime | None = None  # the conversation's clock when it is not the configured one
    #: the plan as it ran, when it differs from the one drawn (a conditional plan: its test, and without the
    #: gated step when the test did not hold)
    plan: Plan | None = None


def named_row(
    rows: list[dict[str, Any]], shown: int, words: list[str], name_field: str, rnd: random.Random
) -> tuple[int, str] | None:
    """A row the user names by `name_field` among the shown ones (drawn among those whose name singles them out
    together with what the user already said), with that name; None when no shown row can be named."""
    options = []
    for i, row in enumerate(rows[:shown]):
        name = str(row.get(name_field) or "").strip()
        if len(name) >= 2 and user_row(rows, shown, [*words, name]) == i:
            options.append((i, name))
    return rnd.choice(options) if options else None


def decide(
    when: Condition, tool: ToolRecord, response: StepResponse, gate: ToolRecord, skip: set[str], rnd: random.Random
) -> Condition | None:
    """The test of a conditional plan on what step `when.step` returned: a condition people ask
    (`synthesis.conditions`) on a value of the result that bears on what the gated tool gives, at one of its
    thresholds on either side of the value; None when the pair has none."""
    got = conditions.decide(tool, response, gate, default_needs(), skip, rnd)
    if got is None:
        return None
    fact = got.reading.fact
    return dataclasses.replace(
        when,
        label=fact.label,
        unit=got.reading.unit,
        op=got.rule.op,
        value=got.value,
        observed=float(fact.value),
        held=got.held,
        fact=fact,
        rule=got.rule.id,
        scope=got.reading.scope,
    )


def _conditional_plan(plan: Plan, cond: Condition) -> Plan:
    """The plan as it runs: with its test, and without the gated step (and what only feeds it) when the test did
    not hold."""
    cond = dataclasses.replace(cond, gate_tool=plan.steps[cond.gate].tool)
    if cond.held:
        return dataclasses.replace(plan, when=cond)
    return dataclasses.replace(plan, steps=plan.steps[: cond.step + 1], finals=[cond.step], when=cond)


def _needed_fields(plan: Plan, idx: int) -> set[str]:
    out: set[str] = set()
    for later in plan.steps[idx + 1 :]:
        for src in later.sources.values():
            if src.kind == "link" and src.link is not None and src.from_step == idx:
                out.add(src.link.source_field)
                pair = src.link.transform.get("pair")
                if pair:
                    out.add(str(pair))
    return out


def _pick(
    rows: list[dict[str, Any]], shown: int, words: list[str], needed: set[str], step: Any, *, complete: bool = True
) -> int | None:
    """The row later steps use: the user's row among the shown ones, or the first when every row of the whole
    answer (not only of this page) gives the same values to what follows."""
    found = user_row(rows, shown, words, step.tool)
    if found is not None:
        return found
    if (
        needed
        and complete
        and rows
        and shown == len(rows)
        and all(all(str(r.get(f)) == str(rows[0].get(f)) for f in needed) for r in rows)
    ):
        return 0
    return None


async def execute_plan(
    plan: Plan, executor: Executor, rnd: random.Random, *, tries: int = 3, graph: VerifiedGraph | None = None
) -> Outcome:
    """Run a plan end to end; on failure retry with other user values, then give up with the reason."""
    reason = ""
    failed: list[str] = []
    calls = 0
    for _attempt in range(tries):
        chosen_rows: list[dict[str, Any]] = []
        steps_out: list[TrajectoryStep] = []
        words: list[str] = []
        ok = True
        ran = plan
        for idx, step in enumerate(plan.steps):
            if idx >= len(ran.steps):
                break  # a conditional plan whose test did not hold: the gated step is not called
            args: dict[str, Any] = {}
            prov: dict[str, Any] = {}
            try:
                for pname, src in step.sources.items():
                    schema = param_schema(step.tool, pname)
                    if src.kind == "link" and src.link is not None:
                        row = chosen_rows[src.from_step]
                        raw = row.get(src.link.source_field)
                        args[pname] = coerce(transforms.apply(src.link.transform, raw, row), schema)
                        prov[pname] = {**src.provenance(), "source_value": raw}
                        continue
                    if src.kind in ("slot", "clock") and graph is not None:
                        p = next(p for p in step.tool.params if p.name == pname)
                        # a clock value follows this trajectory's instant, not the one the plan was drawn at
                        args[pname] = (
                            graph.user_value(step.tool, p, rnd)
                            if src.kind == "slot"
                            else graph.clock_value(step.tool, p)
                        )
                    else:
                        args[pname] = coerce(src.value, schema)
                    prov[pname] = {"kind": src.kind, "value": args[pname]}
                    if src.kind == "slot":
                        words.append(str(args[pname]))
            except transforms.TransformError as exc:
                ok, reason = False, f"step {idx + 1} ({step.tool.name}): transform failed: {exc}"
                failed = [s.link.id for s in step.sources.values() if s.link is not None]
                break
            result = await executor.call(step.tool, args)
            calls += 0 if result.cached else 1
            mentions: dict[str, Any] = {}
            if step.names and result.ok:
                named = await _name_row(step, args, prov, result, words, executor, rnd)
                calls += named[2]
                if named[0] is None:
                    ok, reason = False, f"step {idx + 1} ({step.tool.name}): no shown row the user can name"
                    break
                result = named[0]
                if not step.narrow:
                    mentions[step.names] = named[1]
            if not result.ok:
                ok = False
                reason = f"step {idx + 1} ({step.tool.name}): {result.outcome} {result.reason}".strip()
                if result.definitive and any(s.kind == "link" for s in step.sources.values()):
                    failed = [s.link.id for s in step.sources.values() if s.link is not None]
                break
            rows = [r for r in result.items if isinstance(r, dict)]
            total = max(result.total or 0, len(rows))  # the provider's count for the query, not the page's
            needed = _needed_fields(plan, idx)
            feeds = bool(needed) or any(
                src.kind == "link" and src.from_step == idx
                for later in plan.steps[idx + 1 :]
                for src in later.sources.values()
            )
            items = visible(rows, tool=step.tool)  # the one view: the first rows, in the provider's order
            top: int | None = (
                _pick(rows, len(items), words, needed, step, complete=total == len(rows))
                if feeds
                else user_row(rows, len(items), words, step.tool)
            )
            if top is None and feeds:
                ok = False
                reason = (
                    f"step {idx + 1} ({step.tool.name}): {len(rows)} rows and none is the user's entity "
                    "among the shown rows"
                )
                break
            if top is None and result.next_token and result.total is None:
                # rows of a page that says another follows but not how many in all: no count or set to answer
                ok = False
                reason = f"step {idx + 1} ({step.tool.name}): a page of rows, more follow and no total is stated"
                break
            chosen_rows.append(rows[top if top is not None else 0])
            shown = list(range(len(items)))
            steps_out.append(
                TrajectoryStep(
                    mentions=mentions,
                    step=idx + 1,
                    tool=step.tool.name,
                    arguments=args,
                    provenance=prov,
                    # the gated call waits for the result that decides it (its own turn, never beside it)
                    depends_on=[d + 1 for d in step.depends_on]
                    + ([plan.when.step + 1] if plan.when is not None and idx == plan.when.gate else []),
                    response=StepResponse(
                        rows=total,
                        first=result.first if result.total is not None else 1,
                        next_token=result.next_token,
                        items=items,
                        shown=shown,
                        chosen=top or 0,
                        selected=top is not None,
                        url=result.url,
                        replayed_from_cache=result.cached,
                    ),
                )
            )
            if plan.when is not None and idx == plan.when.step:
                mine = {str(v["value"]) for v in prov.values() if v["kind"] == "slot"}
                gate = plan.steps[plan.when.gate].tool
                cond = decide(plan.when, step.tool, steps_out[-1].response, gate, mine, rnd)
                if cond is None:
                    ok, reason = False, f"step {idx + 1} ({step.tool.name}): no value a person decides {gate.name} on"
                    break
                ran = _conditional_plan(plan, cond)
        if ok:
            return Outcome(steps_out, calls=calls, plan=None if ran is plan else ran)
    return Outcome(None, reason, failed, calls)


async def _name_row(
    step: Step,
    args: dict[str, Any],
    prov: dict[str, Any],
    result: CallResult,
    words: list[str],
    executor: Executor,
    rnd: random.Random,
) -> tuple[CallResult | None, str, int]:
    """The row the user names among the shown ones (`Step.names`); with a narrowing parameter, the call asked
    again with that name (the recorded call; the listing only told which names exist). Returns the result to
    record, the name and the calls spent."""
    rows = [r for r in result.items if isinstance(r, dict)]
    picked = named_row(rows, len(visible(rows, tool=step.tool)), words, step.names, rnd)
    if picked is None:
        return None, "", 0
    name = picked[1]
    words.append(name)
    if not step.narrow:
        return result, name, 0
    args[step.narrow] = coerce(name, param_schema(step.tool, step.narrow))
    prov[step.narrow] = {"kind": "slot", "value": args[step.narrow]}
    again = await executor.call(step.tool, args)
    return again, name, 0 if again.cached else 1
