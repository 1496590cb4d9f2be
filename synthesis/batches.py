"""Trajectory batches requested over HTTP: plain functions that create, run and read batches (the API runs
them in its process; the records land in the store, so any API process can stream them)."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import httpx
import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, ValidationInfo, field_validator

from core.errors import BudgetExhausted, Conflict, InvalidInput, invalid_input
from core.fields import Integral
from core.settings import Settings
from execution.executor import Executor
from execution.limits import Allowance, Economy, economy_for, seconds_to_tomorrow, team_allowance
from graph.models import RunRecord, utcnow
from graph.store import GraphStore, all_apis
from synthesis.contamination import BenchFingerprints
from synthesis.demand import LinkVerifier
from synthesis.engine import synthesize
from synthesis.export import EXPORT_FORMATS
from synthesis.records import BenchmarkOverlap, SynthesisRequest, SynthesisResult

ACTIVE = ("queued", "running")
BatchStatus = Literal["queued", "running", "completed", "failed"]
if TYPE_CHECKING:
    Format = str
else:  # the export registry's names, as validation and the OpenAPI enum see them
    Format = Literal[tuple(EXPORT_FORMATS)]


class BatchRequest(SynthesisRequest):
    """A team's request for a batch (the REST body; the stored `Batch` is this request and its progress)."""

    count: Integral = Field(
        100,
        ge=1,
        description="how many trajectories, at most `batches.max_count` (KOPA_BATCHES__MAX_COUNT; the document's "
        "`maximum` is this server's)",
    )
    format: Format = "trl"
    source: Literal["fresh", "pool"] = Field(
        "fresh",
        description="execute new trajectories, or draw stored ones (your team's, and those of teams an admin "
        "shares in `batches.shared_pool`; no upstream call)",
    )
    on_demand: StrictBool = Field(
        False,
        description="verify the links the plans traverse before they run, so no verification run is needed first: "
        "links verified this way are saved with their evidence (under the run named by `verification_run`, "
        "set as soon as the batch starts it: follow it at /v1/verification-runs/{id}) and "
        "reused by every later batch and run; the batch's `verification` says how many links it asked about and "
        "the upstream calls that cost (not counted in `calls`). Not with source `pool` (422).",
    )

    @field_validator("source")
    @classmethod
    def _pool_executes_nothing(cls, source: str, info: ValidationInfo) -> str:
        if source == "pool" and info.data.get("on_demand"):
            raise ValueError(
                "a batch drawn from the stored pool executes nothing, so it cannot verify on demand: send source "
                '"fresh" or leave on_demand out'
            )
        return source


class BatchBudget(BaseModel):
    """The team's daily budget as the batch saw it: what it drew, what it was refused, what is left."""

    daily_calls: int
    drawn: int
    refused: int
    left_today: int
    exhausted: bool


class Batch(BatchRequest):
    """A batch: its request and its progress, as the store keeps it (JSON), the REST route answers it and the
    Celery worker runs it (more fields appear as it runs: started_at, finished_at, snapshot, ...)."""

    model_config = ConfigDict(extra="allow")

    id: str
    team: str
    status: BatchStatus = "queued"
    #: the request's, bounded when it was asked for; a record saved without one reads 0
    count: int = 0
    created_at: str = ""
    produced: int = 0
    discarded: int = 0
    calls: int = 0
    message: str = ""
    started_at: str | None = None
    finished_at: str | None = None
    snapshot: str | None = None
    requeued_links: int | None = None
    benchmark_overlap: int | None = Field(None, description="trajectories discarded as reproducing a benchmark task")
    verification: dict[str, int] | None = Field(
        None, description="links asked, verified, refuted, undecided, and the upstream calls verification spent"
    )
    verification_run: str | None = Field(None, description="the run that verifies on demand for this batch")
    budget: BatchBudget | None = None

    @classmethod
    def stored(cls, data: dict[str, Any] | None) -> Batch | None:
        """A batch the store gave back (None stays None), checked by the same rules and words as its request
        (InvalidInput when the stored record breaks them)."""
        if data is None:
            return None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise invalid_input(exc.errors()) from None

    def to_json(self) -> dict[str, Any]:
        """What the store keeps and the route answers (fields not yet set are left out, as before)."""
        return self.model_dump(mode="json", exclude_none=True)

    def save(self, store: GraphStore) -> None:
        store.save_batch(self.to_json())


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
    store: GraphStore, settings: Settings, executor: Executor, request: SynthesisRequest, **options: Any
) -> SynthesisResult:
    """`synthesize` of a validated request with the benchmark contamination guard, the one synthesis path of the
    CLI, REST and Celery: a trajectory that reproduces a benchmark task is discarded, never kept. Sets
    `benchmark_overlap`. `options`: synthesize's own (progress, unverified, extras, verifier)."""
    guard = benchmark_guard(settings)
    result = await synthesize(
        store,
        settings,
        executor,
        count=request.count,
        shapes=request.shape_names(),
        min_steps=request.min_steps,
        max_steps=request.max_steps,
        seed=request.seed,
        api_ids=request.api_ids or None,
        guard=guard,
        **options,
    )
    overlapping = sum(1 for d in result.discarded if str(d.get("reason", "")).startswith("benchmark overlap"))
    result.benchmark_overlap = BenchmarkOverlap(benchmark_tasks=len(guard.labels), discarded_as_overlapping=overlapping)
    return result


def new_batch(store: GraphStore, settings: Settings, team: str, request: BatchRequest) -> Batch:
    """Check a validated batch request against this server's limits and save it queued. `on_demand`: the links its
    plans traverse are verified first (no verification run needed); a batch drawn from the stored pool executes
    nothing, so it cannot (BatchRequest refuses that)."""
    limits = settings.batches
    request.within(limits.max_count)
    running = [b for b in store.list_batches(team, limit=200) if b.get("status") in ACTIVE]
    if len(running) >= limits.max_concurrent:
        raise Conflict(
            f"team {team!r} already has {len(running)} batches running (limit {limits.max_concurrent}); "
            "wait for one to finish"
        )
    if request.source != "pool":  # a pool batch executes nothing, so it costs no upstream call
        allowance = team_allowance(economy_for(settings, store), settings, team)
        if allowance is not None and allowance.spent():
            raise BudgetExhausted(
                f"{allowance.refusal}: {allowance.used():,} of {allowance.limit:,} calls used today; "
                'ask again then, or draw stored trajectories with source "pool"',
                retry_after_s=seconds_to_tomorrow(),
            )
    fields = request.model_dump()
    fields["shapes"] = list(request.shape_names())
    batch = Batch(**fields, id="tb_" + uuid.uuid4().hex[:12], team=team, created_at=utcnow())
    batch.save(store)
    return batch


async def run_batch(
    store: GraphStore,
    settings: Settings,
    batch_id: str,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    transient: tuple[type[BaseException], ...] = (),
    verifier: VerifierFactory | None = None,
) -> Batch:
    """Produce a batch. Any error (or cancellation) closes it as failed with the reason, which also frees the
    team's concurrency slot; it is never left `running`. Errors of the `transient` types (a dependency that is
    coming back, for a caller that runs the batch again) are raised without closing it. A batch that verifies
    on demand is given its verifier by `verifier` (it fails, saying so, without one)."""
    batch = Batch.stored(store.get_batch(batch_id))
    if batch is None:
        raise InvalidInput(f"no batch {batch_id}")
    batch.status, batch.started_at = "running", utcnow()
    batch.save(store)
    try:
        if batch.source == "pool":
            records = _from_pool(store, settings, batch)
            batch.message = f"{len(records)} trajectories drawn from the stored pool"
        else:
            records = await _fresh(store, settings, batch, transport, verifier)
        store.add_trajectories(batch.id, records)
        batch.status, batch.produced, batch.finished_at = "completed", len(records), utcnow()
    except asyncio.CancelledError:
        batch.status, batch.finished_at = "failed", utcnow()
        batch.message = "cancelled: the process stopped before the batch finished"
        batch.save(store)
        raise
    except transient:
        raise
    except Exception as exc:  # recorded on the batch, never lost silently
        batch.status, batch.message, batch.finished_at = "failed", f"{type(exc).__name__}: {exc}"[:500], utcnow()
        batch.save(store)
        raise
    batch.save(store)
    return batch


async def _fresh(
    store: GraphStore,
    settings: Settings,
    batch: Batch,
    transport: httpx.AsyncBaseTransport | None,
    verifier: VerifierFactory | None,
) -> list[dict[str, Any]]:
    """New trajectories for `batch`, executed against the team's budget; the batch's figures set from the run."""
    if batch.on_demand and verifier is None:
        raise InvalidInput("this process cannot verify on demand (no verifier was handed to run_batch)")
    apis = {a.id: a for a in all_apis(store)}
    # every upstream call of the batch, its on-demand verification included, draws from the team's budget
    shared = economy_for(settings, store)
    allowance = team_allowance(shared, settings, batch.team)
    economy: Economy = allowance or shared
    demand = verifier(economy, transport, batch.api_ids or None) if batch.on_demand and verifier else None
    if demand is not None:
        # the run is the team's: readers of other teams see it as missing (api/routes/verification.py)
        demand.run.team = batch.team
        # named at once: if the process dies, whoever runs the batch again closes this run (workers.tasks)
        batch.verification_run = demand.run.id
        batch.save(store)
    try:
        async with Executor(settings, economy, apis, transport=transport) as executor:
            out = await synthesize_guarded(store, settings, executor, batch, verifier=demand)
    finally:
        if demand is not None:
            closed = await demand.close()
            batch.verification_run = getattr(closed, "id", None)
    _account(batch, out, allowance)
    return [r.to_json() for r in out.records]


def _account(batch: Batch, out: SynthesisResult, allowance: Allowance | None) -> None:
    """What a fresh batch's synthesis spent and yielded, and its message when it fell short or hit the budget."""
    kept = len(out.records)
    batch.discarded, batch.calls, batch.snapshot = len(out.discarded), out.calls, out.snapshot
    batch.requeued_links = len(out.requeued_links)
    batch.benchmark_overlap = out.benchmark_overlap.discarded_as_overlapping if out.benchmark_overlap else 0
    if out.verification:
        # links asked, verified, refuted, undecided, and the upstream calls verification spent
        batch.verification = out.verification
    if allowance is not None:
        batch.budget = _budget_figures(allowance)
    if kept < batch.count:
        # the same words as every synthesis path ("282 of 300 requested: ..."), and what to do about it
        short = out.shortfall or f"{kept} of {batch.count} requested"
        batch.message = short + "; verify more links or widen the shapes"
    if allowance is not None and allowance.refused:
        # stopped calling when the budget ran out: the reason leads the message
        batch.message = (
            f"stopped at the team's call budget: {allowance.refusal} "
            f"({allowance.refused:,} calls refused); {kept} of {batch.count} produced"
        )


def fail_batch(store: GraphStore, batch_id: str, reason: str) -> bool:
    """Mark a batch failed with the reason unless it already finished (frees the team's slot)."""
    batch = Batch.stored(store.get_batch(batch_id))
    if batch is None or batch.status not in ACTIVE:
        return False
    batch.status, batch.message, batch.finished_at = "failed", reason, utcnow()
    batch.save(store)
    return True


def visible_batch(store: GraphStore, batch_id: str, team: str | None) -> Batch | None:
    """The batch when `team` may see it (None: any team, for admins); otherwise None, as if it did not exist."""
    batch = Batch.stored(store.get_batch(batch_id))
    if batch is None or (team is not None and batch.team != team):
        return None
    return batch


def _budget_figures(allowance: Allowance) -> BatchBudget:
    """The team's daily budget as the batch saw it: what it drew, what it was refused, what is left."""
    return BatchBudget(
        daily_calls=allowance.limit,
        drawn=allowance.drawn,
        refused=allowance.refused,
        left_today=allowance.left(),
        exhausted=bool(allowance.refused) or allowance.left() <= 0,
    )


#: Batches of a team a pool batch reads (the newest first), and trajectories read per store query.
POOL_BATCHES = 10_000
POOL_CHUNK = 500


def pool_sources(store: GraphStore, settings: Settings, batch: Batch) -> list[str]:
    """The batches a pool batch may draw from: its own team's, and those of the teams an admin shares
    (`batches.shared_pool`); never another team's otherwise."""
    teams = {batch.team, *settings.batches.shared_pool_teams()}
    ids = {b["id"] for team in teams for b in store.list_batches(team, limit=POOL_BATCHES) if b.get("team") == team}
    ids.discard(batch.id)
    return sorted(ids)


def _from_pool(store: GraphStore, settings: Settings, batch: Batch) -> list[dict[str, Any]]:
    seen: set[str] = set()
    fit = []
    for source in pool_sources(store, settings, batch):
        offset = 0
        while True:
            page, total = store.list_trajectories(source, offset, POOL_CHUNK)
            offset += len(page)
            for r in page:
                if r["id"] in seen or r["shape"] not in batch.shape_names():
                    continue
                if not batch.min_steps <= r["n_steps"] <= batch.max_steps:
                    continue
                seen.add(r["id"])
                fit.append(r)
            if not page or offset >= total:
                break
    rnd = random.Random(batch.seed)
    rnd.shuffle(fit)
    return [{**r, "seq": i} for i, r in enumerate(fit[: batch.count])]
