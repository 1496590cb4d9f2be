"""Path enumeration over a tool-level edge map, with the semantics of the Neo4j path query: up to `per_start`
acyclic paths with hops in [min, max] from each start (all of them when there are fewer), ordered by length then
names. Which paths are kept when there are more may differ between backends; the walk stops early either way."""

from __future__ import annotations

from collections.abc import Mapping


def enumerate_paths(
    edges: Mapping[str, Mapping[str, object]], starts: list[str], min_hops: int, max_hops: int, per_start: int
) -> list[list[str]]:
    if not 1 <= min_hops <= max_hops <= 8:
        raise ValueError("hops must satisfy 1 <= min <= max <= 8")
    out: list[list[str]] = []
    for start in sorted(set(starts)):
        found: list[list[str]] = []
        stack: list[list[str]] = [[start]]
        while stack and len(found) < per_start:
            path = stack.pop()
            if min_hops <= len(path) - 1 <= max_hops:
                found.append(path)
            if len(path) - 1 < max_hops:
                for nxt in sorted(edges.get(path[-1], {}), reverse=True):
                    if nxt not in path:
                        stack.append([*path, nxt])
        found.sort(key=lambda p: (len(p), p))
        out.extend(found[:per_start])
    return out
