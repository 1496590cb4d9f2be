"""`kopa bench overlap DATASET`: how much of a trajectory dataset reproduces KOPA-Bench tasks (the same tool
sequence with the same slot values, or a near-duplicate request by character 3-gram Jaccard >= 0.8). DATASET is a
`records.jsonl` or an export folder holding one (`synthesis.export.records_file`: the file training reads)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bench.run import BenchError
from bench.tasks import Task
from synthesis.contamination import NEAR_DUPLICATE, BenchFingerprints
from synthesis.export import records_file
from synthesis.records import as_trajectory


def fingerprints(tasks: list[Task], threshold: float = NEAR_DUPLICATE) -> BenchFingerprints:
    return BenchFingerprints(
        [([s.tool for s in t.gold], t.user_values(), t.request()) for t in tasks],
        [t.id for t in tasks],
        threshold=threshold,
    )


def overlap_report(
    dataset: Path, tasks: list[Task], *, threshold: float = NEAR_DUPLICATE, examples: int = 10
) -> dict[str, Any]:
    given, dataset = dataset, records_file(dataset)
    if not dataset.is_file():
        where = f"{given} holds no {dataset.name}" if given.is_dir() else f"{given}: no such dataset file"
        raise BenchError(f"{where} (a trajectory records.jsonl, or the export folder of `kopa synth`/`kopa demo`)")
    fp = fingerprints(tasks, threshold)
    total = unreadable = 0
    hits: list[dict[str, str]] = []
    by_kind = {"program": 0, "request": 0}
    with dataset.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = as_trajectory(json.loads(line))
            except (json.JSONDecodeError, ValidationError, AttributeError, TypeError):
                unreadable += 1
                continue
            total += 1
            reason = fp.is_contaminated(record)
            if reason:
                by_kind["program" if reason.startswith("same tool") else "request"] += 1
                hits.append({"line": str(n), "id": record.id, "reason": reason})
    if total == 0:
        hint = " (trajectory records are in records.jsonl, not the trl/openai/... conversions)" if unreadable else ""
        raise BenchError(f"{dataset}: no trajectory records ({unreadable} unreadable lines){hint}")
    return {
        "dataset": str(dataset),
        "records": total,
        "unreadable": unreadable,
        "overlapping": len(hits),
        "overlap_rate": round(len(hits) / total, 4),
        "by_kind": by_kind,
        "threshold": threshold,
        "tasks": len(tasks),
        "examples": hits[:examples],
    }
