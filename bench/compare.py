"""One table for several models: KOPA-Bench runs and BFCL runs side by side (e.g. tuned 9B, untuned 9B, untuned
27B). A KOPA-Bench run and a BFCL run of the same model (by model name) share a row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.bfcl.results import compare_columns, load_summary
from bench.report import compare_runs, load_results
from bench.run import BenchError
from core.errors import KopaError

BFCL_COLUMNS = ("bfcl.overall", "bfcl.non_live", "bfcl.live", "bfcl.multi_turn", "bfcl.irrelevance")


def _kind(path: Path) -> tuple[str, dict[str, Any]]:
    if not path.exists():
        raise BenchError(f"{path}: no results (run `kopa bench run --out {path}` or `kopa bench bfcl --out {path}`)")
    try:
        return "kopa", load_results(path)
    except BenchError:
        pass
    try:
        return "bfcl", load_summary(path)
    except (KopaError, OSError, ValueError):
        raise BenchError(f"{path}: neither a KOPA-Bench results folder nor a BFCL run folder") from None


def _model_name(kind: str, doc: dict[str, Any]) -> str:
    if kind == "bfcl":
        return str(doc.get("model") or doc.get("registry_name") or "?")
    run = doc["run"]
    model = run.get("model")
    if isinstance(model, dict):
        model = model.get("model") or model.get("name")
    return str(model or run.get("agent") or "?")


def _pct(value: Any) -> str:
    return "–" if value is None else f"{float(value) * 100:.1f}%"


def compare_all(paths: list[Path]) -> str:
    """The combined table, then the KOPA-Bench detail tables (when there are KOPA-Bench runs)."""
    docs = [(p, *_kind(p)) for p in paths]
    rows: dict[str, dict[str, Any]] = {}
    for _path, kind, doc in docs:
        row = rows.setdefault(_model_name(kind, doc), {})
        if kind == "kopa":
            overall = doc["scores"]["overall"]
            row["kopa"] = overall.get("pass_hat_k")
            row["kopa_at"] = overall.get("pass_at_k")
            row["mode"] = doc["run"].get("mode", "")
            row["k"] = doc["scores"].get("k")
        else:
            row.update(compare_columns(doc))
    k = next((r["k"] for r in rows.values() if r.get("k")), 3)
    head = ["model", f"KOPA-Bench pass^{k}", f"pass@{k}", *BFCL_COLUMNS]
    out = ["# Models side by side", "", "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for name, r in rows.items():
        cells = [name + (f" ({r['mode']})" if r.get("mode") else ""), _pct(r.get("kopa")), _pct(r.get("kopa_at")),
                 *(_pct(r.get(c)) for c in BFCL_COLUMNS)]
        out.append("| " + " | ".join(cells) + " |")
    kopa_paths = [p for p, kind, _ in docs if kind == "kopa"]
    text = "\n".join(out) + "\n"
    if kopa_paths:
        text += "\n" + compare_runs(kopa_paths)
    return text

