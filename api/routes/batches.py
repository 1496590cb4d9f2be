"""/v1/trajectory-batches: internal teams request batches of executed trajectories (reader role)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from api.deps import ReaderDep, SettingsDep, StoreDep, TeamDep
from api.jobs import dispatch
from core.errors import NotFound
from synthesis.batches import new_batch, run_batch
from synthesis.export import FORMATS, convert

router = APIRouter(prefix="/v1/trajectory-batches", tags=["trajectories"])
Format = Literal["record", "trl", "openai", "hermes", "sharegpt", "bfcl"]


class BatchRequest(BaseModel):
    count: int = Field(100, ge=1, description="how many trajectories (per-team maximum applies)")
    shapes: list[Literal["single", "chain", "fan_in", "parallel"]] = Field(default_factory=list)
    min_steps: int = Field(1, ge=1, le=6)
    max_steps: int = Field(6, ge=1, le=6)
    api_ids: list[str] = Field(default_factory=list, description="only tools of these APIs")
    seed: int = 7
    format: Format = "trl"
    source: Literal["fresh", "pool"] = Field("fresh", description="execute new trajectories, or draw stored ones")


@router.post("", status_code=202, summary="Request a batch of trajectories")
async def create(body: BatchRequest, request: Request, store: StoreDep, settings: SettingsDep, team: TeamDep) -> JSONResponse:
    batch = new_batch(store, settings, team, count=body.count, shapes=list(body.shapes), min_steps=body.min_steps,
                      max_steps=body.max_steps, api_ids=body.api_ids, seed=body.seed, fmt=body.format,
                      source=body.source)
    await dispatch(request, bool(settings.redis_url), "kopa.synthesize_batch", [batch["id"]],
                   lambda: run_batch(store, settings, batch["id"]))
    return JSONResponse({"id": batch["id"], "status": batch["status"], "progress": f"/v1/trajectory-batches/{batch['id']}",
                         "items": f"/v1/trajectory-batches/{batch['id']}/items"}, status_code=202)


@router.get("/{batch_id}", summary="Progress of a batch")
def get(batch_id: str, store: StoreDep, _: ReaderDep) -> dict[str, Any]:
    batch = store.get_batch(batch_id)
    if batch is None:
        raise NotFound(f"no trajectory batch {batch_id!r}")
    return batch


@router.get("/{batch_id}/items", summary="Stream a batch as JSON Lines (paginated)",
            response_class=StreamingResponse, responses={200: {"content": {"application/x-ndjson": {}}}})
def items(batch_id: str, store: StoreDep, _: ReaderDep, offset: Annotated[int, Query(ge=0)] = 0,
          limit: Annotated[int, Query(ge=1, le=10_000)] = 1000, format: Format | None = None) -> StreamingResponse:
    batch = store.get_batch(batch_id)
    if batch is None:
        raise NotFound(f"no trajectory batch {batch_id!r}")
    fmt = format or batch["format"]
    page, total = store.list_trajectories(batch_id, offset, limit)

    def lines() -> Iterator[bytes]:
        for record in page:
            yield (json.dumps(convert(record, fmt), ensure_ascii=False) + "\n").encode()

    headers = {"X-Total-Count": str(total), "X-Offset": str(offset), "X-Format": fmt,
               "X-Batch-Status": batch["status"]}
    if offset + len(page) < total:
        headers["Link"] = f'</v1/trajectory-batches/{batch_id}/items?offset={offset + len(page)}&limit={limit}>; rel="next"'
    return StreamingResponse(lines(), media_type="application/x-ndjson", headers=headers)


__all__ = ["FORMATS", "router"]
