"""BFCL's entries from recorded trajectories (bfcl-eval 2026.3.23's format): the category of a record, its question,
functions with BFCL type names and typed possible answers, pairs of single-call records asked together as parallel
entries, and the folder in bfcl-eval's own layout (synthesis.export writes them)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synthesis.formats import Record, prompt_messages, system_text
from synthesis.records import Trajectory, TrajectoryStep, as_trajectory

#: bfcl-eval's `VERSION_PREFIX` (bfcl_eval.constants.category_mapping, bfcl-eval 2026.3.23): its question files are
#: `<prefix>_<category>.json` and its answers `possible_answer/<prefix>_<category>.json`, JSON Lines.
BFCL_PREFIX = "BFCL_v4"
#: The BFCL categories the export writes, in BFCL's order.
BFCL_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
#: The user message of a parallel entry: two single-call requests asked together.
BFCL_TOGETHER = "두 가지를 알려 주세요.\n1. {}\n2. {}"
#: Argument sources that two requests asked in one message keep (no clock, no earlier step's result).
JOINABLE_SOURCES = ("slot", "constant", "mention")
#: BFCL's names for JSON Schema types.
BFCL_TYPES = {
    "string": "string",
    "integer": "integer",
    "number": "float",
    "boolean": "boolean",
    "array": "array",
    "object": "dict",
    "null": "any",
}


def bfcl_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema (sub)tree with BFCL's type names; objects carry `required`."""
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    out: dict[str, Any] = {"type": BFCL_TYPES.get(str(kind), "any")}
    if schema.get("description"):
        out["description"] = schema["description"]
    if schema.get("enum"):
        out["enum"] = list(schema["enum"])
    if kind == "array":
        out["items"] = bfcl_schema(schema.get("items") or {"type": "string"})
    if kind == "object":
        out["properties"] = {k: bfcl_schema(v) for k, v in (schema.get("properties") or {}).items()}
        out["required"] = list(schema.get("required") or [])
    return out


def bfcl_function(spec: dict[str, Any]) -> dict[str, Any]:
    fn = spec.get("function", spec)
    params = bfcl_schema(fn.get("parameters") or {"type": "object"})
    params.setdefault("properties", {})
    params.setdefault("required", [])
    return {"name": fn["name"], "description": fn.get("description", ""), "parameters": params}


def _bfcl_value(value: Any, schema: dict[str, Any] | None) -> Any:
    if schema and schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _spec(record: Trajectory, tool: str) -> dict[str, Any]:
    """The offered definition of `tool` (a bare one for a record that does not offer the tool it calls)."""
    bare = {"type": "function", "function": {"name": tool, "parameters": {"type": "object", "properties": {}}}}
    return next((t for t in record.tools if t.get("function", {}).get("name") == tool), bare)


def bfcl_category(record: Trajectory) -> str | None:
    """The BFCL category a record is an item of on its own: irrelevance (no call), simple_python (one call, only its
    tool offered) or multiple (one call among the offered tools: hard negatives, and half the others by id); None
    for a record of several calls, which BFCL's single-turn categories cannot express."""
    if record.kind == "irrelevance":
        return "irrelevance"
    if record.n_steps != 1:
        return None
    if len(record.tools) > 1 and (record.kind == "hard_negative" or _digest(record.id) % 2):
        return "multiple"
    return "simple_python"


def bfcl_answer(step: TrajectoryStep, spec: dict[str, Any]) -> dict[str, dict[str, list[Any]]]:
    """BFCL's possible answer for one recorded call: each argument's recorded value (typed as BFCL reads it)."""
    props = (spec.get("function", spec).get("parameters") or {}).get("properties") or {}
    return {step.tool: {k: [_bfcl_value(v, props.get(k))] for k, v in step.arguments.items()}}


def _own_item(record: Trajectory, category: str | None) -> dict[str, Any]:
    """A record as one BFCL entry: the conversation up to the request (the system prompt with its clock first),
    the functions offered, the recorded calls as the possible answer (none for irrelevance)."""
    offered = [_spec(record, record.steps[0].tool)] if category == "simple_python" else record.tools
    item: dict[str, Any] = {
        "question": [prompt_messages(record)],
        "function": [bfcl_function(t) for t in offered],
    }
    if category != "irrelevance":
        item["ground_truth"] = [bfcl_answer(s, _spec(record, s.tool)) for s in record.steps]
    item["trajectory_ids"] = [record.id]
    return item


def _joinable(record: Trajectory) -> bool:
    """A single call whose every argument the user's words or a constant give (no clock, no earlier result), so
    two of them can be asked in one message under one system prompt."""
    return (
        record.kind == "normal"
        and record.n_steps == 1
        and not record.preamble
        and not record.attempts
        and all(p.get("kind") in JOINABLE_SOURCES for p in record.steps[0].provenance.values())
    )


def bfcl_pairs(records: Sequence[Trajectory]) -> list[tuple[str, list[Trajectory]]]:
    """Single-call records asked two at a time (deterministic; a record in one pair at most): two calls of one tool
    with different arguments make a parallel entry, up to half the records; the others, two calls of different
    tools, parallel_multiple entries. Same-tool pairs are formed first, so a set that has one yields a parallel
    entry whatever the records' ids."""
    pool = sorted((r for r in records if _joinable(r)), key=lambda r: (_digest(r.id), r.id))
    pairs: list[tuple[str, list[Trajectory]]] = []
    waiting: list[Trajectory] = []
    for r in pool:
        call = r.steps[0]
        partner = next(
            (p for p in waiting if p.steps[0].tool == call.tool and p.steps[0].arguments != call.arguments), None
        )
        if partner is not None and 4 * (len(pairs) + 1) <= len(pool):
            waiting.remove(partner)
            pairs.append(("parallel", [partner, r]))
        else:
            waiting.append(r)
    rest = sorted(waiting, key=lambda r: (_digest(f"parallel:{r.id}"), r.id))
    alone: list[Trajectory] = []
    for r in rest:
        partner = next((p for p in alone if p.steps[0].tool != r.steps[0].tool), None)
        if partner is None:
            alone.append(r)
        else:
            alone.remove(partner)
            pairs.append(("parallel_multiple", [partner, r]))
    return pairs


def _joint_item(category: str, group: list[Trajectory]) -> dict[str, Any]:
    """Records asked together: one user message numbering their requests; the one tool (parallel) or every tool
    the records offer (parallel_multiple); their calls, in any order, as the possible answer."""
    first = group[0]
    offered: dict[str, dict[str, Any]] = {}
    for r in group if category == "parallel_multiple" else [first]:
        for t in r.tools if category == "parallel_multiple" else [_spec(first, first.steps[0].tool)]:
            offered.setdefault(t["function"]["name"], t)
    return {
        "question": [
            [
                {"role": "system", "content": system_text(None)},
                {"role": "user", "content": BFCL_TOGETHER.format(*(r.request for r in group))},
            ]
        ],
        "function": [bfcl_function(t) for t in offered.values()],
        "ground_truth": [bfcl_answer(r.steps[0], _spec(r, r.steps[0].tool)) for r in group],
        "trajectory_ids": [r.id for r in group],
    }


def bfcl_items(records: Sequence[Record]) -> list[dict[str, Any]]:
    """The BFCL entries of an export, in BFCL's categories and id form (`simple_python_0`, `multiple_0`,
    `parallel_0`, `parallel_multiple_0`, `irrelevance_0`), each with its possible answer (`ground_truth`, absent
    for irrelevance) and the trajectories it comes from."""
    recs = [as_trajectory(r) for r in records]
    by_category: dict[str, list[dict[str, Any]]] = {c: [] for c in BFCL_CATEGORIES}
    for r in recs:
        category = bfcl_category(r)
        if category is not None:
            by_category[category].append(_own_item(r, category))
    for category, group in bfcl_pairs(recs):
        by_category[category].append(_joint_item(category, group))
    return [{"id": f"{c}_{i}", **item} for c in BFCL_CATEGORIES for i, item in enumerate(by_category[c])]


def to_bfcl(rec: Record) -> dict[str, Any]:
    """One record as a BFCL entry (the batch route's lines: the trajectory id, its `category`; a record of several
    calls is `multi_step`). The export's bfcl files number the entries in BFCL's form (`bfcl_items`)."""
    record = as_trajectory(rec)
    category = bfcl_category(record)
    item: dict[str, Any] = {"id": record.id, "category": category or "multi_step", **_own_item(record, category)}
    item.setdefault("ground_truth", [])  # every line of the route has one: none expected for irrelevance
    if category is None:
        item["multi_step"] = True
    return item


def write_bfcl(folder: Path, items: Sequence[dict[str, Any]]) -> Path:
    """bfcl-eval's own layout: `BFCL_v4_<category>.json` (the questions) and `possible_answer/BFCL_v4_<category>.json`
    (the answers), JSON Lines, one file per category the export has."""
    answers = folder / "possible_answer"
    answers.mkdir(parents=True, exist_ok=True)
    for old in [*folder.glob(f"{BFCL_PREFIX}_*.json"), *answers.glob(f"{BFCL_PREFIX}_*.json")]:
        old.unlink()
    for category in BFCL_CATEGORIES:
        entries = [i for i in items if i["id"].rsplit("_", 1)[0] == category]
        if not entries:
            continue
        name = f"{BFCL_PREFIX}_{category}.json"
        with (folder / name).open("w", encoding="utf-8") as fh:
            for i in entries:
                fh.write(json.dumps({k: v for k, v in i.items() if k != "ground_truth"}, ensure_ascii=False) + "\n")
        if category != "irrelevance":
            with (answers / name).open("w", encoding="utf-8") as fh:
                for i in entries:
                    fh.write(json.dumps({"id": i["id"], "ground_truth": i["ground_truth"]}, ensure_ascii=False) + "\n")
    return folder
