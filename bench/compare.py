"""One table for several models: KOPA-Bench runs and BFCL runs side by side (e.g. tuned 9B, untuned 9B, untuned
27B). Rows are runs (folders), never merged by model name, so one run never hides another: a BFCL run shares the
row of the one KOPA-Bench run of the same model (when exactly one has that model and no other BFCL run joined it),
else it has its own row. Each KOPA-Bench cell says its k when the runs differ in k."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.bfcl.results import compare_columns, load_summary
from bench.report import compare_runs, load_results, run_labels
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
    labels = run_labels(paths)
    rows: list[dict[str, Any]] = []
    for label, (_path, kind, doc) in zip(labels, docs, strict=True):
        model = _model_name(kind, doc)
        if kind == "kopa":
            overall = doc["scores"]["overall"]
            rows.append(
                {
                    "runs": [label],
                    "model": model,
                    "kopa": overall.get("pass_hat_k"),
                    "kopa_at": overall.get("pass_at_k"),
                    "mode": doc["run"].get("mode", ""),
                    "k": doc["scores"].get("k"),
                }
            )
    for label, (_path, kind, doc) in zip(labels, docs, strict=True):
        if kind != "bfcl":
            continue
        model = _model_name(kind, doc)
        same = [r for r in rows if r["model"] == model and "kopa" in r]
        if len(same) == 1 and not same[0].get("bfcl"):
            same[0].update(compare_columns(doc), bfcl=True)
            same[0]["runs"].append(label)
        else:
            rows.append({"runs": [label], "model": model, "bfcl": True, **compare_columns(doc)})
    ks = {r["k"] for r in rows if r.get("k")}
    k_head = f"{next(iter(ks))}" if len(ks) == 1 else "k"
    head = ["run", "model", f"KOPA-Bench pass^{k_head}", f"pass@{k_head}", *BFCL_COLUMNS]
    out = ["# Models side by side", ""]
    if len(ks) > 1:
        out += [f"KOPA-Bench runs differ in k ({', '.join(str(x) for x in sorted(ks))}): each cell says its k.", ""]
    out += ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in rows:
        tag = f" (k={r['k']})" if len(ks) > 1 and r.get("k") else ""
        cells = [
            " + ".join(r["runs"]),
            r["model"] + (f" ({r['mode']})" if r.get("mode") else ""),
            _pct(r.get("kopa")) + (tag if r.get("kopa") is not None else ""),
            _pct(r.get("kopa_at")) + (tag if r.get("kopa_at") is not None else ""),
            *(_pct(r.get(c)) for c in BFCL_COLUMNS),
        ]
        out.append("| " + " | ".join(cells) + " |")
    kopa_paths = [p for p, kind, _ in docs if kind == "kopa"]
    text = "\n".join(out) + "\n"
    if kopa_paths:
        text += "\n" + compare_runs(kopa_paths)
    return text
