"""Access to the ground truth of the sandbox catalog: which links really work. For benchmarks and tests only."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def load_ground_truth() -> list[dict[str, Any]]:
    text = resources.files("sandbox").joinpath("ground_truth.json").read_text(encoding="utf-8")
    links: list[dict[str, Any]] = json.loads(text)["links"]
    return links
