"""Fan-in plans come from any registered API set whose links join two lookups in one call: a final call that needs
what a route's last step found and what an earlier step found (a stop's arrivals need the city's code and the stop's
id), never one that a single step of the route feeds alone. Shapes whose plans give no record are drawn again."""

from __future__ import annotations

import random
from typing import Any

from synthesis.plan_shapes import fan_in_targets
from synthesis.records import Plan, Source, Step
from synthesis.sampler import PlanSampler

#: what each tool needs, and which upstream tool gives it
NEEDS = {
    "regions": {},
    "cities": {"region": "regions"},
    "stops": {"city": "cities"},
    "arrivals": {"city": "cities", "stop": "stops"},
    "stop_detail": {"stop": "stops"},
}


class _Graph:
    """The part of a VerifiedGraph that fan-in planning asks about: edges and the sources of a fed call."""

    def __init__(self) -> None:
        self.tools = {n: n for n in NEEDS}
        self.edges: dict[str, dict[str, list[str]]] = {}
        for target, needs in NEEDS.items():
            for source in needs.values():
                self.edges.setdefault(source, {})[target] = [f"{source}->{target}"]

    def fed_sources(
        self, tool: str, upstream: list[tuple[int, str]], rnd: random.Random, **_: Any
    ) -> dict[str, Source] | None:
        out = {}
        for param, source in NEEDS[tool].items():
            at = [i for i, up in upstream if up == source]
            if not at:
                return None
            out[param] = Source("link", from_step=at[-1])
        return out


def test_a_call_that_needs_two_lookups_of_a_route_is_a_fan_in_target() -> None:
    graph: Any = _Graph()
    assert fan_in_targets(graph, ["cities", "stops"]) == ["arrivals"]
    # the earlier lookup may be anywhere on the route, not only at its start
    assert fan_in_targets(graph, ["regions", "cities", "stops"]) == ["arrivals"]


def test_a_call_one_step_feeds_alone_is_a_chain_not_a_fan_in() -> None:
    graph: Any = _Graph()
    assert "stop_detail" not in fan_in_targets(graph, ["cities", "stops"])
    assert fan_in_targets(graph, ["regions", "cities"]) == []


def test_a_shape_whose_plan_gave_no_record_is_drawn_again() -> None:
    class _Starts(_Graph):
        def root_sources(self, tool: str) -> dict[str, Any] | None:
            return {} if tool == "regions" else None

        def listing_sources(self, tool: str) -> dict[str, Any] | None:
            return None

    sampler = PlanSampler(_Starts(), shapes=("single", "chain"))  # type: ignore[arg-type]
    plan = Plan("chain", [Step(tool=None, sources={})], [0])  # type: ignore[arg-type]
    sampler.made.update({"chain": 3, "single": 3})
    sampler.missed(plan)
    assert sampler.made == {"chain": 2, "single": 3}
    sampler.made["chain"] = 0
    sampler.missed(plan)
    assert sampler.made["chain"] == 0
