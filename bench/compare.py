"""One table for several models: KOPA-Bench runs and BFCL runs side by side (e.g. tuned 9B, untuned 9B, untuned
27B). Rows are runs (folders), never merged by model name, so one run never hides another: a BFCL run shares the
row of the one KOPA-Bench run of the same model (when exactly one has that model and no other BFCL run joined it),
else it has its own row. Each KOPA-Bench cell says its k when the runs differ in k.

Runs of one model trained or sampled with several seeds (served names ending `-s<seed>`, e.g. `grpo-edge-9b-s0`)
are also aggregated as mean ± spread (sample standard deviation, and min-max), and, with a reference model (the
untuned 27B), each model's KOPA-Bench result is compared with the reference's by a paired bootstrap over tasks: the
per-task pass rate (trials and seeds averaged) minus the reference's, resampled over the tasks both ran; "nearly
matches" is non-inferiority, the lower end of the 95 % interval of that difference above -margin.

Per-task pass rates are also split by the tasks' overlap with the training data (`bench.overlap.overlap_classes`)
and, for a held-out provider one tuned arm never saw in training, into the tasks that call that provider's tools and
the others (`provider_classes`), every model scored on the same tasks."""

from __future__ import annotations

import random
import re
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.bfcl.results import compare_columns, load_summary
from bench.overlap import OVERLAP_CLASSES, overlap_classes
from bench.report import compare_runs, load_results, run_labels
from bench.run import BenchError
from bench.tasks import Task, load_tasks
from core.errors import KopaError
from graph.openapi_names import provider_of

BFCL_COLUMNS = ("bfcl.overall", "bfcl.non_live", "bfcl.live", "bfcl.multi_turn", "bfcl.irrelevance")
#: "Nearly matches": the tuned model's KOPA-Bench pass rate is at most this far below the reference's (5 points),
#: with 95 % confidence by the paired bootstrap over tasks.
MARGIN = 0.05
_SEED = re.compile(r"-s\d+$")


def seed_group(model: str) -> str:
    """The model a seeded run belongs to: its served name without a trailing `-s<seed>`."""
    return _SEED.sub("", model)


def mean_spread(values: list[float]) -> dict[str, float | int]:
    """n, mean, sample standard deviation (0 for one value), min and max."""
    return {
        "n": len(values),
        "mean": statistics.fmean(values),
        "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def task_pass_rates(doc: dict[str, Any]) -> dict[str, float]:
    """Each task's share of passed trials in one KOPA-Bench results document."""
    trials: dict[str, list[float]] = defaultdict(list)
    for s in doc.get("scored") or []:
        trials[str(s["task"])].append(1.0 if s.get("passed") else 0.0)
    return {t: statistics.fmean(v) for t, v in trials.items()}


def paired_bootstrap(
    model: dict[str, float],
    reference: dict[str, float],
    *,
    margin: float = MARGIN,
    iters: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Paired bootstrap over the tasks both ran of the mean per-task difference model - reference: the observed
    difference, its (1 - alpha) percentile interval, and whether the model is non-inferior within `margin` (the
    interval's lower end above -margin) or better (lower end above 0)."""
    tasks = sorted(set(model) & set(reference))
    if not tasks:
        raise BenchError("the paired bootstrap needs tasks both runs scored (the runs share no task)")
    diffs = [model[t] - reference[t] for t in tasks]
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(statistics.fmean(rng.choices(diffs, k=n)) for _ in range(iters))
    lo = means[int(alpha / 2 * iters)]
    hi = means[min(iters - 1, int((1 - alpha / 2) * iters))]
    return {
        "tasks": n,
        "difference": statistics.fmean(diffs),
        "ci": (lo, hi),
        "margin": margin,
        "non_inferior": lo > -margin,
        "better": lo > 0,
    }


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


def _pm(stats: dict[str, float | int]) -> str:
    return (
        f"{float(stats['mean']) * 100:.1f} ± {float(stats['sd']) * 100:.1f}% "
        f"(n={stats['n']}, {float(stats['min']) * 100:.1f}-{float(stats['max']) * 100:.1f})"
    )


def seeds_table(docs: list[tuple[Path, str, dict[str, Any]]]) -> list[str]:
    """Per model (seeds pooled), k and mode: KOPA-Bench pass^k and BFCL overall as mean ± sd (n, min-max); runs of
    different k are never pooled. Empty when no model has seeded or repeated runs."""
    kopa: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    bfcl: dict[str, list[float]] = defaultdict(list)
    seeded = False
    for _path, kind, doc in docs:
        name = _model_name(kind, doc)
        group = seed_group(name)
        seeded = seeded or group != name
        if kind == "kopa":
            key = (group, int(doc["scores"].get("k") or 0), str(doc["run"].get("mode", "")))
            kopa[key].append(float(doc["scores"]["overall"]["pass_hat_k"]))
        elif compare_columns(doc).get("bfcl.overall") is not None:
            bfcl[group].append(float(compare_columns(doc)["bfcl.overall"] or 0.0))
    if not seeded and all(len(v) < 2 for v in [*kopa.values(), *bfcl.values()]):
        return []
    ks = sorted({k for _, k, _ in kopa})
    modes = sorted({m for _, _, m in kopa})
    rows = sorted({(g, k) for g, k, _ in kopa} | {(g, ks[0] if len(ks) == 1 else 0) for g in bfcl})
    head = ["model (seeds pooled)", *(f"KOPA-Bench {m}" for m in modes), "BFCL overall"]
    out = ["## Seeds aggregated: mean ± sample sd (n, min-max)", ""]
    out += ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for g, k in rows:
        label = g + (f" (k={k})" if len(ks) > 1 and k else "")
        cells = [label, *(_pm(mean_spread(kopa[(g, k, m)])) if kopa.get((g, k, m)) else "–" for m in modes)]
        first = (g, k) == next(r for r in rows if r[0] == g)  # BFCL once per model
        cells.append(_pm(mean_spread(bfcl[g])) if bfcl.get(g) and first else "–")
        out.append("| " + " | ".join(cells) + " |")
    return out


def reference_table(
    docs: list[tuple[Path, str, dict[str, Any]]], reference: str, *, margin: float = MARGIN, seed: int = 0
) -> list[str]:
    """Each model (seeds pooled) against the reference model, per KOPA-Bench mode, by `paired_bootstrap`."""
    rates: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    for _path, kind, doc in docs:
        if kind == "kopa":
            rates[(seed_group(_model_name(kind, doc)), str(doc["run"].get("mode", "")))].append(task_pass_rates(doc))
    if not any(g == reference for g, _ in rates):
        raise BenchError(f"no KOPA-Bench run of the reference model {reference!r} among the runs compared")

    def pooled(runs: list[dict[str, float]]) -> dict[str, float]:
        tasks = set.intersection(*(set(r) for r in runs))
        return {t: statistics.fmean(r[t] for r in runs) for t in tasks}

    out = [
        f"## Against {reference}: paired bootstrap over tasks (95 % interval of the pass-rate difference; "
        f"non-inferior when its lower end is above -{margin * 100:g} points)",
        "",
        "| model (seeds pooled) | mode | tasks | difference | 95 % interval | nearly matches (non-inferior) |",
        "|---|---|---|---|---|---|",
    ]
    for (group, mode), runs in sorted(rates.items()):
        ref = rates.get((reference, mode))
        if group == reference or not ref:
            continue
        b = paired_bootstrap(pooled(runs), pooled(ref), margin=margin, seed=seed)
        lo, hi = b["ci"]
        verdict = "yes (better)" if b["better"] else ("yes" if b["non_inferior"] else "no")
        out.append(
            f"| {group} | {mode} | {b['tasks']} | {b['difference'] * 100:+.1f} points | "
            f"{lo * 100:+.1f} to {hi * 100:+.1f} | {verdict} |"
        )
    return out


def _pooled_rates(docs: list[tuple[Path, str, dict[str, Any]]]) -> dict[tuple[str, str], dict[str, list[float]]]:
    """Per model (seeds pooled) and KOPA-Bench mode, each task's pass rates, one per run."""
    out: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for _path, kind, doc in docs:
        if kind == "kopa":
            key = (seed_group(_model_name(kind, doc)), str(doc["run"].get("mode", "")))
            for task, rate in task_pass_rates(doc).items():
                out[key][task].append(rate)
    return out


def _class_rows(
    docs: list[tuple[Path, str, dict[str, Any]]], classes: dict[str, str], columns: Sequence[str]
) -> list[str]:
    """Table rows: per model (seeds pooled) and mode, the mean per-task pass rate over the tasks of each class
    (trials and seeds averaged per task first), with the number of tasks."""
    rows = []
    for (group, mode), per_task in sorted(_pooled_rates(docs).items()):
        cells = []
        for cls in columns:
            values = [statistics.fmean(v) for t, v in per_task.items() if classes.get(t) == cls]
            cells.append(f"{statistics.fmean(values) * 100:.1f}% ({len(values)})" if values else "–")
        rows.append(f"| {group} | {mode} | " + " | ".join(cells) + " |")
    return rows


def overlap_table(docs: list[tuple[Path, str, dict[str, Any]]], classes: dict[str, str], training: str) -> list[str]:
    """Per model (seeds pooled) and KOPA-Bench mode, the mean per-task pass rate over the tasks of each overlap
    class with the training data (`bench.overlap.overlap_classes`), with the number of tasks in each."""
    head = ["model (seeds pooled)", "mode", *OVERLAP_CLASSES]
    out = [
        f"## By overlap with the training data ({training}): mean per-task pass rate (tasks)",
        "",
        "sequence seen: a training record calls the gold program's exact tool sequence; tools seen: every gold "
        "tool is called in training, not in that sequence; unseen: some gold tool never is; no calls: clarification "
        "and irrelevance tasks.",
        "",
        "| " + " | ".join(head) + " |",
        "|---" * len(head) + "|",
    ]
    return out + _class_rows(docs, classes, OVERLAP_CLASSES)


def provider_classes(tasks: list[Task], provider: str) -> dict[str, str]:
    """Each task's relation to a held-out provider: `uses <provider>` (a gold call of one of its tools), `other
    providers` (gold calls, none of its tools) or `no calls`; a provider no task calls is a BenchError."""
    out = {}
    for t in tasks:
        providers = {provider_of(s.tool) for s in t.gold}
        out[t.id] = f"uses {provider}" if provider in providers else ("other providers" if providers else "no calls")
    if f"uses {provider}" not in out.values():
        known = sorted({provider_of(s.tool) for t in tasks for s in t.gold})
        raise BenchError(f"no KOPA-Bench task calls a tool of provider {provider!r} (they call {', '.join(known)})")
    return out


def provider_table(docs: list[tuple[Path, str, dict[str, Any]]], classes: dict[str, str], provider: str) -> list[str]:
    """Per model (seeds pooled) and mode, the mean per-task pass rate on the tasks that call the held-out
    provider's tools and on the others (`provider_classes`): the held-out arm never saw that provider in training,
    every other model is scored on the same tasks."""
    head = ["model (seeds pooled)", "mode", f"uses {provider}", "other providers", "no calls"]
    out = [
        f"## Held-out provider {provider}: mean per-task pass rate (tasks)",
        "",
        f"The held-out arm (`grpo-no-{provider}-…` in scripts/experiment.sh) trained on the EDGE data without "
        f"{provider}: no record calling its tools, none offering them. Transfer to an unseen provider is its "
        f"`uses {provider}` column against the EDGE arm's (trained with it) and the untuned models'; its `other "
        "providers` column shows what the smaller data cost elsewhere.",
        "",
        "| " + " | ".join(head) + " |",
        "|---" * len(head) + "|",
    ]
    return out + _class_rows(docs, classes, head[2:])


def compare_all(
    paths: list[Path],
    *,
    reference: str | None = None,
    margin: float = MARGIN,
    seed: int = 0,
    training: Path | None = None,
    heldout_provider: str | None = None,
) -> str:
    """The combined table, the seeds aggregated, each model against the reference (when named), the split by
    overlap with the training data (when given: a records.jsonl or export folder), the split by a held-out provider
    (when named), then the KOPA-Bench detail tables (when there are KOPA-Bench runs)."""
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
    seeds = seeds_table(docs)
    if seeds:
        out += ["", *seeds]
    if reference:
        out += ["", *reference_table(docs, reference, margin=margin, seed=seed)]
    if training is not None:
        out += ["", *overlap_table(docs, overlap_classes(training, load_tasks()), str(training))]
    if heldout_provider:
        out += ["", *provider_table(docs, provider_classes(load_tasks(), heldout_provider), heldout_provider)]
    kopa_paths = [p for p, kind, _ in docs if kind == "kopa"]
    text = "\n".join(out) + "\n"
    if kopa_paths:
        text += "\n" + compare_runs(kopa_paths)
    return text
