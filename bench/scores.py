"""Pure scorers of KOPA-Bench episodes: pass/fail of one episode, which check failed and why (`failure`), its
diagnostics, and the aggregates (pass^k and pass@k with 95 % Wilson score intervals over tasks, per category, per
provider and per number of gold calls, tool-selection precision and recall, argument accuracy, argument
provenance accuracy, calls vs gold, irrelevance refusals, failure reasons, replay misses, tokens and latency).

A failed episode that hit a replay miss is a `replay_miss` failure whatever else failed: the recording could not
answer a call the model made, so the episode says nothing certain about the model (a live run can)."""

from __future__ import annotations

import random
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Mapping
from datetime import datetime
from math import comb, sqrt
from statistics import mean
from typing import Any

from bench.records import ScoredEpisode, Scores, Summary
from bench.tasks import FromArg, Task
from execution.canonical import canonical_value, spec_of
from graph.models import ToolRecord
from graph.openapi_names import provider_of
from synthesis.fact_terms import Fact
from synthesis.facts import check_answer, refusal
from synthesis.seen import Seen


def _v(x: Any) -> str:
    return unicodedata.normalize("NFKC", str(x)).strip()


def refuses(answer: str, facts: list[Fact], seen: Seen | None = None) -> bool:
    """An honest refusal: it says the request cannot be served (`synthesis.facts.refusal`) and does not fulfil it."""
    return refusal(answer or "", facts, seen)


def asks(reply: str, keywords: list[str]) -> bool:
    flat = re.sub(r"\s+", "", reply or "")
    return any(re.sub(r"\s+", "", k) in flat for k in keywords)


#: The failure reasons, in the order a failed episode is attributed to the first that applies.
FAILURES = (
    "replay_miss",
    "harness_error",
    "agent_error",
    "no_answer",
    "called_a_tool",
    "no_refusal",
    "no_clarification",
    "wrong_tool",
    "failed_call",
    "extra_calls",
    "missing_fact",
)
_CHECK_FAILURE = {
    "answered": "no_answer",
    "no_call": "called_a_tool",
    "refusal": "no_refusal",
    "clarify": "no_clarification",
    "must_call": "wrong_tool",
    "must_not_call": "wrong_tool",
    "gold_calls_ok": "failed_call",
    "max_calls": "extra_calls",
    "facts": "missing_fact",
}


def failure_reason(ep: Mapping[str, Any], checks: dict[str, bool]) -> str | None:
    """Why an episode failed (one of FAILURES), None when it passed."""
    failed = {_CHECK_FAILURE[c] for c, ok in checks.items() if not ok}
    if not failed:
        return None
    if ep.get("replay_misses", 0):
        return "replay_miss"
    status = ep.get("status", "")
    if status == "harness_error":
        return "harness_error"
    if status == "agent_error":
        return "agent_error"
    return next(r for r in FAILURES if r in failed)


def gold_bucket(n: int) -> str:
    """The group of a task by its number of gold calls: 0, 1, 2, 3, 4+."""
    return str(n) if n < 4 else "4+"


def _arg_values(
    tool: str, args: dict[str, Any], names: list[str], tools: dict[str, ToolRecord] | None
) -> dict[str, str | None]:
    """The values of `names` in a call as the upstream reads them: canonical by the tool's spec when known (a
    documented default stands for an absent argument), else as text; None when absent."""
    spec = spec_of((tools or {}).get(tool))
    out: dict[str, str | None] = {}
    for k in names:
        if k in args and args[k] is not None:
            out[k] = _v(canonical_value(spec, k, args[k]))
        elif k in spec.defaults:
            out[k] = _v(canonical_value(spec, k, spec.defaults[k]))
        else:
            out[k] = None
    return out


def seen_in(task: Task, ep: Mapping[str, Any], now: datetime | None = None) -> Seen:
    """What the model of an episode saw: every tool result it read, the user's turns and the clock."""
    results = tuple(str(r.get("content", "")) for t in ep.get("turns", []) for r in t.get("results", []))
    sent = tuple(str(v) for c in ep.get("calls", []) for v in (c.get("args") or {}).values())
    return Seen(results=results, user=tuple(task.turns), now=now, sent=sent)


def score_episode(
    task: Task,
    gold: Mapping[str, Any],
    ep: Mapping[str, Any],
    tools: dict[str, ToolRecord] | None = None,
    *,
    now: datetime | None = None,
) -> ScoredEpisode:
    """Pass/fail and diagnostics of one episode against the task and its executed gold program, the answer judged
    by what it claims against what the model saw (`synthesis.facts.check_answer`). With `tools`, arguments compare
    after the tools' canonicalisation (documented defaults, number and text forms)."""
    facts = [Fact(**f) for f in gold.get("facts", [])]
    seen = seen_in(task, ep, now)
    calls = ep.get("calls", [])
    valid = [c for c in calls if c.get("valid")]
    called = [c["tool"] for c in valid]
    gold_calls = gold.get("calls", [])
    gold_tools = [c["tool"] for c in gold_calls]
    must = task.must_call if task.must_call is not None else gold_tools
    final = ep.get("final_answer", "") if ep.get("status") == "answered" else ""
    fc = check_answer(final, facts, seen)
    checks: dict[str, bool] = {"answered": ep.get("status") == "answered"}
    if task.category == "irrelevance":
        checks["no_call"] = not calls
        checks["refusal"] = refuses(final, facts, seen)
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
            checks["clarify"] = (
                first.get("user_turn") == 0
                and first.get("calls_before", 1) == 0
                and asks(str(first.get("content", "")), task.clarify.ask_keywords)
            )
    passed = all(checks.values())
    cset, gset = set(called), set(gold_tools)
    precision = len(cset & gset) / len(cset) if cset else (1.0 if not gset else 0.0)
    recall = len(cset & gset) / len(gset) if gset else 1.0
    arg_hits = arg_total = prov_hits = prov_total = 0
    steps = {s.id: s for s in task.gold}
    for g in gold_calls:
        candidates = [(i, c) for i, c in enumerate(valid) if c["tool"] == g["tool"] and c.get("args") is not None]
        best: tuple[int, dict[str, Any]] | None = None
        best_args: dict[str, Any] = {}
        best_n = -1
        names = list(g["args"])
        gargs = _arg_values(g["tool"], g["args"], names, tools)
        for i, c in candidates:
            cargs = _arg_values(g["tool"], c["args"], names, tools)
            n = sum(1 for k in names if cargs[k] is not None and cargs[k] == gargs[k])
            if n > best_n:
                best, best_n, best_args = (i, c), n, cargs
        arg_total += len(names)
        arg_hits += max(0, best_n)
        step = steps.get(g["step"])
        for name, src in step.args.items() if step else []:
            if not isinstance(src, FromArg):
                continue
            prov_total += 1
            if best is None or best_args.get(name) is None or best_args.get(name) != gargs.get(name):
                continue
            source_tool = steps[src.from_].tool
            if any(c["tool"] == source_tool and c["outcome"] == "ok" for c in valid[: best[0]]):
                prov_hits += 1
    return {
        "task": task.id,
        "trial": ep.get("trial", 0),
        "category": task.category,
        "passed": passed,
        "checks": checks,
        "failed_checks": [c for c, ok in checks.items() if not ok],
        "failure": failure_reason(ep, checks),
        "facts_hit": fc.hits,
        "facts_total": fc.total,
        "rejected": fc.rejected,
        "missing": [f"{f.kind}:{f.value}" for f in fc.missing],
        "calls": len(calls),
        "gold_calls": len(gold_calls),
        "invalid_calls": len(calls) - len(valid),
        "tool_precision": precision,
        "tool_recall": recall,
        "arg_accuracy": arg_hits / arg_total if arg_total else None,
        "provenance_accuracy": prov_hits / prov_total if prov_total else None,
        "refused": task.category == "irrelevance" and checks.get("no_call", False) and checks.get("refusal", False),
        "tokens": ep.get("tokens", {}).get("prompt", 0) + ep.get("tokens", {}).get("completion", 0),
        "model_ms": ep.get("model_ms", 0.0),
        "harness_ms": ep.get("harness_ms", 0.0),
        "status": ep.get("status", ""),
        "replay_misses": ep.get("replay_misses", 0),
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


def wilson_ci(values: list[float], *, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a pass rate over tasks (each value a task's pass^k or pass@k in [0, 1]).
    Unlike a bootstrap it does not collapse when every task agrees: 8 of 8 passed gives [0.68, 1.00]."""
    n = len(values)
    if not n:
        return (0.0, 1.0)
    p = min(1.0, max(0.0, sum(values) / n))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


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


def summarise(scored: list[ScoredEpisode], k: int, *, seed: int = 0) -> Summary:
    """Aggregates of a group of scored episodes (tasks with their trials)."""
    by_task: dict[str, list[ScoredEpisode]] = defaultdict(list)
    for s in scored:
        by_task[s["task"]].append(s)
    hat = [pass_hat_k(len(v), sum(x["passed"] for x in v), k) for v in by_task.values()]
    at = [pass_at_k(len(v), sum(x["passed"] for x in v), k) for v in by_task.values()]
    gold = [s["gold_calls"] for s in scored]
    calls = [s["calls"] for s in scored]
    return {
        "tasks": len(by_task),
        "episodes": len(scored),
        "pass_hat_k": round(mean(hat), 4) if hat else 0.0,
        "pass_hat_k_ci": wilson_ci(hat),
        "pass_at_k": round(mean(at), 4) if at else 0.0,
        "pass_at_k_ci": wilson_ci(at),
        "success_rate": round(mean(s["passed"] for s in scored), 4) if scored else 0.0,
        "tool_precision": _avg([s["tool_precision"] for s in scored]),
        "tool_recall": _avg([s["tool_recall"] for s in scored]),
        "arg_accuracy": _avg([s["arg_accuracy"] for s in scored]),
        "provenance_accuracy": _avg([s["provenance_accuracy"] for s in scored]),
        "calls_per_task": _avg([float(c) for c in calls]),
        "gold_calls_per_task": _avg([float(g) for g in gold]),
        "calls_vs_gold": round(sum(calls) / sum(gold), 4) if sum(gold) else None,
        "invalid_calls": sum(s["invalid_calls"] for s in scored),
        "tokens_per_task": _avg([float(s["tokens"]) for s in scored]),
        "model_ms_per_task": _avg([float(s["model_ms"]) for s in scored]),
        "harness_ms_per_task": _avg([float(s["harness_ms"]) for s in scored]),
        "agent_errors": sum(1 for s in scored if s["status"] == "agent_error"),
        "loops": sum(1 for s in scored if s["status"] == "loop"),
        "replay_misses": sum(s["replay_misses"] for s in scored),
        "replay_miss_episodes": sum(1 for s in scored if s["replay_misses"]),
        "failures": dict(sorted(Counter(f for s in scored if (f := s["failure"])).items())),
    }


def aggregate(scored: list[ScoredEpisode], k: int, *, seed: int = 0) -> Scores:
    """Overall, per category, per provider and per number of gold calls summaries, and the irrelevance refusal
    rate."""
    cats: dict[str, list[ScoredEpisode]] = defaultdict(list)
    provs: dict[str, list[ScoredEpisode]] = defaultdict(list)
    sizes: dict[str, list[ScoredEpisode]] = defaultdict(list)
    for s in scored:
        cats[s["category"]].append(s)
        sizes[gold_bucket(s["gold_calls"])].append(s)
        for p in s["providers"]:
            provs[p].append(s)
    irr = cats.get("irrelevance", [])
    return {
        "k": k,
        "overall": summarise(scored, k, seed=seed),
        "by_category": {c: summarise(v, k, seed=seed) for c, v in sorted(cats.items())},
        "by_provider": {p: summarise(v, k, seed=seed) for p, v in sorted(provs.items())},
        "by_gold_calls": {b: summarise(v, k, seed=seed) for b, v in sorted(sizes.items())},
        "irrelevance_refusal_rate": round(float(mean(s["refused"] for s in irr)), 4) if irr else None,
    }
