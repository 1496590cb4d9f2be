"""Executing a plan for real through the same executor as verification, and what the model is shown of each
response.

Rows are never reordered for the model: a step shows the one view (`execution.view.visible`: the provider's first
rows), and the row a later step or the answer uses must be among them because the query narrowed to it: it is the
only row, the user's words single it out (`synthesis.routes.user_row`), the provider orders rows by distance from
the asked point, or every shown row gives the same values to what follows. Otherwise the step fails with that reason
and the plan is retried with other user values. A final step whose rows no word singles out answers about the set.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from execution.executor import Executor
from execution.seeds import coerce, param_schema
from execution.view import VIEW_RULE, visible
from graph import transforms
from synthesis.plans import VerifiedGraph
from synthesis.records import Plan, StepResponse, TrajectoryStep
from synthesis.routes import user_row

TRIM_RULE = VIEW_RULE


@dataclass
class Outcome:
    steps: list[TrajectoryStep] | None
    reason: str = ""
    failed_links: list[str] = field(default_factory=list)
    calls: int = 0
    instant: datetime | None = None  # the conversation's clock when it is not the configured one


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
        for idx, step in enumerate(plan.steps):
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
            chosen_rows.append(rows[top if top is not None else 0])
            shown = list(range(len(items)))
            steps_out.append(
                TrajectoryStep(
                    step=idx + 1,
                    tool=step.tool.name,
                    arguments=args,
                    provenance=prov,
                    depends_on=[d + 1 for d in step.depends_on],
                    response=StepResponse(
                        rows=total,
                        first=result.first if result.total is not None else 1,
                        items=items,
                        shown=shown,
                        chosen=top or 0,
                        selected=top is not None,
                        url=result.url,
                        replayed_from_cache=result.cached,
                    ),
                )
            )
        if ok:
            return Outcome(steps_out, calls=calls)
    return Outcome(None, reason, failed, calls)
