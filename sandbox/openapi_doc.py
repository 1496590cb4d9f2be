"""The shapes of the documents the sandbox publishes: OpenAPI 3 documents, their Swagger 2.0 renditions and the JSON
schemas inside them, as TypedDicts, so that the catalog builder and its readers are checked against one shape.
Only the members the sandbox writes are declared."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from core.json_types import JsonObject, JsonValue

#: A JSON schema as the catalog writes one (OpenAPI 3.0 dialect: `nullable`, `example`).
Schema = TypedDict(
    "Schema",
    {
        "$ref": str,
        "type": str,
        "description": str,
        "properties": "dict[str, Schema]",
        "items": "Schema",
        "anyOf": "list[Schema]",
        "required": list[str],
        "nullable": bool,
        "example": JsonValue,
        "default": JsonValue,
        "pattern": str,
        "enum": list[str],
        "format": str,
        "minItems": int,
        "maxItems": int,
    },
    total=False,
)


class ParamSchema(TypedDict):
    """The schema of a query parameter (a scalar)."""

    type: str
    pattern: NotRequired[str]
    enum: NotRequired[list[str]]
    format: NotRequired[str]
    default: NotRequired[JsonValue]


Parameter = TypedDict(
    "Parameter",
    {
        "name": str,
        "in": str,
        "required": bool,
        "description": str,
        "schema": ParamSchema,
        "example": NotRequired[JsonValue],
    },
)


class MediaType(TypedDict):
    schema: Schema
    example: NotRequired[JsonValue]


class Response(TypedDict):
    description: str
    content: dict[str, MediaType]


class RequestBody(TypedDict):
    required: bool
    content: dict[str, MediaType]


OperationDoc = TypedDict(
    "OperationDoc",
    {
        "operationId": str,
        "summary": str,
        "description": str,
        "tags": list[str],
        "parameters": list[Parameter],
        "responses": dict[str, Response],
        "x-kopa-intent": NotRequired[str],
        "requestBody": NotRequired[RequestBody],
    },
)
Info = TypedDict(
    "Info",
    {
        "title": str,
        "version": str,
        "description": str,
        "x-provider": str,
        "x-provider-service": str,
        # set on the documents of a generated catalog (sandbox/generated.py)
        "x-kopa-generated": NotRequired[JsonObject],
    },
)


class Server(TypedDict):
    url: str


SecurityScheme = TypedDict("SecurityScheme", {"type": str, "in": str, "name": str, "description": str})


class Components(TypedDict):
    securitySchemes: dict[str, SecurityScheme]
    schemas: dict[str, Schema]


class OpenApiDocument(TypedDict):
    openapi: str
    info: Info
    servers: list[Server]
    security: list[dict[str, list[str]]]
    paths: dict[str, dict[str, OperationDoc]]  # sub-path -> method -> operation
    components: Components


#: A Swagger 2.0 query parameter: its schema's members stand on the parameter itself.
Swagger2Param = TypedDict(
    "Swagger2Param",
    {
        "name": str,
        "in": str,
        "required": bool,
        "description": str,
        "type": str,
        "pattern": NotRequired[str],
        "enum": NotRequired[list[str]],
        "format": NotRequired[str],
        "default": NotRequired[JsonValue],
    },
)


class Swagger2Response(TypedDict):
    description: str
    schema: Schema


class Swagger2Operation(TypedDict):
    operationId: str
    summary: str
    description: str
    tags: list[str]
    produces: list[str]
    parameters: list[Swagger2Param]
    responses: dict[str, Swagger2Response]


class Swagger2Document(TypedDict):
    swagger: str
    info: Info
    host: str
    basePath: str
    schemes: list[str]
    paths: dict[str, dict[str, Swagger2Operation]]
    definitions: JsonObject  # the schemas, `nullable` spelt `x-nullable` and `anyOf` reduced to its first form


class Catalog(TypedDict):
    openapi: dict[str, OpenApiDocument]  # by document id
    swagger2: dict[str, Swagger2Document]
    hosts: dict[str, str]  # real host -> sandbox path prefix
