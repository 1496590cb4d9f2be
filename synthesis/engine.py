"""Trajectories from the verified graph, in stages with typed results:

1. `synthesis.plans`   — `VerifiedGraph` (verified links, user-value pools harvested from the world) and
   `sample_plans`: a question's route over verified links (`Plan`, with why it was chosen), as a careful agent
   takes it (`synthesis.routes`);
2. `synthesis.execute` — `execute_plan`: the plan run for real through the executor (`Outcome` with
   `TrajectoryStep`s), rows never reordered, the user's row singled out by the query or their words;
3. `synthesis.build`   — `build_record`: the question, the answer and its facts (`Trajectory`, `Question`,
   `FactRecord`), checked with the benchmark's judge;
4. `synthesis.samples` — irrelevance, clarification, error-recovery and hard-negative samples.

`synthesize` runs the stages in waves until enough records are kept. Shapes: `single` (one call), `chain` (2-6
steps, each fed by the previous ones), `fan_in` (a step fed by two upstream steps about the same place or
entity), `parallel` (two calls fed by one root, combined in the answer).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

from core.settings import Settings
from execution.executor import Executor
from graph.models import utcnow
from graph.store import GraphStore
from synthesis.build import (
    DISTRACTORS,
    MAX_RENDERED_CHARS,
    RecordError,
    build_record,
    is_near_duplicate,
    record_id,
    snapshot_id,
    validate_arguments,
)
from synthesis.contamination import BenchFingerprints
from synthesis.conversions import with_conversions
from synthesis.demand import DemandGate, LinkVerifier
from synthesis.execute import TRIM_RULE, Outcome, execute_plan
from synthesis.plans import (
    SHAPES,
    WHOLE_PAGE,
    PlanSampler,
    VerifiedGraph,
    fan_in_triples,
    route_check,
    sample_plans,
)
from synthesis.records import Plan, Trajectory
from synthesis.samples import (
    DEFAULT_EXTRAS,
    _quota,
    make_clarification,
    make_error_recovery,
    make_hard_negative,
    make_irrelevance,
)

__all__ = [
    "DEFAULT_EXTRAS",
    "DISTRACTORS",
    "MAX_RENDERED_CHARS",
    "SHAPES",
    "TRIM_RULE",
    "WHOLE_PAGE",
    "Outcome",
    "PlanSampler",
    "RecordError",
    "VerifiedGraph",
    "build_record",
    "distribution",
    "execute_plan",
    "fan_in_triples",
    "is_near_duplicate",
    "make_clarification",
    "make_error_recovery",
    "make_hard_negative",
    "make_irrelevance",
    "record_id",
    "route_check",
    "sample_plans",
    "snapshot_id",
    "synthesize",
    "validate_arguments",
]


async def synthesize(
    store: GraphStore,
    settings: Settings,
    executor: Executor,
    *,
    count: int,
    shapes: tuple[str, ...] = SHAPES,
    min_steps: int = 1,
    max_steps: int = 6,
    seed: int = 7,
    api_ids: list[str] | None = None,
    progress: Any = None,
    unverified: bool = False,
    extras: dict[str, float] | None = None,
    guard: BenchFingerprints | None = None,
    verifier: LinkVerifier | None = None,
) -> dict[str, Any]:
    """Sample, execute and record up to `count` trajectories; failures are discarded with their reason and the
    links that failed inside a trajectory are queued for re-verification. Plans run in waves until enough are
    kept, so no call is spent beyond need. `extras` sets the shares of irrelevance, clarification,
    error-recovery and hard-negative samples (DEFAULT_EXTRAS when None; {} for none). `guard` (the benchmark's
    fingerprints) discards any trajectory that reproduces a benchmark task: same tool sequence with the same user
    values, or a near-duplicate request. With a `verifier` (synthesis.demand), verification is driven by demand:
    plans are proposed over the links no run has refuted, the links on each wave's plans are verified first, and
    only plans whose links all came out verified run. Plans are drawn until enough are kept or the plan space is
    exhausted (`shortfall` then says how many are missing)."""
    gate: DemandGate | None = None
    if verifier is not None and not unverified:
        await verifier.discover()
        graph = VerifiedGraph(store, settings, api_ids, pending=True)
        gate = DemandGate(graph, verifier)
    else:
        graph = VerifiedGraph(store, settings, api_ids, unverified=unverified)
    snap = snapshot_id(graph)
    kept: list[Trajectory] = []
    shingles: dict[str, set[str]] = {}
    discarded: list[dict[str, str]] = []
    calls = await graph.harvest(executor)
    quota = _quota(DEFAULT_EXTRAS if extras is None else extras, count)
    normal_needed = max(1, count - quota.get("irrelevance", 0)) if count > 1 else count
    sampler = PlanSampler(graph, shapes=shapes, min_steps=min_steps, max_steps=max_steps, seed=seed)
    # the first draw is what most counts need; more are drawn while too few are kept, until the plan space runs out
    pool = [with_conversions(p, graph.tools) for p in sampler.more(int(count * 1.6) + 5)]
    sem = asyncio.Semaphore(settings.verify.concurrency)

    async def one(i: int, plan: Plan) -> tuple[int, Plan, Outcome, random.Random]:
        local = random.Random(f"{seed}-{i}")
        async with sem:
            return i, plan, await execute_plan(plan, executor, local, graph=graph), local

    flagged: set[str] = set()
    wave = max(8, settings.verify.concurrency * 2)
    attempted = 0
    start = 0
    while len(kept) < normal_needed:
        if start >= len(pool):
            more = sampler.more(max(wave, 2 * (normal_needed - len(kept))))
            if not more and gate is not None and await gate.expand():
                # links verified on demand reach tools no sampling could call: sampled now, their candidates
                # derived, the draw goes on over the grown graph
                graph = VerifiedGraph(store, settings, api_ids, pending=True)
                calls += await graph.harvest(executor)
                gate.graph = graph
                sampler.rebase(graph)
                more = sampler.more(max(wave, 2 * (normal_needed - len(kept))))
            if not more:
                break  # the plan space is exhausted
            pool.extend(with_conversions(p, graph.tools) for p in more)
        chunk = [(i, pool[i]) for i in range(start, min(start + wave, len(pool)))]
        start += wave
        if gate is not None:
            # verify what this wave will traverse; a plan over a link that did not come out verified never runs
            admitted = await gate.admit([p for _, p in chunk])
            for (_, plan), why in zip(chunk, admitted, strict=True):
                if why is not None:
                    discarded.append({"plan": plan.key, "reason": why})
                    sampler.release(plan)
            chunk = [c for c, why in zip(chunk, admitted, strict=True) if why is None]
        results = await asyncio.gather(*(one(i, p) for i, p in chunk))
        for _i, plan, outcome, local in sorted(results, key=lambda r: r[0]):
            attempted += 1
            calls += outcome.calls
            if outcome.steps is None:
                discarded.append({"plan": plan.key, "reason": outcome.reason})
                flagged.update(outcome.failed_links)
                continue
            if len(kept) >= normal_needed:
                continue
            try:
                record = build_record(plan, outcome, graph, local, seed=seed, snapshot=snap)
            except RecordError as exc:
                discarded.append({"plan": plan.key, "reason": str(exc)})
                continue
            if is_near_duplicate(record, kept, shingles=shingles):
                discarded.append({"plan": plan.key, "reason": "near duplicate"})
                continue
            leak = guard.is_contaminated(record) if guard is not None else None
            if leak:
                discarded.append({"plan": plan.key, "reason": f"benchmark overlap: {leak}"})
                continue
            kept.append(record)
    rnd = random.Random(f"{seed}-extras")
    made: Counter[str] = Counter()
    if kept and len(kept) < normal_needed:  # the graph gave fewer: keep the configured shares of what there is
        scale = len(kept) / normal_needed
        quota = {k: round(v * scale) for k, v in quota.items()}
    # special samples never take the first record's place, so readers that look at one example see a plain one
    order = list(range(1, len(kept)))
    rnd.shuffle(order)
    for i in order:
        rec = kept[i]
        if made["hard_negative"] < quota.get("hard_negative", 0) and rec.n_steps >= 2:
            hn = make_hard_negative(rec, graph, rnd)
            if hn is not None:
                kept[i] = hn
                made["hard_negative"] += 1
                continue
        if made["clarification"] < quota.get("clarification", 0):
            cl = make_clarification(rec, graph, rnd)
            if cl is not None:
                kept[i] = cl
                made["clarification"] += 1
                continue
        if made["error_recovery"] < quota.get("error_recovery", 0):
            er, spent = await make_error_recovery(rec, graph, executor)
            calls += spent
            if er is not None:
                kept[i] = er
                made["error_recovery"] += 1
    if len(kept) > 1 or count > 1:
        while len(kept) < count and made["irrelevance"] < quota.get("irrelevance", 0) and kept:
            pos = 1 + rnd.randrange(len(kept))
            kept.insert(pos, make_irrelevance(graph, rnd, seed=seed, snapshot=snap))
            made["irrelevance"] += 1
    for n, rec in enumerate(kept):
        rec.seq = n
        if progress:
            progress(rec)
    for link_id in set() if unverified else flagged:
        link = store.get_link(link_id)
        if link is not None and link.status == "verified":
            history = [
                *link.history,
                {
                    "at": utcnow(),
                    "run": "synthesis",
                    "status": "verified",
                    "reason": "failed inside a trajectory; queued for re-verification",
                },
            ]
            store.save_link(link.model_copy(update={"needs_reverify": True, "history": history[-20:]}))
    if gate is not None:
        # the verified graph the records were drawn from, as it stands once demand has decided its links
        snap = snapshot_id(graph)
        for rec in kept:
            rec.metadata.graph_snapshot = snap
    normal = sum(1 for r in kept if r.kind != "irrelevance")
    shortfall = (
        f"{len(kept)} of {count} requested: the "
        + ("candidate" if unverified else "verified")
        + f" graph yielded {normal} distinct executable trajectories of {normal_needed} needed "
        f"({len(pool)} plans drawn, the plan space exhausted)"
        if len(kept) < count
        else ""
    )
    return {
        "records": kept,
        "discarded": discarded,
        "calls": calls,
        "shortfall": shortfall,
        "verification": gate.figures() if gate is not None else None,
        "snapshot": snap,
        "requeued_links": sorted(flagged),
        "planned": len(pool),
        "attempted": attempted,
        "extras": dict(made),
        "extras_wanted": quota,
        "extras_configured": dict(DEFAULT_EXTRAS if extras is None else extras),
        "pools": {f"{t}.{p}": len(v) for (t, p), v in graph.pools.items()},
    }


def distribution(records: list[Trajectory], graph_links: int, graph_tools: int) -> dict[str, Any]:
    shapes = Counter(r.shape for r in records)
    lengths = Counter(r.n_steps for r in records)
    tools = Counter(s.tool for r in records for s in r.steps)
    links = Counter(lk for r in records for lk in r.metadata.verified_links)
    kinds = Counter(r.kind for r in records)
    return {
        "trajectories": len(records),
        "shapes": dict(shapes),
        "lengths": dict(sorted(lengths.items())),
        "kinds": dict(kinds),
        "tools_used": len(tools),
        "tool_coverage": round(len(tools) / max(1, graph_tools), 3),
        "links_used": len(links),
        "link_coverage": round(len(links) / max(1, graph_links), 3),
        "most_used_tools": tools.most_common(5),
        "tool_counts": dict(tools),
    }
