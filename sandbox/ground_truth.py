"""Access to the ground truth of the sandbox catalog: which links really work. For benchmarks and tests only."""

from __future__ import annotations

import json
from importlib import resources
from typing import Literal, TypedDict

from core.json_types import JsonObject


class SourceEnd(TypedDict):
    op: str  # operation id ("Service.operation")
    field: str


class TargetEnd(TypedDict):
    op: str
    param: str


class GroundTruthLink(TypedDict):
    """One link of ground_truth.json: a real one ("true") or a decoy that must not verify."""

    id: str
    kind: Literal["true", "decoy"]
    source: SourceEnd
    target: TargetEnd
    transform: JsonObject  # a graph transform as JSON ({"kind": "slice", ...})
    note: str


def load_ground_truth() -> list[GroundTruthLink]:
    text = resources.files("sandbox").joinpath("ground_truth.json").read_text(encoding="utf-8")
    links: list[GroundTruthLink] = json.loads(text)["links"]
    return links
