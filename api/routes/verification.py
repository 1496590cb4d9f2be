"""/v1/verification-runs, /v1/links, /v1/reports: verification by execution, its evidence and its economy."""

from __future__ import annotations

import logging
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from api.deps import (
    READ_ERRORS,
    WRITE_ERRORS,
    AdminDep,
    KopaRoute,
    Offset,
    PrincipalDep,
    ReaderDep,
    SettingsDep,
    StoreDep,
    errors,
    found,
)
from api.jobs import QueueUnavailable, dispatch
from api.security import Principal
from core.errors import NotFound
from core.fields import Integral
from graph.models import LinkRecord, RunRecord
from graph.store import GraphStore
from verification.reports import DriftReport, YieldReport, drift_report, yield_report
from verification.runs import RunProgress, execute_run, fail_run, new_run, run_progress

router = APIRouter(tags=["verification"], route_class=KopaRoute)
log = logging.getLogger("kopa.api.verify")


class RunRequest(BaseModel):
    api_ids: list[str] = Field(
        default_factory=list, max_length=1000, description="limit the run to these APIs (default: all)"
    )
    budget: Integral | None = Field(None, gt=0, le=10**9, description="stop cleanly after this many upstream calls")
    scope: Literal["pending", "stale", "all"] = "pending"
    mode: Literal["auto", "celery", "inprocess"] = Field(
        "auto", description="celery when Redis is configured (workers must run), else in this process"
    )


class RunStarted(BaseModel):
    id: str
    status: str
    mode: str
    progress: str


class LinkPage(BaseModel):
    items: list[LinkRecord]
    total: int
    offset: int
    limit: int


@router.post(
    "/v1/verification-runs",
    status_code=202,
    response_model=RunStarted,
    summary="Start a verification run",
    description="202 with the run's id; follow it at `progress`. With Redis configured the run is queued for "
    "Celery workers: when the queue is unreachable the run is marked failed with the reason and "
    "the answer is 503.",
    responses=errors(*WRITE_ERRORS, 404),
)
async def start_run(
    body: RunRequest, request: Request, store: StoreDep, settings: SettingsDep, _: AdminDep
) -> JSONResponse:
    for api_id in body.api_ids:
        if store.get_api(api_id) is None:
            raise NotFound(f"no API {api_id!r}; GET /v1/apis lists the registered ones")
    mode = body.mode if body.mode != "auto" else ("celery" if settings.redis_url else "inprocess")
    if mode == "celery" and not settings.redis_url:  # a valid request this server cannot serve: 503, nothing saved
        raise QueueUnavailable(
            "mode 'celery' needs a task queue, and this server has none (KOPA_REDIS_URL is not "
            "set); use mode 'inprocess' or 'auto', or configure Redis and Celery workers"
        )
    run = new_run(body.api_ids, body.budget, body.scope, mode)
    store.save_run(run)
    await dispatch(
        request,
        mode == "celery",
        "kopa.start_round",
        [run.id],
        lambda: execute_run(store, settings, run),
        lambda reason: fail_run(store, run.id, reason),
    )
    return JSONResponse(
        {"id": run.id, "status": run.status, "mode": mode, "progress": f"/v1/verification-runs/{run.id}"},
        status_code=202,
    )


def sees_run(who: Principal, run: RunRecord) -> bool:
    """Whether `who` may see `run`: a run a team's batch started (on-demand verification) is that team's and the
    admins'; the runs an admin starts are every reader's."""
    return not run.team or who.sees_team(run.team)


#: Runs read to fill one page of a reader's list (other teams' runs are skipped, not counted).
RUN_SCAN = 1000


def visible_runs(store: GraphStore, who: Principal, limit: int) -> list[RunRecord]:
    """The newest `limit` runs `who` may see."""
    if who.role == "admin":
        return store.list_runs(limit)
    return [r for r in store.list_runs(max(limit, RUN_SCAN)) if sees_run(who, r)][:limit]


@router.get(
    "/v1/verification-runs/{run_id}",
    summary="Progress of a run (a run a team's batch started: that team's, or any for admins)",
    responses=errors(*READ_ERRORS, 404),
)
def get_run(run_id: str, store: StoreDep, who: PrincipalDep) -> RunProgress:
    run = store.get_run(run_id)
    if run is None or not sees_run(who, run):  # another team's run looks exactly like a missing one
        raise NotFound(f"no verification run {run_id!r}")
    return run_progress(store, run)


@router.get(
    "/v1/verification-runs",
    summary="Recent runs (those of other teams' batches left out)",
    responses=errors(*READ_ERRORS),
)
def list_runs(store: StoreDep, who: PrincipalDep, limit: Annotated[int, Query(ge=1, le=100)] = 20) -> list[RunProgress]:
    return [run_progress(store, r) for r in visible_runs(store, who, limit)]


@router.get("/v1/links", summary="Links with their evidence", responses=errors(*READ_ERRORS))
def list_links(
    store: StoreDep,
    _: ReaderDep,
    status: Literal["candidate", "verified", "refuted", "inconclusive"] | None = None,
    tool: Annotated[str | None, Query(max_length=200, description="links from or to this tool")] = None,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> LinkPage:
    items, total = store.list_links(status, tool, offset, limit)
    return LinkPage(items=items, total=total, offset=offset, limit=limit)


@router.get(
    "/v1/links/{link_id}",
    summary="One link, its evidence and history",
    responses=errors(*READ_ERRORS, 404),
)
def get_link(link_id: str, store: StoreDep, _: ReaderDep) -> LinkRecord:
    return found(store.get_link(link_id), f"no link {link_id!r}")


@router.get(
    "/v1/reports/yield",
    summary="Calls per verified link and per candidate, quota use, by run",
    responses=errors(401, 503),
)
def report_yield(store: StoreDep, who: PrincipalDep) -> YieldReport:
    return yield_report(store, runs=visible_runs(store, who, 10))


@router.get(
    "/v1/reports/drift",
    summary="Verdicts that changed, links flagged by API changes, vanished fields",
    responses=errors(401, 503),
)
def report_drift(store: StoreDep, _: ReaderDep) -> DriftReport:
    return drift_report(store)
