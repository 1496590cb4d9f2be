"""`kopa bench judge-eval`: the judge measured on its specification, a corpus of labelled answers.

The corpus (`bench/judge_corpus/*.jsonl`, one answer a line: `task`, `answer`, `label` pass | fail, `class`,
`reason`, `author`) holds final answers to the shipped tasks written by people who did not write the judge's rules:
correct answers in many phrasings, and wrong ones of every kind the judge must refuse. Each answer is put in the
place of the oracle's final answer of its task's episode (the same calls, the same tool results seen, the same
clock) and judged as KOPA-Bench judges it (`bench.scores.score_episode`: the facts, or for irrelevance the honest
refusal). Recall is the share of pass-labelled answers the judge passes; false passes the share of fail-labelled
answers it passes; both overall, per class and per category.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.agents import OracleAgent
from bench.episode import run_episode
from bench.records import EpisodeRecord, GoldRecord
from bench.run import BenchEnv, prepare_gold
from bench.scores import score_episode
from bench.tasks import Task
from core.errors import KopaError
from graph.models import ToolRecord

CORPUS = Path(__file__).resolve().parent / "judge_corpus"


class CorpusError(KopaError):
    status_code = 422
    code = "invalid_corpus"


@dataclass(frozen=True)
class Labelled:
    task: str
    answer: str
    label: str  # pass | fail
    cls: str
    reason: str = ""
    author: str = ""
    source: str = ""


def load_corpus(folder: Path = CORPUS) -> list[Labelled]:
    """Every labelled answer of the folder's JSONL files (CorpusError names the file and line of a bad one)."""
    out: list[Labelled] = []
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else [folder]
    if not files:
        raise CorpusError(f"{folder}: no *.jsonl corpus files")
    for path in files:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
                item = Labelled(
                    str(doc["task"]),
                    str(doc["answer"]),
                    str(doc["label"]),
                    str(doc.get("class", "")),
                    str(doc.get("reason", "")),
                    str(doc.get("author", "")),
                    f"{path.name}:{i}",
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise CorpusError(f"{path}:{i}: not a labelled answer ({exc})") from None
            if item.label not in ("pass", "fail"):
                raise CorpusError(f"{path}:{i}: label must be pass or fail, got {item.label!r}")
            out.append(item)
    return out


async def oracle_episodes(tasks: list[Task], env: BenchEnv) -> tuple[dict[str, GoldRecord], dict[str, EpisodeRecord]]:
    """The executed gold programs and the oracle's episode of every task: the context each answer is judged in."""
    gold, _ = await prepare_gold(tasks, env.backend, env.now)
    episodes: dict[str, EpisodeRecord] = {}
    for task in tasks:
        if task.id in gold:
            episodes[task.id] = await run_episode(task, OracleAgent(), env.backend, env.registry, now=env.now)
    return gold, episodes


def decide(
    task: Task,
    gold: Mapping[str, Any],
    episode: Mapping[str, Any],
    answer: str,
    *,
    tools: dict[str, ToolRecord] | None = None,
    now: datetime | None = None,
) -> tuple[bool, str]:
    """Whether the judge passes `answer` as the final answer of the episode, and why not."""
    ep = {**episode, "final_answer": answer, "status": "answered"}
    scored = score_episode(task, gold, ep, tools, now=now)
    check = "refusal" if task.category == "irrelevance" else "facts"
    ok = bool(scored["checks"].get(check, False))
    why = "" if ok else (scored.get("rejected") or ", ".join(scored.get("missing", [])) or check)
    return ok, why


def evaluate(
    items: list[Labelled],
    tasks: dict[str, Task],
    gold: Mapping[str, Mapping[str, Any]],
    episodes: Mapping[str, Mapping[str, Any]],
    *,
    tools: dict[str, ToolRecord] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Recall, false passes and their breakdowns over the corpus, with every disagreement and the time per answer."""
    rows: list[dict[str, Any]] = []
    unknown = sorted({i.task for i in items if i.task not in tasks or i.task not in gold or i.task not in episodes})
    started = time.perf_counter()
    for item in items:
        if item.task in unknown:
            continue
        task = tasks[item.task]
        ok, why = decide(task, gold[item.task], episodes[item.task], item.answer, tools=tools, now=now)
        rows.append({"item": item, "category": task.category, "judged": "pass" if ok else "fail", "why": why})
    per_answer_ms = (time.perf_counter() - started) * 1000 / max(1, len(rows))
    return {
        "answers": len(rows),
        "tasks": len({r["item"].task for r in rows}),
        "unknown_tasks": unknown,
        "ms_per_answer": round(per_answer_ms, 2),
        **_rates(rows),
        "by_class": _grouped(rows, lambda r: r["item"].cls),
        "by_category": _grouped(rows, lambda r: r["category"]),
        "by_file": _grouped(rows, lambda r: r["item"].source.split(":")[0]),
        "disagreements": [
            {
                "source": r["item"].source,
                "task": r["item"].task,
                "class": r["item"].cls,
                "label": r["item"].label,
                "judged": r["judged"],
                "why": r["why"],
                "answer": r["item"].answer,
                "reason": r["item"].reason,
            }
            for r in rows
            if r["judged"] != r["item"].label
        ],
    }


def _rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in rows if r["item"].label == "pass"]
    bad = [r for r in rows if r["item"].label == "fail"]
    return {
        "correct": len(good),
        "wrong": len(bad),
        "recall": sum(r["judged"] == "pass" for r in good) / len(good) if good else None,
        "false_pass": sum(r["judged"] == "pass" for r in bad) / len(bad) if bad else None,
    }


def _grouped(rows: list[dict[str, Any]], key: Any) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    return {k: _rates(v) for k, v in sorted(groups.items())}


def render(report: dict[str, Any], *, show: int = 20) -> str:
    """The report as text: overall, per class, per category and per corpus file (a part written by one author),
    then the first disagreements."""

    def pct(x: float | None) -> str:
        return "   -  " if x is None else f"{100 * x:5.1f}%"

    lines = [
        f"judge-eval: {report['answers']} answers over {report['tasks']} tasks "
        f"({report['correct']} correct, {report['wrong']} wrong), {report['ms_per_answer']} ms per answer",
        f"recall {pct(report['recall'])}   false passes {pct(report['false_pass'])}",
        "",
        f"{'class / category':<24} {'correct':>7} {'recall':>7} {'wrong':>6} {'false pass':>10}",
    ]
    for title in ("by_class", "by_category", "by_file"):
        for name, r in report[title].items():
            lines.append(
                f"{name:<24} {r['correct']:>7} {pct(r['recall']):>7} {r['wrong']:>6} {pct(r['false_pass']):>10}"
            )
        lines.append("")
    if report["unknown_tasks"]:
        lines.append(f"answers to unknown tasks skipped: {', '.join(report['unknown_tasks'])}")
    for d in report["disagreements"][:show]:
        lines.append(f"- {d['source']} [{d['class']}] labelled {d['label']}, judged {d['judged']}: {d['why']}")
        lines.append(f"    {d['answer'][:200]}")
    return "\n".join(lines)
