"""KOPA-Bench reports: Markdown with PNG plots (per-category pass^k bars with 95 % Wilson intervals, a calls vs
success scatter) for one run: overall, per category, per provider and per number of gold calls, the failures by
reason, one failure example per failed task (which check failed, the missing facts, the last messages), and the
replay misses apart from the failures. Side-by-side tables of several runs (`kopa bench compare`), each column
labelled with its run folder and its k."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.run import BenchError
from bench.scores import FAILURES
from bench.tasks import CATEGORIES

#: What each failure reason means, for the reader of a report.
FAILURE_TEXT = {
    "replay_miss": "a call the recording cannot answer (not a judged failure: rerun live or record the call)",
    "harness_error": "the harness failed on the episode",
    "agent_error": "the model endpoint or adapter failed",
    "no_answer": "no final answer within the turn limit",
    "called_a_tool": "called a tool on an irrelevant request",
    "no_refusal": "did not decline an irrelevant request",
    "no_clarification": "did not ask the clarifying question",
    "wrong_tool": "missed a required tool or called a forbidden one",
    "failed_call": "a call the gold program made succeed did not succeed (wrong arguments)",
    "extra_calls": "more calls than the task allows",
    "missing_fact": "the answer misses a fact",
}
#: Failure examples listed in a report (one per failed task) and characters kept of each message.
MAX_EXAMPLES = 40
MAX_TEXT = 240
METRICS = (
    "tool_precision",
    "tool_recall",
    "arg_accuracy",
    "provenance_accuracy",
    "calls_vs_gold",
    "tokens_per_task",
    "model_ms_per_task",
    "harness_ms_per_task",
)


def _f(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}"
    return str(x)


def _ci(s: dict[str, Any], key: str) -> str:
    lo, hi = s[f"{key}_ci"]
    return f"{s[key]:.3f} [{lo:.2f}, {hi:.2f}]"


def _short(text: Any, n: int = MAX_TEXT) -> str:
    flat = " ".join(str(text or "").split())
    return (flat[:n] + "…" if len(flat) > n else flat).replace("|", "\\|")


def _args(args: Any) -> str:
    return json.dumps(args, ensure_ascii=False, default=str) if args is not None else "(unreadable)"


def failure_examples(doc: Mapping[str, Any], *, limit: int = MAX_EXAMPLES) -> list[str]:
    """Markdown: one example per failed task (its first failed trial): the reason, the failed checks, the
    missing facts, the missed calls, and the last messages of the episode."""
    episodes = {(e["task"], int(e["trial"])): e for e in doc.get("episodes", [])}
    by_task: dict[str, list[dict[str, Any]]] = {}
    for s in doc.get("scored", []):
        by_task.setdefault(s["task"], []).append(s)
    failed = {t: v for t, v in by_task.items() if any(not s["passed"] for s in v)}
    lines: list[str] = []
    for n, (tid, trials) in enumerate(sorted(failed.items())):
        if n == limit:
            lines += [f"… and {len(failed) - limit} more failed tasks (all in results.json `scored`).", ""]
            break
        s = next(x for x in trials if not x["passed"])
        ep = episodes.get((tid, int(s["trial"])), {})
        reason = s.get("failure") or "?"
        lines += [
            f"### {tid} ({s['category']}, {sum(not x['passed'] for x in trials)} of {len(trials)} trials "
            f"failed): {reason}",
            "",
            f"- failed checks: {', '.join(s.get('failed_checks', [])) or '–'}; calls {s['calls']} "
            f"(gold {s['gold_calls']}); status {s.get('status', '')}"
            + (f" ({_short(ep.get('error'), 160)})" if ep.get("error") else ""),
        ]
        if s.get("missing"):
            lines.append(f"- missing facts: {', '.join(_short(m, 80) for m in s['missing'])}")
        missed = [c for c in ep.get("calls", []) if c.get("miss")]
        if missed:
            lines.append("- replay misses: " + "; ".join(f"`{c['tool']} {_args(c.get('args'))}`" for c in missed[:3]))
        lines += ["", "| turn | model | tool results |", "|---|---|---|"]
        for t in ep.get("turns", [])[-3:]:
            said = _short(t.get("content"), 160)
            calls = "; ".join(
                f"`{c['name'] or '?'} "
                f"{_short(_args(c['arguments']) if c.get('arguments') is not None else c.get('raw'), 120)}`"
                for c in t.get("tool_calls", [])
            )
            results = "; ".join(f"{r['outcome']}: {_short(r.get('content'), 160)}" for r in t.get("results", []))
            model = " ".join(x for x in (said, calls) if x) or "–"
            lines.append(f"| {t.get('user_turn', 0)}.{t.get('model_turn', 0)} | {model} | {results or '–'} |")
        lines.append("")
    return lines


def replay_misses(doc: Mapping[str, Any], *, limit: int = 20) -> list[str]:
    """Markdown: the calls replay could not answer, most frequent first."""
    counts: dict[str, int] = {}
    for e in doc.get("episodes", []):
        for c in e.get("calls", []):
            if c.get("miss"):
                key = f"`{c['tool']} {_args(c.get('args'))}`"
                counts[key] = counts.get(key, 0) + 1
    if not counts:
        return []
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return (
        [
            "## Replay misses",
            "",
            "Calls the recording cannot answer (each answered with an error, counted apart "
            "from the failures; a live run or a snapshot recorded with these calls scores them):",
            "",
        ]
        + [f"- {n}× {key}" for key, n in ranked[:limit]]
        + ([f"- … {len(ranked) - limit} more distinct calls"] if len(ranked) > limit else [])
        + [""]
    )


def _group_table(title: str, group: dict[str, Any], k: int, label: str = "group") -> list[str]:
    lines = [
        f"## {title}",
        "",
        f"| {label} | tasks | pass^{k} | pass@{k} | tool P | tool R | args | provenance | calls/gold | failures |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in group.items():
        fails = ", ".join(f"{r} {n}" for r, n in s.get("failures", {}).items()) or "–"
        lines.append(
            f"| {name} | {s['tasks']} | {_ci(s, 'pass_hat_k')} | {_ci(s, 'pass_at_k')} | "
            f"{_f(s['tool_precision'])} | {_f(s['tool_recall'])} | {_f(s['arg_accuracy'])} | "
            f"{_f(s['provenance_accuracy'])} | {_f(s['calls_vs_gold'])} | {fails} |"
        )
    return [*lines, ""]


def plots(out: Path, doc: Mapping[str, Any]) -> list[str]:
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


def write_report(out: Path, doc: Mapping[str, Any], *, with_plots: bool = True) -> Path:
    """report.md (and its PNGs) next to results.json."""
    sc = doc["scores"]
    run = doc["run"]
    k = sc["k"]
    lines = [
        f"# KOPA-Bench: {run['agent']}",
        "",
        f"- model: `{json.dumps(run.get('model', {}), ensure_ascii=False)}`",
        f"- mode: {run['mode']}; upstream: {run.get('upstream', '')}; clock: {run.get('clock', '')}",
        f"- task set: {run['task_set_hash']} ({run['tasks']} tasks, {len(doc['refused'])} refused); "
        f"graph snapshot: {run.get('graph_snapshot', '')}; replay snapshot: {run.get('snapshot', '–')}",
        f"- k = {k}, seed {run.get('seed', 0)}, max turns {run.get('max_turns')}; "
        f"{run['episodes']} episodes ({run.get('resumed_episodes', 0)} resumed), wall {run.get('wall_s', 0)} s",
        "",
        "## Overall",
        "",
        f"| pass^{k} | pass@{k} | success | " + " | ".join(METRICS) + " |",
        "|" + "---|" * (3 + len(METRICS)),
    ]
    o = sc["overall"]
    lines.append(
        f"| {_ci(o, 'pass_hat_k')} | {_ci(o, 'pass_at_k')} | {_f(o['success_rate'])} | "
        + " | ".join(_f(o[m]) for m in METRICS)
        + " |"
    )
    lines += [
        "",
        f"Intervals: 95 % Wilson score over tasks. Irrelevance refusal rate: "
        f"{_f(sc['irrelevance_refusal_rate'])}. Agent errors {o['agent_errors']}, loops {o['loops']}, "
        f"invalid calls {o['invalid_calls']}.",
        "",
    ]
    fails = o.get("failures", {})
    n_failed = sum(fails.values())
    lines += ["## Failures by reason", ""]
    if n_failed:
        lines += ["| reason | episodes | meaning |", "|---|---|---|"]
        lines += [f"| {r} | {fails[r]} | {FAILURE_TEXT.get(r, '')} |" for r in FAILURES if r in fails]
    else:
        lines.append("No episode failed.")
    judged = n_failed - fails.get("replay_miss", 0)
    lines += [
        "",
        f"Replay misses: {o['replay_misses']} calls in {o.get('replay_miss_episodes', 0)} episodes; "
        f"{fails.get('replay_miss', 0)} failed episodes are replay misses, counted apart from the "
        f"{judged} judged failures.",
        "",
    ]
    lines += _group_table("Per category", sc["by_category"], k)
    lines += _group_table("Per provider", sc["by_provider"], k)
    if sc.get("by_gold_calls"):
        lines += _group_table("Per number of gold calls", sc["by_gold_calls"], k, "gold calls")
    examples = failure_examples(doc)
    if examples:
        lines += ["## Failure examples (one per failed task, its last three model turns)", "", *examples]
    lines += replay_misses(doc)
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


def run_labels(paths: list[Path]) -> list[str]:
    """One label per run: its folder name, or its path where two folders share a name."""
    names = [p.name or str(p) for p in paths]
    return [str(p) if names.count(n) > 1 else n for p, n in zip(paths, names, strict=True)]


def compare_runs(paths: list[Path]) -> str:
    """KOPA-Bench runs side by side, one column per run (never merged by model), each labelled with its k: a
    pass^3 and a pass^1 are different measures, so runs that differ in k say so."""
    docs = [load_results(p) for p in paths]
    hashes = {d["run"]["task_set_hash"] for d in docs}
    ks = [int(d["scores"]["k"]) for d in docs]
    names = [
        f"{label}: {d['run']['agent']} ({d['run']['mode']}, k={kk})"
        for label, d, kk in zip(run_labels(paths), docs, ks, strict=True)
    ]
    same_k = len(set(ks)) == 1
    hat, at = (f"pass^{ks[0]}", f"pass@{ks[0]}") if same_k else ("pass^k (k per run)", "pass@k (k per run)")
    out = ["# KOPA-Bench comparison", ""]
    if len(hashes) > 1:
        out += [f"**Warning:** the runs used different task sets ({', '.join(sorted(hashes))}).", ""]
    if not same_k:
        out += [
            f"**Warning:** the runs differ in k ({', '.join(str(x) for x in sorted(set(ks)))}): pass^k falls "
            "and pass@k rises with k, so compare only columns of the same k.",
            "",
        ]

    def cell(d: dict[str, Any], key: str, kk: int) -> str:
        return _ci(d, key) + ("" if same_k else f" (k={kk})")

    out += ["| metric | " + " | ".join(names) + " |", "|---|" + "---|" * len(docs)]
    out.append(
        f"| {hat} | "
        + " | ".join(cell(d["scores"]["overall"], "pass_hat_k", kk) for d, kk in zip(docs, ks, strict=True))
        + " |"
    )
    out.append(
        f"| {at} | "
        + " | ".join(cell(d["scores"]["overall"], "pass_at_k", kk) for d, kk in zip(docs, ks, strict=True))
        + " |"
    )
    for m in METRICS:
        out.append(f"| {m} | " + " | ".join(_f(d["scores"]["overall"][m]) for d in docs) + " |")
    out.append(
        "| irrelevance refusals | " + " | ".join(_f(d["scores"]["irrelevance_refusal_rate"]) for d in docs) + " |"
    )
    out.append(
        "| replay misses (calls) | " + " | ".join(_f(d["scores"]["overall"].get("replay_misses")) for d in docs) + " |"
    )
    for title, key, order in (
        (f"{hat} per category", "by_category", list(CATEGORIES)),
        (f"{hat} per number of gold calls", "by_gold_calls", ["0", "1", "2", "3", "4+"]),
    ):
        groups = [g for g in order if any(g in d["scores"].get(key, {}) for d in docs)]
        if not groups:
            continue
        out += ["", f"## {title}", "", "| group | " + " | ".join(names) + " |", "|---|" + "---|" * len(docs)]
        for g in groups:
            out.append(
                f"| {g} | "
                + " | ".join(
                    cell(d["scores"][key][g], "pass_hat_k", kk) if g in d["scores"].get(key, {}) else "–"
                    for d, kk in zip(docs, ks, strict=True)
                )
                + " |"
            )
    return "\n".join(out) + "\n"
