"""Training datasets from executed trajectories (`synthesis.records.Trajectory`).

* **SFT**: conversations with tools (`messages` + `tools`, trl's conversational format from `synthesis.export.to_trl`),
  trained with `assistant_only_loss` so tool responses and the prompt never count in the loss.
* **GRPO**: prompt-only rows: the system prompt and the request, the record's own offered tools (routed through the
  `environment` column, see `training.environment`), and the columns the rewards read: `gold_calls` (tool,
  arguments, argument provenance, dependencies), `facts` (what the final answer must state, with label, field,
  category and unit; facts a constant or request-echo answer would pass are dropped, and a record left without
  any is dropped: `grpo_rows` reports how many), `offered` (tool names),
  `tool_schemas` (for schema validation), `refuted_links` (links among the offered tools that execution refuted) and
  `trajectory_id`.

Rows are split **by tool sequence** (`synthesis.export.split_records`, the HF folder's split): every record whose chain
(the ordered tool names; a record without calls: its request) lands in the evaluation split goes there, so evaluation
never sees a chain used in training, and every kind and shape spanning more than one chain is in both. Both datasets
are stored with datasets' `Json` feature, so no keys are filled with `None` (Arrow would otherwise unify every
message and argument dict).

Token lengths are measured against the configured maximum lengths and reported in the run manifest; rows over the
limit are an error unless the config says to drop (counted and listed) or keep them (the trainer truncates).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import KopaError
from graph.concepts import KMA_CATEGORIES, answer_label
from graph.models import LinkRecord
from graph.openapi_names import provider_of
from synthesis.answer_values import unit_at
from synthesis.export import (
    HF_JSON_COLUMNS,
    json_dataset,
    records_file,
    sequence_key,
    split_records,
    token_length,
)
from synthesis.fact_terms import Fact
from synthesis.facts import fact_hit, refusal
from synthesis.formats import prompt_messages, to_trl
from synthesis.records import Trajectory, as_trajectory


class DatasetError(KopaError):
    """Training data that cannot be used as configured (missing file, empty split, rows over the length limit)."""


# ---------------------------------------------------------------------------------------------- records


def load_records(path: Path) -> list[Trajectory]:
    """Trajectories from a `records.jsonl` file, or from an export folder holding one (`kopa demo`/`kopa synth`;
    `synthesis.export.records_file`, the one rule `kopa bench overlap` reads by too)."""
    file = records_file(path)
    if not file.exists():
        raise DatasetError(f"no trajectory records at {file} (run `kopa demo` or `kopa synth` first)")
    out: list[Trajectory] = []
    for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(as_trajectory(json.loads(line)))
        except ValueError as exc:
            raise DatasetError(f"{file}:{n} is not a trajectory record: {str(exc).splitlines()[0]}") from None
    if not out:
        raise DatasetError(f"{file} holds no trajectory records")
    return out


def record_providers(record: Trajectory) -> set[str]:
    """The providers (`graph.openapi_names.provider_of`) of the tools a record offers, calls or tried."""
    names = [t["function"]["name"] for t in record.tools] + [s.tool for s in record.steps]
    return {provider_of(n) for n in [*names, *(a.tool for a in record.attempts)]}


def without_provider(records: Sequence[Trajectory], provider: str) -> tuple[list[Trajectory], dict[str, Any]]:
    """The records as if `provider` did not exist (the held-out-provider arm): a record that calls (or tried) one
    of its tools is dropped, the others no longer offer its tools (distractors the model never called), and a
    record left offering none is dropped; with what was done. A provider no record offers is an error: holding it
    out would leave the data as it is."""
    known = set().union(*(record_providers(r) for r in records))
    if provider not in known:
        raise DatasetError(
            f"data.heldout_provider {provider!r} is no provider of the data's tools "
            f"(they are {', '.join(sorted(known))}: a tool name's prefix)"
        )
    kept: list[Trajectory] = []
    calling = stripped = emptied = 0
    for r in records:
        if any(provider_of(t) == provider for t in [*(s.tool for s in r.steps), *(a.tool for a in r.attempts)]):
            calling += 1
            continue
        tools = [t for t in r.tools if provider_of(t["function"]["name"]) != provider]
        if len(tools) == len(r.tools):
            kept.append(r)
        elif not tools:
            emptied += 1
        else:
            stripped += 1
            distractors = [d for d in r.distractors if provider_of(d) != provider]
            kept.append(r.model_copy(update={"tools": tools, "distractors": distractors}))
    if not kept:
        raise DatasetError(f"every record uses provider {provider!r}: nothing is left to train on without it")
    report = {
        "provider": provider,
        "records": len(records),
        "kept": len(kept),
        "dropped_calling": calling,
        "dropped_offering_only_it": emptied,
        "offers_stripped": stripped,
    }
    return kept, report


def split_by_sequence(
    records: Sequence[Trajectory], eval_fraction: float, seed: int = 0
) -> tuple[list[Trajectory], list[Trajectory]]:
    """Train and eval records such that no tool sequence appears in both and every kind and shape that can be is in
    both (deterministic in `seed`): `synthesis.export.split_records`, the HF folder's split."""
    if not 0.0 <= eval_fraction < 1.0:
        raise DatasetError("eval_fraction must be in [0, 1)")
    return split_records(records, eval_fraction, seed)


# ---------------------------------------------------------------------------------------------- reward columns

_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
#: Answers a guess could give without any tool: the constant numbers, with and without counters.
CONSTANT_GUESS = " ".join(str(i) for i in range(12)) + ". " + ", ".join(f"{i}건" for i in range(12))


def _unit_after(answer: str, value: str, label: str = "") -> str | None:
    """The canonical unit the recorded answer writes right after `value` (`45㎍/㎥`, `14.9℃`), if any: after the
    fact's label where the answer writes it (`강수확률 0%, 파고 0M`: the 0 of 파고 is in metres)."""
    prepared = unicodedata.normalize("NFKC", answer).lower()
    at = prepared.find(unicodedata.normalize("NFKC", label).lower()) if label else -1
    rx = re.compile(rf"(?<![0-9A-Za-z.]){re.escape(value.lower())}(?![0-9]|\.[0-9])")
    m = rx.search(prepared, at + len(label)) if at >= 0 else rx.search(prepared)
    if not m:
        return None
    unit, _ = unit_at(prepared, m.end())
    return unit or None


def _label(record: Trajectory, key: str, row: dict[str, Any]) -> tuple[str, str]:
    """(label, category) of a field of a row: the KMA category's label for forecast values, else the field's."""
    if key in ("fcstValue", "obsrValue") and str(row.get("category", "")) in KMA_CATEGORIES:
        return KMA_CATEGORIES[str(row["category"])][0], str(row["category"])
    return answer_label(key) or "", ""


def raw_facts(record: Trajectory) -> list[dict[str, Any]]:
    """The facts the recorded final answer states: the trajectory's own facts when synthesis recorded them, else
    scalar values of the final steps' first rows that the answer
    text contains, each with its label (the field's Korean label or its KMA category's), field, category and the
    unit the answer writes after it, and the final steps' row counts; only those the strict checker reads as
    stated in the recorded answer."""
    facts: list[dict[str, Any]] = []
    seen: set[str] = set()
    if not record.steps:
        return facts
    if record.facts:  # the trajectory carries what its answer must state: the one judge scores exactly those
        return [
            {
                "kind": f.kind,
                "value": f.value,
                "tolerance": f.tolerance,
                "unit": f.unit,
                "label": f.label,
                "field": "",
                "category": "",
            }
            for f in record.facts
        ]
    finals = record.final_steps or [record.steps[-1].step]
    for step in record.steps:
        if step.step not in finals:
            continue
        if re.search(rf"(?<![0-9]){step.response.rows}건", record.final_answer):
            facts.append(
                {
                    "kind": "count",
                    "value": step.response.rows,
                    "tolerance": 0.0,
                    "unit": "건",
                    "label": "결과",
                    "field": "",
                    "category": "",
                }
            )
        if not step.response.items:
            continue
        row = step.response.items[0]
        for key, value in row.items():
            text = str(value).strip() if isinstance(value, str | int | float) and not isinstance(value, bool) else ""
            text = re.sub(r"\s+", " ", re.sub(r"<br\s*/?>", " ", text)).rstrip(". ")  # as the answer writes it
            if not any(ch.isalnum() for ch in text) or text in seen:
                continue
            ahead = r"(?![0-9]|\.[0-9])" if _NUMBER.match(text) else r"(?![0-9A-Za-z])"
            if not re.search(
                rf"(?<![0-9A-Za-z.]){re.escape(text)}{ahead}", unicodedata.normalize("NFKC", record.final_answer)
            ):
                continue  # only values the answer states on their own, not digits inside another number
            seen.add(text)
            code = len(text) > 1 and text[0] == "0" and text[1] != "."  # a zip code or id is text, not a number
            kind = "number" if _NUMBER.match(text) and not code else "text"
            label, category = _label(record, key, row)
            unit = _unit_after(record.final_answer, text) if kind == "number" else None
            facts.append(
                {
                    "kind": kind,
                    "value": float(text) if kind == "number" else text,
                    "tolerance": 0.0,
                    "unit": unit,
                    "label": label,
                    "field": key,
                    "category": category,
                }
            )
    every = [_fact(f) for f in facts]
    return [f for f, fact in zip(facts, every, strict=True) if fact_hit(record.final_answer, fact, every)]


def _fact(f: dict[str, Any]) -> Fact:
    return Fact(
        f["kind"],
        f["value"],
        float(f.get("tolerance") or 0.0),
        f.get("unit"),
        str(f.get("label", "")),
        str(f.get("field", "")),
        str(f.get("category", "")),
    )


def guesses(record: Trajectory) -> list[str]:
    """Answers that need no tool: constant numbers, the request echoed, both."""
    return [CONSTANT_GUESS, record.request, f"{record.request} {CONSTANT_GUESS}"]


def guessable(record: Trajectory, fact: dict[str, Any]) -> bool:
    """A constant or request-echo answer would pass this fact."""
    f = _fact(fact)
    return any(fact_hit(g, f, [f]) for g in guesses(record))


def facts_of(record: Trajectory) -> list[dict[str, Any]]:
    """The facts the final answer must state, without those a guess passes (see `strengthen`)."""
    return strengthen(record)[0]


def strengthen(record: Trajectory) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept facts, dropped facts): a fact a constant or request-echo answer would pass is strengthened (given
    the unit the recorded answer writes) and dropped if a guess still passes it."""
    kept: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    for fact in raw_facts(record):
        if guessable(record, fact) and fact["kind"] == "number" and not fact.get("unit"):
            value = str(fact["value"]).removesuffix(".0")
            fact = {**fact, "unit": _unit_after(record.final_answer, value, str(fact.get("label") or ""))}
        (dropped if guessable(record, fact) else kept).append(fact)
    return kept, dropped


@dataclass
class FactsReport:
    """What `grpo_rows` did to the reward facts: facts dropped because a guess passes them, records left without
    any fact (dropped from GRPO)."""

    records: int = 0
    facts: int = 0
    dropped_facts: int = 0
    dropped_records: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "facts": self.facts,
            "guessable_facts_dropped": self.dropped_facts,
            "records_dropped": len(self.dropped_records),
            "dropped_ids": self.dropped_records[:50],
        }


def abstention_records(records: Sequence[Trajectory]) -> list[Trajectory]:
    """The records without calls that GRPO can reward: those whose recorded answer declines (the answer reward
    scores an honest refusal, `training.rewards.answer_facts`). A benign request the model answers itself (a sum,
    a translation) has no decision the reward can check, so it trains in SFT only."""
    return [r for r in records if not r.steps and refusal(r.final_answer, [])]


def grpo_rows(
    records: Sequence[Trajectory], refuted: Iterable[LinkRecord] = ()
) -> tuple[list[dict[str, Any]], FactsReport]:
    """GRPO rows of the records with calls, and the report of facts dropped as guessable: a record whose facts a
    constant or request-echo answer would all pass (or that has none left) is dropped."""
    refuted = list(refuted)
    report = FactsReport()
    rows = []
    for r in records:
        report.records += 1
        kept, dropped = strengthen(r)
        report.facts += len(kept)
        report.dropped_facts += len(dropped)
        if r.steps and not kept:
            report.dropped_records.append(r.id)
            continue
        rows.append(grpo_row(r, refuted, facts=kept))
    return rows, report


def gold_calls(record: Trajectory) -> list[dict[str, Any]]:
    """The recorded calls in order, with argument provenance (`link` entries name the earlier step and field)."""
    return [
        {
            "step": s.step,
            "tool": s.tool,
            "arguments": s.arguments,
            "provenance": s.provenance,
            "depends_on": s.depends_on,
        }
        for s in record.steps
    ]


def refuted_links_for(record: Trajectory, refuted: Iterable[LinkRecord]) -> list[dict[str, str]]:
    """Refuted links between tools this record offers (a call that feeds such a link is penalised)."""
    offered = {t["function"]["name"] for t in record.tools}
    return [
        {
            "source_tool": link.source_tool,
            "source_field": link.source_field,
            "target_tool": link.target_tool,
            "target_param": link.target_param.split(":", 1)[-1],
        }
        for link in refuted
        if link.source_tool in offered and link.target_tool in offered
    ]


def toolset_key(record: Trajectory) -> str:
    """The name of the environment that exposes exactly this record's offered tools."""
    names = sorted(t["function"]["name"] for t in record.tools)
    return "ts_" + hashlib.sha256("|".join(names).encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------------- rows


def sft_row(record: Trajectory) -> dict[str, Any]:
    trl = to_trl(record)
    return {"messages": trl["messages"], "tools": trl["tools"], "trajectory_id": record.id}


def grpo_row(
    record: Trajectory, refuted: Iterable[LinkRecord] = (), facts: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        # the SFT row's own prompt up to the point trained: the system prompt with the record's clock, any earlier
        # turns (a clarification's question and answer), then the request
        "prompt": prompt_messages(record),
        "now": record.now,
        "environment": toolset_key(record),
        "trajectory_id": record.id,
        "offered": [t["function"]["name"] for t in record.tools],
        "tool_schemas": {t["function"]["name"]: t["function"].get("parameters", {}) for t in record.tools},
        "gold_calls": gold_calls(record),
        "facts": facts_of(record) if facts is None else facts,
        "refuted_links": refuted_links_for(record, refuted),
    }


SFT_JSON_COLUMNS = HF_JSON_COLUMNS  # the rows of the export's HF folder
GRPO_JSON_COLUMNS = ("prompt", "offered", "tool_schemas", "gold_calls", "facts", "refuted_links")


def to_dataset(rows: list[dict[str, Any]], kind: str) -> Any:
    """A `datasets.Dataset` with `Json` features for every nested column (no `None`-filled keys)."""
    if not rows:
        raise DatasetError(f"the {kind} split is empty")
    return json_dataset(rows, SFT_JSON_COLUMNS if kind == "sft" else GRPO_JSON_COLUMNS)


# ---------------------------------------------------------------------------------------------- lengths


@dataclass
class LengthReport:
    kind: str
    max_length: int
    count: int
    longest: int
    mean: float
    p95: int
    over: list[str] = field(default_factory=list)
    policy: str = "error"
    #: GRPO: the recorded completion (calls, tool results, answer) of each row against max_completion_length
    completion_limit: int | None = None
    completion_longest: int = 0
    completion_over: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "max_length": self.max_length,
            "count": self.count,
            "longest": self.longest,
            "mean": round(self.mean, 1),
            "p95": self.p95,
            "over": len(self.over),
            "over_ids": self.over[:50],
            "policy": self.policy,
        }
        if self.completion_limit is not None:
            out["max_completion_length"] = self.completion_limit
            out["completion_longest"] = self.completion_longest
            out["completion_over"] = len(self.completion_over)
        return out

    def warnings(self) -> list[str]:
        """What a run should say before it trains: rows its bounds cut, drop or cannot finish."""
        name = "sft.max_length" if self.kind == "sft" else "grpo.max_prompt_length"
        done = {"drop": "dropped", "keep": "kept and truncated by the trainer", "error": "refused"}[self.policy]
        lines = []
        if self.over:
            lines.append(
                f"warning: {len(self.over)} of {self.count} {self.kind} rows exceed {name} {self.max_length} "
                f"tokens (longest {self.longest}): {done} (data.length_policy {self.policy})"
            )
        if self.completion_over:
            lines.append(
                f"warning: {len(self.completion_over)} of {self.count} grpo rows need more than "
                f"grpo.max_completion_length {self.completion_limit} tokens for their recorded calls, tool results "
                f"and answer (longest {self.completion_longest}): their rollouts are cut before the answer"
            )
        return lines


def measure(
    rows: list[dict[str, Any]],
    records: dict[str, Trajectory],
    tok: Any,
    kind: str,
    max_length: int,
    policy: str = "error",
    completion_limit: int | None = None,
) -> tuple[list[dict[str, Any]], LengthReport]:
    """Token length of each row (SFT: the whole conversation; GRPO: the rendered prompt with its tools) against
    `max_length`. Policy for rows over it: `error` (raise, naming how many and the limit), `drop` (remove them,
    reported) or `keep` (reported; the trainer truncates). GRPO rows with a `completion_limit` are also measured
    for their recorded completion (the whole conversation less the prompt), reported, never dropped."""
    if policy not in ("error", "drop", "keep"):
        raise DatasetError("length policy must be error, drop or keep")
    lengths: list[tuple[int, dict[str, Any]]] = []
    completions: list[tuple[int, str]] = []
    for row in rows:
        rec = records[row["trajectory_id"]]
        if kind == "sft":
            n = token_length(tok, row["messages"], row["tools"], generation_prompt=False)
        else:
            n = token_length(tok, row["prompt"], rec.tools, generation_prompt=True)
            if completion_limit is not None:
                sft = sft_row(rec)
                whole = token_length(tok, sft["messages"], sft["tools"], generation_prompt=False)
                completions.append((whole - n, rec.id))
        lengths.append((n, row))
    ns = sorted(n for n, _ in lengths) or [0]
    over = [row["trajectory_id"] for n, row in lengths if n > max_length]
    report = LengthReport(
        kind,
        max_length,
        len(rows),
        ns[-1],
        sum(ns) / max(1, len(ns)),
        ns[min(len(ns) - 1, int(0.95 * len(ns)))],
        over,
        policy,
        completion_limit,
        max((c for c, _ in completions), default=0),
        [i for c, i in completions if completion_limit is not None and c > completion_limit],
    )
    if over and policy == "error":
        raise DatasetError(
            f"{len(over)} of {len(rows)} {kind} rows exceed {max_length} tokens (longest {ns[-1]}): "
            "raise the max length, or set data.length_policy to drop or keep"
        )
    kept = [row for n, row in lengths if n <= max_length] if policy == "drop" else rows
    return kept, report


# ---------------------------------------------------------------------------------------------- manifest


def records_hash(records: Sequence[Trajectory]) -> str:
    h = hashlib.sha256()
    for r in records:
        h.update(json.dumps(r.to_json(), ensure_ascii=False, sort_keys=True).encode())
    return h.hexdigest()


def benchmark_overlap(train: Sequence[Trajectory], bench: Path | None) -> dict[str, Any]:
    """How many training records share a request or a tool sequence with a benchmark file (JSONL of records or
    tasks with `request`/`steps`/`tools_sequence`)."""
    if bench is None or not bench.exists():
        return {"benchmark": None}
    requests: set[str] = set()
    sequences: set[str] = set()
    for line in bench.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if item.get("request"):
            requests.add(str(item["request"]))
        seq = item.get("tools_sequence") or [s.get("tool") for s in item.get("steps", []) if isinstance(s, dict)]
        if seq:
            sequences.add("|".join(str(x) for x in seq))
    return {
        "benchmark": str(bench),
        "same_request": sum(r.request in requests for r in train),
        "same_sequence": sum(sequence_key(r) in sequences for r in train),
    }


def manifest(
    records: Sequence[Trajectory],
    train: Sequence[Trajectory],
    evaluation: Sequence[Trajectory],
    *,
    source: Path,
    eval_fraction: float,
    seed: int,
    lengths: list[LengthReport],
    bench: Path | None = None,
) -> dict[str, Any]:
    train_seq = {sequence_key(r) for r in train}
    eval_seq = {sequence_key(r) for r in evaluation}
    return {
        "source": str(source),
        "sha256": records_hash(records),
        "records": len(records),
        "train": len(train),
        "eval": len(evaluation),
        "eval_fraction": eval_fraction,
        "split_seed": seed,
        "train_sequences": len(train_seq),
        "eval_sequences": len(eval_seq),
        "sequence_overlap": len(train_seq & eval_seq),
        "shapes": dict(Counter(r.shape for r in train)),
        "steps": dict(Counter(str(r.n_steps) for r in train)),
        "lengths": [lr.to_json() for lr in lengths],
        "benchmark_overlap": benchmark_overlap(train, bench),
    }
