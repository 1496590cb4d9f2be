"""/v1/tools: the tools derived from registered operations, with the JSON Schema a model sees."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.deps import READ_ERRORS, KopaRoute, Offset, ReaderDep, StoreDep, errors, found
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
    items = [ToolSummary.model_validate(t, from_attributes=True) for t in tools]
    return ToolPage(items=items, total=total, offset=offset, limit=limit)


@router.get(
    "/{name}",
    summary="One tool, with parameters, output fields and JSON Schema",
    responses=errors(*READ_ERRORS, 404),
)
def get_tool(name: str, store: StoreDep, _: ReaderDep) -> ToolDetail:
    tool = found(store.get_tool(name), f"no tool {name!r}; GET /v1/tools?q=... searches them")
    return ToolDetail(**tool.model_dump(), function=function_spec(tool))
