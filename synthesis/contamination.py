"""Contamination guard (pure): fingerprints of benchmark tasks, and whether a synthesised trajectory reproduces
one (the same tool sequence with the same slot values, or a near-duplicate request by character 3-gram Jaccard).

`BenchFingerprints` is built from (tool sequence, user values, request text) triples, so synthesis needs nothing
from the benchmark package; `kopa bench overlap` uses the same test on any dataset.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from synthesis.records import Trajectory, as_trajectory

NEAR_DUPLICATE = 0.8


def _norm_value(v: Any) -> str:
    return re.sub(r"[\s\W_]+", "", unicodedata.normalize("NFKC", str(v)).lower())


def _flatten(values: Iterable[Any]) -> frozenset[str]:
    out: set[str] = set()
    for v in values:
        if isinstance(v, list | tuple):
            out |= _flatten(v)
        elif isinstance(v, dict):
            out |= _flatten(v.values())
        elif v is not None and _norm_value(v):
            out.add(_norm_value(v))
    return frozenset(out)


def shingles(text: str) -> frozenset[str]:
    t = re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))
    return frozenset(t[i : i + 3] for i in range(max(1, len(t) - 2)))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


class BenchFingerprints:
    """Fingerprints of benchmark tasks: entries are (label, tool sequence, user values, request text)."""

    def __init__(
        self,
        entries: Sequence[tuple[Sequence[str], Iterable[Any], str]],
        labels: Sequence[str] | None = None,
        *,
        threshold: float = NEAR_DUPLICATE,
    ) -> None:
        self.threshold = threshold
        self.labels = list(labels) if labels is not None else [f"task {i}" for i in range(len(entries))]
        self.programs: dict[tuple[tuple[str, ...], frozenset[str]], str] = {}
        self.requests: list[tuple[str, frozenset[str]]] = []
        self.index: dict[str, set[int]] = defaultdict(set)
        for label, (tools, values, text) in zip(self.labels, entries, strict=True):
            if tools:
                self.programs.setdefault((tuple(tools), _flatten(values)), label)
            sh = shingles(text)
            self.index_request(len(self.requests), sh)
            self.requests.append((label, sh))

    def index_request(self, i: int, sh: frozenset[str]) -> None:
        for g in sh:
            self.index[g].add(i)

    def match(self, tools: Sequence[str], values: Iterable[Any], request: str) -> str | None:
        """Why a (tool sequence, slot values, request) reproduces a task, or None."""
        label = self.programs.get((tuple(tools), _flatten(values)))
        if label is not None:
            return f"same tool sequence and slot values as {label}"
        sh = shingles(request)
        candidates: set[int] = set()
        for g in sh:
            candidates |= self.index.get(g, set())
        for i in sorted(candidates):
            other_label, other = self.requests[i]
            score = jaccard(sh, other)
            if score >= self.threshold:
                return f"near-duplicate request of {other_label} (3-gram Jaccard {score:.2f})"
        return None

    def is_contaminated(self, trajectory: Trajectory | dict[str, Any]) -> str | None:
        """The reason a trajectory reproduces a benchmark task, or None."""
        t = as_trajectory(trajectory)
        values = [v["value"] for s in t.steps for v in s.provenance.values() if v.get("kind") == "slot"]
        if not values:
            values = list(t.slots.values())
        return self.match([s.tool for s in t.steps], values, t.request)
