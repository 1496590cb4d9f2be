"""The plan shapes a careful agent would take (chain, fan-in, parallel, conditional) and `route_check`, over a
`VerifiedGraph`. See synthesis.plans.

Where the user's words pick a row (`Step.names`): a listing callable with constants alone (a code list of cities)
starts a route when the user names one of its rows, and an entity list in the middle of a route (the stops of a
city, the complexes of a 동) is passed through the entity the user names, narrowed by its name parameter when the
tool has one (`Step.narrow`)."""

from __future__ import annotations

import random
from typing import Any

from graph.concepts import concepts_of, field_unit, norm
from graph.models import ParamRecord, ToolRecord
from synthesis.records import Condition, Plan, Source, Step
from synthesis.routes import PLACE_CONCEPTS, carries_place, is_area_field
from synthesis.verified_graph import _DATE_LIKE, VerifiedGraph


def _choose(rnd: random.Random, options: list[Any], weights: list[float]) -> Any:
    return rnd.choices(options, weights=weights, k=1)[0]


def _shorter_exists(
    graph: VerifiedGraph,
    ends: dict[tuple[str, str], list[list[str]]],
    names: list[str],
    shortest: dict[tuple[str, str], int],
) -> bool:
    """A careful agent takes the shortest route: a chain is not planned when a shorter planable chain joins the
    same first and last tools (`ends`: the chains by their first and last tools; `shortest` caches the shortest
    planable length per pair)."""
    key = (names[0], names[-1])
    if key not in shortest:
        probe = random.Random(0)
        same_ends = ends.get(key, [])
        shortest[key] = next(
            (
                n
                for n in sorted({len(c) for c in same_ends})
                if any(_chain(graph, c, probe) is not None for c in same_ends if len(c) == n)
            ),
            len(names),
        )
    return len(names) > shortest[key]


def _deps(sources: dict[str, Source]) -> list[int]:
    return sorted({s.from_step for s in sources.values() if s.kind == "link"})


def route_check(graph: VerifiedGraph, plan: Plan) -> str | None:
    """Why a careful agent would not take this route (None when it would); sets `plan.route` to the reasons it
    would: the kind of entity each step's rows are, against what the question is about."""
    parts = []
    for i, step in enumerate(plan.steps):
        kind = graph.kind(step.tool)
        outs = [
            (later, src)
            for later in plan.steps[i + 1 :]
            for src in later.sources.values()
            if src.kind == "link" and src.link is not None and src.from_step == i
        ]
        entity = graph.entity_param(step.tool)
        named = bool(step.names) or (
            i == 0 and identifies(step.tool, entity, [n for n, src in step.sources.items() if src.kind == "slot"])
        )
        if i in plan.finals and not outs:
            parts.append(f"{step.tool.name}: answers ({kind} rows)")
            continue
        targets = [(later.tool, src.link) for later, src in outs if src.link is not None]
        clock_only = all(
            graph.role(t, next(p for p in t.params if p.key() == lk.target_param)) == "clock"
            for t, lk in targets
            if any(p.key() == lk.target_param for p in t.params)
        )
        if targets and clock_only:
            return f"{step.tool.name} feeds only an issue time the clock gives (a shorter route answers the same)"
        place_only = all(carries_place(lk, t) for t, lk in targets)
        if kind == "entity" and place_only and not named:
            return (
                f"{step.tool.name} lists {kind} rows the question does not ask about and only their "
                "location feeds the next call"
            )
        how = "its location" if place_only else "its identity"
        parts.append(f"{step.tool.name}: {kind} rows{' named by the user' if named else ''}, {how} feeds the next call")
    plan.route = "; ".join(parts) + f" ({len(plan.steps)} calls)"
    return None


def identifies(tool: ToolRecord, entity: ParamRecord | None, slots: list[str]) -> bool:
    """The user's words name the row's entity: its name parameter, or an identifier a person knows that the rows
    carry as a field (a business registration number)."""
    if entity is not None and entity.name in slots:
        return True
    fields = {norm(f.name): f for f in tool.fields}
    for name in slots:
        f = fields.get(norm(name))
        if (
            f is not None
            and not is_area_field(f.name, f.description)
            and not concepts_of(f.name, f.description) & PLACE_CONCEPTS
            and not _DATE_LIKE.search(name.lower())
        ):
            return True
    return False


def _root_for(graph: VerifiedGraph, tool: ToolRecord, intermediate: bool) -> Step | None:
    """A root step: an entity list the route passes through is searched by the name the user gives; a listing
    callable with constants alone starts a route (never a single call) with the row the user names."""
    if intermediate and graph.kind(tool) == "entity":
        named = graph.root_sources(tool, named=True)
        if named is not None:
            return Step(tool, named)
    sources = graph.root_sources(tool)
    if sources is not None:
        return Step(tool, sources)
    listed = graph.listing_sources(tool) if intermediate else None
    if listed is None:
        return None
    return Step(tool, listed, names=graph.mention_field(tool) or "")


def _fed_step(graph: VerifiedGraph, tool: ToolRecord, sources: dict[str, Source], intermediate: bool) -> Step:
    """A fed step; an entity list in the middle of a route is passed through the entity the user names."""
    step = Step(tool, sources, _deps(sources))
    if intermediate and graph.kind(tool) == "entity" and not any(s.kind == "slot" for s in sources.values()):
        step.names, step.narrow = graph.named_by(tool)
    return step


def _route_steps(
    graph: VerifiedGraph, names: list[str], rnd: random.Random, *, feeds_on: bool = False
) -> list[Step] | None:
    """The steps of a route over `names`, each fed by the one before it (and any earlier one); `feeds_on`: its
    last step feeds a later one too (a fan-in's route)."""
    root = _root_for(graph, graph.tools[names[0]], len(names) > 1 or feeds_on)
    if root is None:
        return None
    steps = [root]
    for i, name in enumerate(names[1:], start=1):
        sources = graph.fed_sources(graph.tools[name], [(j, names[j]) for j in range(i)], rnd)
        if sources is None or not any(s.kind == "link" and s.from_step == i - 1 for s in sources.values()):
            return None
        steps.append(_fed_step(graph, graph.tools[name], sources, feeds_on or i < len(names) - 1))
    return steps


def _chain(graph: VerifiedGraph, names: list[str], rnd: random.Random, shape: str = "chain") -> Plan | None:
    steps = _route_steps(graph, names, rnd)
    if steps is None:
        return None
    plan = Plan(shape, steps, [len(steps) - 1])
    return plan if route_check(graph, plan) is None else None


def _joins(graph: VerifiedGraph, target: ToolRecord, route: list[str], rnd: random.Random) -> dict[str, Source] | None:
    """Sources for `target` that join the route's last step with an earlier one (the two lookups it needs), or
    None."""
    for _ in range(4):
        sources = graph.fed_sources(target, list(enumerate(route)), rnd, link_clock=True, split=True)
        deps = _deps(sources) if sources is not None else []
        if len(deps) >= 2 and len(route) - 1 in deps:
            return sources
    return None


def fan_in_targets(graph: VerifiedGraph, route: list[str]) -> list[str]:
    """The tools a route's last step and an earlier step feed together (a fan-in's final call): it needs both,
    so no one step of the route feeds it alone (else a careful agent skips the other lookup, or it is a chain).
    The earlier step may be the route's start (a city's code with the stop the city's stop list gave) or any step
    on the way (the city's code a nearby-stops lookup gave, with the route a later step found)."""
    probe = random.Random(0)
    last = route[-1]
    out = []
    for name in sorted(graph.edges.get(last, {})):
        target = graph.tools.get(name)
        if target is None or name in route:
            continue
        earlier = [(j, route[j]) for j in range(len(route) - 1) if name in graph.edges.get(route[j], {})]
        if not earlier or any(
            graph.fed_sources(target, [up], probe) is not None for up in [*earlier, (len(route) - 1, last)]
        ):
            continue
        if _joins(graph, target, route, probe) is not None:
            out.append(name)
    return out


def _fan_in(graph: VerifiedGraph, rnd: random.Random, candidates: list[tuple[list[str], str]]) -> Plan | None:
    """A call fed by two lookups: a route (`candidates`: a route and a target `fan_in_targets` gave), and a
    final call that joins what its last step found with what an earlier step did (a bus stop's arrivals need the
    city's code and the stop's id the city's stop list gave)."""
    if not candidates:
        return None
    route, name = _choose(rnd, candidates, [graph.weight([*r, t]) for r, t in candidates])
    steps = _route_steps(graph, route, rnd, feeds_on=True)
    sources = _joins(graph, graph.tools[name], route, rnd) if steps is not None else None
    if steps is None or sources is None:
        return None
    plan = Plan("fan_in", [*steps, Step(graph.tools[name], sources, _deps(sources))], [len(steps)])
    return plan if route_check(graph, plan) is None else None


def decides(graph: VerifiedGraph, tool: ToolRecord) -> bool:
    """A tool whose result can decide whether to look further: an observation or forecast table, or rows with a
    measured quantity (a field with a unit)."""
    return graph.kind(tool) == "table" or any(field_unit(f.description) for f in tool.fields)


def _conditional(graph: VerifiedGraph, rnd: random.Random, roots: list[str], chains: list[list[str]]) -> Plan | None:
    """A second lookup made only when the first result says so: a chain whose last step is fed by a step whose
    result has a quantity to decide on (a bus route's headway decides whether to list its stops), or two lookups
    from one root where the second runs only when the first's value passes a threshold (the forecast's chance of
    rain decides whether to look for indoor places). The threshold is drawn when the plan runs."""
    if rnd.random() < 0.5:
        options = [c for c in chains if len(c) >= 2 and decides(graph, graph.tools[c[-2]])]
        if options:
            names = _choose(rnd, options, [graph.weight(c) for c in options])
            plan = _chain(graph, names, rnd, "conditional")
            if plan is not None:
                last = len(plan.steps) - 1
                plan.finals = [last - 1, last]
                plan.when = Condition(step=last - 1, gate=last)
                return plan
    plan = _parallel(graph, rnd, roots, decider=True)
    if plan is None:
        return None
    plan.shape = "conditional"
    plan.when = Condition(step=1, gate=2)
    return plan


def _parallel(graph: VerifiedGraph, rnd: random.Random, roots: list[str], *, decider: bool = False) -> Plan | None:
    """Two lookups fed by one root, combined in the answer; `decider`: the first has a quantity to decide on
    (a conditional plan)."""
    options = [r for r in roots if len(graph.edges.get(r, {})) >= 2]
    if not options:
        return None
    root = _choose(rnd, options, [graph.weight([r]) for r in options])
    children = sorted(graph.edges[root])
    rnd.shuffle(children)
    if graph.pending:  # the most promising pairs first (stable: the shuffled order among equals)
        children.sort(key=lambda c: -graph.pair_prior(root, c))
    if decider:
        children.sort(key=lambda c: not decides(graph, graph.tools[c]))
    picked: list[Step] = []
    for child in children:
        sources = graph.fed_sources(graph.tools[child], [(0, root)], rnd)
        if sources is not None:
            picked.append(Step(graph.tools[child], sources, [0]))
        if len(picked) == 2:
            break
    if len(picked) < 2 or (decider and not decides(graph, picked[0].tool)):
        return None
    first = _root_for(graph, graph.tools[root], True)
    if first is None:
        return None
    plan = Plan("parallel", [first, *picked], [1, 2])
    return plan if route_check(graph, plan) is None else None
