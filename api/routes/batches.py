"""/v1/trajectory-batches: internal teams request batches of executed trajectories (reader role)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel
from starlette.types import Receive, Scope, Send

from api.deps import (
    READ_ERRORS,
    KopaRoute,
    Offset,
    PrincipalDep,
    SettingsDep,
    StoreDep,
    errors,
    found,
    slot_key,
    stream_slots,
)
from api.jobs import dispatch
from api.security import Principal
from core.settings import Settings
from graph.store import GraphStore
from synthesis.batches import Batch, BatchRequest, Format, fail_batch, new_batch, run_batch, visible_batch
from synthesis.export import FORMATS, convert
from verification.runs import DemandVerifier

router = APIRouter(prefix="/v1/trajectory-batches", tags=["trajectories"], route_class=KopaRoute)


class BatchStarted(BaseModel):
    id: str
    status: str
    progress: str
    items: str

    @classmethod
    def of(cls, batch: Batch) -> BatchStarted:
        path = f"/v1/trajectory-batches/{batch.id}"
        return cls(id=batch.id, status=batch.status, progress=path, items=f"{path}/items")


def state_bounds(schema: dict[str, Any], settings: Settings) -> None:
    """Write the bounds that come from this server's settings into its OpenAPI document (`count` above
    `batches.max_count` is refused with 422, so the schema says so)."""
    count = schema.get("components", {}).get("schemas", {}).get("BatchRequest", {}).get("properties", {}).get("count")
    if isinstance(count, dict):
        count["maximum"] = settings.batches.max_count


def _visible(store: GraphStore, batch_id: str, who: Principal) -> Batch:
    batch = visible_batch(store, batch_id, None if who.role == "admin" else who.team)
    return found(batch, f"no trajectory batch {batch_id!r}")  # another team's batch looks exactly like a missing one


@router.post(
    "",
    status_code=202,
    response_model=BatchStarted,
    summary="Request a batch of trajectories",
    description="202 with the batch id. At most `batches.max_concurrent` batches of a team run at once "
    "(409 above). Every upstream call of a team's batches, on-demand verification included, draws from the "
    "team's daily call budget (`batches.team_daily_calls`, or the team's entry in `batches.team_budgets`): a "
    "batch asked for once it is spent is refused with 429, `Retry-After` (seconds to 00:00 UTC) and the reason, "
    "and one that spends the rest stops calling and closes with the reason in `message` and its `budget` figures. "
    "A `pool` batch draws only from the team's own trajectories (and those of the teams in "
    "`batches.shared_pool`) and costs no call. When the task queue is unreachable the batch is marked failed with "
    "the reason (its slot is freed) and the answer is 503.",
    responses=errors(400, 401, 409, 413, 422, 429, 503),
)
async def create(
    body: BatchRequest, request: Request, store: StoreDep, settings: SettingsDep, who: PrincipalDep
) -> JSONResponse:
    batch = new_batch(store, settings, who.team, body)
    await dispatch(
        request,
        bool(settings.redis_url),
        "kopa.synthesize_batch",
        [batch.id],
        lambda: run_batch(store, settings, batch.id, verifier=DemandVerifier.factory(store, settings)),
        lambda reason: fail_batch(store, batch.id, reason),
    )
    return JSONResponse(BatchStarted.of(batch).model_dump(), status_code=202)


@router.get(
    "/{batch_id}",
    response_model_exclude_none=True,
    summary="Progress of a batch (your team's, or any for admins)",
    responses=errors(*READ_ERRORS, 404),
)
def get(batch_id: str, store: StoreDep, who: PrincipalDep) -> Batch:
    return _visible(store, batch_id, who)


#: The largest page of `/items` (the `limit` bound), rows read from the store per query while a page streams,
#: and the bytes gathered before each write: memory per stream is one chunk, whatever the page size.
MAX_ITEMS_PAGE = 10_000
ITEMS_CHUNK = 25
FLUSH_BYTES = 64 * 1024


class SlotStream(StreamingResponse):
    """A streamed response that frees its stream slot however it ends (sent, failed, or the client gone)."""

    def __init__(self, content: Iterator[bytes], *, release: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


@router.get(
    "/{batch_id}/items",
    summary="Stream a batch as JSON Lines (paginated; your team's, or any for admins)",
    description=f"Pages of at most {MAX_ITEMS_PAGE:,} items (`limit`), streamed from the store "
    f"{ITEMS_CHUNK} rows at a time: the server holds one chunk per stream, whatever the page size. A token may "
    "hold `batches.item_streams_per_token` streams open at once per API process (KOPA_BATCHES__ITEM_STREAMS_PER_TOKEN, "
    "default 4); one more is answered 429 with `Retry-After` and the reason.",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "one trajectory per line in the chosen format",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
            "headers": {
                "X-Total-Count": {"schema": {"type": "integer"}},
                "Link": {"schema": {"type": "string"}, "description": "rel=next page"},
            },
        },
        **errors(*READ_ERRORS, 404, 429),
    },
)
def items(
    batch_id: str,
    request: Request,
    store: StoreDep,
    settings: SettingsDep,
    who: PrincipalDep,
    offset: Offset = 0,
    limit: Annotated[
        int, Query(ge=1, le=MAX_ITEMS_PAGE, description=f"items in this page (1..{MAX_ITEMS_PAGE:,})")
    ] = 1000,
    format: Format | None = None,
) -> StreamingResponse:
    batch = _visible(store, batch_id, who)
    fmt = format or batch.format
    release = stream_slots(request).take(slot_key(who), settings.batches.item_streams_per_token)
    try:
        first, total = store.list_trajectories(batch_id, offset, min(limit, ITEMS_CHUNK))
    except BaseException:
        release()
        raise
    end = offset + limit

    def lines() -> Iterator[bytes]:
        """The page, chunk by chunk from the store, written about FLUSH_BYTES at a time."""
        page, at = first, offset
        out = bytearray()
        while page:
            for record in page:
                out += (json.dumps(convert(record, fmt), ensure_ascii=False) + "\n").encode()
                if len(out) >= FLUSH_BYTES:
                    yield bytes(out)
                    out.clear()
            at += len(page)
            if at >= end:
                break
            page, _ = store.list_trajectories(batch_id, at, min(end - at, ITEMS_CHUNK))
        if out:
            yield bytes(out)

    headers = {
        "X-Total-Count": str(total),
        "X-Offset": str(offset),
        "X-Format": fmt,
        "X-Batch-Status": batch.status,
    }
    if end < total:
        headers["Link"] = f'</v1/trajectory-batches/{batch_id}/items?offset={end}&limit={limit}>; rel="next"'
    return SlotStream(lines(), release=release, media_type="application/x-ndjson", headers=headers)


__all__ = ["FORMATS", "router"]
