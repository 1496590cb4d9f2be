"""/v1/verification-runs, /v1/links, /v1/reports: verification by execution, its evidence and its economy."""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from api.deps import AdminDep, ReaderDep, SettingsDep, StoreDep
from api.jobs import dispatch
from core.errors import NotFound
from graph.models import LinkRecord
from verification.reports import drift_report, yield_report
from verification.runs import execute_run, new_run, run_progress

router = APIRouter(tags=["verification"])
log = logging.getLogger("kopa.api.verify")


class RunRequest(BaseModel):
    api_ids: list[str] = Field(default_factory=list, description="limit the run to these APIs (default: all)")
    budget: int | None = Field(None, gt=0, description="stop cleanly after this many upstream calls")
    scope: Literal["pending", "stale", "all"] = "pending"
    mode: Literal["auto", "celery", "inprocess"] = Field(
        "auto", description="celery when Redis is configured (workers must run), else in this process")


class LinkPage(BaseModel):
    items: list[LinkRecord]
    total: int
    offset: int
    limit: int


@router.post("/v1/verification-runs", status_code=202, summary="Start a verification run")
async def start_run(body: RunRequest, request: Request, store: StoreDep, settings: SettingsDep, _: AdminDep) -> JSONResponse:
    for api_id in body.api_ids:
        if store.get_api(api_id) is None:
            raise NotFound(f"no API {api_id!r}; GET /v1/apis lists the registered ones")
    mode = body.mode if body.mode != "auto" else ("celery" if settings.redis_url else "inprocess")
    run = new_run(body.api_ids, body.budget, body.scope, mode)
    store.save_run(run)
    await dispatch(request, mode == "celery", "kopa.start_round", [run.id], lambda: execute_run(store, settings, run))
    return JSONResponse({"id": run.id, "status": run.status, "mode": mode,
                         "progress": f"/v1/verification-runs/{run.id}"}, status_code=202)


@router.get("/v1/verification-runs/{run_id}", summary="Progress of a run")
def get_run(run_id: str, store: StoreDep, _: ReaderDep) -> dict[str, Any]:
    run = store.get_run(run_id)
    if run is None:
        raise NotFound(f"no verification run {run_id!r}")
    return run_progress(store, run)


@router.get("/v1/verification-runs", summary="Recent runs")
def list_runs(store: StoreDep, _: ReaderDep, limit: Annotated[int, Query(ge=1, le=100)] = 20) -> list[dict[str, Any]]:
    return [run_progress(store, r) for r in store.list_runs(limit)]


@router.get("/v1/links", response_model=LinkPage, summary="Links with their evidence")
def list_links(store: StoreDep, _: ReaderDep,
               status: Literal["candidate", "verified", "refuted", "inconclusive"] | None = None,
               tool: Annotated[str | None, Query(description="links from or to this tool")] = None,
               offset: Annotated[int, Query(ge=0)] = 0, limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> LinkPage:
    items, total = store.list_links(status, tool, offset, limit)
    return LinkPage(items=items, total=total, offset=offset, limit=limit)


@router.get("/v1/links/{link_id}", response_model=LinkRecord, summary="One link, its evidence and history")
def get_link(link_id: str, store: StoreDep, _: ReaderDep) -> LinkRecord:
    link = store.get_link(link_id)
    if link is None:
        raise NotFound(f"no link {link_id!r}")
    return link


@router.get("/v1/reports/yield", summary="Calls per verified link and per candidate, quota use, by run")
def report_yield(store: StoreDep, _: ReaderDep) -> dict[str, Any]:
    return yield_report(store)


@router.get("/v1/reports/drift", summary="Verdicts that changed, links flagged by API changes, vanished fields")
def report_drift(store: StoreDep, _: ReaderDep) -> dict[str, Any]:
    return drift_report(store)
