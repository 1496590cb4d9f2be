"""BFCL results in the project's results JSON: bfcl-eval's score files and CSVs of one run folder, parsed (nothing
is re-scored). `bfcl_summary(run_dir)` is what `kopa bench compare` reads (results.json in the run folder).

Shape (fractions in [0, 1]; None where BFCL printed N/A):
    {"benchmark": "bfcl", "bfcl_eval_version", "model", "registry_name", "endpoint", "mode", "limit_per_category",
     "partial": bool, "wall_s",
     "categories": {"simple_python": {"accuracy", "correct", "total"}, ...},     # the categories that ran
     "not_run": {"web_search_base": "why", ...},                                # every other scoring category
     "groups": {"non_live", "live", "multi_turn", "web_search", "memory", "relevance", "irrelevance"},
     "overall": {"bfcl_overall", "counted_as_zero": [...], "note"},
     "csv": {"data_overall": {column: text}, "data_live": {...}, ...}}           # BFCL's rows, verbatim
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.bfcl.categories import ALL_SCORING, LIVE, MEMORY, MULTI_TURN, NON_LIVE, WEB_SEARCH, not_run
from bench.records import BfclSummary, CategoryScore
from core.errors import InvalidInput, NotFound

SUMMARY_FILE = "results.json"
CSV_FILES = ("data_overall", "data_non_live", "data_live", "data_multi_turn", "data_agentic")
#: Each group of data_overall.csv: its column there and the categories it scores (None when none of them ran).
GROUPS: dict[str, tuple[str, list[str]]] = {
    "non_live": ("Non-Live AST Acc", [c for c in NON_LIVE if c != "irrelevance"]),
    "live": ("Live Acc", [c for c in LIVE if c not in ("live_irrelevance", "live_relevance")]),
    "multi_turn": ("Multi Turn Acc", MULTI_TURN),
    "web_search": ("Web Search Acc", WEB_SEARCH),
    "memory": ("Memory Acc", MEMORY),
    "relevance": ("Relevance Detection", ["live_relevance"]),
    "irrelevance": ("Irrelevance Detection", ["irrelevance", "live_irrelevance"]),
}
OVERALL_NOTE = (
    "BFCL's own Overall Acc: a weighted mean (non-live 10, live 10, irrelevance 10, multi-turn 30, "
    "agentic 40) in which every category not run counts as 0; compare the per-category scores."
)


def percent(text: str | None) -> float | None:
    """'85.00%' -> 0.85; 'N/A' or '' -> None; '0.02' -> 0.02."""
    if text is None:
        return None
    value = text.strip()
    if not value or value.upper() == "N/A":
        return None
    try:
        return float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        return None


def _read_csv_row(path: Path, registry: str, display: str | None) -> dict[str, str]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        model = row.get("Model", "")
        if model == registry or (display and model == display) or model.startswith(f"{registry} ("):
            return {k: v for k, v in row.items() if k is not None}
    return {k: v for k, v in rows[0].items() if k is not None} if len(rows) == 1 else {}


def _category_scores(score_root: Path) -> dict[str, CategoryScore]:
    out: dict[str, CategoryScore] = {}
    for path in sorted(score_root.rglob("BFCL_v4_*_score.json")):
        category = path.name[len("BFCL_v4_") : -len("_score.json")]
        if category not in ALL_SCORING:
            continue
        with path.open(encoding="utf-8") as handle:
            head = json.loads(handle.readline())
        out[category] = {
            "accuracy": float(head["accuracy"]),
            "correct": int(head["correct_count"]),
            "total": int(head["total_count"]),
        }
    return {c: out[c] for c in ALL_SCORING if c in out}


def bfcl_summary(run_dir: Path | str) -> BfclSummary:
    """The results JSON of one `kopa bench bfcl` run folder (run.json + bfcl/score/**)."""
    run_dir = Path(run_dir)
    meta_path = run_dir / "run.json"
    if not meta_path.is_file():
        raise NotFound(f"{run_dir} is not a BFCL run folder (no run.json)")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except ValueError:
        raise InvalidInput(f"{meta_path} is not valid JSON") from None
    registry = str(meta["registry_name"])
    score_dir = run_dir / "bfcl" / "score"
    categories = _category_scores(score_dir / registry) if (score_dir / registry).is_dir() else {}
    tables: dict[str, dict[str, str]] = {}
    for name in CSV_FILES:
        path = score_dir / f"{name}.csv"
        if path.is_file():
            tables[name] = _read_csv_row(path, registry, None)
    # BFCL prints 0.00% for a group that did not run; the results JSON says None there instead.
    overall_row = tables.get("data_overall", {})
    groups = {
        g: percent(overall_row.get(column)) if any(c in categories for c in members) else None
        for g, (column, members) in GROUPS.items()
    }
    missing = not_run(list(categories))
    return {
        "benchmark": "bfcl",
        "bfcl_eval_version": meta.get("bfcl_eval_version"),
        "model": meta.get("model"),
        "registry_name": registry,
        "endpoint": meta.get("endpoint"),
        "mode": meta.get("mode"),
        "limit_per_category": meta.get("limit_per_category"),
        "partial": bool(meta.get("limit_per_category")),
        "wall_s": meta.get("wall_s"),
        "categories": categories,
        "not_run": {c: meta.get("not_run", {}).get(c, why) for c, why in missing.items()},
        "groups": groups,
        "overall": {
            "bfcl_overall": percent(overall_row.get("Overall Acc")),
            "counted_as_zero": sorted(missing),
            "note": OVERALL_NOTE,
        },
        "csv": tables,
    }


def write_summary(run_dir: Path, summary: BfclSummary) -> Path:
    path = Path(run_dir) / SUMMARY_FILE
    path.write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def load_summary(path: Path | str) -> dict[str, Any]:
    """results.json of a run folder (or the file itself); recomputed from the score files when absent."""
    path = Path(path)
    if path.is_dir():
        if not (path / SUMMARY_FILE).is_file():
            return dict(bfcl_summary(path))
        path = path / SUMMARY_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise InvalidInput(f"{path} is not a readable BFCL results JSON") from None
    if not isinstance(data, dict) or data.get("benchmark") != "bfcl":
        raise InvalidInput(f"{path} is not a BFCL results JSON")
    return data


def compare_columns(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """Flat `bfcl.*` columns (fractions) for a side-by-side table with KOPA-Bench: the groups, BFCL's overall
    and every category that ran."""
    cols: dict[str, float | None] = {f"bfcl.{g}": v for g, v in summary.get("groups", {}).items()}
    cols["bfcl.overall"] = summary.get("overall", {}).get("bfcl_overall")
    for category, score in summary.get("categories", {}).items():
        cols[f"bfcl.{category}"] = score.get("accuracy")
    return cols


def render_table(summary: Mapping[str, Any]) -> str:
    """A plain-text report: one line per category that ran, the groups, BFCL's overall, what did not run."""
    lines = [
        f"BFCL ({summary.get('bfcl_eval_version')}) · {summary.get('model')} · mode {summary.get('mode')}"
        + (f" · {summary['limit_per_category']} per category (partial)" if summary.get("partial") else "")
    ]
    for category, score in summary.get("categories", {}).items():
        lines.append(f"  {category:<26} {score['accuracy'] * 100:6.2f}%  ({score['correct']}/{score['total']})")
    shown = {g: v for g, v in summary.get("groups", {}).items() if v is not None}
    if shown:
        lines.append("  groups: " + ", ".join(f"{g} {v * 100:.2f}%" for g, v in shown.items()))
    overall = summary.get("overall", {})
    value = overall.get("bfcl_overall")
    zero = overall.get("counted_as_zero", [])
    lines.append(
        f"  BFCL overall: {'n/a' if value is None else f'{value * 100:.2f}%'}"
        + (f" (not run, counted as 0 by BFCL: {', '.join(zero)})" if zero else "")
    )
    for category, why in summary.get("not_run", {}).items():
        if why != "not selected for this run":
            lines.append(f"  not run: {category}: {why}")
    return "\n".join(lines)
