"""Gold programs: resolve each argument (user value, constant, clock date, or an earlier step's response through a
graph/transforms.py transform), evaluate `when`, execute through a backend, and compute the facts the final answer
must state. A task whose gold program fails, or whose facts come out empty, is refused (GoldError).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from bench.backends import Backend
from bench.records import GoldRecord
from bench.tasks import ConstArg, DateArg, FactSpec, FromArg, GoldStep, Row, Task, UserArg, When, Where
from core.errors import KopaError
from core.json_types import JsonObject
from execution.result import CallResult, Outcome
from execution.view import ToolLike, parameters
from graph import transforms
from synthesis.answer_dates import as_date
from synthesis.fact_terms import Fact
from synthesis.qualifiers import descriptive, row_context

KST = timezone(timedelta(hours=9), "KST")


class GoldError(KopaError):
    status_code = 422
    code = "gold_failed"


def clock_now(now: str = "") -> datetime:
    """The benchmark clock: the configured instant (the sandbox's frozen clock), else the machine clock in KST."""
    if not now:
        return datetime.now(KST)
    dt = datetime.fromisoformat(now)
    return (dt if dt.tzinfo else dt.replace(tzinfo=KST)).astimezone(KST)


def clock_value(src: DateArg, now: datetime) -> str:
    base = now
    if src.date == "tomorrow":
        base = now + timedelta(days=1)
    elif src.date == "yesterday":
        base = now - timedelta(days=1)
    elif src.date == "last_month_end":
        base = now.replace(day=1) - timedelta(days=1)
    elif src.date == "last_month_start":
        base = (now.replace(day=1) - timedelta(days=1)).replace(day=1)
    base = base + timedelta(days=src.offset_days)
    return base.strftime(src.format)


def pick_row(items: list[dict[str, Any]], row: Row) -> JsonObject | None:
    if isinstance(row, Where):
        for it in items:
            if all(str(it.get(k)) == str(v) for k, v in row.where.items()):
                return it
        return None
    return items[row] if -len(items) <= row < len(items) else None


@dataclass(frozen=True)
class Picked:
    """The value a `from:` (or `when:`) reads, and the row it comes from."""

    value: Any
    row: JsonObject


def from_value(src: FromArg | When, results: dict[str, CallResult]) -> Picked:
    obs = results.get(src.from_)
    if obs is None:
        raise GoldError(f"step {src.from_!r} has no result")
    row = pick_row(obs.items, src.row)
    if row is None:
        raise GoldError(f"step {src.from_!r} has no row {_row_text(src.row)} ({len(obs.items)} rows)")
    if src.field not in row or row[src.field] in (None, ""):
        raise GoldError(f"step {src.from_!r} row {_row_text(src.row)} has no field {src.field!r}")
    return Picked(row[src.field], row)


def _row_text(row: Row) -> str:
    return str(row) if isinstance(row, int) else str(row.where)


def resolve_args(step: GoldStep, results: dict[str, CallResult], now: datetime, tool: ToolLike = None) -> JsonObject:
    """The step's arguments. With the step's `tool`, a single `from:` value into a parameter its schema types
    `array` is sent as a one-item list (a business number into `b_no`), as the wrap_list transform would."""
    props = parameters(tool).get("properties") or {}
    args: JsonObject = {}
    for name, src in step.args.items():
        if isinstance(src, UserArg):
            args[name] = src.user
        elif isinstance(src, ConstArg):
            args[name] = src.const
        elif isinstance(src, DateArg):
            args[name] = clock_value(src, now)
        elif isinstance(src, FromArg):
            picked = from_value(src, results)
            try:
                args[name] = transforms.apply(src.transform or transforms.IDENTITY, picked.value, picked.row)
            except transforms.TransformError as exc:
                raise GoldError(f"step {step.id!r} argument {name!r}: transform failed: {exc}") from None
            if (props.get(name) or {}).get("type") == "array" and not isinstance(args[name], list):
                args[name] = [args[name]]
    return args


def _num(v: Any) -> float | None:
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return None


def when_holds(when: When | None, results: dict[str, CallResult]) -> bool:
    if when is None:
        return True
    value = from_value(when, results).value
    if when.op == "in":
        options = when.value if isinstance(when.value, list) else [when.value]
        return str(value) in {str(o) for o in options}
    a, b = _num(value), _num(when.value)
    if when.op in ("==", "!="):
        same = (a == b) if a is not None and b is not None else str(value) == str(when.value)
        return same if when.op == "==" else not same
    if a is None or b is None:
        raise GoldError(f"when: {value!r} {when.op} {when.value!r} needs numbers")
    return {">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[when.op]


def depends(step: GoldStep) -> set[str]:
    deps = {src.from_ for src in step.args.values() if isinstance(src, FromArg)}
    if step.when is not None:
        deps.add(step.when.from_)
    return deps


def meets(step: GoldStep, obs: CallResult) -> bool:
    if step.expect == "ok":
        return obs.ok and bool(obs.items)
    if step.expect == "empty":
        return obs.outcome == Outcome.EMPTY or (obs.ok and not obs.items)
    return obs.outcome not in (Outcome.OK, Outcome.EMPTY)


def compute_facts(
    task: Task, results: dict[str, CallResult], args: dict[str, dict[str, Any]] | None = None
) -> list[Fact]:
    """The facts of the task from the executed steps' responses (GoldError if one cannot be computed). With the
    steps' `args`, what a call asked about (a station, a business number) is part of what tells its rows apart."""
    out: list[Fact] = []
    for i, spec in enumerate(task.facts):
        try:
            facts = _listed(spec, results) if spec.row == "all" else [_fact(spec, results)]
        except GoldError as exc:
            raise GoldError(f"facts[{i}]: {exc.detail}") from None
        asked = [str(v) for v in (args or {}).get(spec.from_ or "", {}).values() if descriptive(v)]
        for fact in facts:
            if spec.from_ and asked:
                fact.about = list(dict.fromkeys([*fact.about, *asked]))[:10]
            out.append(fact)
    return out


#: The most items a `row: all` fact lists: a longer list is not something one answer names item by item.
MAX_LISTED = 12


def _listed(spec: FactSpec, results: dict[str, CallResult]) -> list[Fact]:
    """One fact per distinct value of the field over every row of the step (`row: all`): each is required, so none
    is another's rival; the rows must all be on the page the gold call received."""
    obs = results.get(spec.from_ or "")
    if obs is None:
        raise GoldError(f"step {spec.from_!r} was not executed (its `when` did not hold)")
    if (obs.total or 0) > len(obs.items):
        raise GoldError(f"`row: all` needs every row: step {spec.from_!r} shows {len(obs.items)} of {obs.total}")
    rows = [r for r in obs.items if str(r.get(spec.field or "") or "").strip()]
    values = list(dict.fromkeys(str(r[spec.field or ""]).strip() for r in rows))
    if not values:
        raise GoldError(f"step {spec.from_!r} has no value for {spec.field!r} in any row")
    if len(values) > MAX_LISTED:
        raise GoldError(f"`row: all` lists {len(values)} values of {spec.field!r}; ask for at most {MAX_LISTED}")
    out = []
    for value in values:
        row = next(r for r in rows if str(r[spec.field or ""]).strip() == value)
        mine = [r for r in rows if str(r[spec.field or ""]).strip() == value]
        about, _ = row_context(mine, row, spec.field or "")
        out.append(Fact(spec.kind, value, spec.tolerance, spec.unit, spec.label, spec.field or "", "", about, []))
    return out


def _fact(spec: FactSpec, results: dict[str, CallResult]) -> Fact:
    if spec.row == "all":
        return _listed(spec, results)[0]  # compute_facts reads every one; this keeps the types honest
    category = str(spec.row.where.get("category", "")) if isinstance(spec.row, Where) else ""
    if spec.from_ is None:
        return Fact(spec.kind, spec.value, spec.tolerance, spec.unit, spec.label)
    obs = results.get(spec.from_)
    if obs is None:
        raise GoldError(f"step {spec.from_!r} was not executed (its `when` did not hold)")
    if spec.kind == "count" and spec.field is None:
        # the rows the query has in all (the provider's total), not the page the gold call received
        return Fact("count", max(obs.total or 0, len(obs.items)), 0.0, spec.unit, spec.label)
    row = pick_row(obs.items, spec.row)
    if row is None:
        raise GoldError(f"step {spec.from_!r} has no row {_row_text(spec.row)}")
    value = row.get(spec.field or "")
    if value is None or str(value).strip() == "":
        raise GoldError(f"step {spec.from_!r} row {_row_text(spec.row)} has no value for {spec.field!r}")
    if spec.kind in ("number", "count") and _num(value) is None:
        raise GoldError(f"{spec.field!r} = {value!r} is not a number")
    if spec.kind == "date":
        d = as_date(value)
        if d is None:
            raise GoldError(f"{spec.field!r} = {value!r} is not a date")
        value = d.isoformat()
    if spec.kind in ("number", "count"):
        value = _num(value)
    same = tuple(k for k, v in spec.row.where.items() if not descriptive(v)) if isinstance(spec.row, Where) else ()
    about, rivals = row_context(list(obs.items), row, spec.field or "", same)
    return Fact(spec.kind, value, spec.tolerance, spec.unit, spec.label, spec.field or "", category, about, rivals)


@dataclass
class GoldCall:
    step: str
    tool: str
    args: dict[str, Any]
    observation: CallResult


@dataclass
class GoldResult:
    task: str
    calls: list[GoldCall] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)

    @property
    def tools(self) -> list[str]:
        return [c.tool for c in self.calls]

    def to_json(self) -> GoldRecord:
        return {
            "task": self.task,
            "skipped": self.skipped,
            "calls": [
                {
                    "step": c.step,
                    "tool": c.tool,
                    "args": c.args,
                    "outcome": c.observation.outcome,
                    "rows": len(c.observation.items),
                }
                for c in self.calls
            ],
            "facts": [
                {
                    "kind": f.kind,
                    "value": f.value,
                    "tolerance": f.tolerance,
                    "unit": f.unit,
                    "label": f.label,
                    "field": f.field,
                    "category": f.category,
                    "about": f.about,
                    "rivals": f.rivals,
                }
                for f in self.facts
            ],
        }


async def execute_gold(task: Task, backend: Backend, now: datetime) -> GoldResult:
    """Run the gold program; GoldError when a step does not give what it expects or the facts are empty."""
    results: dict[str, CallResult] = {}
    out = GoldResult(task.id)
    for step in task.gold:
        try:
            if not when_holds(step.when, results):
                out.skipped.append(step.id)
                continue
            args = resolve_args(step, results, now, getattr(backend, "tools", {}).get(step.tool))
        except GoldError as exc:
            raise GoldError(f"task {task.id}: step {step.id!r} ({step.tool}): {exc.detail}") from None
        obs = await backend.call(step.tool, args)
        if not meets(step, obs):
            got = f"{obs.outcome} with {len(obs.items)} rows" + (f" ({obs.reason})" if obs.reason else "")
            raise GoldError(f"task {task.id}: step {step.id!r} ({step.tool}) expected {step.expect}, got {got}")
        results[step.id] = obs
        out.calls.append(GoldCall(step.id, step.tool, args, obs))
    try:
        out.facts = compute_facts(task, results, {c.step: c.args for c in out.calls})
    except GoldError as exc:
        raise GoldError(f"task {task.id}: {exc.detail}") from None
    if not out.facts and task.category not in ("irrelevance", "clarification"):
        raise GoldError(f"task {task.id}: the gold program states no facts")
    return out
