"""Thin Celery tasks: ids in, plain functions out. Idempotent: a redelivered task skips what its run decided.

A run is a sequence of rounds. `start_round` samples and derives (cached calls), then fans out one
`verify_source` task per source tool; the task that empties the round's pending set gives a fresh engine the whole
run's state and decides, as the in-process loop does, whether another round is needed or how the run closes.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from celery import Task
from celery.signals import worker_process_init, worker_process_shutdown
from kombu.exceptions import OperationalError as BrokerUnavailable
from neo4j.exceptions import ServiceUnavailable as Neo4jUnavailable
from neo4j.exceptions import SessionExpired
from neo4j.exceptions import TransientError as Neo4jTransient
from redis.exceptions import RedisError

from core.egress import hide_addresses
from core.errors import StoreUnavailable
from core.settings import Settings, get_settings
from execution.executor import Executor
from execution.limits import RedisEconomy
from graph.models import RunRecord, utcnow
from graph.store import GraphStore, open_store
from synthesis.batches import Batch, fail_batch, run_batch
from verification.engine import Engine
from verification.rounds import another_round, prepare_round, resume, select_links
from verification.runs import DemandVerifier, closing, fail_run, new_run, scoped_tools
from workers.celery_app import celery_app
from workers.ledger import RoundLedger

log = logging.getLogger("kopa.tasks")
_store: GraphStore | None = None
#: A dependency that is away for a while and comes back: Neo4j stopped, restarting (DatabaseUnavailable is a
#: TransientError) or out of connections; Redis (economy, pending sets) or the broker (publishing) restarting.
RETRYABLE = (
    StoreUnavailable,
    ConnectionError,
    OSError,
    RedisError,
    BrokerUnavailable,
    Neo4jUnavailable,
    SessionExpired,
    Neo4jTransient,
)
#: Waits between attempts while a dependency is away: doubling from FIRST_WAIT_S up to MAX_WAIT_S (with jitter),
#: so a task resumes within MAX_WAIT_S of the dependency returning.
FIRST_WAIT_S = 0.5
MAX_WAIT_S = 8.0


class DependencyLost(Exception):
    """Neo4j or Redis stayed away longer than `verify.outage_wait_s`: the run or batch closes as failed with it."""


def outlast(
    what: str, work: Callable[[], None], *, wait_s: float | None = None, sleep: Callable[[float], None] = time.sleep
) -> None:
    """Run `work` (an idempotent task body) to the end through outages: while Neo4j or Redis is away, wait with
    backoff and run it again, for at most `wait_s` (`verify.outage_wait_s`) in all; then raise DependencyLost
    with the reason. The task keeps its message meanwhile (no redelivery to wait for: with Redis away there is
    no broker to retry through, and a redelivery comes only after the visibility timeout)."""
    budget = get_settings().verify.outage_wait_s if wait_s is None else wait_s
    deadline = time.monotonic() + budget
    delay = FIRST_WAIT_S
    attempt = 1
    while True:
        try:
            work()
            return
        except RETRYABLE as exc:
            left = deadline - time.monotonic()
            reason = f"{type(exc).__name__}: {hide_addresses(str(exc))[:300]}"
            if left <= 0:
                raise DependencyLost(
                    f"{what}: Neo4j or Redis stayed unreachable for more than {budget:g} s "
                    f"({attempt} attempts; last: {reason})"
                ) from exc
            pause = min(delay * (1 + random.random() / 4), left, MAX_WAIT_S)
            log.warning(
                "%s: attempt %d failed (%s: %s); again in %.1f s", what, attempt, type(exc).__name__, exc, pause
            )
            sleep(pause)
            delay = min(delay * 2, MAX_WAIT_S)
            attempt += 1


@worker_process_init.connect
def _init(**_: Any) -> None:
    global _store
    _store = None  # every forked process opens its own driver on first use


@worker_process_shutdown.connect
def _close(**_: Any) -> None:
    if _store is not None:
        _store.close()


def store() -> GraphStore:
    global _store
    if _store is None:
        s = open_store(get_settings())
        s.init_schema()
        _store = s
    return _store


def _economy(settings: Settings) -> RedisEconomy:
    if not settings.redis_url:
        raise RuntimeError("Celery mode needs KOPA_REDIS_URL (shared limits, quotas, cache and counters)")
    return RedisEconomy(settings.redis_url)


def _engine(run: RunRecord, settings: Settings, economy: RedisEconomy) -> tuple[Engine, list[Any]]:
    tools, apis = scoped_tools(store(), run)
    executor = Executor(settings, economy, apis, run_id=run.id, budget=run.budget)
    executor.preflight({t.api_id for t in tools})
    return Engine(store(), settings, executor, run, tools={t.name: t for t in tools}), tools


def _ledger(economy: RedisEconomy) -> RoundLedger:
    return RoundLedger(economy.r, prefix=economy.prefix)


async def _start_round(run_id: str) -> None:
    settings = get_settings()
    run = store().get_run(run_id)
    if run is None or run.status in ("completed", "failed"):
        return
    economy = _economy(settings)
    engine, tools = _engine(run, settings, economy)
    async with engine.executor:
        run.status, run.started_at = "running", run.started_at or utcnow()
        groups = await prepare_round(engine, tools)
    run.pending_sources = list(groups)
    store().save_run(run)
    if not groups:
        await _finish_round(run, economy)
        return
    _ledger(economy).open(run.id, run.round, groups)
    for source in groups:
        verify_source.delay(run.id, run.round, source)


async def _finish_round(run: RunRecord, economy: RedisEconomy) -> None:
    ledger = _ledger(economy)
    if not ledger.claim_closing(run.id, run.round):
        return  # another task closes this round
    try:
        await _close_round(run.id, economy)
    except BaseException:
        ledger.release_closing(run.id, run.round)  # Neo4j or Redis failed half-way: the retry closes it
        raise


async def _close_round(run_id: str, economy: RedisEconomy) -> None:
    """The one decision point of a Celery run: an engine given the whole run's state (`resume`) decides, with the
    same `another_round` as the in-process loop, whether to go round again or how to close."""
    settings = get_settings()
    fresh = store().get_run(run_id)
    if fresh is None or fresh.status in ("completed", "failed"):
        return
    engine, tools = _engine(fresh, settings, economy)
    async with engine.executor:
        await resume(engine, tools)
        again = another_round(engine, fresh.round)
    fresh.calls = economy.calls(run_id)
    fresh.pending_sources = []
    if again:
        fresh.round += 1
        store().save_run(fresh)
        start_round.apply_async((fresh.id,), countdown=settings_backoff(fresh.round))
        return
    fresh.status, fresh.message = closing(engine.executor, economy.exhausted(), {t.api_id for t in tools})
    fresh.finished_at = utcnow()
    store().save_run(fresh)


def settings_backoff(round_no: int) -> float:
    return float(min(60.0, get_settings().verify.backoff_s * (2**round_no)))


async def _verify_source(run_id: str, round_no: int, source: str) -> None:
    settings = get_settings()
    run = store().get_run(run_id)
    if run is None or run.status in ("completed", "failed") or run.round != round_no:
        return
    economy = _economy(settings)
    engine, _tools = _engine(run, settings, economy)
    async with engine.executor:
        tool = engine.tools.get(source)
        if tool is not None:
            await engine.profile(tool, run.extra_seeds.get(source))  # a cache hit: the round sampled it
            links = select_links(store(), run, set(engine.tools), settings, source=source)
            await engine.verify_source(source, links)
    if _ledger(economy).finish(run_id, round_no, source) == 0:
        await _finish_round(run, economy)


class ClosingTask(Task):  # type: ignore[misc]
    """A task whose final failure (retries exhausted, or an error that is not retried) closes its run or batch as
    failed with the reason, so nothing stays `running` and the team's batch slot is freed."""

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        reason = hide_addresses(f"{type(exc).__name__}: {exc}")[:500]  # shown by the API: no internal address
        target = args[0] if args else None
        if not isinstance(target, str):
            return

        def mark() -> None:
            if self.name == "kopa.synthesize_batch":
                fail_batch(store(), target, reason)
            else:
                fail_run(store(), target, reason)

        try:  # the store may be coming back: wait for it as the task did (a short while), then leave it be
            outlast(f"marking {target} failed", mark, wait_s=min(60.0, get_settings().verify.outage_wait_s))
        except Exception:  # still away; the redelivered task will try again
            log.exception("could not mark %s failed after %s", target, reason)


@celery_app.task(name="kopa.start_round", bind=True, base=ClosingTask)
def start_round(self: Task, run_id: str) -> None:
    outlast(f"run {run_id}: starting its round", lambda: asyncio.run(_start_round(run_id)))


@celery_app.task(name="kopa.verify_source", bind=True, base=ClosingTask)
def verify_source(self: Task, run_id: str, round_no: int, source: str) -> None:
    outlast(
        f"run {run_id}: round {round_no}, source {source}",
        lambda: asyncio.run(_verify_source(run_id, round_no, source)),
    )


def abandon_demand_run(graph: GraphStore, batch: Batch) -> bool:
    """A batch delivered again after the worker running it stopped (acks late) left the verification run it had
    started `running`: it is closed as failed, saying why (the batch starts a new one). True when one was."""
    previous = batch.verification_run
    if not previous or batch.status != "running":
        return False
    return fail_run(
        graph, previous, f"abandoned: the process running batch {batch.id} stopped; the batch was run again"
    )


@celery_app.task(name="kopa.synthesize_batch", bind=True, base=ClosingTask)
def synthesize_batch(self: Task, batch_id: str) -> None:
    """A trajectory batch requested over HTTP: sample, execute, store (idempotent: a finished batch is skipped);
    one that verifies on demand verifies the links its plans traverse first, in this task."""

    def work() -> None:
        batch = Batch.stored(store().get_batch(batch_id))
        if batch is None or batch.status in ("completed", "failed"):
            return
        graph, settings = store(), get_settings()
        abandon_demand_run(graph, batch)
        verifier = DemandVerifier.factory(graph, settings)
        asyncio.run(run_batch(graph, settings, batch_id, transient=RETRYABLE, verifier=verifier))

    outlast(f"batch {batch_id}", work)


@celery_app.task(name="kopa.reverify_stale")
def reverify_stale() -> str:
    """Beat: re-verify links verified longer ago than the TTL (or flagged); demotions keep their history."""
    run = new_run(scope="stale", mode="celery")
    store().save_run(run)
    start_round.delay(run.id)
    return run.id
