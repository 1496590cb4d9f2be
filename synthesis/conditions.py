"""Conditions: when a person asks a second thing only if a value of the first answer passes a threshold ("비 올
확률이 60% 이상이면 지금 비가 오고 있는지도 알려 줘"), as data (`synthesis/needs/conditions/*.yaml`, and a
`conditions` folder inside each folder of `KOPA_NEEDS_DIRS`).

A condition is on a value that bears on what the branch asks (a reading or a forecast value, never a count of an
API's rows), at a threshold people use (a grade boundary, a round figure of daily life), so that either outcome
occurs; the branch is asked by a need (`synthesis.needs`), so its answer states values. A forecast's deciding
value is the highest (or lowest) over the hours its shown rows hold, and the answer says which hours.
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from graph.concepts import KMA_CATEGORIES, norm
from graph.models import ToolRecord
from synthesis.fact_terms import Fact
from synthesis.needs import SHIPPED, Need, NeedError, category_labels, default_needs
from synthesis.records import StepResponse
from synthesis.routes import row_kind
from synthesis.row_facts import field_fact, table_facts

FOLDER = "conditions"
OPS = (">=", "<=")


@dataclass(frozen=True)
class Rule:
    """One condition. `asks`: the deciding value (KMA category codes or field names); `op` and `at`: the
    comparison and the thresholds a person states; `name`: what the user calls the value; `says`: the condition
    as said ({t}: the threshold with its unit); `then`: need id -> what the branch asks, in the user's words."""

    id: str
    source: str
    asks: tuple[str, ...]
    op: str
    at: tuple[float, ...]
    name: str
    says: str
    then: dict[str, str]


@dataclass(frozen=True)
class Reading:
    """The deciding value as the answer states it: its fact (label, value, unit) and the hours it covers
    (`06시~07시 예보 기준`, or `현재` for an observation; empty for a row's value)."""

    fact: Fact
    unit: str
    scope: str


def _rule(raw: Any, where: str) -> Rule:
    if not isinstance(raw, dict) or not isinstance(raw.get("if"), dict) or not isinstance(raw.get("then"), dict):
        raise NeedError(f"{where}: a condition is a mapping with id, if and then")
    cond = raw["if"]
    rid = raw.get("id")
    if not isinstance(rid, str) or not re.fullmatch(r"[\w.-]+", rid):
        raise NeedError(f"{where}: a condition's id is a word")
    if cond.get("op") not in OPS:
        raise NeedError(f"{where}: condition {rid}: op is one of {', '.join(OPS)}")
    at = cond.get("at")
    if not isinstance(at, list) or not at or not all(isinstance(v, int | float) for v in at):
        raise NeedError(f"{where}: condition {rid}: at lists the thresholds (numbers)")
    says = str(cond.get("says", ""))
    if "{t}" not in says or not cond.get("name") or not cond.get("asks"):
        raise NeedError(f"{where}: condition {rid}: if names asks, name and says (with {{t}})")
    then = {str(k): str(v).strip() for k, v in raw["then"].items() if str(v).strip()}
    if not then:
        raise NeedError(f"{where}: condition {rid}: then maps need ids to what is asked")
    return Rule(
        id=rid,
        source=where,
        asks=tuple(a for a in str(cond["asks"]).split("|") if a),
        op=str(cond["op"]),
        at=tuple(sorted(float(v) for v in at)),
        name=str(cond["name"]),
        says=says,
        then=then,
    )


def load_rules(folders: list[Path]) -> list[Rule]:
    """The conditions of the `conditions` folder of each of `folders`, by id (a later folder's replaces one)."""
    out: dict[str, Rule] = {}
    for folder in folders:
        for path in sorted((folder / FOLDER).glob("*.y*ml")):
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not isinstance(data.get("conditions"), list):
                raise NeedError(f"{path}: a conditions file holds a `conditions:` list")
            for i, raw in enumerate(data["conditions"]):
                rule = _rule(raw, f"{path} (condition {i + 1})")
                out[rule.id] = rule
    return list(out.values())


@lru_cache(maxsize=8)
def _cached(key: str) -> tuple[Rule, ...]:
    return tuple(load_rules([SHIPPED, *(Path(p) for p in key.split(os.pathsep) if p)]))


def default_rules() -> tuple[Rule, ...]:
    """The shipped conditions and those of `KOPA_NEEDS_DIRS`."""
    return _cached(os.environ.get("KOPA_NEEDS_DIRS", ""))


def _readings(tool: ToolRecord, response: StepResponse, skip: set[str]) -> dict[str, list[Reading]]:
    """The values a result offers to decide on, by KMA category or field name (normalised): a table's value
    over its shown hours (its lowest and highest when they differ), a singled-out row's measured fields."""
    items = response.items
    out: dict[str, list[Reading]] = {}
    if row_kind(tool) == "table":
        forecast = any("fcstTime" in x for x in items)
        for cat in dict.fromkeys(str(x.get("category")) for x in items):
            rows = [x for x in items if str(x.get("category")) == cat]
            facts, span = table_facts(rows)
            scope = f"{span} 예보 기준" if forecast and span else "" if forecast else "현재"
            unit = KMA_CATEGORIES.get(cat, ("", ""))[1]
            out[norm(cat)] = [Reading(f, unit, scope) for f, _ in facts if f.kind == "number"]
        return out
    if not response.selected or not items:
        return out  # a set: how many rows it has is no value a person decides on
    row = items[min(response.chosen, len(items) - 1)]
    desc = {f.name: f.description for f in tool.fields}
    for key, value in row.items():
        got = None if str(value) in skip else field_fact(key, value, desc.get(key, ""))
        if got is not None and got[0].kind == "number":
            m = re.match(rf"{re.escape(got[0].label)} -?[\d,.]+(.*)$", got[1])
            out.setdefault(norm(key), []).append(Reading(got[0], m.group(1).strip() if m else "", ""))
    return out


def _pick(reads: list[Reading], op: str) -> Reading | None:
    """The value that decides: the highest for a test of `>=` (any hour past it), the lowest for `<=`."""
    nums = [r for r in reads if isinstance(r.fact.value, int | float)]
    if not nums:
        return None
    return (max if op == ">=" else min)(nums, key=lambda r: float(r.fact.value))


def threshold(rule: Rule, value: float, rnd: random.Random) -> float:
    """A threshold of the rule's on either side of `value` about half the time each (the nearest on the drawn
    side; the other side's nearest when the drawn side has none)."""
    over = [t for t in rule.at if t > value]
    under = [t for t in rule.at if t < value]
    at = [t for t in rule.at if t == value]
    held_side = (under + at) if rule.op == ">=" else (at + over)
    fail_side = over if rule.op == ">=" else under
    held_side.sort(key=lambda t: abs(t - value))
    fail_side.sort(key=lambda t: abs(t - value))
    sides = [held_side, fail_side] if rnd.random() < 0.5 else [fail_side, held_side]
    return next(s[0] for s in sides if s)


def _answers(need: Need, tool: ToolRecord) -> bool:
    """Whether the tool's rows can answer the need: an observation or forecast table a need asking by KMA
    category (a forecast's, with a forecast value field, a need about later), other rows a need asking by their
    fields (a category code alone fits every tool's text)."""
    table = row_kind(tool) == "table"
    if not need.fits_tool(tool) or any(category_labels(a) for a in need.asks) != table:
        return False
    later = any("fcst" in norm(f.name) for f in tool.fields)
    return not table or need.time == "any" or (need.time == "later") == later


def branch_needs(rule: Rule, gate: ToolRecord, needs: tuple[Need, ...] | list[Need]) -> list[Need]:
    """The rule's branch needs the gated tool can answer, in the rule's order."""
    by_id = {n.id: n for n in needs}
    return [by_id[n] for n in rule.then if n in by_id and _answers(by_id[n], gate)]


def can_decide(
    tool: ToolRecord,
    gate: ToolRecord,
    needs: tuple[Need, ...] | list[Need] | None = None,
    rules: tuple[Rule, ...] | list[Rule] | None = None,
) -> bool:
    """Whether a conditional plan of `tool` then `gate` has a condition people ask (for a planner, before any
    call): a rule on a value the tool's rows carry (a KMA category of a table, else a documented field) with a
    branch need the gated tool answers."""
    table = row_kind(tool) == "table"
    fields = {norm(f.name) for f in tool.fields}
    for rule in default_rules() if rules is None else rules:
        carried = any(bool(category_labels(a)) if table else norm(a) in fields for a in rule.asks)
        if carried and branch_needs(rule, gate, default_needs() if needs is None else needs):
            return True
    return False


@dataclass(frozen=True)
class Decision:
    rule: Rule
    reading: Reading
    value: float
    held: bool


def decide(
    tool: ToolRecord,
    response: StepResponse,
    gate: ToolRecord,
    needs: tuple[Need, ...] | list[Need],
    skip: set[str],
    rnd: random.Random,
    rules: tuple[Rule, ...] | list[Rule] | None = None,
) -> Decision | None:
    """A condition on this result that bears on what the gated tool gives (a rule whose value the result holds
    and one of whose branch needs the gated tool answers), its threshold and whether it held; None when the
    pair has none a person would ask."""
    reads = _readings(tool, response, skip)
    options: list[tuple[Rule, Reading]] = []
    for rule in default_rules() if rules is None else rules:
        if not branch_needs(rule, gate, needs):
            continue
        got = _pick([r for a in rule.asks for r in reads.get(norm(a), [])], rule.op)
        if got is not None:
            options.append((rule, got))
    # a condition whose thresholds lie on both sides of the value first: either answer is then one of a few
    # steps away (a 4m/s wind tested at 4 or 9m/s, not a 20℃ reading tested at 10℃ only)
    near = [(r, g) for r, g in options if r.at[0] <= float(g.fact.value) <= r.at[-1]]
    if not options:
        return None
    rule, reading = rnd.choice(near or options)
    v = float(reading.fact.value)
    t = threshold(rule, v, rnd)
    return Decision(rule, reading, t, v >= t if rule.op == ">=" else v <= t)
