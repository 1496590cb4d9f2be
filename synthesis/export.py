"""Exports of recorded trajectories, each line carrying the trajectory id:

* `trl`      — conversational records as trl's SFT/GRPO trainers take them (`messages` + `tools`): assistant
               messages with `tool_calls` (arguments as objects), `tool` messages with the responses (rows shown
               and the total), the final answer; the system message states the conversation's clock;
* `openai`   — OpenAI chat fine-tuning JSONL (tool call ids, arguments as JSON strings);
* `hermes`   — the text the Qwen2.5 chat template renders for the trl record (`<tool_call>` /
               `<tool_response>` blocks, tools in the system prompt), byte for byte;
* `sharegpt` — LLaMA-Factory's ShareGPT layout: human/gpt/function_call/observation alternating, the system
               prompt and tools in their own columns, parallel calls in one function_call and their results
               merged into one observation;
* `bfcl`     — BFCL's question/function/ground_truth layout for single-call records (BFCL type names, `required`
               present, typed values); multi-step records are left out of `bfcl.jsonl` and counted;
* `hf`       — a Hugging Face `datasets` folder with the trl lines (same message schema), train/validation splits
               by tool sequence, a config name unique to the export, and a dataset card.

A JSONL format is one entry of `EXPORT_FORMATS` (its converter and which records its file holds); the files,
the batch route's `format` and its OpenAPI enum follow from it.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.settings import Settings
from execution.seeds import KST
from execution.view import tool_view
from graph.store import GraphStore
from synthesis.engine import TRIM_RULE, VerifiedGraph, distribution
from synthesis.quality import quality
from synthesis.records import Trajectory, TrajectoryStep, as_trajectory

Record = Trajectory | dict[str, Any]

#: The one system prompt of SFT rows, GRPO prompts and KOPA-Bench episodes (with the clock line `clock_line`).
SYSTEM = (
    "당신은 한국 공공기관 API 도구를 사용하는 민원 도우미입니다. 필요하면 도구를 호출하고, 도구 결과에 근거해서만 "
    "한국어로 답하세요. 코드나 좌표처럼 사용자가 모르는 값은 앞선 도구 결과에서 가져오세요. 필요한 정보가 빠졌으면 "
    "먼저 물어보고, 도구로 할 수 없는 요청이나 오류는 솔직하게 알리세요."
)
#: The max_length (tokens) every exported conversation fits in, tools included: the rendered text is at most
#: `synthesis.engine.MAX_RENDERED_CHARS` characters and chat tokenizers spend at most one token per character on
#: it (checked with trl's SFTTrainer and assistant-only loss in tests/test_exports_consumers.py).
SFT_MAX_LENGTH = 16384
VALIDATION_FRACTION = 0.1
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


def clock_line(now: datetime) -> str:
    """The clock as every prompt states it (KST, to the minute)."""
    return f"현재 시각: {now.astimezone(KST).strftime('%Y-%m-%d %H:%M')} (KST)."


def system_text(now: datetime | None) -> str:
    """The system prompt at a conversation's clock (SFT, GRPO and the benchmark alike)."""
    return SYSTEM if now is None else f"{SYSTEM} {clock_line(now)}"


def system_prompt(record: Trajectory) -> str:
    if not record.now:
        return SYSTEM
    at = datetime.fromisoformat(record.now)
    return system_text(at if at.tzinfo else at.replace(tzinfo=KST))


def _calls(record: Trajectory) -> list[list[TrajectoryStep]]:
    """Tool calls grouped into assistant turns: steps that do not depend on each other go in one turn."""
    turns: list[list[TrajectoryStep]] = []
    done: set[int] = set()
    pending = list(record.steps)
    while pending:
        ready = [s for s in pending if set(s.depends_on) <= done] or pending[:1]
        turns.append(ready)
        done |= {s.step for s in ready}
        pending = [s for s in pending if s not in ready]
    return turns


def _content(step: TrajectoryStep, record: Trajectory) -> str:
    """The tool message: the one view of the recorded response (`execution.view`, as GRPO rollouts and KOPA-Bench
    episodes show it)."""
    spec = next((t for t in record.tools if t.get("function", {}).get("name") == step.tool), None)
    return tool_view("ok", step.response.items, total=step.response.rows, first=step.response.first, tool=spec)


def _error_content(error: str) -> str:
    return json.dumps({"error": error}, ensure_ascii=False)


def _turns(record: Trajectory) -> list[tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str]]]]:
    """Assistant turns as ([(tool, arguments)], [(tool, response text)]), failed attempts first."""
    out = []
    for turn in _calls(record):
        first = min(s.step for s in turn)
        for a in record.attempts:
            if a.before_step == first:
                out.append(([(a.tool, a.arguments)], [(a.tool, _error_content(a.error))]))
        out.append(([(s.tool, s.arguments) for s in turn], [(s.tool, _content(s, record)) for s in turn]))
    return out


def _head(record: Trajectory) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": system_prompt(record)},
        *({"role": m["role"], "content": m["content"]} for m in record.preamble),
        {"role": "user", "content": record.request},
    ]


def to_trl(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    messages = _head(record)
    for calls, results in _turns(record):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": name, "arguments": args}} for name, args in calls
                ],
            }
        )
        for name, content in results:
            messages.append({"role": "tool", "name": name, "content": content})
    messages.append({"role": "assistant", "content": record.final_answer})
    return {"id": record.id, "messages": messages, "tools": record.tools}


def to_openai(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    messages = _head(record)
    n = 0
    for calls, results in _turns(record):
        ids = [f"call_{n + i + 1}" for i in range(len(calls))]
        n += len(calls)
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
                    }
                    for cid, (name, args) in zip(ids, calls, strict=True)
                ],
            }
        )
        for cid, (_, content) in zip(ids, results, strict=True):
            messages.append({"role": "tool", "tool_call_id": cid, "content": content})
    messages.append({"role": "assistant", "content": record.final_answer})
    return {"id": record.id, "messages": messages, "tools": record.tools, "parallel_tool_calls": True}


def _tojson(value: Any) -> str:
    """JSON as the chat templates' `tojson` filter writes it (transformers: ensure_ascii off, default separators)."""
    return json.dumps(value, ensure_ascii=False)


def render_qwen25(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """The Qwen2.5 chat template's rendering (the template trl ships as chat_templates/qwen2_5.jinja) of a
    conversation with tools, without a generation prompt."""
    out = [
        "<|im_start|>system\n",
        messages[0]["content"]
        if messages[0]["role"] == "system"
        else "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
        "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with "
        "function signatures within <tools></tools> XML tags:\n<tools>",
    ]
    for t in tools:
        out.append("\n" + _tojson(t))
    out.append(
        "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
        '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
        "<args-json-object>}\n</tool_call><|im_end|>\n"
    )
    for i, m in enumerate(messages):
        role = m["role"]
        if role == "user" or (role == "system" and i > 0) or (role == "assistant" and not m.get("tool_calls")):
            out.append(f"<|im_start|>{role}\n{m.get('content') or ''}<|im_end|>\n")
        elif role == "assistant":
            out.append("<|im_start|>assistant")
            if m.get("content"):
                out.append("\n" + m["content"])
            for call in m["tool_calls"]:
                fn = call.get("function", call)
                out.append(
                    '\n<tool_call>\n{"name": "'
                    + fn["name"]
                    + '", "arguments": '
                    + _tojson(fn["arguments"])
                    + "}\n</tool_call>"
                )
            out.append("<|im_end|>\n")
        elif role == "tool":
            if i == 0 or messages[i - 1]["role"] != "tool":
                out.append("<|im_start|>user")
            out.append("\n<tool_response>\n" + m["content"] + "\n</tool_response>")
            if i == len(messages) - 1 or messages[i + 1]["role"] != "tool":
                out.append("<|im_end|>\n")
    return "".join(out)


def to_hermes(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    trl = to_trl(record)
    return {"id": record.id, "text": render_qwen25(trl["messages"], trl["tools"])}


def to_sharegpt(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    conv = [{"from": "human" if m["role"] == "user" else "gpt", "value": m["content"]} for m in record.preamble]
    conv.append({"from": "human", "value": record.request})
    for calls, results in _turns(record):
        conv.append(
            {
                "from": "function_call",
                "value": json.dumps(
                    [{"name": name, "arguments": args} for name, args in calls]
                    if len(calls) > 1
                    else {"name": calls[0][0], "arguments": calls[0][1]},
                    ensure_ascii=False,
                ),
            }
        )
        conv.append(
            {
                "from": "observation",
                "value": results[0][1]
                if len(results) == 1
                else json.dumps([json.loads(c) for _, c in results], ensure_ascii=False),
            }
        )
    conv.append({"from": "gpt", "value": record.final_answer})
    return {
        "id": record.id,
        "conversations": conv,
        "system": system_prompt(record),
        "tools": json.dumps(record.tools, ensure_ascii=False),
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


def is_bfcl_single(record: Trajectory) -> bool:
    """BFCL's single-turn categories can express a record with one call whose values the question states."""
    return (
        record.n_steps == 1
        and not record.preamble
        and not record.attempts
        and record.kind in ("normal", "hard_negative")
    )


def to_bfcl(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    specs = {t["function"]["name"]: t["function"].get("parameters") or {} for t in record.tools}
    truth = [
        {
            s.tool: {
                k: [_bfcl_value(v, (specs.get(s.tool, {}).get("properties") or {}).get(k))]
                for k, v in s.arguments.items()
            }
        }
        for s in record.steps
    ]
    item: dict[str, Any] = {
        "id": record.id,
        "question": [[{"role": "user", "content": record.request}]],
        "function": [bfcl_function(t) for t in record.tools],
        "ground_truth": truth,
    }
    if not is_bfcl_single(record):
        item["multi_step"] = True
    return item


@dataclass(frozen=True)
class ExportFormat:
    """One export format: how a record converts, which records its file holds, and the file's name."""

    convert: Callable[[Record], dict[str, Any]]
    holds: Callable[[Trajectory], bool] | None = None  # None: every record
    file: str = ""  # "" for `<name>.jsonl`


def _stored(rec: Record) -> dict[str, Any]:
    return as_trajectory(rec).to_json()


#: Every export format by name, the one list a new format is added to: `write_all` writes a file per entry, and
#: the trajectory-batch route validates `format` against these names (its OpenAPI enum lists them).
EXPORT_FORMATS: dict[str, ExportFormat] = {
    "record": ExportFormat(_stored, file="records.jsonl"),  # the stored trajectory as it is
    "trl": ExportFormat(to_trl),
    "openai": ExportFormat(to_openai),
    "hermes": ExportFormat(to_hermes),
    "sharegpt": ExportFormat(to_sharegpt),
    "bfcl": ExportFormat(to_bfcl, holds=is_bfcl_single),  # BFCL scores single-call records only
}
#: The converted formats (every one but the stored record).
FORMATS = tuple(name for name in EXPORT_FORMATS if name != "record")


def convert(record: Record, fmt: str) -> dict[str, Any]:
    return EXPORT_FORMATS[fmt].convert(record)


def records_file(path: Path) -> Path:
    """The trajectory records of an export: `path` itself unless it is a folder; for a folder its `records.jsonl`
    (an export folder: `kopa synth --out`, a demo's `export/`) or else that of its `export/` (a `kopa demo` workdir);
    the folder's `records.jsonl` when neither exists (the caller reports it missing)."""
    if not path.is_dir():
        return path
    name = EXPORT_FORMATS["record"].file
    inside = path / name
    if not inside.is_file() and (path / "export" / name).is_file():
        return path / "export" / name
    return inside


def write_jsonl(path: Path, records: Sequence[Record], fmt: str) -> Path:
    """One line per record the format holds (`bfcl.jsonl` only the single-call records BFCL can score)."""
    export = EXPORT_FORMATS[fmt]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            if export.holds is None or export.holds(as_trajectory(r)):
                fh.write(json.dumps(export.convert(r), ensure_ascii=False) + "\n")
    return path


def write_all(out: Path, records: Sequence[Record]) -> dict[str, Path]:
    return {name: write_jsonl(out / (f.file or f"{name}.jsonl"), records, name) for name, f in EXPORT_FORMATS.items()}


def sequence_key(record: Trajectory) -> str:
    return "|".join(s.tool for s in record.steps) or f"({record.kind})"


def split_by_sequence(records: Sequence[Trajectory], fraction: float) -> tuple[list[Trajectory], list[Trajectory]]:
    """Train and validation records such that no tool sequence is in both (deterministic)."""
    if fraction <= 0:
        return list(records), []
    keys = sorted({sequence_key(r) for r in records}, key=lambda k: hashlib.sha256(k.encode()).hexdigest())
    held = set(keys[: max(1, round(len(keys) * fraction))]) if len(keys) > 1 else set()
    return [r for r in records if sequence_key(r) not in held], [r for r in records if sequence_key(r) in held]


def config_name(records: Sequence[Trajectory], config: dict[str, Any]) -> str:
    """A name unique to this export's content (so `datasets` never serves another export's cache)."""
    raw = json.dumps(
        [config.get("graph_snapshot"), config.get("seed"), [(r.id, r.final_answer) for r in records]],
        ensure_ascii=False,
    )
    return "kopa-" + hashlib.sha256(raw.encode()).hexdigest()[:12]


def lengths(records: Sequence[Trajectory]) -> dict[str, int]:
    """Characters of each record's rendered conversation (tools included), by id."""
    return {r.id: len(to_hermes(r)["text"]) for r in records}


def _dataset_card(
    name: str,
    splits: list[tuple[str, list[Trajectory]]],
    counts: dict[str, Any],
    config: dict[str, Any],
    stats: dict[str, Any],
    longest: int,
) -> str:
    """README.md of an HF dataset folder: its config and data files, provenance, counts, quality, config."""
    files = "\n".join(f"  - split: {s}\n    path: data/{s}.jsonl" for s, _ in splits)
    overlap = stats.get("benchmark_overlap", "not measured for this export (see `kopa bench`)")
    card = f"""---
language:
- ko
license: apache-2.0
task_categories:
- text-generation
tags:
- tool-calling
- function-calling
- korean-public-data
configs:
- config_name: {name}
  default: true
  data_files:
{files}
---

# KOPA EDGE trajectories

Multi-step tool-calling trajectories over Korean public-institution APIs, drawn only from links that were
verified by execution, then executed end to end; arguments and results are recorded facts.

## Provenance
- Generated by KOPA EDGE (engine {config.get("engine")}) from graph snapshot `{config.get("graph_snapshot")}`.
- Upstream: {config.get("upstream", "the KOPA sandbox of Korean public APIs")}.
- Every argument carries its provenance (upstream field and transform, user slot, clock or constant) in
  `records.jsonl`; every line carries the trajectory `id`.
- Responses are trimmed: {config.get("trim_rule")}. Service keys never appear.

## Counts
```json
{json.dumps(counts, ensure_ascii=False, indent=1)}
```
Splits are by tool sequence: no sequence is in both train and validation. Every conversation renders (tools
included) in at most {longest} characters; train with `max_length={SFT_MAX_LENGTH}` and nothing is cut.

## Coverage and quality
```json
{json.dumps(stats, ensure_ascii=False, indent=1)}
```

## Benchmark overlap
{overlap}

## Config
```json
{json.dumps(config, ensure_ascii=False, indent=1)}
```

## Columns
`id`, `messages` (system with the clock, user, assistant with `tool_calls`, tool, final assistant), `tools`
(OpenAI-style function definitions) — the same schema as `trl.jsonl`.
Load with `datasets.load_dataset("<this folder>", "{name}")`.
"""
    return card


def write_hf_dataset(
    folder: Path, records: Sequence[Record], *, config: dict[str, Any], stats: dict[str, Any], validation: float = 0.0
) -> Path:
    """A `datasets`-loadable folder: data/train.jsonl (+ data/validation.jsonl when `validation` > 0, split by
    tool sequence) with exactly the trl lines, and README.md, the dataset card with a config name unique to this
    export."""
    recs = [as_trajectory(r) for r in records]
    train, val = split_by_sequence(recs, validation)
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    for old in data.glob("*"):
        old.unlink()
    splits = [("train", train)] + ([("validation", val)] if val else [])
    for split, rows in splits:
        with (data / f"{split}.jsonl").open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(to_trl(r), ensure_ascii=False) + "\n")
    chars = sorted(lengths(recs).values()) or [0]
    counts = {
        "records": len(recs),
        "train": len(train),
        "validation": len(val),
        "kinds": dict(Counter(r.kind for r in recs)),
        "tool_sequences": len({sequence_key(r) for r in recs}),
        "characters": {"min": chars[0], "median": int(statistics.median(chars)), "max": chars[-1]},
    }
    card = _dataset_card(config_name(recs, config), splits, counts, config, stats, chars[-1])
    (folder / "README.md").write_text(card, encoding="utf-8")
    return folder


def export_all(
    out: Path, result: dict[str, Any], store: GraphStore, settings: Settings, config: dict[str, Any]
) -> dict[str, Any]:
    """Every format plus the Hugging Face folder for one synthesis result, with its distribution (which holds
    the data-quality figures under `quality`)."""
    graph = VerifiedGraph(store, settings)
    records = [as_trajectory(r) for r in result["records"]]
    dist = distribution(records, len(graph.links), len(graph.tools))
    q = quality(records, extras=result.get("extras_configured"), lengths=lengths(records))
    dist["quality"] = {k: v for k, v in q.items() if k not in ("value_diversity", "violations", "single_valued")}
    paths = {k: str(v) for k, v in write_all(out, records).items()}
    card_config = {**config, "graph_snapshot": result["snapshot"], "engine": "edge-0.1", "trim_rule": TRIM_RULE}
    stats = {k: v for k, v in dist.items() if k != "tool_counts"}
    overlap = config.get("benchmark_overlap", result.get("benchmark_overlap"))
    if overlap is not None:  # from the contamination guard (synthesis.contamination), stated in the card
        stats["benchmark_overlap"] = overlap
    paths["hf"] = str(
        write_hf_dataset(out / "hf", records, config=card_config, stats=stats, validation=VALIDATION_FRACTION)
    )
    dist["bfcl"] = {
        "single_call_items": sum(is_bfcl_single(r) for r in records),
        "left_out_multi_step": sum(not is_bfcl_single(r) for r in records),
    }
    (out / "quality.json").write_text(json.dumps(q, ensure_ascii=False, indent=1), encoding="utf-8")
    return {"distribution": dist, "paths": paths, "quality": q}
