"""KOPA-Bench reports: Markdown with PNG plots (per-category pass^k bars with bootstrap intervals, a calls vs
success scatter) for one run, and side-by-side tables of several runs (`kopa bench compare`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.run import BenchError
from bench.tasks import CATEGORIES

METRICS = ("tool_precision", "tool_recall", "arg_accuracy", "provenance_accuracy", "calls_vs_gold",
           "tokens_per_task", "model_ms_per_task", "harness_ms_per_task")


def _f(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}"
    return str(x)


def _ci(s: dict[str, Any], key: str) -> str:
    lo, hi = s[f"{key}_ci"]
    return f"{s[key]:.3f} [{lo:.2f}, {hi:.2f}]"


def plots(out: Path, doc: dict[str, Any]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    cats = doc["scores"]["by_category"]
    names = [c for c in CATEGORIES if c in cats]
    if names:
        vals = [cats[c]["pass_hat_k"] for c in names]
        lo = [max(0.0, v - cats[c]["pass_hat_k_ci"][0]) for c, v in zip(names, vals, strict=True)]
        hi = [max(0.0, cats[c]["pass_hat_k_ci"][1] - v) for c, v in zip(names, vals, strict=True)]
        fig, ax = plt.subplots(figsize=(8, 3.6))
        ax.bar(names, vals, yerr=[lo, hi], capsize=4, color="#3b6ea8")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(f"pass^{doc['scores']['k']}")
        ax.set_title(f"KOPA-Bench per category: {doc['run']['agent']} ({doc['run']['mode']})")
        ax.tick_params(axis="x", rotation=30)
        fig.tight_layout()
        fig.savefig(out / "categories.png", dpi=110)
        plt.close(fig)
        made.append("categories.png")
    by_task: dict[str, list[dict[str, Any]]] = {}
    for s in doc["scored"]:
        by_task.setdefault(s["task"], []).append(s)
    if by_task:
        fig, ax = plt.subplots(figsize=(5, 4))
        xs = [sum(s["calls"] for s in v) / len(v) - v[0]["gold_calls"] for v in by_task.values()]
        ys = [sum(s["passed"] for s in v) / len(v) for v in by_task.values()]
        ax.scatter(xs, ys, alpha=0.6, color="#a83b3b")
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_xlabel("calls per task minus gold calls")
        ax.set_ylabel("success rate over trials")
        ax.set_title("calls vs success")
        fig.tight_layout()
        fig.savefig(out / "calls_vs_success.png", dpi=110)
        plt.close(fig)
        made.append("calls_vs_success.png")
    return made


def write_report(out: Path, doc: dict[str, Any], *, with_plots: bool = True) -> Path:
    """report.md (and its PNGs) next to results.json."""
    sc = doc["scores"]
    run = doc["run"]
    k = sc["k"]
    lines = [f"# KOPA-Bench: {run['agent']}", "",
             f"- model: `{json.dumps(run.get('model', {}), ensure_ascii=False)}`",
             f"- mode: {run['mode']}; upstream: {run.get('upstream', '')}; clock: {run.get('clock', '')}",
             f"- task set: {run['task_set_hash']} ({run['tasks']} tasks, {len(doc['refused'])} refused); "
             f"graph snapshot: {run.get('graph_snapshot', '')}; replay snapshot: {run.get('snapshot', '–')}",
             f"- k = {k}, seed {run.get('seed', 0)}, max turns {run.get('max_turns')}; "
             f"{run['episodes']} episodes ({run.get('resumed_episodes', 0)} resumed), wall {run.get('wall_s', 0)} s",
             "", "## Overall", "", f"| pass^{k} | pass@{k} | success | " + " | ".join(METRICS) + " |",
             "|" + "---|" * (3 + len(METRICS))]
    o = sc["overall"]
    lines.append(f"| {_ci(o, 'pass_hat_k')} | {_ci(o, 'pass_at_k')} | {_f(o['success_rate'])} | "
                 + " | ".join(_f(o[m]) for m in METRICS) + " |")
    lines += ["", f"Irrelevance refusal rate: {_f(sc['irrelevance_refusal_rate'])}. Agent errors {o['agent_errors']}, "
              f"loops {o['loops']}, invalid calls {o['invalid_calls']}, replay misses {o['replay_misses']}.", ""]
    for title, group in (("Per category", sc["by_category"]), ("Per provider", sc["by_provider"])):
        lines += [f"## {title}", "", f"| group | tasks | pass^{k} | pass@{k} | tool P | tool R | args | provenance "
                  "| calls/gold |", "|---|---|---|---|---|---|---|---|---|"]
        for name, s in group.items():
            lines.append(f"| {name} | {s['tasks']} | {_ci(s, 'pass_hat_k')} | {_ci(s, 'pass_at_k')} | "
                         f"{_f(s['tool_precision'])} | {_f(s['tool_recall'])} | {_f(s['arg_accuracy'])} | "
                         f"{_f(s['provenance_accuracy'])} | {_f(s['calls_vs_gold'])} |")
        lines.append("")
    if doc["refused"]:
        lines += ["## Refused tasks (gold program failed)", ""]
        lines += [f"- {tid}: {reason}" for tid, reason in sorted(doc["refused"].items())] + [""]
    if with_plots:
        for png in plots(out, doc):
            lines += [f"![{png}]({png})", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def load_results(path: Path) -> dict[str, Any]:
    file = path / "results.json" if path.is_dir() else path
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"{file}: no results (run `kopa bench run --out {path}` first)") from None
    except json.JSONDecodeError as exc:
        raise BenchError(f"{file}: not a results file ({exc.msg})") from None
    if not isinstance(doc, dict) or "scores" not in doc or "run" not in doc:
        raise BenchError(f"{file}: not a KOPA-Bench results file")
    return doc


def compare_runs(paths: list[Path]) -> str:
    docs = [load_results(p) for p in paths]
    hashes = {d["run"]["task_set_hash"] for d in docs}
    names = [f"{d['run']['agent']} ({d['run']['mode']})" for d in docs]
    k = docs[0]["scores"]["k"]
    out = ["# KOPA-Bench comparison", ""]
    if len(hashes) > 1:
        out += [f"**Warning:** the runs used different task sets ({', '.join(sorted(hashes))}).", ""]
    out += ["| metric | " + " | ".join(names) + " |", "|---|" + "---|" * len(docs)]
    out.append(f"| pass^{k} | " + " | ".join(_ci(d["scores"]["overall"], "pass_hat_k") for d in docs) + " |")
    out.append(f"| pass@{k} | " + " | ".join(_ci(d["scores"]["overall"], "pass_at_k") for d in docs) + " |")
    for m in METRICS:
        out.append(f"| {m} | " + " | ".join(_f(d["scores"]["overall"][m]) for d in docs) + " |")
    out.append("| irrelevance refusals | " + " | ".join(_f(d["scores"]["irrelevance_refusal_rate"]) for d in docs)
               + " |")
    out += ["", f"## pass^{k} per category", "", "| category | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(docs)]
    cats = [c for c in CATEGORIES if any(c in d["scores"]["by_category"] for d in docs)]
    for c in cats:
        out.append(f"| {c} | " + " | ".join(_ci(d["scores"]["by_category"][c], "pass_hat_k")
                                            if c in d["scores"]["by_category"] else "–" for d in docs) + " |")
    return "\n".join(out) + "\n"
