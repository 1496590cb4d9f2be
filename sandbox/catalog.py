"""The OpenAPI catalog of the sandbox: one OpenAPI 3 document per service, plus Swagger 2.0 renditions of a few
services as the portal publishes them. Documents name the real server URLs; `hosts` maps each real host to the
sandbox path, so production and the sandbox differ only by base URL.

`kopa sandbox catalog --write` regenerates the shipped files from the operation declarations; a test keeps the
shipped files and the declarations identical.
"""

from __future__ import annotations

import json
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

from core.json_types import JsonObject, JsonValue
from core.settings import SandboxSettings
from sandbox.examples import example_args
from sandbox.openapi_doc import (
    Catalog,
    MediaType,
    OpenApiDocument,
    OperationDoc,
    Parameter,
    ParamSchema,
    Schema,
    SecurityScheme,
    Swagger2Document,
    Swagger2Operation,
    Swagger2Param,
)
from sandbox.providers import all_operations
from sandbox.spec import Field, Operation, Param, Provider
from sandbox.world import get_world

SWAGGER2_SERVICES = ("StanReginCd", "VilageFcstInfoService_2.0", "KorService2", "hospInfoServicev2")
REAL_HOSTS = ("apis.data.go.kr", "business.juso.go.kr", "api.odcloud.kr")


def doc_id(op: Operation) -> str:
    return op.service if op.provider.gateway == "datagokr" else f"{op.provider.key}-{op.service}"


def _param_schema(p: Param) -> ParamSchema:
    schema: ParamSchema = {"type": p.type}
    if p.pattern:
        schema["pattern"] = p.pattern
    if p.enum:
        schema["enum"] = list(p.enum)
    if p.format:
        schema["format"] = p.format
    if p.default is not None:
        schema["default"] = _typed(p.default, p.type)
    return schema


def _typed(value: str, kind: str) -> JsonValue:
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
    except (TypeError, ValueError):
        pass
    return value


def _field_schema(f: Field, provider: Provider) -> Schema:
    if provider.digits_as_numbers and f.type == "string":
        schema: Schema = {"anyOf": [{"type": "string"}, {"type": "number"}]}
    else:
        schema = {"type": f.type}
        if f.type in ("integer", "number") and provider.envelope != "molit_json":
            # XML-derived JSON from most providers carries numbers as strings too.
            schema = {"anyOf": [{"type": f.type}, {"type": "string"}]}
    schema["description"] = f.description
    if f.example is not None:
        schema["example"] = f.example
    if f.nullable:
        schema["nullable"] = True
    return schema


def item_schema(op: Operation) -> Schema:
    return {"type": "object", "properties": {f.name: _field_schema(f, op.provider) for f in op.fields}}


def _count(provider: Provider) -> Schema:
    if "json" not in provider.formats:
        return {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    return {"type": "string"} if provider.page_numbers_as_strings else {"type": "integer"}


def envelope_schema(op: Operation, item_ref: Schema) -> Schema:
    """JSON schema of the success envelope, quirks included (single item as object, empty items as "")."""
    p = op.provider
    header: Schema = {
        "type": "object",
        "properties": {
            "resultCode": {"type": "string", "description": "결과코드"},
            "resultMsg": {"type": "string", "description": "결과메세지"},
        },
    }
    counts: dict[str, Schema] = {"numOfRows": _count(p), "pageNo": _count(p), "totalCount": _count(p)}
    array: Schema = {"type": "array", "items": item_ref}
    if p.envelope == "stanreg":
        return {
            "type": "object",
            "properties": {
                "StanReginCd": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"head": {"type": "array", "items": {"type": "object"}}, "row": array},
                    },
                }
            },
        }
    if p.envelope == "juso":
        common: Schema = {
            "type": "object",
            "properties": {
                k: {"type": "string"}
                for k in ("errorMessage", "countPerPage", "totalCount", "errorCode", "currentPage")
            },
        }
        return {
            "type": "object",
            "properties": {
                "results": {"type": "object", "properties": {"common": common, "juso": {**array, "nullable": True}}}
            },
        }
    if p.envelope == "odcloud":
        return {
            "type": "object",
            "properties": {
                "request_cnt": {"type": "integer"},
                "match_cnt": {"type": "integer"},
                "valid_cnt": {"type": "integer"},
                "status_code": {"type": "string"},
                "data": array,
            },
        }
    if p.envelope == "mfds":
        return {
            "type": "object",
            "properties": {"header": header, "body": {"type": "object", "properties": {**counts, "items": array}}},
        }
    if p.envelope == "airkorea":
        body: Schema = {"type": "object", "properties": {**counts, "items": {"anyOf": [array, {"type": "string"}]}}}
    elif p.envelope == "molit_json":
        body = {"type": "object", "properties": {"item": item_ref} if op.single else {**counts, "items": array}}
    else:
        item: Schema = {"anyOf": [array, item_ref]} if p.single_as_object else array
        items: Schema = {"type": "object", "properties": {"item": item}}
        body_props: dict[str, Schema] = {**counts, "items": {"anyOf": [items, {"type": "string"}]}}
        if p.kma_datatype_in_body:
            body_props["dataType"] = {"type": "string"}
        body = {"type": "object", "properties": body_props}
    return {
        "type": "object",
        "properties": {"response": {"type": "object", "properties": {"header": header, "body": body}}},
    }


def _operation_doc(op: Operation, schema_name: str, examples: JsonObject) -> OperationDoc:
    params: list[Parameter] = []
    for p in op.params:
        if p.name in ("serviceKey", "confmKey"):
            continue
        entry: Parameter = {
            "name": p.name,
            "in": "query",
            "required": p.required,
            "description": p.description,
            "schema": _param_schema(p),
        }
        example = examples.get(p.name, p.example)
        if example is not None:
            entry["example"] = _typed(str(example), p.type)
        params.append(entry)
    ref: Schema = {"$ref": f"#/components/schemas/{schema_name}Response"}
    content: dict[str, MediaType] = {"application/json": {"schema": ref}}
    if "xml" in op.provider.formats:
        content["application/xml"] = {"schema": ref}
    doc: OperationDoc = {
        "operationId": op.name.replace(".do", "").replace(".", "_"),
        "summary": op.summary,
        "description": op.description,
        "tags": [op.provider.title],
        "parameters": params,
        "responses": {
            "200": {"description": "성공 (제공기관 오류도 HTTP 200 본문의 resultCode로 전달됩니다)", "content": content}
        },
    }
    if op.intent:
        doc["x-kopa-intent"] = op.intent
    if op.body_schema is not None:
        body: MediaType = {"schema": op.body_schema}
        if "__body__" in examples:
            body["example"] = examples["__body__"]
        doc["requestBody"] = {"required": True, "content": {"application/json": body}}
    return doc


def _security(provider: Provider) -> dict[str, SecurityScheme]:
    name = provider.key_param
    return {
        name: {
            "type": "apiKey",
            "in": "query",
            "name": name,
            "description": "공공데이터포털 또는 제공기관에서 발급받은 인증키 (URL 인코딩 1회)",
        }
    }


def build_openapi() -> dict[str, OpenApiDocument]:
    examples = example_args(get_world(SandboxSettings().seed))
    groups: dict[str, list[Operation]] = defaultdict(list)
    for op in all_operations():
        groups[doc_id(op)].append(op)
    docs: dict[str, OpenApiDocument] = {}
    for did, ops in groups.items():
        p = ops[0].provider
        paths: dict[str, dict[str, OperationDoc]] = {}
        schemas: dict[str, Schema] = {}
        for op in ops:
            sname = op.name.replace(".do", "").replace(".", "_")
            schemas[f"{sname}Item"] = item_schema(op)
            schemas[f"{sname}Response"] = envelope_schema(op, {"$ref": f"#/components/schemas/{sname}Item"})
            sub = "/" + op.path.rsplit("/", 1)[1]
            paths[sub] = {op.method.lower(): _operation_doc(op, sname, examples.get(op.op_id, {}))}
        docs[did] = {
            "openapi": "3.0.3",
            "info": {
                "title": f"{p.title} ({ops[0].service})",
                "version": "1.0.0",
                "description": f"{p.org} 제공. 응답 형식 파라미터: {p.format_param or '없음'} "
                f"(기본 {p.formats[0].upper()}). 일일 트래픽(개발계정): {p.daily_quota or '제한 없음'}.",
                "x-provider": p.org,
                "x-provider-service": p.title,
            },
            "servers": [{"url": f"https://{p.host}{ops[0].service_path}"}],
            "security": [{p.key_param: []}],
            "paths": paths,
            "components": {"securitySchemes": _security(p), "schemas": schemas},
        }
    return docs


def _swagger2(did: str, doc: OpenApiDocument) -> Swagger2Document:
    """A Swagger 2.0 rendition, portal style: the key is an ordinary query parameter."""
    server = doc["servers"][0]["url"]
    host, _, base = server.removeprefix("https://").partition("/")
    key_name = next(iter(doc["components"]["securitySchemes"]))
    paths: dict[str, dict[str, Swagger2Operation]] = {}
    for sub, methods in doc["paths"].items():
        for method, op in methods.items():
            params: list[Swagger2Param] = [
                {
                    "name": key_name,
                    "in": "query",
                    "required": True,
                    "type": "string",
                    "description": "공공데이터포털에서 받은 인증키",
                }
            ]
            for prm in op["parameters"]:
                entry: Swagger2Param = {
                    "name": prm["name"],
                    "in": "query",
                    "required": prm["required"],
                    "description": prm["description"],
                    **prm["schema"],
                }
                params.append(entry)
            ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
            paths[sub] = {
                method: {
                    "operationId": op["operationId"],
                    "summary": op["summary"],
                    "description": op["description"],
                    "tags": op["tags"],
                    "produces": ["application/json", "application/xml"],
                    "parameters": params,
                    "responses": {
                        "200": {
                            "description": "성공",
                            "schema": {"$ref": ref.replace("components/schemas", "definitions")},
                        }
                    },
                }
            }
    definitions = json.loads(
        json.dumps(doc["components"]["schemas"]).replace("#/components/schemas/", "#/definitions/")
    )
    return {
        "swagger": "2.0",
        "info": doc["info"],
        "host": host,
        "basePath": "/" + base,
        "schemes": ["https", "http"],
        "paths": paths,
        "definitions": _nullable_to_x(definitions),
    }


def _nullable_to_x(obj: Any) -> Any:
    """Swagger 2.0 has no `nullable` and no `anyOf`: the portal documents the plain (list) form only, and uses
    the `x-nullable` extension."""
    if isinstance(obj, dict):
        if "anyOf" in obj:
            rest = {k: v for k, v in obj.items() if k != "anyOf"}
            return _nullable_to_x({**obj["anyOf"][0], **rest})
        return {("x-nullable" if k == "nullable" else k): _nullable_to_x(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nullable_to_x(v) for v in obj]
    return obj


def build_catalog() -> Catalog:
    openapi = build_openapi()
    return {
        "openapi": openapi,
        "swagger2": {d: _swagger2(d, openapi[d]) for d in SWAGGER2_SERVICES},
        "hosts": {h: "" for h in REAL_HOSTS},
    }


def catalog_dir() -> Path:
    return Path(str(resources.files("sandbox").joinpath("catalog")))


def write_catalog(target: Path | None = None) -> list[Path]:
    target = target or catalog_dir()
    cat = build_catalog()
    (target / "swagger2").mkdir(parents=True, exist_ok=True)
    files: list[tuple[Path, OpenApiDocument | Swagger2Document]] = [
        *((target / f"{did}.json", doc) for did, doc in cat["openapi"].items()),
        *((target / "swagger2" / f"{did}.json", doc) for did, doc in cat["swagger2"].items()),
    ]
    for path, doc in files:
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return [path for path, _ in files]


def shipped_documents() -> dict[str, dict[str, Any]]:
    """The OpenAPI 3 documents shipped in the package, by service id."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(catalog_dir().glob("*.json"))}


def shipped_swagger2() -> dict[str, dict[str, Any]]:
    return {
        p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((catalog_dir() / "swagger2").glob("*.json"))
    }
