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
    found,
)
from core.errors import InvalidInput, KopaError
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


#: The bounds of the registration metadata the server enforces, stated in the schema of the query parameters and
#: of the wrapper's `metadata` alike (RegistrationMeta, the secret policy's variable names, the daily counters).
API_ID = r"^[a-z0-9][a-z0-9_\-]{1,62}$"
SECRET_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
#: The query parameters are checked where the metadata is (one message and pointer for both ways of giving
#: them): their schema states the same patterns. An empty `secret_name` is no name.
SECRET_NAME_OR_EMPTY = r"^([A-Za-z_][A-Za-z0-9_]{0,127})?$"
MAX_RATE_PER_S = 10_000
MAX_DAILY_QUOTA = 10**9

_DOC_PROPERTIES: dict[str, Any] = {
    "openapi": {"type": "string", "example": "3.0.3"},
    "swagger": {"type": "string"},
    "info": {"type": "object"},
    "servers": {"type": "array", "items": {"type": "object"}},
    "host": {"type": "string"},
    "paths": {"type": "object"},
}
#: An OpenAPI 3 or Swagger 2.0 document, whether or not it names its server.
_ANY_DOC = {
    "type": "object",
    "description": "an OpenAPI 3.0/3.1 (`openapi`) or Swagger 2.0 (`swagger`) document",
    "anyOf": [{"required": ["openapi"]}, {"required": ["swagger"]}],
    "properties": _DOC_PROPERTIES,
    "additionalProperties": True,
}
#: Where its API is served, which a registration needs (or `base_url`): servers[0].url (OpenAPI 3) or host
#: (Swagger 2.0). A relative server URL needs base_url too.
_NAMES_SERVER = {
    "anyOf": [
        {
            "required": ["openapi", "servers"],
            "properties": {
                "servers": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["url"],
                        "properties": {"url": {"type": "string", "minLength": 1}},
                    },
                }
            },
        },
        {"required": ["swagger", "host"], "properties": {"host": {"type": "string", "pattern": "[^/]"}}},
    ]
}
_OPENAPI_DOC = {
    **_ANY_DOC,
    "description": "an OpenAPI 3.0/3.1 (`openapi`) or Swagger 2.0 (`swagger`) document that names its server: "
    "`servers[0].url`, an absolute http(s) URL (OpenAPI 3), or `host` (Swagger 2.0). A document without one is "
    "registered only with `base_url` (the query parameter, or `metadata.base_url` in the wrapper)",
    "allOf": [_NAMES_SERVER],
}
_AUTH = {
    "type": "object",
    "properties": {
        "scheme": {"type": "string", "enum": ["query_key", "header_key", "cookie_key", "none"], "default": "query_key"},
        "param": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "secret": {
            "anyOf": [{"type": "string", "pattern": SECRET_NAME}, {"type": "null"}],
            "description": "the NAME of the environment variable holding the key (KOPA_SECRET_NAMES)",
        },
    },
}
_METADATA = {
    "type": "object",
    "properties": {
        "api_id": {
            "anyOf": [{"type": "string", "pattern": API_ID}, {"type": "null"}],
            "description": "stable id; derived if absent",
        },
        "base_url": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "description": "override of the document's server URL",
        },
        "auth": {"anyOf": [_AUTH, {"type": "null"}]},
        "rate_limit_per_s": {
            "anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": MAX_RATE_PER_S}, {"type": "null"}]
        },
        "daily_quota": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": MAX_DAILY_QUOTA}, {"type": "null"}]},
    },
}
_WRAPPER = {
    "type": "object",
    "required": ["document"],
    "description": "the document (an object, or a JSON/YAML string) with registration metadata; a document object "
    "that names no server needs `metadata.base_url`",
    # a body with `openapi` or `swagger` at the top is the document itself, never a wrapper
    "not": {"anyOf": [{"required": ["openapi"]}, {"required": ["swagger"]}]},
    "properties": {"document": {"oneOf": [_ANY_DOC, {"type": "string"}]}, "metadata": _METADATA},
    "anyOf": [
        {"properties": {"document": {"anyOf": [_NAMES_SERVER, {"type": "string"}]}}},
        {
            "required": ["metadata"],
            "properties": {"metadata": {"required": ["base_url"], "properties": {"base_url": {"type": "string"}}}},
        },
    ],
}
REQUEST_BODY = {
    "required": True,
    "description": "The API document as JSON or YAML (at most 20 MiB), or a JSON wrapper with metadata. The "
    "document names its server (`servers[0].url` or Swagger's `host`), or `base_url` is given.",
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
    quota = data.get("daily_quota")
    if isinstance(quota, int) and not isinstance(quota, bool) and quota > MAX_DAILY_QUOTA:
        raise InvalidInput(
            f"daily_quota is at most {MAX_DAILY_QUOTA:,} calls a day (0 or absent: no quota)",
            locations=[{"pointer": "/metadata/daily_quota", "message": f"above {MAX_DAILY_QUOTA}"}],
        )
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
    api_id: Annotated[
        str | None, Query(json_schema_extra={"pattern": API_ID}, description="stable API id (derived when absent)")
    ] = None,
    base_url: Annotated[
        str | None,
        Query(description="override of the document's server URL (needed when the document names none)"),
    ] = None,
    auth_param: Annotated[str | None, Query(description="query parameter carrying the key, e.g. serviceKey")] = None,
    secret_name: Annotated[
        str | None,
        Query(
            json_schema_extra={"pattern": SECRET_NAME_OR_EMPTY},
            description="NAME of the environment variable holding the key (never the key; empty: none given)",
        ),
    ] = None,
    rate_limit_per_s: Annotated[float | None, Query(gt=0, le=MAX_RATE_PER_S)] = None,
    daily_quota: Annotated[
        int | None, Query(ge=0, le=MAX_DAILY_QUOTA, description="upstream calls a day (0: no quota)")
    ] = None,
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


@router.get("", summary="List registered APIs", responses=errors(*READ_ERRORS))
def list_apis(
    store: StoreDep, _: ReaderDep, offset: Offset = 0, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> ApiPage:
    items, total = store.list_apis(offset, limit)
    return ApiPage(items=items, total=total, offset=offset, limit=limit)


@router.get("/{api_id}", summary="One API with its tools", responses=errors(*READ_ERRORS, 404))
def get_api(api_id: str, store: StoreDep, _: ReaderDep) -> ApiDetail:
    api = found(store.get_api(api_id), f"no API {api_id!r}; GET /v1/apis lists the registered ones")
    tools = [
        ToolRef(name=t.name, op=t.op_key, status=t.status)
        for t in sorted(store.tools_of_api(api_id), key=lambda t: t.name)
    ]
    return ApiDetail(api=api, tools=tools)


@router.delete(
    "/{api_id}",
    summary="Delete an API, its tools and their links",
    responses=errors(401, 403, 404, 422, 503),
)
def delete_api(api_id: str, store: StoreDep, _: AdminDep) -> Deleted:
    return Deleted(deleted=api_id, tools_removed=unregister(store, api_id))
