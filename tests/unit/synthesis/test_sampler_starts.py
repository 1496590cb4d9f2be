"""The plan sampler starts routes at roots and at listings whose row the user names: a graph whose only starts are
such listings (a portal whose list tool is filtered by a name the user types) is not an empty plan space."""

from __future__ import annotations

from typing import Any

from synthesis.sampler import PlanSampler


class _Graph:
    """What the sampler asks a graph about where routes start."""

    def __init__(self, roots: set[str], listings: set[str]) -> None:
        self.tools = {n: n for n in roots | listings}
        self._roots, self._listings = roots, listings

    def root_sources(self, tool: str) -> dict[str, Any] | None:
        return {} if tool in self._roots else None

    def listing_sources(self, tool: str) -> dict[str, Any] | None:
        return {} if tool in self._listings else None


def test_a_graph_whose_only_starts_are_listings_is_not_exhausted() -> None:
    sampler = PlanSampler(_Graph(set(), {"stations_list"}), shapes=("chain",))  # type: ignore[arg-type]
    assert sampler.starts == ["stations_list"] and not sampler.roots
    assert not sampler.exhausted
    sampler.exhausted = True
    sampler.resume()
    assert not sampler.exhausted


def test_a_graph_without_any_start_is_exhausted() -> None:
    sampler = PlanSampler(_Graph(set(), set()))  # type: ignore[arg-type]
    assert sampler.exhausted and sampler.more(5) == []
