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
steps, each fed by the previous ones), `fan_in` (a final call that needs two lookups of its route, the last
step's and an earlier one's, neither enough alone), `parallel` (two calls fed by one root, combined in the
answer), `conditional` (a second lookup made only when the first result's value passes a threshold the request
states). Plans are drawn a wave at a time; a shape whose plans gave no record is drawn again, so the kept shapes
follow the wanted shares.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

from core.clock import world_at
from core.settings import Settings
from execution.executor import Executor
from graph.models import utcnow
from graph.store import GraphStore
from synthesis.build import (
    DISTRACTORS,
    MAX_RENDERED_CHARS,
    RecordError,
    build_record,
    draw_instant,
    is_near_duplicate,
    record_id,
    snapshot_id,
    validate_arguments,
)
from synthesis.contamination import BenchFingerprints
from synthesis.conversions import with_conversions
from synthesis.demand import DEFERRED, DemandGate, LinkVerifier
from synthesis.execute import TRIM_RULE, Outcome, execute_plan
from synthesis.plans import (
    WHOLE_PAGE,
    PlanSampler,
    VerifiedGraph,
    fan_in_targets,
    route_check,
    sample_plans,
)
from synthesis.quality import scope_problems
from synthesis.records import SHAPES, Plan, SynthesisResult, Trajectory
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
    "fan_in_targets",
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


class _Run:
    """One `synthesize` call's state: the graph (grown when demand reaches new tools), the plan pool, what was
    kept and discarded, and the upstream calls spent."""

    def __init__(
        self,
        store: GraphStore,
        settings: Settings,
        executor: Executor,
        *,
        count: int,
        seed: int,
        api_ids: list[str] | None,
        unverified: bool,
        extras: dict[str, float] | None,
        guard: BenchFingerprints | None,
    ) -> None:
        self.store, self.settings, self.executor = store, settings, executor
        self.count, self.seed, self.api_ids = count, seed, api_ids
        self.unverified, self.extras, self.guard = unverified, extras, guard
        self.gate: DemandGate | None = None
        self.graph: VerifiedGraph
        self.snap = ""
        self.kept: list[Trajectory] = []
        #: the kept records by tool chain: a near duplicate has the same chain (`is_near_duplicate`)
        self.by_chain: dict[tuple[str, ...], list[Trajectory]] = {}
        self.shingles: dict[str, set[str]] = {}
        self.discarded: list[dict[str, str]] = []
        self.flagged: set[str] = set()
        self.calls = 0
        self.attempted = 0
        self.pool: list[Plan] = []
        self.deferred: list[Plan] = []
        self.made: Counter[str] = Counter()
        self.quota = _quota(DEFAULT_EXTRAS if extras is None else extras, count)
        self.normal_needed = max(1, count - self.quota.get("irrelevance", 0)) if count > 1 else count
        self.sem = asyncio.Semaphore(settings.verify.concurrency)

    async def open(self, verifier: LinkVerifier | None) -> None:
        """The graph to draw from (pending links too when demand drives verification) and its value pools."""
        if verifier is not None and not self.unverified:
            await verifier.discover()
            self.graph = self._pending(verifier)
            self.gate = DemandGate(self.graph, verifier)
        else:
            self.graph = VerifiedGraph(self.store, self.settings, self.api_ids, unverified=self.unverified)
        self.snap = snapshot_id(self.graph)
        self.calls = await self.graph.harvest(self.executor)

    def _pending(self, verifier: LinkVerifier) -> VerifiedGraph:
        """The pending graph of demand-driven synthesis, with each undecided link's echo signal read from what
        discovery sampled (graph.echoes, VerifiedGraph.link_prior)."""
        return VerifiedGraph(
            self.store,
            self.settings,
            self.api_ids,
            pending=True,
            samples=verifier.samples(),
            sample_args=verifier.sample_args(),
        )

    async def draw_more(self, sampler: PlanSampler, wave: int) -> bool:
        """A wave's plans into the pool, drawn as the previous waves' outcomes come in (the shapes whose plans gave
        no record are drawn again: `PlanSampler.missed`); False when the plan space is exhausted."""
        more = sampler.more(wave)
        if not more and self.gate is not None and self.gate.open_doubtful():
            # the draw over the links the echo signal does not doubt ran out: the plans that wait for a doubted
            # one run now, their links asked about first, and the draw goes on after them
            sampler.resume()  # no roots: still exhausted
            waited, self.deferred = self.deferred, []
            self.pool.extend(waited)
            more = sampler.more(wave)
            if waited and not more:
                return True
        if not more and self.gate is not None and await self.gate.expand():
            # links verified on demand reach tools no sampling could call: sampled now, their candidates
            # derived, the draw goes on over the grown graph
            self.graph = self._pending(self.gate.verifier)
            self.calls += await self.graph.harvest(self.executor)
            self.gate.graph = self.graph
            sampler.rebase(self.graph)
            more = sampler.more(wave)
        if not more:
            return False
        self.pool.extend(with_conversions(p, self.graph.tools) for p in more)
        return True

    async def admit(self, sampler: PlanSampler, chunk: list[tuple[int, Plan]]) -> list[tuple[int, Plan]]:
        """Verify what this wave will traverse; a plan over a link that did not come out verified never runs."""
        if self.gate is None:
            return chunk
        admitted = await self.gate.admit([p for _, p in chunk])
        for (_, plan), why in zip(chunk, admitted, strict=True):
            if why is not None and why.startswith(DEFERRED):
                # not a failure: it keeps its slot, so the draw moves on to other plans, and runs once the draw
                # over the undoubted links runs out (draw_more)
                self.deferred.append(plan)
            elif why is not None:
                self.discarded.append({"plan": plan.key, "reason": why})
                sampler.release(plan)
        return [c for c, why in zip(chunk, admitted, strict=True) if why is None]

    async def one(self, i: int, plan: Plan) -> tuple[int, Plan, Outcome, random.Random]:
        local = random.Random(f"{self.seed}-{i}")
        instant = draw_instant(self.settings, random.Random(f"{self.seed}-{i}-clock"))
        async with self.sem:
            with world_at(instant):
                outcome = await execute_plan(plan, self.executor, local, graph=self.graph)
        outcome.instant = instant
        return i, plan, outcome, local

    def keep(self, plan: Plan, outcome: Outcome, local: random.Random, sampler: PlanSampler) -> None:
        """One executed plan: recorded, or discarded with its reason (its failed links flagged); a plan that gave
        no record has its shape drawn again (`PlanSampler.missed`)."""
        self.attempted += 1
        self.calls += outcome.calls
        if outcome.steps is None:
            self.discarded.append({"plan": plan.key, "reason": outcome.reason})
            self.flagged.update(outcome.failed_links)
            sampler.missed(plan)
        elif len(self.kept) < self.normal_needed and not self._record(plan, outcome, local):
            sampler.missed(plan)

    def _record(self, plan: Plan, outcome: Outcome, local: random.Random) -> bool:
        """Whether the executed plan's record was kept (else discarded with its reason)."""
        plan = outcome.plan or plan  # a conditional plan as it ran
        try:
            with world_at(outcome.instant):
                record = build_record(plan, outcome, self.graph, local, seed=self.seed, snapshot=self.snap)
        except RecordError as exc:
            self.discarded.append({"plan": plan.key, "reason": str(exc)})
            return False
        untrue = scope_problems(record)  # a count or extreme not true of the whole response asked about
        if untrue:
            self.discarded.append({"plan": plan.key, "reason": untrue[0]})
            return False
        same_chain = self.by_chain.setdefault(tuple(s.tool for s in record.steps), [])
        if is_near_duplicate(record, same_chain, shingles=self.shingles):
            self.discarded.append({"plan": plan.key, "reason": "near duplicate"})
            return False
        leak = self.guard.is_contaminated(record) if self.guard is not None else None
        if leak:
            self.discarded.append({"plan": plan.key, "reason": f"benchmark overlap: {leak}"})
            return False
        self.kept.append(record)
        same_chain.append(record)
        return True

    async def waves(self, sampler: PlanSampler) -> None:
        """Plans run in waves until enough are kept or the plan space is exhausted."""
        wave = max(8, self.settings.verify.concurrency * 2)
        start = 0
        while len(self.kept) < self.normal_needed:
            if start >= len(self.pool) and not await self.draw_more(sampler, wave):
                break  # the plan space is exhausted
            chunk = [(i, self.pool[i]) for i in range(start, min(start + wave, len(self.pool)))]
            start += len(chunk)  # a draw of fewer than a wave: the next wave starts at the first plan not run
            chunk = await self.admit(sampler, chunk)
            results = await asyncio.gather(*(self.one(i, p) for i, p in chunk))
            for _i, plan, outcome, local in sorted(results, key=lambda r: r[0]):
                self.keep(plan, outcome, local, sampler)

    async def special_samples(self, rnd: random.Random) -> None:
        """Hard-negative, clarification and error-recovery samples in place of kept records, to their quotas."""
        kept, graph, made, quota = self.kept, self.graph, self.made, self.quota
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
                er, spent = await make_error_recovery(rec, graph, self.executor)
                self.calls += spent
                if er is not None:
                    kept[i] = er
                    made["error_recovery"] += 1

    async def extras_and_order(self, progress: Any) -> None:
        """The special samples and irrelevance turns, then the records numbered in order."""
        rnd = random.Random(f"{self.seed}-extras")
        kept = self.kept
        if kept and len(kept) < self.normal_needed:  # the graph gave fewer: keep the configured shares of what there is
            scale = len(kept) / self.normal_needed
            self.quota = {k: round(v * scale) for k, v in self.quota.items()}
        await self.special_samples(rnd)
        if len(kept) > 1 or self.count > 1:
            while len(kept) < self.count and self.made["irrelevance"] < self.quota.get("irrelevance", 0) and kept:
                pos = 1 + rnd.randrange(len(kept))
                kept.insert(pos, make_irrelevance(self.graph, rnd, seed=self.seed, snapshot=self.snap))
                self.made["irrelevance"] += 1
        for n, rec in enumerate(kept):
            rec.seq = n
            if progress:
                progress(rec)

    def requeue(self) -> None:
        """Verified links that failed inside a trajectory are queued for re-verification."""
        for link_id in set() if self.unverified else self.flagged:
            link = self.store.get_link(link_id)
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
                self.store.save_link(link.model_copy(update={"needs_reverify": True, "history": history[-20:]}))
        if self.gate is not None:
            # the verified graph the records were drawn from, as it stands once demand has decided its links
            self.snap = snapshot_id(self.graph)
            for rec in self.kept:
                rec.metadata.graph_snapshot = self.snap

    def result(self) -> SynthesisResult:
        kept, count = self.kept, self.count
        normal = sum(1 for r in kept if r.kind != "irrelevance")
        shortfall = (
            f"{len(kept)} of {count} requested: the "
            + ("candidate" if self.unverified else "verified")
            + f" graph yielded {normal} distinct executable trajectories of {self.normal_needed} needed "
            f"({len(self.pool)} plans drawn, the plan space exhausted)"
            if len(kept) < count
            else ""
        )
        return SynthesisResult(
            records=kept,
            discarded=self.discarded,
            calls=self.calls,
            shortfall=shortfall,
            verification=self.gate.figures() if self.gate is not None else None,
            snapshot=self.snap,
            requeued_links=sorted(self.flagged),
            planned=len(self.pool),
            attempted=self.attempted,
            extras=dict(self.made),
            extras_wanted=self.quota,
            extras_configured=dict(DEFAULT_EXTRAS if self.extras is None else self.extras),
            pools={f"{t}.{p}": len(v) for (t, p), v in self.graph.pools.items()},
        )


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
) -> SynthesisResult:
    """Sample, execute and record up to `count` trajectories; failures are discarded with their reason and the
    links that failed inside a trajectory are queued for re-verification. Plans run in waves until enough are
    kept, so no call is spent beyond need. `extras` sets the shares of irrelevance, clarification,
    error-recovery and hard-negative samples (DEFAULT_EXTRAS when None; {} for none). `guard` (the benchmark's
    fingerprints) discards any trajectory that reproduces a benchmark task: same tool sequence with the same user
    values, or a near-duplicate request. With a `verifier` (synthesis.demand), verification is driven by demand:
    plans are proposed over the links no run has refuted, the links on each wave's plans are verified first, and
    only plans whose links all came out verified run. Plans are drawn until enough are kept or the plan space is
    exhausted (`shortfall` then says how many are missing)."""
    run = _Run(
        store,
        settings,
        executor,
        count=count,
        seed=seed,
        api_ids=api_ids,
        unverified=unverified,
        extras=extras,
        guard=guard,
    )
    await run.open(verifier)
    sampler = PlanSampler(run.graph, shapes=shapes, min_steps=min_steps, max_steps=max_steps, seed=seed, target=count)
    # plans are drawn a wave at a time while too few are kept, until the plan space runs out
    await run.waves(sampler)
    await run.extras_and_order(progress)
    run.requeue()
    return run.result()


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
