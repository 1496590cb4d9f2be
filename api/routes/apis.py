"""/v1/apis: register, list, inspect and delete API documents."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from api.deps import (
    READ_ERRORS,
    WRITE_ERRORS,
    AdminDep,
    KopaRoute,
    Offset,
    ReaderDep,
    SettingsDep,
    StoreDep,
    errors,
)
from core.errors import InvalidInput, KopaError, NotFound
from graph.models import ApiRecord, AuthConfig, RegistrationMeta, RegistrationResult
from graph.openapi import load_document
from graph.registry import register, unregister

router = APIRouter(prefix="/v1/apis", tags=["apis"], route_class=KopaRoute)
MAX_DOCUMENT = 20 * 1024 * 1024


class TooLarge(KopaError):
    status_code = 413
    code = "document_too_large"


class ApiPage(BaseModel):
    items: list[ApiRecord]
    total: int
    offset: int
    limit: int


class ToolRef(BaseModel):
    name: str
    op: str
    status: str


class ApiDetail(BaseModel):
    api: ApiRecord
    tools: list[ToolRef]


class Deleted(BaseModel):
    deleted: str
    tools_removed: int


_OPENAPI_DOC = {
    "type": "object",
    "description": "an OpenAPI 3.0/3.1 (`openapi`) or Swagger 2.0 (`swagger`) document",
    "properties": {
        "openapi": {"type": "string", "example": "3.0.3"},
        "swagger": {"type": "string"},
        "info": {"type": "object"},
        "servers": {"type": "array", "items": {"type": "object"}},
        "paths": {"type": "object"},
    },
    "additionalProperties": True,
}
_WRAPPER = {
    "type": "object",
    "required": ["document"],
    "description": "the document (an object, or a JSON/YAML string) with registration metadata",
    "properties": {
        "document": {"oneOf": [_OPENAPI_DOC, {"type": "string"}]},
        "metadata": {
            k: v
            for k, v in RegistrationMeta.model_json_schema(ref_template="#/components/schemas/{model}").items()
            if k != "$defs"
        },
    },
}
REQUEST_BODY = {
    "required": True,
    "description": "The API document as JSON or YAML (at most 20 MiB), or a JSON wrapper with metadata.",
    "content": {
        "application/json": {"schema": {"oneOf": [_OPENAPI_DOC, _WRAPPER]}},
        "application/yaml": {"schema": {"type": "string", "description": "an OpenAPI or Swagger document in YAML"}},
        "application/x-yaml": {"schema": {"type": "string"}},
        "text/yaml": {"schema": {"type": "string"}},
    },
}


def _meta(body_meta: Any, query: dict[str, Any]) -> RegistrationMeta:
    if body_meta is not None and not isinstance(body_meta, dict):
        raise InvalidInput(
            "metadata must be an object", locations=[{"pointer": "/metadata", "message": "not an object"}]
        )
    data: dict[str, Any] = dict(body_meta or {})
    auth_in = data.pop("auth", None) or {}
    if not isinstance(auth_in, dict):
        raise InvalidInput(
            "metadata.auth must be an object", locations=[{"pointer": "/metadata/auth", "message": "not an object"}]
        )
    auth = dict(auth_in)
    for key in ("api_id", "base_url", "rate_limit_per_s", "daily_quota"):
        if query.get(key) is not None:
            data[key] = query[key]
    if query.get("auth_param"):
        auth["param"] = query["auth_param"]
    if query.get("secret_name"):
        auth["secret"] = query["secret_name"]
    try:
        if auth:
            data["auth"] = AuthConfig.model_validate(auth)
        return RegistrationMeta.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(
            "invalid registration metadata",
            locations=[
                {"pointer": "/metadata/" + "/".join(str(p) for p in e["loc"]), "message": e["msg"]}
                for e in exc.errors()
            ],
        ) from exc


@router.post(
    "",
    status_code=201,
    response_model=RegistrationResult,
    summary="Register (or re-register) an API document",
    description="Body: an OpenAPI 3.0/3.1 or Swagger 2.0 document as JSON or YAML, or a JSON wrapper "
    '`{"document": {...}, "metadata": {...}}`. Metadata can also come as query parameters. '
    "201 when the API is new, 200 when an existing one was updated (changed operations updated, "
    "removed ones retired, links touching changed parameters/fields flagged for re-verification).",
    responses={200: {"description": "updated", "model": RegistrationResult}, **errors(*WRITE_ERRORS)},
    openapi_extra={"requestBody": REQUEST_BODY},
)
async def post_api(
    request: Request,
    store: StoreDep,
    settings: SettingsDep,
    _: AdminDep,
    api_id: Annotated[str | None, Query(description="stable API id (derived when absent)")] = None,
    base_url: Annotated[str | None, Query(description="override of the document's server URL")] = None,
    auth_param: Annotated[str | None, Query(description="query parameter carrying the key, e.g. serviceKey")] = None,
    secret_name: Annotated[str | None, Query(description="NAME of the secret holding the key (never the key)")] = None,
    rate_limit_per_s: Annotated[float | None, Query(gt=0)] = None,
    daily_quota: Annotated[int | None, Query(ge=0)] = None,
) -> Any:
    raw = await request.body()
    if len(raw) > MAX_DOCUMENT:
        raise TooLarge(f"documents are limited to {MAX_DOCUMENT // (1024 * 1024)} MiB")
    try:
        parsed = await run_in_threadpool(load_document, raw, request.headers.get("content-type", ""))
    except UnicodeDecodeError as exc:
        raise InvalidInput("the body is not UTF-8", locations=[{"pointer": "/", "message": str(exc)}]) from exc
    body_meta = None
    if isinstance(parsed, dict) and "document" in parsed and "openapi" not in parsed and "swagger" not in parsed:
        body_meta = parsed.get("metadata")
        parsed = parsed["document"]
        if isinstance(parsed, str):
            parsed = await run_in_threadpool(load_document, parsed)
    meta = _meta(
        body_meta,
        {
            "api_id": api_id,
            "base_url": base_url,
            "auth_param": auth_param,
            "secret_name": secret_name,
            "rate_limit_per_s": rate_limit_per_s,
            "daily_quota": daily_quota,
        },
    )
    result = await run_in_threadpool(register, store, settings, parsed, meta)
    return JSONResponse(result.model_dump(mode="json"), status_code=201 if result.created else 200)


@router.get("", response_model=ApiPage, summary="List registered APIs", responses=errors(*READ_ERRORS))
def list_apis(
    store: StoreDep, _: ReaderDep, offset: Offset = 0, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> ApiPage:
    items, total = store.list_apis(offset, limit)
    return ApiPage(items=items, total=total, offset=offset, limit=limit)


@router.get(
    "/{api_id}", response_model=ApiDetail, summary="One API with its tools", responses=errors(*READ_ERRORS, 404)
)
def get_api(api_id: str, store: StoreDep, _: ReaderDep) -> ApiDetail:
    api = store.get_api(api_id)
    if api is None:
        raise NotFound(f"no API {api_id!r}; GET /v1/apis lists the registered ones")
    tools = [
        ToolRef(name=t.name, op=t.op_key, status=t.status)
        for t in sorted(store.tools_of_api(api_id), key=lambda t: t.name)
    ]
    return ApiDetail(api=api, tools=tools)


@router.delete(
    "/{api_id}",
    response_model=Deleted,
    summary="Delete an API, its tools and their links",
    responses=errors(401, 403, 404, 422, 503),
)
def delete_api(api_id: str, store: StoreDep, _: AdminDep) -> Deleted:
    return Deleted(deleted=api_id, tools_removed=unregister(store, api_id))
