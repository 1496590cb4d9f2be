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
* `bfcl`     — BFCL's entries (bfcl-eval 2026.3.23's format: question, function with BFCL type names and
               `required`, typed possible answers) in its categories and id form: `simple_python_N` and
               `multiple_N` (one call, with only its tool or among the offered ones), `parallel_N` and
               `parallel_multiple_N` (two single-call requests asked in one message), `irrelevance_N` (no call);
               `bfcl.jsonl` holds them all, `bfcl/` in bfcl-eval's own layout (`BFCL_v4_<category>.json` and
               `possible_answer/`); records of several calls are left out and counted;
* `hf`       — a folder `datasets.load_from_disk` loads: a DatasetDict (train/validation, `split_records`: by tool
               sequence, every kind and shape in both) of the trl rows, saved by `save_to_disk`, and a dataset card;
* `lengths.json` — the rendered conversations' lengths: characters, and tokens (p50/p90/max of the conversation,
               the GRPO prompt and completion, rows trl's default `max_length` cuts) with a given tokenizer.

A JSONL format is one entry of `EXPORT_FORMATS` (its converter and which records its file holds); the files,
the batch route's `format` and its OpenAPI enum follow from it. The conversation formats are made in
synthesis.formats, BFCL's entries in synthesis.export_bfcl; this module writes them, the splits, lengths and the HF
folder.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.settings import Settings
from graph.store import GraphStore
from synthesis.engine import TRIM_RULE, VerifiedGraph, distribution
from synthesis.export_bfcl import BFCL_CATEGORIES, bfcl_category, bfcl_items, to_bfcl, write_bfcl
from synthesis.formats import Record, prompt_messages, to_hermes, to_openai, to_sharegpt, to_trl
from synthesis.quality import quality
from synthesis.records import SynthesisResult, Trajectory, as_trajectory

#: The max_length (tokens) every exported conversation fits in, tools included: the rendered text is at most
#: `synthesis.engine.MAX_RENDERED_CHARS` characters and chat tokenizers spend at most one token per character on
#: it (checked with trl's SFTTrainer and assistant-only loss in tests/test_exports_consumers.py).
SFT_MAX_LENGTH = 16384
VALIDATION_FRACTION = 0.1


@dataclass(frozen=True)
class ExportFormat:
    """One export format: how a record converts, which records its file holds, and the file's name; `lines`, where
    set, makes the file's lines from all the records at once (BFCL numbers and pairs them)."""

    convert: Callable[[Record], dict[str, Any]]
    holds: Callable[[Trajectory], bool] | None = None  # None: every record
    file: str = ""  # "" for `<name>.jsonl`
    lines: Callable[[Sequence[Record]], list[dict[str, Any]]] | None = None


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
    "bfcl": ExportFormat(to_bfcl, lines=bfcl_items),  # BFCL's categories and ids; multi-step records left out
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
    """One line per record the format holds, or the format's own lines (`bfcl.jsonl`: BFCL's entries)."""
    export = EXPORT_FORMATS[fmt]
    path.parent.mkdir(parents=True, exist_ok=True)
    if export.lines is not None:
        lines = export.lines(records)
    else:
        lines = [export.convert(r) for r in records if export.holds is None or export.holds(as_trajectory(r))]
    with path.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


def write_all(out: Path, records: Sequence[Record]) -> dict[str, Path]:
    return {name: write_jsonl(out / (f.file or f"{name}.jsonl"), records, name) for name, f in EXPORT_FORMATS.items()}


# ---------------------------------------------------------------------------------------------- splits


def sequence_key(record: Trajectory) -> str:
    """What a split keeps on one side: the record's tool sequence, or for a record without calls its request."""
    return "|".join(s.tool for s in record.steps) or f"({record.kind}) {record.request}"


def strata(record: Trajectory) -> tuple[str, str]:
    """The labels every split should hold where it can: the record's kind and its shape."""
    return f"kind:{record.kind}", f"shape:{record.shape}"


def split_records(
    records: Sequence[Trajectory], fraction: float, seed: int = 0
) -> tuple[list[Trajectory], list[Trajectory]]:
    """Train and validation records (deterministic in `seed`): no tool sequence (`sequence_key`) in both; every kind
    and shape (`strata`) the records have in both, unless all its records share one sequence (then it stays in
    train); about `fraction` of the records held out. The one split of the HF folder and of `kopa train`."""
    if fraction <= 0 or not records:
        return list(records), []
    groups: dict[str, list[Trajectory]] = {}
    for r in records:
        groups.setdefault(sequence_key(r), []).append(r)
    order = sorted(groups, key=lambda k: hashlib.sha256(f"{seed}:{k}".encode()).hexdigest())
    labels = {k: {label for r in groups[k] for label in strata(r)} for k in order}
    spans = Counter(label for k in order for label in labels[k])  # how many sequences carry each label
    in_train = Counter(spans)
    held: list[str] = []

    def free(k: str) -> bool:  # holding k out leaves each of its labels in train
        return k not in held and all(in_train[label] > 1 for label in labels[k])

    def hold(k: str) -> None:
        held.append(k)
        in_train.subtract(labels[k])

    for label in sorted(spans, key=lambda x: (spans[x], x)):  # the rarest label first, its smallest sequence
        if not any(label in labels[k] for k in held):
            options = [k for k in order if label in labels[k] and free(k)]
            if options:
                hold(min(options, key=lambda k: len(groups[k])))
    target = max(1, round(len(records) * fraction))
    size = sum(len(groups[k]) for k in held)
    for k in order:
        if size < target and free(k) and size + len(groups[k]) <= target:
            hold(k)
            size += len(groups[k])
    out = set(held)
    return [r for r in records if sequence_key(r) not in out], [r for r in records if sequence_key(r) in out]


# ---------------------------------------------------------------------------------------------- lengths


def lengths(records: Sequence[Trajectory]) -> dict[str, int]:
    """Characters of each record's rendered conversation (tools included), by id."""
    return {r.id: len(to_hermes(r)["text"]) for r in records}


def spread(values: Sequence[int]) -> dict[str, int]:
    """p50, p90 and the max of some lengths (nearest rank; zeros when there are none)."""
    ns = sorted(values)
    if not ns:
        return {"p50": 0, "p90": 0, "max": 0}
    return {"p50": ns[math.ceil(0.5 * len(ns)) - 1], "p90": ns[math.ceil(0.9 * len(ns)) - 1], "max": ns[-1]}


def token_length(
    tok: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, generation_prompt: bool
) -> int:
    """Tokens of a conversation as `tok`'s chat template renders it (tools included)."""
    text = tok.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=generation_prompt)
    return len(tok(str(text), add_special_tokens=False)["input_ids"])


def trl_default_max_length() -> int | None:
    """trl's own default `SFTConfig.max_length` (what cuts a conversation when a config sets none); None without
    trl."""
    try:
        from trl.trainer.sft_config import SFTConfig
    except ImportError:
        return None
    default = SFTConfig.__dataclass_fields__["max_length"].default
    return default if isinstance(default, int) else None


def token_lengths(records: Sequence[Trajectory], tok: Any) -> dict[str, Any]:
    """Token lengths of the trl rows as `tok`'s chat template renders them: the whole conversation (what SFT's
    `max_length` must keep) and, for the records with calls (the GRPO rows), the prompt with the generation prompt
    (`max_prompt_length`) and everything after it, calls, tool results and the answer (`max_completion_length`);
    with the rows trl's default `max_length` would cut."""
    whole: list[int] = []
    prompts: list[int] = []
    completions: list[int] = []
    for r in records:
        row = to_trl(r)
        n = token_length(tok, row["messages"], row["tools"], generation_prompt=False)
        whole.append(n)
        if r.steps:
            head = token_length(tok, prompt_messages(r), row["tools"], generation_prompt=True)
            prompts.append(head)
            completions.append(n - head)
    out: dict[str, Any] = {
        "tokenizer": str(getattr(tok, "name_or_path", "") or type(tok).__name__),
        "rows": len(whole),
        "sft": spread(whole),
        "grpo_rows": len(prompts),
        "grpo_prompt": spread(prompts),
        "grpo_completion": spread(completions),
    }
    default = trl_default_max_length()
    if default is not None:
        out["trl_default_max_length"] = {"max_length": default, "rows_over": sum(n > default for n in whole)}
    return out


def length_figures(records: Sequence[Trajectory], tok: Any = None) -> dict[str, Any]:
    """What the export states about its lengths (`lengths.json`, the dataset card, the run summary): characters
    of each rendered conversation, and tokens when a tokenizer is given."""
    chars = list(lengths(records).values())
    out: dict[str, Any] = {"characters": spread(chars), "tokens": None}
    if tok is not None:
        out["tokens"] = token_lengths(records, tok)
    return out


def length_lines(figures: dict[str, Any]) -> list[str]:
    """The length figures as lines for a terminal, a card or a report."""
    c = figures["characters"]
    lines = [f"rendered conversation characters p50 {c['p50']}, p90 {c['p90']}, max {c['max']}"]
    t = figures.get("tokens")
    if not t:
        lines.append("tokens not measured: pass --tokenizer DIR (the model's tokenizer, or `kopa train tiny`'s)")
        return lines
    s, p, g = t["sft"], t["grpo_prompt"], t["grpo_completion"]
    lines.append(
        f"tokens ({t['tokenizer']}): conversation p50 {s['p50']}, p90 {s['p90']}, max {s['max']} (SFT max_length); "
        f"GRPO prompt p50 {p['p50']}, p90 {p['p90']}, max {p['max']} (max_prompt_length), completion p50 "
        f"{g['p50']}, p90 {g['p90']}, max {g['max']} (max_completion_length)"
    )
    if "trl_default_max_length" in t:
        d = t["trl_default_max_length"]
        lines.append(f"trl's default max_length {d['max_length']} cuts {d['rows_over']} of {t['rows']} rows")
    return lines


# ---------------------------------------------------------------------------------------------- HF folder

#: The columns of the HF folder that hold nested JSON (datasets' `Json` feature keeps every message as written,
#: no keys filled with None to unify them).
HF_JSON_COLUMNS = ("messages", "tools")


def json_dataset(rows: list[dict[str, Any]], json_columns: Sequence[str]) -> Any:
    """A `datasets.Dataset` of `rows` with the `Json` feature for the nested columns, strings for the rest."""
    from datasets import Dataset, Features, Json, Value

    features = Features({k: (Json() if k in json_columns else Value("string")) for k in rows[0]})
    return Dataset.from_list(rows, features=features)


def _dataset_card(
    splits: dict[str, list[Trajectory]], counts: dict[str, Any], config: dict[str, Any], stats: dict[str, Any]
) -> str:
    """README.md of an HF dataset folder: how to load it, provenance, counts, lengths, quality, config."""
    overlap = stats.get("benchmark_overlap", "not measured for this export (see `kopa bench`)")
    figures = "\n".join(f"- {line}" for line in length_lines(counts["lengths"]))
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
---

# KOPA EDGE trajectories

Multi-step tool-calling trajectories over Korean public-institution APIs, drawn only from links that were
verified by execution, then executed end to end; arguments and results are recorded facts.

## Load
```python
from datasets import load_from_disk

ds = load_from_disk("<this folder>")  # DatasetDict: {", ".join(splits)}
```
Written with `DatasetDict.save_to_disk`; `ds.push_to_hub(...)` publishes it.

## Provenance
- Generated by KOPA EDGE (engine {config.get("engine")}) from graph snapshot `{config.get("graph_snapshot")}`.
- Upstream: {config.get("upstream", "the KOPA sandbox of Korean public APIs")}.
- Every argument carries its provenance (upstream field and transform, user slot, clock or constant) in
  `records.jsonl`; every row carries the trajectory `id`.
- Responses are trimmed: {config.get("trim_rule")}. Service keys never appear.

## Counts
```json
{json.dumps(counts, ensure_ascii=False, indent=1)}
```
Splits are by tool sequence (a record without calls: by its request): no sequence is in both train and validation,
and validation holds every kind and shape of the records that spans more than one sequence.

## Lengths
{figures}

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
(OpenAI-style function definitions): each row is its line of `trl.jsonl`.
"""
    return card


def _clear_hf(folder: Path) -> None:
    """Remove what an earlier export wrote into `folder` (its splits, dict file and card, or the older JSONL
    layout), nothing else."""
    names = {"train", "validation", "data"}
    index = folder / "dataset_dict.json"
    if index.is_file():
        names |= set(json.loads(index.read_text(encoding="utf-8")).get("splits", []))
        index.unlink()
    for name in names:
        if (folder / name).is_dir():
            shutil.rmtree(folder / name)
    (folder / "README.md").unlink(missing_ok=True)


def write_hf_dataset(
    folder: Path,
    records: Sequence[Record],
    *,
    config: dict[str, Any],
    stats: dict[str, Any],
    validation: float = 0.0,
    figures: dict[str, Any] | None = None,
) -> Path:
    """A folder `datasets.load_from_disk` loads: the trl rows as a `DatasetDict` (train, and validation when
    `validation` > 0: `split_records`), written by `save_to_disk`, and README.md, the dataset card."""
    import datasets

    recs = [as_trajectory(r) for r in records]
    train, val = split_records(recs, validation)
    splits = {"train": train, **({"validation": val} if val else {})}
    folder.mkdir(parents=True, exist_ok=True)
    _clear_hf(folder)
    if recs:
        quiet = datasets.is_progress_bar_enabled()
        datasets.disable_progress_bars()
        try:
            datasets.DatasetDict(
                {name: json_dataset([to_trl(r) for r in rows], HF_JSON_COLUMNS) for name, rows in splits.items()}
            ).save_to_disk(str(folder))
        finally:
            if quiet:
                datasets.enable_progress_bars()
    counts = {
        "records": len(recs),
        **{name: len(rows) for name, rows in splits.items()},
        "kinds": {name: dict(Counter(r.kind for r in rows)) for name, rows in splits.items()},
        "shapes": {name: dict(Counter(r.shape for r in rows)) for name, rows in splits.items()},
        "tool_sequences": len({sequence_key(r) for r in recs}),
        "lengths": figures or length_figures(recs),
    }
    (folder / "README.md").write_text(_dataset_card(splits, counts, config, stats), encoding="utf-8")
    return folder


def export_all(
    out: Path,
    result: SynthesisResult,
    store: GraphStore,
    settings: Settings,
    config: dict[str, Any],
    *,
    tokenizer: Any = None,
) -> dict[str, Any]:
    """Every format, BFCL's own layout and the Hugging Face folder for one synthesis result, with its distribution
    (which holds the data-quality figures under `quality`) and the length figures (tokens with `tokenizer`)."""
    graph = VerifiedGraph(store, settings)
    records = [as_trajectory(r) for r in result.records]
    dist = distribution(records, len(graph.links), len(graph.tools))
    q = quality(records, extras=result.extras_configured, lengths=lengths(records))
    dist["quality"] = {k: v for k, v in q.items() if k not in ("value_diversity", "violations", "single_valued")}
    paths = {k: str(v) for k, v in write_all(out, records).items()}
    items = _lines(out / "bfcl.jsonl")
    paths["bfcl_eval"] = str(write_bfcl(out / "bfcl", items))
    figures = length_figures(records, tokenizer)
    (out / "lengths.json").write_text(json.dumps(figures, ensure_ascii=False, indent=1), encoding="utf-8")
    paths["lengths"] = str(out / "lengths.json")
    card_config = {**config, "graph_snapshot": result.snapshot, "engine": "edge-0.1", "trim_rule": TRIM_RULE}
    stats = {k: v for k, v in dist.items() if k != "tool_counts"}
    guarded = result.benchmark_overlap.model_dump() if result.benchmark_overlap else None
    overlap = config.get("benchmark_overlap", guarded)
    if overlap is not None:  # from the contamination guard (synthesis.contamination), stated in the card
        stats["benchmark_overlap"] = overlap
    paths["hf"] = str(
        write_hf_dataset(
            out / "hf", records, config=card_config, stats=stats, validation=VALIDATION_FRACTION, figures=figures
        )
    )
    dist["bfcl"] = {
        "items": {c: n for c in BFCL_CATEGORIES if (n := sum(i["id"].rsplit("_", 1)[0] == c for i in items))},
        "left_out_multi_step": sum(bfcl_category(r) is None for r in records),
    }
    dist["token_lengths"] = figures["tokens"]
    (out / "quality.json").write_text(json.dumps(q, ensure_ascii=False, indent=1), encoding="utf-8")
    return {"distribution": dist, "paths": paths, "quality": q, "lengths": figures}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
