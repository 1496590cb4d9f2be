"""`kopa bench overlap DATASET`: how much of a trajectory dataset reproduces KOPA-Bench tasks (the same tool
sequence with the same slot values, or a near-duplicate request by character 3-gram Jaccard >= 0.8), and which
values it shares with the benchmark a model could memorise instead of deriving (`shared`): argument values the
model writes without reading them from a result (the user's words, the clock, documented constants) that a gold
program writes to the same tool, and answer values the benchmark states literally. DATASET is a `records.jsonl` or
an export folder holding one (`synthesis.export.records_file`: the file training reads)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bench.run import BenchError
from bench.tasks import ConstArg, Task, UserArg
from synthesis.contamination import NEAR_DUPLICATE, BenchFingerprints
from synthesis.export import records_file
from synthesis.records import Trajectory, as_trajectory


def fingerprints(tasks: list[Task], threshold: float = NEAR_DUPLICATE) -> BenchFingerprints:
    return BenchFingerprints(
        [([s.tool for s in t.gold], t.user_values(), t.request()) for t in tasks],
        [t.id for t in tasks],
        threshold=threshold,
    )


def _norm(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True).strip('"').strip().lower()


class SharedValues:
    """The benchmark's literal values (gold arguments the user states or the task fixes, per tool; literal answer
    facts) and what a dataset shares with them."""

    def __init__(self, tasks: list[Task]) -> None:
        self.arguments = {
            (step.tool, _norm(src.user if isinstance(src, UserArg) else src.const))
            for t in tasks
            for step in t.gold
            for src in step.args.values()
            if isinstance(src, UserArg | ConstArg)
        }
        self.answers = {_norm(f.value) for t in tasks for f in t.facts if f.value is not None}
        self.by_source: Counter[str] = Counter()
        self.pairs: Counter[str] = Counter()
        self.records_sharing_arguments = 0
        self.records_sharing_answers = 0

    def add(self, record: Trajectory) -> None:
        shared = False
        for s in record.steps:
            for name, value in s.arguments.items():
                source = s.provenance.get(name, {}).get("kind", "")
                if source != "link" and (s.tool, _norm(value)) in self.arguments:
                    self.by_source[source] += 1
                    self.pairs[f"{s.tool}.{name}={_norm(value)}"] += 1
                    shared = True
        self.records_sharing_arguments += shared
        self.records_sharing_answers += any(_norm(f.value) in self.answers for f in record.facts)

    def report(self, examples: int) -> dict[str, Any]:
        return {
            "records_sharing_argument_values": self.records_sharing_arguments,
            "argument_values_by_source": dict(self.by_source),
            "distinct_argument_values": len(self.pairs),
            "most_shared_argument_values": self.pairs.most_common(examples),
            "records_sharing_literal_answer_values": self.records_sharing_answers,
            "rule": "an argument value not read from a result that a gold program writes to the same tool; "
            "an answer fact equal to a benchmark task's literal fact",
        }


#: A task's overlap with the training data, by its gold program (`overlap_classes`).
OVERLAP_CLASSES = ("sequence seen", "tools seen", "unseen", "no calls")


def dataset_file(dataset: Path) -> Path:
    """The records file of a dataset (records.jsonl, or an export folder holding one), or a BenchError."""
    path = records_file(dataset)
    if not path.is_file():
        where = f"{dataset} holds no {path.name}" if dataset.is_dir() else f"{dataset}: no such dataset file"
        raise BenchError(f"{where} (a trajectory records.jsonl, or the export folder of `kopa synth`/`kopa demo`)")
    return path


def _records(dataset: Path) -> list[Trajectory]:
    """The readable trajectory records of a dataset (records.jsonl or an export folder)."""
    out = []
    with dataset_file(dataset).open(encoding="utf-8") as fh:
        for line in fh:
            try:
                out.append(as_trajectory(json.loads(line)))
            except (json.JSONDecodeError, ValidationError, AttributeError, TypeError):
                continue
    return out


def overlap_classes(dataset: Path, tasks: list[Task]) -> dict[str, str]:
    """Each task's overlap with the training data: `sequence seen` (a training record calls exactly the gold
    program's tools in its order), `tools seen` (every gold tool is called by some record, not in that sequence),
    `unseen` (a gold tool no record calls), or `no calls` (clarification and irrelevance tasks)."""
    records = _records(dataset)
    sequences = {tuple(s.tool for s in r.steps) for r in records}
    called = {s.tool for r in records for s in r.steps}
    out = {}
    for t in tasks:
        gold = tuple(s.tool for s in t.gold)
        if not gold:
            out[t.id] = OVERLAP_CLASSES[3]
        elif gold in sequences:
            out[t.id] = OVERLAP_CLASSES[0]
        else:
            out[t.id] = OVERLAP_CLASSES[1] if set(gold) <= called else OVERLAP_CLASSES[2]
    return out


def overlap_report(
    dataset: Path, tasks: list[Task], *, threshold: float = NEAR_DUPLICATE, examples: int = 10
) -> dict[str, Any]:
    dataset = dataset_file(dataset)
    fp = fingerprints(tasks, threshold)
    shared = SharedValues(tasks)
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
            shared.add(record)
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
        "shared": shared.report(examples),
    }
