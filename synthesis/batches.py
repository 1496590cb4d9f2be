"""Trajectory batches requested over HTTP: plain functions that create, run and read batches (the API runs
them in its process; the records land in the store, so any API process can stream them)."""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import httpx

from core.errors import Conflict, InvalidInput
from core.settings import Settings
from execution.executor import Executor
from execution.limits import economy_for
from graph.models import utcnow
from graph.store import GraphStore
from synthesis.engine import SHAPES, synthesize

ACTIVE = ("queued", "running")


def new_batch(store: GraphStore, settings: Settings, team: str, *, count: int, shapes: list[str] | None = None,
              min_steps: int = 1, max_steps: int = 6, api_ids: list[str] | None = None, seed: int = 7,
              fmt: str = "trl", source: str = "fresh") -> dict[str, Any]:
    limits = settings.batches
    if not 1 <= count <= limits.max_count:
        raise InvalidInput(f"count must be between 1 and {limits.max_count} for a team",
                           locations=[{"pointer": "/count", "message": "out of range"}])
    bad = [s for s in shapes or [] if s not in SHAPES]
    if bad:
        raise InvalidInput(f"unknown shapes {bad}; choose from {', '.join(SHAPES)}",
                           locations=[{"pointer": "/shapes", "message": "unknown shape"}])
    if not 1 <= min_steps <= max_steps <= 6:
        raise InvalidInput("steps must satisfy 1 <= min_steps <= max_steps <= 6",
                           locations=[{"pointer": "/max_steps", "message": "out of range"}])
    running = [b for b in store.list_batches(team, limit=200) if b["status"] in ACTIVE]
    if len(running) >= limits.max_concurrent:
        raise Conflict(f"team {team!r} already has {len(running)} batches running (limit {limits.max_concurrent}); "
                       "wait for one to finish")
    batch = {"id": "tb_" + uuid.uuid4().hex[:12], "team": team, "status": "queued", "count": count,
             "shapes": shapes or list(SHAPES), "min_steps": min_steps, "max_steps": max_steps, "api_ids": api_ids or [],
             "seed": seed, "format": fmt, "source": source, "created_at": utcnow(), "produced": 0, "discarded": 0,
             "calls": 0, "message": ""}
    store.save_batch(batch)
    return batch


async def run_batch(store: GraphStore, settings: Settings, batch_id: str, *,
                    transport: httpx.AsyncBaseTransport | None = None,
                    transient: tuple[type[BaseException], ...] = ()) -> dict[str, Any]:
    """Produce a batch. Any error (or cancellation) closes it as failed with the reason, which also frees the
    team's concurrency slot; it is never left `running`. Errors of the `transient` types (a dependency that is
    coming back, for a caller that runs the batch again) are raised without closing it."""
    batch = store.get_batch(batch_id)
    if batch is None:
        raise InvalidInput(f"no batch {batch_id}")
    batch.update(status="running", started_at=utcnow())
    store.save_batch(batch)
    try:
        if batch["source"] == "pool":
            records = _from_pool(store, batch)
            batch["message"] = f"{len(records)} trajectories drawn from the stored pool"
        else:
            apis = {a.id: a for a in store.list_apis(limit=100_000)[0]}
            executor = Executor(settings, economy_for(settings), apis, transport=transport)
            try:
                out = await synthesize(store, settings, executor, count=batch["count"], shapes=tuple(batch["shapes"]),
                                       min_steps=batch["min_steps"], max_steps=batch["max_steps"], seed=batch["seed"],
                                       api_ids=batch["api_ids"] or None)
            finally:
                await executor.aclose()
            records = [r.to_json() for r in out["records"]]
            batch.update(discarded=len(out["discarded"]), calls=out["calls"], snapshot=out["snapshot"],
                         requeued_links=len(out["requeued_links"]))
            if len(records) < batch["count"]:
                batch["message"] = (f"the verified graph yielded {len(records)} distinct executable trajectories "
                                    f"of {batch['count']} requested; verify more links or widen the shapes")
        store.add_trajectories(batch["id"], records)
        batch.update(status="completed", produced=len(records), finished_at=utcnow())
    except asyncio.CancelledError:
        batch.update(status="failed", message="cancelled: the process stopped before the batch finished",
                     finished_at=utcnow())
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


def _from_pool(store: GraphStore, batch: dict[str, Any]) -> list[dict[str, Any]]:
    pool, _ = store.list_trajectories(None, 0, 100_000)
    seen: set[str] = set()
    fit = []
    for r in pool:
        if r["id"] in seen or r["shape"] not in batch["shapes"]:
            continue
        if not batch["min_steps"] <= r["n_steps"] <= batch["max_steps"]:
            continue
        seen.add(r["id"])
        fit.append(r)
    rnd = random.Random(batch["seed"])
    rnd.shuffle(fit)
    return [{**r, "seq": i} for i, r in enumerate(fit[: batch["count"]])]
