"""Verification runs: create, execute in process, report progress. The Celery path (workers.tasks) reuses the
same Engine pieces; a run's link counts are always derived from the links it decided."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field

from core.fields import ByKey
from core.json_types import JsonObject
from core.settings import Settings
from execution.executor import Executor
from execution.limits import Economy, economy_for
from graph.conversions import is_conversion
from graph.models import ApiRecord, LinkRecord, RunRecord, ToolRecord, utcnow
from graph.store import GraphStore, all_apis, all_links
from verification.engine import Engine, Progress
from verification.rounds import prepare_round, run_rounds


def new_run(
    api_ids: list[str] | None = None, budget: int | None = None, scope: str = "pending", mode: str = "inprocess"
) -> RunRecord:
    return RunRecord.model_validate(
        {"id": "run_" + uuid.uuid4().hex[:12], "api_ids": api_ids or [], "budget": budget, "scope": scope, "mode": mode}
    )


def scoped_tools(store: GraphStore, run: RunRecord) -> tuple[list[ToolRecord], dict[str, ApiRecord]]:
    apis = {a.id: a for a in all_apis(store)}
    # the built-in conversion tools are correct by construction: no links of theirs to discover or verify
    tools = [t for t in store.all_tools() if (not run.api_ids or t.api_id in run.api_ids) and not is_conversion(t)]
    return tools, apis


async def execute_run(
    store: GraphStore,
    settings: Settings,
    run: RunRecord,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    economy: Economy | None = None,
    progress: Progress | None = None,
    naive: bool = False,
) -> RunRecord:
    """Run to the end in this process. Whatever happens (an error while scoping or verifying, cancellation at
    shutdown), the run is closed: completed, paused, or failed with the reason; never left `running`."""
    economy = economy or economy_for(settings, store)
    run.status, run.started_at, run.message = "running", run.started_at or utcnow(), ""
    await asyncio.to_thread(store.save_run, run)
    executor: Executor | None = None
    engine: Engine | None = None
    failed = False
    try:
        tools, apis = scoped_tools(store, run)
        async with Executor(settings, economy, apis, transport=transport, run_id=run.id, budget=run.budget) as executor:
            executor.preflight({t.api_id for t in tools})
            engine = Engine(
                store, settings, executor, run, tools={t.name: t for t in tools}, progress=progress, naive=naive
            )
            await run_rounds(engine, tools)
    except asyncio.CancelledError:
        failed, run.status, run.message = True, "failed", "cancelled: the process stopped before the run finished"
        raise
    except Exception as exc:
        failed, run.status, run.message = True, "failed", f"{type(exc).__name__}: {exc}"[:500]
        raise
    finally:
        run.calls = economy.calls(run.id)
        if engine is not None:
            run.unreachable = sorted(engine.unreachable.values(), key=lambda u: str(u["tool"]))
        if not failed and executor is not None:
            run.status, run.message = closing(
                executor, executor.exhausted_apis, {t.api_id for t in (engine.tools.values() if engine else [])}
            )
        run.finished_at = utcnow()
        store.save_run(run)  # not in a thread: this must happen even while the task is being cancelled
    return run


Closing = Literal["completed", "paused", "failed"]


def closing(executor: Executor, exhausted: set[str], api_ids: set[str]) -> tuple[Closing, str]:
    """How a run that ran to its end closes (in process and through Celery alike): paused for a budget or a quota,
    failed when no API in scope could be called (a key missing or refused), otherwise completed, naming the APIs
    that were skipped and why."""
    blocked = {a: why for a, why in executor.blocked_apis.items() if a in api_ids}
    note = "; ".join(f"{a}: {why}" for a, why in sorted(blocked.items()))
    if not executor.budget_left:
        return "paused", "call budget exhausted; start the run again to resume"
    exhausted = exhausted & api_ids  # quotas are shared across runs: another API's spent quota is not this run's
    if exhausted:
        return "paused", f"daily quota exhausted for {', '.join(sorted(exhausted))}; resume tomorrow"
    if blocked and len(blocked) == len(api_ids):
        return "failed", f"no API could be called: {note}"
    if blocked:
        return "completed", f"skipped {len(blocked)} API(s): {note}"
    return "completed", ""


def fail_run(store: GraphStore, run_id: str, reason: str) -> bool:
    """Mark a run failed with the reason unless it already finished; True when it was marked."""
    run = store.get_run(run_id)
    if run is None or run.status not in ("queued", "running"):
        return False
    run.status, run.message, run.finished_at = "failed", reason, utcnow()
    store.save_run(run)
    return True


def candidate_count(store: GraphStore, run: RunRecord) -> int:
    """Links still `candidate` among the run's tools (all tools for an unscoped run)."""
    if not run.api_ids:
        return store.list_links(status="candidate", limit=1)[1]
    names = {t.name for t in store.all_tools() if t.api_id in run.api_ids}
    return sum(
        1 for lk in all_links(store) if lk.status == "candidate" and lk.source_tool in names and lk.target_tool in names
    )


class RunProgress(BaseModel, ByKey):
    """A run's progress as every reader states it: the REST route's answer, `kopa verify`, the reports."""

    id: str
    status: str
    mode: str
    message: str
    scope: str
    api_ids: list[str]
    budget: int | None
    created_at: str
    started_at: str
    finished_at: str
    candidates: int = Field(description="candidate links the run set out to decide")
    verified: int
    refuted: int
    inconclusive: int
    candidate: int = Field(description="links of the run's tools no run has decided yet")
    pending: int
    calls_spent: int
    cache_hits: int
    calls_per_verified_link: float | None
    calls_by_api: dict[str, int]
    estimated_seconds_left: float | None
    unreachable: list[dict[str, Any]]


#: What a run's progress repeats of its record.
RUN_FIELDS = {"id", "status", "mode", "message", "scope", "api_ids", "budget", "candidates"}
RUN_FIELDS |= {"created_at", "started_at", "finished_at"}


def run_progress(store: GraphStore, run: RunRecord, economy: Economy | None = None) -> RunProgress:
    counts = store.run_counts(run.id)
    calls = dict(run.calls)
    if economy is not None and run.status in ("queued", "running"):
        calls = economy.calls(run.id) or calls
    spent = calls.get("calls", 0)
    verified, refuted, inconclusive = (counts.get(s, 0) for s in ("verified", "refuted", "inconclusive"))
    decided = verified + refuted + inconclusive
    # links of the run's tools that no run has decided yet: a paused or budget-limited run says what it left
    still = candidate_count(store, run)
    pending = max(0, run.candidates - decided) if run.status in ("queued", "running") else still
    eta = None
    if run.status == "running" and run.started_at and decided:
        elapsed = time.time() - datetime.fromisoformat(run.started_at).timestamp()
        eta = round(elapsed / decided * pending, 1)
    return RunProgress(
        **run.model_dump(include=RUN_FIELDS),
        verified=verified,
        refuted=refuted,
        inconclusive=inconclusive,
        candidate=still,
        pending=pending,
        calls_spent=spent,
        cache_hits=calls.get("cache_hits", 0),
        calls_per_verified_link=round(spent / verified, 2) if verified else None,
        calls_by_api={k[4:]: v for k, v in calls.items() if k.startswith("api:")},
        estimated_seconds_left=eta,
        unreachable=run.unreachable,
    )


class DemandVerifier:
    """Verification driven by demand (synthesis.demand.LinkVerifier): one run record, one engine, that samples
    the tools and derives candidates (`discover`, the first half of a round) and then decides only the links it is
    asked about (`verify`), saving each with its evidence, as a full run would. Give it the economy the synthesis
    executor uses, so identical calls are paid once. `close` ends the run (`closing`, like every run)."""

    def __init__(
        self,
        store: GraphStore,
        settings: Settings,
        *,
        economy: Economy,
        transport: httpx.AsyncBaseTransport | None = None,
        api_ids: list[str] | None = None,
        budget: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.store, self.settings, self.economy = store, settings, economy
        self.transport, self.progress = transport, progress
        self.run = new_run(api_ids, budget)
        self.run.message = "demand-driven: the links synthesis is about to traverse"
        self.engine: Engine | None = None
        self.tools: list[ToolRecord] = []
        #: Calls `discover` and `expand` spent sampling tools (what synthesise-then-filter pays as well); the rest
        #: of `spent()` is trials and controls of the links asked about.
        self.sampling_calls = 0

    async def discover(self) -> None:
        if self.engine is not None:
            return
        run = self.run
        run.status, run.started_at = "running", utcnow()
        await asyncio.to_thread(self.store.save_run, run)
        self.tools, apis = scoped_tools(self.store, run)
        executor = Executor(
            self.settings, self.economy, apis, transport=self.transport, run_id=run.id, budget=run.budget
        )
        executor.preflight({t.api_id for t in self.tools})
        self.engine = Engine(
            self.store, self.settings, executor, run, tools={t.name: t for t in self.tools}, progress=self.progress
        )
        await prepare_round(self.engine, self.tools)
        self.sampling_calls = self.spent()
        run.pending_sources = []
        await asyncio.to_thread(self.store.save_run, run)

    async def verify(self, links: list[LinkRecord]) -> list[LinkRecord]:
        """Decide `links` (those still undecided; a decided one is returned as the store has it)."""
        await self.discover()
        engine = self.engine
        assert engine is not None
        out: list[LinkRecord] = []
        ask: list[LinkRecord] = []
        for lk in links:
            stored = await asyncio.to_thread(self.store.get_link, lk.id)
            if stored is None:
                continue
            if stored.status not in ("candidate", "inconclusive") and not stored.needs_reverify:
                out.append(stored)
            elif stored.source_tool in engine.samples:
                ask.append(stored)
        # one link per target parameter first, the others once it is decided: a refusal of the request's form
        # that its values all got is then known to them (Engine._learn_refusal), in the same order every run
        firsts: dict[tuple[str, str], LinkRecord] = {}
        for lk in sorted(ask, key=lambda lk: (-lk.score, lk.id)):
            firsts.setdefault((lk.target_tool, lk.target_param), lk)
        lead = {lk.id for lk in firsts.values()}
        return (
            out
            + await self._decide([lk for lk in ask if lk.id in lead])
            + await self._decide([lk for lk in ask if lk.id not in lead])
        )

    async def _decide(self, links: list[LinkRecord]) -> list[LinkRecord]:
        engine = self.engine
        assert engine is not None
        by_source: dict[str, list[LinkRecord]] = {}
        for lk in links:
            by_source.setdefault(lk.source_tool, []).append(lk)
        decided = await asyncio.gather(*(engine.verify_source(s, lks) for s, lks in sorted(by_source.items())))
        engine.settle()  # what these links learnt is consulted by the next ones
        return [lk for group in decided for lk in group]

    def spent(self) -> int:
        return self.economy.calls(self.run.id).get("calls", 0)

    def samples(self) -> Mapping[str, list[JsonObject]]:
        """The rows discovery sampled per tool (empty before `discover`)."""
        return self.engine.samples if self.engine is not None else {}

    def sample_args(self) -> Mapping[str, JsonObject]:
        """The arguments each tool's sampled rows answered (empty before `discover`)."""
        return self.engine.sample_args if self.engine is not None else {}

    async def expand(self) -> bool:
        """The first half of another round (`prepare_round`: samples are cache hits; tools blocked until now fed
        through links verified since): True when it derived candidate links not in the store before."""
        await self.discover()
        assert self.engine is not None
        before = await asyncio.to_thread(lambda: {lk.id for lk in all_links(self.store)})
        self.run.round += 1
        spent = self.spent()
        await prepare_round(self.engine, self.tools)
        self.sampling_calls += self.spent() - spent
        after = await asyncio.to_thread(lambda: {lk.id for lk in all_links(self.store)})
        return bool(after - before)

    @classmethod
    def factory(
        cls, store: GraphStore, settings: Settings
    ) -> Callable[[Economy, httpx.AsyncBaseTransport | None, list[str] | None], DemandVerifier]:
        """What a trajectory batch that verifies on demand is handed (synthesis.batches.run_batch): a verifier
        over `store` per batch, sharing the batch's call economy and transport, scoped to its APIs."""

        def build(
            economy: Economy, transport: httpx.AsyncBaseTransport | None, api_ids: list[str] | None
        ) -> DemandVerifier:
            return cls(store, settings, economy=economy, transport=transport, api_ids=api_ids)

        return build

    async def close(self) -> RunRecord:
        run = self.run
        run.calls = self.economy.calls(run.id)
        if self.engine is not None:
            executor = self.engine.executor
            await executor.aclose()
            run.unreachable = sorted(self.engine.unreachable.values(), key=lambda u: str(u["tool"]))
            run.status, run.message = closing(executor, executor.exhausted_apis, {t.api_id for t in self.tools})
            run.message = run.message or "demand-driven: the links synthesis traversed"
        else:
            run.status = "completed"
        run.finished_at = utcnow()
        self.store.save_run(run)
        return run
