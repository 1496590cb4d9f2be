"""/v1/tools: the tools derived from registered operations, with the JSON Schema a model sees."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.deps import READ_ERRORS, KopaRoute, Offset, ReaderDep, StoreDep, errors
from core.errors import NotFound
from graph.models import ToolRecord
from graph.specs import function_spec

router = APIRouter(prefix="/v1/tools", tags=["tools"], route_class=KopaRoute)


class ToolSummary(BaseModel):
    name: str
    api_id: str
    method: str
    url: str
    summary: str
    status: str
    envelope: str


class ToolPage(BaseModel):
    items: list[ToolSummary]
    total: int
    offset: int
    limit: int


class ToolDetail(ToolRecord):
    function: dict[str, Any]


@router.get(
    "",
    response_model=ToolPage,
    summary="List tools (paginated; filter by API, text, status)",
    responses=errors(*READ_ERRORS),
)
def list_tools(
    store: StoreDep,
    _: ReaderDep,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    api_id: Annotated[str | None, Query(max_length=200)] = None,
    q: Annotated[str | None, Query(max_length=200, description="text in the name, summary or description")] = None,
    status: Literal["active", "retired", "all"] = "active",
) -> ToolPage:
    tools, total = store.list_tools(offset, limit, api_id, q, None if status == "all" else status)
    items = [
        ToolSummary(
            name=t.name,
            api_id=t.api_id,
            method=t.method,
            url=t.url,
            summary=t.summary,
            status=t.status,
            envelope=t.envelope,
        )
        for t in tools
    ]
    return ToolPage(items=items, total=total, offset=offset, limit=limit)


@router.get(
    "/{name}",
    response_model=ToolDetail,
    summary="One tool, with parameters, output fields and JSON Schema",
    responses=errors(*READ_ERRORS, 404),
)
def get_tool(name: str, store: StoreDep, _: ReaderDep) -> ToolDetail:
    tool = store.get_tool(name)
    if tool is None:
        raise NotFound(f"no tool {name!r}; GET /v1/tools?q=... searches them")
    return ToolDetail(**tool.model_dump(), function=function_spec(tool))
