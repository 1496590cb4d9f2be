"""Exports of recorded trajectories:

* `trl`      — conversational records with `tools` as trl's SFT/GRPO trainers take them: an assistant message with
               `tool_calls` (arguments as objects), `tool` messages with the responses, the final answer;
* `openai`   — OpenAI chat fine-tuning JSONL (tool call ids, arguments as JSON strings);
* `hermes`   — Hermes/Qwen text with `<tool_call>` and `<tool_response>` blocks and the tools in the system prompt;
* `sharegpt` — `conversations` with from/value turns and the tools as JSON;
* `bfcl`     — BFCL-style: question, functions, ground truth (one entry per call, each argument a list of values);
* `hf`       — a Hugging Face `datasets` folder: parquet data plus a dataset card (provenance, config, seed, counts).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.settings import Settings
from graph.store import GraphStore
from synthesis.engine import TRIM_RULE, VerifiedGraph, distribution
from synthesis.records import Trajectory, TrajectoryStep, as_trajectory

Record = Trajectory | dict[str, Any]

FORMATS = ("trl", "openai", "hermes", "sharegpt", "bfcl")
SYSTEM = "당신은 공공기관 API 도구를 순서대로 호출해 사용자의 질문에 답하는 도우미입니다. 필요한 도구를 호출하고 결과로 답하세요."


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


def _content(step: TrajectoryStep) -> str:
    return json.dumps({"rows": step.response.rows, "items": step.response.items}, ensure_ascii=False)


def to_trl(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": record.request}]
    for turn in _calls(record):
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": s.tool, "arguments": s.arguments}} for s in turn]})
        for s in turn:
            messages.append({"role": "tool", "name": s.tool, "content": _content(s)})
    messages.append({"role": "assistant", "content": record.final_answer})
    return {"messages": messages, "tools": record.tools}


def to_openai(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": record.request}]
    for turn in _calls(record):
        calls = [{"id": f"call_{s.step}", "type": "function",
                  "function": {"name": s.tool, "arguments": json.dumps(s.arguments, ensure_ascii=False)}} for s in turn]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for s in turn:
            messages.append({"role": "tool", "tool_call_id": f"call_{s.step}", "content": _content(s)})
    messages.append({"role": "assistant", "content": record.final_answer})
    return {"messages": messages, "tools": record.tools, "parallel_tool_calls": True}


def to_hermes(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    tools = "\n".join(json.dumps(t, ensure_ascii=False) for t in record.tools)
    system = (f"{SYSTEM}\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
              f"<tools>\n{tools}\n</tools>\n\nFor each function call, return a json object with function name and "
              "arguments within <tool_call></tool_call> XML tags.")
    parts = [f"<|im_start|>system\n{system}<|im_end|>", f"<|im_start|>user\n{record.request}<|im_end|>"]
    for turn in _calls(record):
        calls = "\n".join("<tool_call>\n" + json.dumps({"name": s.tool, "arguments": s.arguments}, ensure_ascii=False)
                          + "\n</tool_call>" for s in turn)
        parts.append(f"<|im_start|>assistant\n{calls}<|im_end|>")
        responses = "\n".join(f"<tool_response>\n{_content(s)}\n</tool_response>" for s in turn)
        parts.append(f"<|im_start|>user\n{responses}<|im_end|>")
    parts.append(f"<|im_start|>assistant\n{record.final_answer}<|im_end|>")
    return {"text": "\n".join(parts)}


def to_sharegpt(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    conv = [{"from": "system", "value": SYSTEM}, {"from": "human", "value": record.request}]
    for turn in _calls(record):
        conv.append({"from": "function_call", "value": json.dumps(
            [{"name": s.tool, "arguments": s.arguments} for s in turn], ensure_ascii=False)})
        for s in turn:
            conv.append({"from": "observation", "value": _content(s)})
    conv.append({"from": "gpt", "value": record.final_answer})
    return {"conversations": conv, "tools": json.dumps(record.tools, ensure_ascii=False)}


def to_bfcl(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    return {"id": record.id, "question": [[{"role": "user", "content": record.request}]],
            "function": [t["function"] for t in record.tools],
            "ground_truth": [{s.tool: {k: [v] for k, v in s.arguments.items()}} for s in record.steps]}


CONVERTERS = {"trl": to_trl, "openai": to_openai, "hermes": to_hermes, "sharegpt": to_sharegpt, "bfcl": to_bfcl}


def convert(record: Record, fmt: str) -> dict[str, Any]:
    if fmt == "record":
        return as_trajectory(record).to_json()
    return CONVERTERS[fmt](record)


def write_jsonl(path: Path, records: Sequence[Record], fmt: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(convert(r, fmt), ensure_ascii=False) + "\n")
    return path


def write_all(out: Path, records: Sequence[Record]) -> dict[str, Path]:
    paths = {"record": write_jsonl(out / "records.jsonl", records, "record")}
    for fmt in FORMATS:
        paths[fmt] = write_jsonl(out / f"{fmt}.jsonl", records, fmt)
    return paths


def write_hf_dataset(folder: Path, records: Sequence[Record], *, config: dict[str, Any],
                     stats: dict[str, Any]) -> Path:
    """A `datasets`-loadable folder: data/train.parquet (trl conversational format, tools as a JSON string
    column so that heterogeneous schemas stay one column) and README.md, the dataset card."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for rec in records:
        r = as_trajectory(rec)
        trl = to_trl(r)
        messages = []
        for m in trl["messages"]:
            calls = [{"name": c["function"]["name"], "arguments": json.dumps(c["function"]["arguments"], ensure_ascii=False)}
                     for c in m.get("tool_calls", [])]
            messages.append({"role": m["role"], "content": m.get("content") or "", "name": m.get("name", ""),
                             "tool_calls": calls})
        rows.append({"id": r.id, "request": r.request, "shape": r.shape, "n_steps": r.n_steps,
                     "messages": messages, "tools": json.dumps(r.tools, ensure_ascii=False),
                     "provenance": r.metadata.provenance, "graph_snapshot": r.metadata.graph_snapshot})
    (folder / "data").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "data" / "train.parquet")
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
- config_name: default
  data_files:
  - split: train
    path: data/train.parquet
---

# KOPA EDGE trajectories

Multi-step tool-calling trajectories over Korean public-institution APIs, drawn only from links that were
verified by execution, then executed end to end; arguments and results are recorded facts.

## Provenance
- Generated by KOPA EDGE (engine {config.get('engine')}) from graph snapshot `{config.get('graph_snapshot')}`.
- Upstream: {config.get('upstream', 'the KOPA sandbox of Korean public APIs')}.
- Every argument carries its provenance (upstream field and transform, user slot, or constant) in `records.jsonl`.
- Responses are trimmed: {config.get('trim_rule')}. Service keys never appear.

## Config
```json
{json.dumps(config, ensure_ascii=False, indent=1)}
```

## Counts and coverage
```json
{json.dumps(stats, ensure_ascii=False, indent=1)}
```

## Columns
`messages` (system, user, assistant with `tool_calls`, tool, final assistant), `tools` (JSON string of OpenAI-style
function definitions), `shape`, `n_steps`, `provenance` (executed live or replayed from cache), `graph_snapshot`.
Load with `datasets.load_dataset("{folder.name}")` or `load_dataset("parquet", data_files="data/train.parquet")`.
"""
    (folder / "README.md").write_text(card, encoding="utf-8")
    return folder


def export_all(out: Path, result: dict[str, Any], store: GraphStore, settings: Settings,
               config: dict[str, Any]) -> dict[str, Any]:
    """Every format plus the Hugging Face folder for one synthesis result, with its distribution."""
    graph = VerifiedGraph(store, settings)
    dist = distribution(result["records"], len(graph.links), len(graph.tools))
    paths = {k: str(v) for k, v in write_all(out, result["records"]).items()}
    card_config = {**config, "graph_snapshot": result["snapshot"], "engine": "edge-0.1", "trim_rule": TRIM_RULE}
    paths["hf"] = str(write_hf_dataset(out / "hf", result["records"], config=card_config,
                                       stats={k: v for k, v in dist.items() if k != "tool_counts"}))
    return {"distribution": dist, "paths": paths}
