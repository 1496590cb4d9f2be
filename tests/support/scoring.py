"""Scoring verification against the sandbox ground truth (benchmarks and tests only; the engine never reads it)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from graph.models import LinkRecord, ToolRecord
from sandbox.ground_truth import load_ground_truth
from sandbox.providers import all_operations


def op_to_tool(tools: list[ToolRecord]) -> dict[str, str]:
    by_path = {urlparse(t.url).path: t.name for t in tools}
    return {op.op_id: by_path[op.path] for op in all_operations() if op.path in by_path}


def _key(source: str, field_: str, target: str, param: str, transform: dict[str, Any]) -> tuple[str, ...]:
    t = dict(transform)
    if t.get("kind") != "coord":
        t.pop("pair", None)
    return source, field_, target, param.split(":", 1)[-1], repr(sorted(t.items()))


@dataclass
class Score:
    true_total: int = 0
    decoy_total: int = 0
    matched_true: list[str] = field(default_factory=list)
    matched_decoys: list[str] = field(default_factory=list)
    missed_true: list[str] = field(default_factory=list)
    unlisted: int = 0

    @property
    def recall(self) -> float:
        return len(self.matched_true) / self.true_total if self.true_total else 0.0


def score(links: list[LinkRecord], tools: list[ToolRecord]) -> Score:
    """Match links (any status) to ground-truth links by endpoints and transform."""
    names = op_to_tool(tools)
    gt = load_ground_truth()
    keys = {_key(lk.source_tool, lk.source_field, lk.target_tool, lk.target_param, lk.transform) for lk in links}
    s = Score()
    listed = set()
    for g in gt:
        src, dst = names.get(g["source"]["op"]), names.get(g["target"]["op"])
        if src is None or dst is None:
            continue
        k = _key(src, g["source"]["field"], dst, g["target"]["param"], g["transform"])
        listed.add(k)
        if g["kind"] == "true":
            s.true_total += 1
            (s.matched_true if k in keys else s.missed_true).append(g["id"])
        else:
            s.decoy_total += 1
            if k in keys:
                s.matched_decoys.append(g["id"])
    s.unlisted = len(keys - listed)
    return s


SAMPLE = Path(__file__).with_name("sandbox_verified_sample.json")
#: z for a two-sided 95% interval (the 0.975 quantile of the standard normal).
Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion `successes`/`n` (95% with the default z): unlike the
    normal approximation it stays inside [0, 1] and is not empty at 0 or n successes. (0.0, 1.0) when n is 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p, z2 = successes / n, z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


@dataclass
class SampleScore:
    """Precision measured on the labelled sample of verified links (tests/support/sandbox_verified_sample.json),
    overall and by `catalog` (sandbox, generated)."""

    sample_size: int = 0
    still_verified: int = 0
    true_verified: int = 0
    false_verified: list[str] = field(default_factory=list)
    #: catalog -> [links labelled, of them verified now, of those labelled true]
    by_catalog: dict[str, list[int]] = field(default_factory=dict)

    @property
    def precision(self) -> float:
        return self.true_verified / self.still_verified if self.still_verified else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson score interval of the precision."""
        return wilson_interval(self.true_verified, self.still_verified)


def sample_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SAMPLE.read_text(encoding="utf-8"))
    return doc


def sample_generated_run() -> dict[str, Any]:
    """The generated-catalog run the sample's generated part was drawn from (seed, instances, pair verified)."""
    run: dict[str, Any] = sample_doc()["generated_run"]
    return run


def sample_precision(links: list[LinkRecord]) -> SampleScore:
    """Of the labelled sample, the links verified now and how many of them are true. `links` are the links of the
    runs the sample was drawn from (a cold sandbox run and the generated run of `sample_generated_run`, together:
    their tool names differ); a sample link verified in neither does not count."""
    doc = sample_doc()
    verified = {
        _key(lk.source_tool, lk.source_field, lk.target_tool, lk.target_param, lk.transform)
        for lk in links
        if lk.status == "verified"
    }
    s = SampleScore(sample_size=int(doc["sample_size"]))
    for g in doc["links"]:
        part = s.by_catalog.setdefault(g.get("catalog", "sandbox"), [0, 0, 0])
        part[0] += 1
        k = _key(g["source_tool"], g["source_field"], g["target_tool"], g["target_param"], g["transform"])
        if k in verified:
            s.still_verified += 1
            part[1] += 1
            if g["label"] == "true":
                s.true_verified += 1
                part[2] += 1
            else:
                s.false_verified.append(
                    f"{g['source_tool']}.{g['source_field']} -> {g['target_tool']}.{g['target_param']}"
                )
    return s
