"""Seeded, coverage-aware plan sampling (`PlanSampler`, `sample_plans`). See synthesis.plans."""

from __future__ import annotations

import random
from collections import Counter

from synthesis.plan_shapes import (
    _chain,
    _choose,
    _conditional,
    _fan_in,
    _parallel,
    _route_steps,
    _shorter_exists,
    fan_in_targets,
    route_check,
)
from synthesis.records import SHAPES, Plan, Step
from synthesis.verified_graph import VerifiedGraph

#: How often one plan (tool sequence and shape) may be drawn per `PER_REPEATS` records a run asks for; each draw
#: gets its own user values (place, entity, asked fields) and its own clock from the world, so a larger run draws a
#: plan more often instead of running out of tool sequences (near duplicates are still discarded when they run),
#: and the plan space stays finite.
REPEATS = {"single": 16, "chain": 6, "fan_in": 8, "parallel": 4, "conditional": 6}
PER_REPEATS = 300
#: Failed draws of one shape in one `more` call before it steps aside for the rest of the call.
STUCK = 60


def sample_plans(
    graph: VerifiedGraph,
    count: int,
    *,
    shapes: tuple[str, ...] = SHAPES,
    min_steps: int = 1,
    max_steps: int = 6,
    seed: int = 7,
    max_tool_share: float = 0.25,
) -> list[Plan]:
    """Seeded, coverage-aware plans; every required parameter of every step is satisfiable, every plan starts
    from tools a user's words can call. Up to `count` plans (fewer when the plan space runs out)."""
    return PlanSampler(
        graph,
        shapes=shapes,
        min_steps=min_steps,
        max_steps=max_steps,
        seed=seed,
        max_tool_share=max_tool_share,
        target=count,
    ).more(count)


class PlanSampler:
    """`sample_plans` that can be asked for more: `more(n)` draws up to n further plans, continuing the same
    seeded, coverage-aware draw (the shares, repeats and the per-tool cap grow with what was asked in all), so
    synthesis samples until it has kept enough or the plan space is exhausted (`exhausted`), with no cap on the
    pool."""

    def __init__(
        self,
        graph: VerifiedGraph,
        *,
        shapes: tuple[str, ...] = SHAPES,
        min_steps: int = 1,
        max_steps: int = 6,
        seed: int = 7,
        max_tool_share: float = 0.25,
        target: int = 0,
    ) -> None:
        """`target`: the records the run asks for (each plan's repeats grow with it: `REPEATS`)."""
        self.graph = graph
        self.scale = max(1, -(-target // PER_REPEATS))
        self.min_steps, self.max_steps, self.share = min_steps, max_steps, max_tool_share
        self.rnd = random.Random(seed)
        self.roots = sorted(n for n, t in graph.tools.items() if graph.root_sources(t) is not None)
        self.starts = self._starts()
        self.wanted = [s for s in shapes if s in SHAPES] or list(SHAPES)
        self.asked = 0
        self.made_total = 0
        self.exhausted = not self.starts
        self.shortest: dict[tuple[str, str], int] = {}
        self.seen: Counter[str] = Counter()
        self.made: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self._chains: list[list[str]] | None = None
        self._ends: dict[tuple[str, str], list[list[str]]] | None = None
        self._fan_ins: list[tuple[list[str], str]] | None = None

    def _starts(self) -> list[str]:
        """Where a route may start: the roots, and the listings whose row the user names (never a single call)."""
        g = self.graph
        return sorted({*self.roots, *(n for n, t in g.tools.items() if g.listing_sources(t) is not None)})

    @property
    def chains(self) -> list[list[str]]:
        if self._chains is None:
            graph, min_steps, max_steps = self.graph, self.min_steps, self.max_steps
            # one path query per length, so that long chains are not crowded out by short ones
            paths = (
                [
                    p
                    for hops in range(max(1, min_steps - 1), min(max_steps - 1, 5) + 1)
                    for p in graph.paths(self.starts, hops, hops, per_start=40)
                ]
                if max_steps > 1
                else []
            )
            self._chains = [
                p
                for p in paths
                if all(n in graph.tools for n in p) and min_steps <= len(p) <= max_steps and len(p) >= 2
            ]
            self._chains += self._reaching(self._chains)
        return self._chains

    def _reaching(self, chains: list[list[str]], per_tool: int = 4) -> list[list[str]]:
        """Shortest routes from the starts to every tool no sampled chain ends at (a path sample of a large graph
        misses some), so every tool a verified route reaches is asked about: up to `per_tool` per tool, from
        different starts."""
        graph = self.graph
        if self.max_steps < 2:
            return []
        ended = {c[-1] for c in chains}
        found: dict[str, list[list[str]]] = {}
        for start in self.starts:
            routes = {start: [start]}
            frontier = [start]
            while frontier:
                nxt = []
                for a in frontier:
                    for b in sorted(graph.edges.get(a, {})):
                        if b in routes or b not in graph.tools or len(routes[a]) >= self.max_steps:
                            continue
                        routes[b] = [*routes[a], b]
                        nxt.append(b)
                frontier = nxt
            for end, route in routes.items():
                if end not in ended and len(route) >= max(2, self.min_steps):
                    found.setdefault(end, []).append(route)
        return [r for end in sorted(found) for r in sorted(found[end], key=len)[:per_tool]]

    @property
    def ends(self) -> dict[tuple[str, str], list[list[str]]]:
        """The chains by their first and last tools (what `_shorter_exists` compares a chain with)."""
        if self._ends is None:
            self._ends = {}
            for c in self.chains:
                self._ends.setdefault((c[0], c[-1]), []).append(c)
        return self._ends

    @property
    def fan_ins(self) -> list[tuple[list[str], str]]:
        """(route, target): every planable route (a sampled chain, or a start and one tool it feeds) with each tool
        its last step and an earlier step feed together (`fan_in_targets`), within `max_steps`."""
        if self._fan_ins is None:
            graph, probe = self.graph, random.Random(0)
            pairs = [[s, b] for s in self.starts for b in sorted(graph.edges.get(s, {})) if b in graph.tools and b != s]
            routes = {tuple(r) for r in [*pairs, *self.chains] if 2 <= len(r) < self.max_steps}
            self._fan_ins = [
                (list(r), t)
                for r in sorted(routes)
                if not _shorter_exists(graph, self.ends, list(r), self.shortest)
                and _route_steps(graph, list(r), probe, feeds_on=True) is not None
                for t in fan_in_targets(graph, list(r))
            ]
        return self._fan_ins

    def more(self, count: int) -> list[Plan]:
        """Up to `count` further plans; fewer (and `exhausted` set when none) once the plan space runs out."""
        if self.exhausted or count <= 0:
            return []
        graph, rnd, roots, wanted = self.graph, self.rnd, self.roots, self.wanted
        min_steps, max_steps = self.min_steps, self.max_steps
        self.asked += count
        total = self.asked
        cap = max(3, int(total * self.share))
        chains = self.chains
        seen, made, failures = self.seen, self.made, self.failures
        plans: list[Plan] = []
        attempts = 0
        #: this call's failed draws per shape: a shape that keeps failing now (its plans all drawn their repeats,
        #: or behind only because its plans gave no record) lets the others draw instead of using up the attempts
        stuck: Counter[str] = Counter()
        while len(plans) < count and attempts < count * 30:
            attempts += 1
            drawable = [s for s in wanted if stuck[s] < STUCK]
            if not drawable:
                break
            # the shape furthest behind its share goes next; shapes that keep failing step aside
            open_shapes = [s for s in drawable if failures[s] < total * 5] or drawable
            shape = min(open_shapes, key=lambda s: (made[s], failures[s], wanted.index(s)))
            plan = None
            if shape == "single" and min_steps <= 1 and roots:
                name = _choose(rnd, roots, [graph.weight([r]) for r in roots])
                plan = Plan("single", [Step(graph.tools[name], graph.root_sources(graph.tools[name]) or {})], [0])
                route_check(graph, plan)
            elif shape == "chain" and chains:
                # coverage-aware among a random handful: rarely used tools win, without scoring every path
                options = rnd.sample(chains, min(48, len(chains)))
                # and a few ending at a tool no plan has used yet, so every reachable tool is asked about early
                fresh = [c for c in chains if not graph.tool_use[c[-1]]]
                options += rnd.sample(fresh, min(8, len(fresh)))
                names = _choose(rnd, options, [graph.weight(p) for p in options])
                plan = None if _shorter_exists(graph, self.ends, names, self.shortest) else _chain(graph, names, rnd)
            elif shape == "fan_in" and max_steps >= 3:
                plan = _fan_in(graph, rnd, self.fan_ins)
            elif shape == "parallel" and max_steps >= 3:
                plan = _parallel(graph, rnd, self.starts)
            elif shape == "conditional" and max_steps >= 2:
                plan = _conditional(graph, rnd, self.starts, [c for c in chains if len(c) <= max_steps])
            # a plan may repeat a few times: its user values are drawn from the pools at execution
            # the cap spreads use over tools; the first step is exempt (few tools take what a user says)
            if (
                plan is None
                or seen[plan.key] >= REPEATS.get(plan.shape, 1) * self.scale
                or any(graph.tool_use[s.tool.name] >= cap for s in plan.steps[1:])
            ):
                failures[shape] += 1
                stuck[shape] += 1
                continue
            seen[plan.key] += 1
            made[shape] += 1
            plans.append(plan)
            for s in plan.steps:
                graph.tool_use[s.tool.name] += 1
                for src in s.sources.values():
                    if src.link is not None:
                        graph.link_use[src.link.id] += 1
        self.made_total += len(plans)
        self.exhausted = not plans
        return plans

    def missed(self, plan: Plan) -> None:
        """A drawn plan that ran and gave no record (nothing to decide on, no rows, a near duplicate): its shape is
        drawn again (its repeat slot stays spent), so the kept shapes follow the wanted shares rather than how
        often each shape's plans fail."""
        if self.made[plan.shape] > 0:
            self.made[plan.shape] -= 1

    def resume(self) -> None:
        """Draw again after running out (the graph may have changed under it: links verified, a gate opened)."""
        self.exhausted = not self.starts

    def release(self, plan: Plan) -> None:
        """A drawn plan that never ran (a link on it did not come out verified): its repeat slot and its use of
        tools and links are given back, so the plan space is that of the graph as verification leaves it."""
        if self.seen[plan.key] <= 0:
            return
        self.seen[plan.key] -= 1
        self.made[plan.shape] -= 1
        self.exhausted = False
        for s in plan.steps:
            self.graph.tool_use[s.tool.name] -= 1
            for src in s.sources.values():
                if src.link is not None:
                    self.graph.link_use[src.link.id] -= 1

    def rebase(self, graph: VerifiedGraph) -> None:
        """Continue the same draw over a grown graph (more tools reached, more candidate links): the repeats, the
        shares and the use of tools and links carry over."""
        graph.tool_use.update(self.graph.tool_use)
        graph.link_use.update(self.graph.link_use)
        self.graph = graph
        self.roots = sorted(n for n, t in graph.tools.items() if graph.root_sources(t) is not None)
        self.starts = self._starts()
        self._chains = self._ends = None
        self._fan_ins = None
        self.shortest.clear()
        self.exhausted = not self.starts
