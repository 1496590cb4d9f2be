"""Trajectory batches requested over HTTP: plain functions that create, run and read batches (the API runs
them in its process; the records land in the store, so any API process can stream them)."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import httpx
import yaml

from core.errors import BudgetExhausted, Conflict, InvalidInput
from core.settings import Settings
from execution.executor import Executor
from execution.limits import Allowance, Economy, economy_for, seconds_to_tomorrow, team_allowance
from graph.models import RunRecord, utcnow
from graph.store import GraphStore, all_apis
from synthesis.contamination import BenchFingerprints
from synthesis.demand import LinkVerifier
from synthesis.engine import SHAPES, synthesize

ACTIVE = ("queued", "running")


class ClosingVerifier(LinkVerifier, Protocol):
    """A verifier a batch can close when it is done (verification.runs.DemandVerifier: ends its run record)."""

    run: RunRecord

    async def close(self) -> Any: ...


#: Builds the verifier of a batch that verifies on demand, from the batch's call economy, transport and APIs. The
#: caller (api, workers) hands it in: synthesis may not import verification (tests/test_architecture.py).
VerifierFactory = Callable[[Economy, httpx.AsyncBaseTransport | None, list[str] | None], ClosingVerifier]

#: The benchmark's shipped tasks, read as data (synthesis does not import the benchmark package).
BENCH_TASKS = Path(__file__).resolve().parents[1] / "bench" / "tasks"


@lru_cache(maxsize=8)
def _guard_of(folder: Path) -> BenchFingerprints:
    entries: list[tuple[list[str], list[Any], str]] = []
    labels: list[str] = []
    for path in sorted([*folder.rglob("*.yaml"), *folder.rglob("*.yml")]):
        for task in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            if not isinstance(task, dict):
                continue
            gold = [s for s in task.get("gold") or [] if isinstance(s, dict)]
            users = [
                a["user"]
                for s in gold
                for a in (s.get("args") or {}).values()
                if isinstance(a, dict) and set(a) == {"user"}
            ]
            entries.append(([str(s.get("tool")) for s in gold], users, "\n".join(map(str, task.get("turns") or []))))
            labels.append(str(task.get("id", f"{path.name}[{len(labels)}]")))
    return BenchFingerprints(entries, labels)


def benchmark_guard(settings: Settings) -> BenchFingerprints:
    """Fingerprints of every benchmark task (`batches.benchmark_tasks`, default the shipped KOPA-Bench tasks):
    the same triples as bench.overlap.fingerprints, so every synthesis path refuses the same trajectories."""
    return _guard_of((settings.batches.benchmark_tasks or BENCH_TASKS).resolve())


async def synthesize_guarded(
    store: GraphStore, settings: Settings, executor: Executor, **kwargs: Any
) -> dict[str, Any]:
    """`synthesize` with the benchmark contamination guard, the one synthesis path of the CLI, REST and Celery:
    a trajectory that reproduces a benchmark task is discarded, never kept. Adds `benchmark_overlap`."""
    guard = benchmark_guard(settings)
    result = await synthesize(store, settings, executor, guard=guard, **kwargs)
    overlapping = sum(1 for d in result["discarded"] if str(d.get("reason", "")).startswith("benchmark overlap"))
    result["benchmark_overlap"] = {
        "benchmark_tasks": len(guard.labels),
        "kept_overlapping": 0,
        "discarded_as_overlapping": overlapping,
        "rule": "same tool sequence with the same user values, or a near-duplicate request",
    }
    return result


def new_batch(
    store: GraphStore,
    settings: Settings,
    team: str,
    *,
    count: int,
    shapes: list[str] | None = None,
    min_steps: int = 1,
    max_steps: int = 6,
    api_ids: list[str] | None = None,
    seed: int = 7,
    fmt: str = "trl",
    source: str = "fresh",
    on_demand: bool = False,
) -> dict[str, Any]:
    """Validate a batch request and save it queued. `on_demand`: the links its plans traverse are verified first
    (no verification run needed); a batch drawn from the stored pool executes nothing, so it cannot."""
    limits = settings.batches
    if not 1 <= count <= limits.max_count:
        raise InvalidInput(
            f"count must be between 1 and {limits.max_count} for a team",
            locations=[{"pointer": "/count", "message": "out of range"}],
        )
    bad = [s for s in shapes or [] if s not in SHAPES]
    if bad:
        raise InvalidInput(
            f"unknown shapes {bad}; choose from {', '.join(SHAPES)}",
            locations=[{"pointer": "/shapes", "message": "unknown shape"}],
        )
    if not 1 <= min_steps <= max_steps <= 6:
        raise InvalidInput(
            "steps must satisfy 1 <= min_steps <= max_steps <= 6",
            locations=[{"pointer": "/max_steps", "message": "out of range"}],
        )
    if on_demand and source == "pool":
        raise InvalidInput(
            "on_demand verifies the links of new trajectories; a batch drawn from the stored pool executes nothing: "
            'send source "fresh" or leave on_demand out',
            locations=[{"pointer": "/on_demand", "message": "not with source pool"}],
        )
    running = [b for b in store.list_batches(team, limit=200) if b["status"] in ACTIVE]
    if len(running) >= limits.max_concurrent:
        raise Conflict(
            f"team {team!r} already has {len(running)} batches running (limit {limits.max_concurrent}); "
            "wait for one to finish"
        )
    if source != "pool":  # a pool batch executes nothing, so it costs no upstream call
        allowance = team_allowance(economy_for(settings, store), settings, team)
        if allowance is not None and allowance.spent():
            raise BudgetExhausted(
                f"{allowance.refusal}: {allowance.used():,} of {allowance.limit:,} calls used today; "
                'ask again then, or draw stored trajectories with source "pool"',
                retry_after_s=seconds_to_tomorrow(),
            )
    batch = {
        "id": "tb_" + uuid.uuid4().hex[:12],
        "team": team,
        "status": "queued",
        "count": count,
        "shapes": shapes or list(SHAPES),
        "min_steps": min_steps,
        "max_steps": max_steps,
        "api_ids": api_ids or [],
        "seed": seed,
        "format": fmt,
        "source": source,
        "on_demand": on_demand,
        "created_at": utcnow(),
        "produced": 0,
        "discarded": 0,
        "calls": 0,
        "message": "",
    }
    store.save_batch(batch)
    return batch


async def run_batch(
    store: GraphStore,
    settings: Settings,
    batch_id: str,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    transient: tuple[type[BaseException], ...] = (),
    verifier: VerifierFactory | None = None,
) -> dict[str, Any]:
    """Produce a batch. Any error (or cancellation) closes it as failed with the reason, which also frees the
    team's concurrency slot; it is never left `running`. Errors of the `transient` types (a dependency that is
    coming back, for a caller that runs the batch again) are raised without closing it. A batch that verifies
    on demand is given its verifier by `verifier` (it fails, saying so, without one)."""
    batch = store.get_batch(batch_id)
    if batch is None:
        raise InvalidInput(f"no batch {batch_id}")
    batch.update(status="running", started_at=utcnow())
    store.save_batch(batch)
    try:
        if batch["source"] == "pool":
            records = _from_pool(store, settings, batch)
            batch["message"] = f"{len(records)} trajectories drawn from the stored pool"
        else:
            if batch.get("on_demand") and verifier is None:
                raise InvalidInput("this process cannot verify on demand (no verifier was handed to run_batch)")
            apis = {a.id: a for a in all_apis(store)}
            # every upstream call of the batch, its on-demand verification included, draws from the team's budget
            shared = economy_for(settings, store)
            allowance = team_allowance(shared, settings, batch["team"])
            economy: Economy = allowance or shared
            executor = Executor(settings, economy, apis, transport=transport)
            demand = (
                verifier(economy, transport, batch["api_ids"] or None) if batch.get("on_demand") and verifier else None
            )
            if demand is not None:
                # the run is the team's: readers of other teams see it as missing (api/routes/verification.py)
                demand.run.team = batch["team"]
                # named at once: if the process dies, whoever runs the batch again closes this run (workers.tasks)
                batch["verification_run"] = demand.run.id
                store.save_batch(batch)
            try:
                out = await synthesize_guarded(
                    store,
                    settings,
                    executor,
                    count=batch["count"],
                    shapes=tuple(batch["shapes"]),
                    min_steps=batch["min_steps"],
                    max_steps=batch["max_steps"],
                    seed=batch["seed"],
                    api_ids=batch["api_ids"] or None,
                    verifier=demand,
                )
            finally:
                await executor.aclose()
                if demand is not None:
                    closed = await demand.close()
                    batch["verification_run"] = getattr(closed, "id", None)
            records = [r.to_json() for r in out["records"]]
            batch.update(
                discarded=len(out["discarded"]),
                calls=out["calls"],
                snapshot=out["snapshot"],
                requeued_links=len(out["requeued_links"]),
                benchmark_overlap=out["benchmark_overlap"]["discarded_as_overlapping"],
            )
            if out.get("verification"):
                # links asked, verified, refuted, undecided, and the upstream calls verification spent
                batch["verification"] = out["verification"]
            if allowance is not None:
                batch["budget"] = _budget_figures(allowance)
            if len(records) < batch["count"]:
                # the same words as every synthesis path ("282 of 300 requested: ..."), and what to do about it
                batch["message"] = (
                    out["shortfall"] or f"{len(records)} of {batch['count']} requested"
                ) + "; verify more links or widen the shapes"
            if allowance is not None and allowance.refused:
                # stopped calling when the budget ran out: the reason leads the message
                batch["message"] = (
                    f"stopped at the team's call budget: {allowance.refusal} "
                    f"({allowance.refused:,} calls refused); {len(records)} of {batch['count']} produced"
                )
        store.add_trajectories(batch["id"], records)
        batch.update(status="completed", produced=len(records), finished_at=utcnow())
    except asyncio.CancelledError:
        batch.update(
            status="failed", message="cancelled: the process stopped before the batch finished", finished_at=utcnow()
        )
        store.save_batch(batch)
        raise
    except transient:
        raise
    except Exception as exc:  # recorded on the batch, never lost silently
        batch.update(status="failed", message=f"{type(exc).__name__}: {exc}"[:500], finished_at=utcnow())
        store.save_batch(batch)
        raise
    store.save_batch(batch)
    return batch


def fail_batch(store: GraphStore, batch_id: str, reason: str) -> bool:
    """Mark a batch failed with the reason unless it already finished (frees the team's slot)."""
    batch = store.get_batch(batch_id)
    if batch is None or batch.get("status") not in ACTIVE:
        return False
    batch.update(status="failed", message=reason, finished_at=utcnow())
    store.save_batch(batch)
    return True


def visible_batch(store: GraphStore, batch_id: str, team: str | None) -> dict[str, Any] | None:
    """The batch when `team` may see it (None: any team, for admins); otherwise None, as if it did not exist."""
    batch = store.get_batch(batch_id)
    if batch is None or (team is not None and batch.get("team") != team):
        return None
    return batch


def _budget_figures(allowance: Allowance) -> dict[str, Any]:
    """The team's daily budget as the batch saw it: what it drew, what it was refused, what is left."""
    return {
        "daily_calls": allowance.limit,
        "drawn": allowance.drawn,
        "refused": allowance.refused,
        "left_today": allowance.left(),
        "exhausted": bool(allowance.refused) or allowance.left() <= 0,
    }


#: Batches of a team a pool batch reads (the newest first), and trajectories read per store query.
POOL_BATCHES = 10_000
POOL_CHUNK = 500


def pool_sources(store: GraphStore, settings: Settings, batch: dict[str, Any]) -> list[str]:
    """The batches a pool batch may draw from: its own team's, and those of the teams an admin shares
    (`batches.shared_pool`); never another team's otherwise."""
    teams = {batch["team"], *settings.batches.shared_pool_teams()}
    ids = {b["id"] for team in teams for b in store.list_batches(team, limit=POOL_BATCHES) if b.get("team") == team}
    ids.discard(batch["id"])
    return sorted(ids)


def _from_pool(store: GraphStore, settings: Settings, batch: dict[str, Any]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    fit = []
    for source in pool_sources(store, settings, batch):
        offset = 0
        while True:
            page, total = store.list_trajectories(source, offset, POOL_CHUNK)
            offset += len(page)
            for r in page:
                if r["id"] in seen or r["shape"] not in batch["shapes"]:
                    continue
                if not batch["min_steps"] <= r["n_steps"] <= batch["max_steps"]:
                    continue
                seen.add(r["id"])
                fit.append(r)
            if not page or offset >= total:
                break
    rnd = random.Random(batch["seed"])
    rnd.shuffle(fit)
    return [{**r, "seq": i} for i, r in enumerate(fit[: batch["count"]])]
