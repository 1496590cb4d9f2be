"""Pure scorers of KOPA-Bench episodes: pass/fail of one episode and its diagnostics, and the aggregates
(pass^k and pass@k with bootstrap confidence intervals, per category and per provider, tool-selection precision
and recall, argument accuracy, argument provenance accuracy, calls vs gold, irrelevance refusals, tokens and
latency)."""

from __future__ import annotations

import random
import re
import unicodedata
from collections import defaultdict
from math import comb
from statistics import mean
from typing import Any

from bench.tasks import FromArg, Task
from synthesis.facts import Fact, check_answer, fact_hit

REFUSAL_MARKERS = ("할 수 없", "수 없습니다", "수 없어요", "제공하지 않", "지원하지 않", "제공되지 않", "불가능",
                   "어렵습니다", "없습니다", "도구가 없", "cannot", "can't", "unable")


def provider_of(tool: str) -> str:
    return tool.split("_", 1)[0]


def _v(x: Any) -> str:
    return unicodedata.normalize("NFKC", str(x)).strip()


def refuses(answer: str, facts: list[Fact]) -> bool:
    text = answer or ""
    if any(f.kind == "text" and fact_hit(text, f) for f in facts):
        return True
    return any(m in text.lower() for m in REFUSAL_MARKERS)


def asks(reply: str, keywords: list[str]) -> bool:
    flat = re.sub(r"\s+", "", reply or "")
    return any(re.sub(r"\s+", "", k) in flat for k in keywords)


def score_episode(task: Task, gold: dict[str, Any], ep: dict[str, Any]) -> dict[str, Any]:
    """Pass/fail and diagnostics of one episode against the task and its executed gold program."""
    facts = [Fact(**f) for f in gold.get("facts", [])]
    calls = ep.get("calls", [])
    valid = [c for c in calls if c.get("valid")]
    called = [c["tool"] for c in valid]
    gold_calls = gold.get("calls", [])
    gold_tools = [c["tool"] for c in gold_calls]
    must = task.must_call if task.must_call is not None else gold_tools
    final = ep.get("final_answer", "") if ep.get("status") == "answered" else ""
    fc = check_answer(final, facts)
    checks: dict[str, bool] = {"answered": ep.get("status") == "answered"}
    if task.category == "irrelevance":
        checks["no_call"] = not calls
        checks["refusal"] = refuses(final, facts)
    else:
        checks["facts"] = fc.score == 1.0
        checks["must_call"] = all(t in called for t in must)
        # every call that succeeded in the gold program must succeed in the episode too (a wrong code fails)
        ok_tools = {c["tool"] for c in valid if c["outcome"] == "ok"}
        checks["gold_calls_ok"] = all(g["tool"] in ok_tools for g in gold_calls if g.get("outcome") == "ok")
        checks["must_not_call"] = not any(t in called for t in task.must_not_call)
        checks["max_calls"] = len(calls) <= task.limit
        if task.category == "clarification" and task.clarify is not None:
            first = ep.get("first_reply") or {}
            checks["clarify"] = (first.get("user_turn") == 0 and first.get("calls_before", 1) == 0
                                 and asks(str(first.get("content", "")), task.clarify.ask_keywords))
    passed = all(checks.values())
    cset, gset = set(called), set(gold_tools)
    precision = len(cset & gset) / len(cset) if cset else (1.0 if not gset else 0.0)
    recall = len(cset & gset) / len(gset) if gset else 1.0
    arg_hits = arg_total = prov_hits = prov_total = 0
    steps = {s.id: s for s in task.gold}
    for g in gold_calls:
        gargs = {k: _v(v) for k, v in g["args"].items()}
        candidates = [(i, c) for i, c in enumerate(valid) if c["tool"] == g["tool"] and c.get("args") is not None]
        best: tuple[int, dict[str, Any]] | None = None
        best_n = -1
        for i, c in candidates:
            n = sum(1 for k, v in gargs.items() if _v(c["args"].get(k, "\0")) == v)
            if n > best_n:
                best, best_n = (i, c), n
        arg_total += len(gargs)
        arg_hits += max(0, best_n)
        step = steps.get(g["step"])
        for name, src in (step.args.items() if step else []):
            if not isinstance(src, FromArg):
                continue
            prov_total += 1
            if best is None or _v(best[1]["args"].get(name, "\0")) != gargs.get(name):
                continue
            source_tool = steps[src.from_].tool
            if any(c["tool"] == source_tool and c["outcome"] == "ok" for c in valid[:best[0]]):
                prov_hits += 1
    return {
        "task": task.id, "trial": ep.get("trial", 0), "category": task.category, "passed": passed,
        "checks": checks, "facts_hit": fc.hits, "facts_total": fc.total,
        "missing": [f"{f.kind}:{f.value}" for f in fc.missing],
        "calls": len(calls), "gold_calls": len(gold_calls), "invalid_calls": len(calls) - len(valid),
        "tool_precision": precision, "tool_recall": recall,
        "arg_accuracy": arg_hits / arg_total if arg_total else None,
        "provenance_accuracy": prov_hits / prov_total if prov_total else None,
        "refused": task.category == "irrelevance" and checks.get("no_call", False) and checks.get("refusal", False),
        "tokens": ep.get("tokens", {}).get("prompt", 0) + ep.get("tokens", {}).get("completion", 0),
        "model_ms": ep.get("model_ms", 0.0), "harness_ms": ep.get("harness_ms", 0.0),
        "status": ep.get("status", ""), "replay_misses": ep.get("replay_misses", 0),
        "providers": sorted({provider_of(t) for t in gold_tools}),
    }


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that k trials drawn from n (c passed) all pass."""
    return comb(c, k) / comb(n, k) if n >= k else (1.0 if c == n and n > 0 else 0.0)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k trials drawn from n (c passed) passes."""
    if n < k:
        return 1.0 if c > 0 else 0.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def bootstrap_ci(values: list[float], *, iters: int = 1000, seed: int = 0, alpha: float = 0.05) -> tuple[float, float]:
    if not values:
        return (0.0, 0.0)
    rnd = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rnd.randrange(n)] for _ in range(n)) / n for _ in range(iters))
    lo = means[int(alpha / 2 * iters)]
    hi = means[min(iters - 1, int((1 - alpha / 2) * iters))]
    return (round(lo, 4), round(hi, 4))


def _avg(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return round(mean(vals), 4) if vals else None


def summarise(scored: list[dict[str, Any]], k: int, *, seed: int = 0) -> dict[str, Any]:
    """Aggregates of a group of scored episodes (tasks with their trials)."""
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in scored:
        by_task[s["task"]].append(s)
    hat = [pass_hat_k(len(v), sum(x["passed"] for x in v), k) for v in by_task.values()]
    at = [pass_at_k(len(v), sum(x["passed"] for x in v), k) for v in by_task.values()]
    gold = [s["gold_calls"] for s in scored]
    calls = [s["calls"] for s in scored]
    return {
        "tasks": len(by_task), "episodes": len(scored),
        "pass_hat_k": round(mean(hat), 4) if hat else 0.0, "pass_hat_k_ci": bootstrap_ci(hat, seed=seed),
        "pass_at_k": round(mean(at), 4) if at else 0.0, "pass_at_k_ci": bootstrap_ci(at, seed=seed),
        "success_rate": round(mean(s["passed"] for s in scored), 4) if scored else 0.0,
        "tool_precision": _avg([s["tool_precision"] for s in scored]),
        "tool_recall": _avg([s["tool_recall"] for s in scored]),
        "arg_accuracy": _avg([s["arg_accuracy"] for s in scored]),
        "provenance_accuracy": _avg([s["provenance_accuracy"] for s in scored]),
        "calls_per_task": _avg([float(c) for c in calls]), "gold_calls_per_task": _avg([float(g) for g in gold]),
        "calls_vs_gold": round(sum(calls) / sum(gold), 4) if sum(gold) else None,
        "invalid_calls": sum(s["invalid_calls"] for s in scored),
        "tokens_per_task": _avg([float(s["tokens"]) for s in scored]),
        "model_ms_per_task": _avg([float(s["model_ms"]) for s in scored]),
        "harness_ms_per_task": _avg([float(s["harness_ms"]) for s in scored]),
        "agent_errors": sum(1 for s in scored if s["status"] == "agent_error"),
        "loops": sum(1 for s in scored if s["status"] == "loop"),
        "replay_misses": sum(s["replay_misses"] for s in scored),
    }


def aggregate(scored: list[dict[str, Any]], k: int, *, seed: int = 0) -> dict[str, Any]:
    """Overall, per category and per provider summaries, and the irrelevance refusal rate."""
    cats: dict[str, list[dict[str, Any]]] = defaultdict(list)
    provs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in scored:
        cats[s["category"]].append(s)
        for p in s["providers"]:
            provs[p].append(s)
    irr = cats.get("irrelevance", [])
    return {
        "k": k, "overall": summarise(scored, k, seed=seed),
        "by_category": {c: summarise(v, k, seed=seed) for c, v in sorted(cats.items())},
        "by_provider": {p: summarise(v, k, seed=seed) for p, v in sorted(provs.items())},
        "irrelevance_refusal_rate": round(float(mean(s["refused"] for s in irr)), 4) if irr else None,
    }
