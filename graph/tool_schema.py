"""A tool as the model sees it and as the registry compares it: the function schema of its visible parameters
(typed enums, array items, defaults) and the hashes of its spec, params and fields (what a re-registration diffs)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from core.json_types import JsonObject
from graph.models import FieldRecord, ParamRecord, ToolRecord
from graph.openapi_load import MAX_DEPTH as MAX_DEPTH
from graph.openapi_load import load_document as load_document
from graph.openapi_names import MAX_NAME as MAX_NAME
from graph.openapi_names import snake as snake
from graph.openapi_schema import (
    JSON_MEDIA,
)
from graph.schema_convert import to_json_schema

#: The JSON Schema types a parameter value may have on its own.
SCALARS = ("string", "integer", "number", "boolean")


def content_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


def model_schema(description: str, params: list[ParamRecord]) -> JsonObject:
    """The JSON Schema of a tool's arguments, as shown to a model (no keys, no format switches). Enums keep
    their types, cast to the declared one, and an array's enum describes its items."""
    props: dict[str, Any] = {}
    for p in params:
        s: dict[str, Any] = {"type": p.type if p.type in (*SCALARS, "array") else "string"}
        one = s
        if p.type == "array":
            one = s["items"] = {"type": p.item_type if p.item_type in (*SCALARS, "object") else "string"}
        if p.description:
            s["description"] = p.description
        if p.enum:
            values = _enum_as(p.enum, one["type"])
            if values:
                one["enum"] = values
        if p.pattern:
            s["pattern"] = p.pattern
        if p.format:
            s["format"] = p.format
        props[p.name] = s
    schema: dict[str, Any] = {"type": "object", "properties": props}
    required = [p.name for p in params if p.required]
    if required:
        schema["required"] = required
    return to_json_schema(schema, {})  # type: ignore[no-any-return]


def _enum_as(values: list[Any], t: str) -> list[Any]:
    """Enum values of type `t`, so that the schema accepts its own enum: documents say `type: string` with
    `enum: [1, 2]`, or `type: integer` with `enum: ["1", "2"]`. A value that cannot take the type is left out."""
    out: list[Any] = []
    seen: set[tuple[type, Any]] = set()
    for v in values:
        c = _as_type(v, t)
        if c is not None and (type(c), c) not in seen:
            seen.add((type(c), c))
            out.append(c)
    return out


def _as_type(v: Any, t: str) -> Any:
    if v is None or isinstance(v, dict | list):
        return None
    if t == "string":
        return v if isinstance(v, str) else json.dumps(v) if isinstance(v, bool) else str(v)
    if t == "boolean":
        if isinstance(v, str):
            return {"true": True, "false": False}.get(v.strip().lower())
        return v if isinstance(v, bool) else None
    if isinstance(v, bool):
        return None  # JSON Schema keeps booleans apart from numbers
    if isinstance(v, str):
        text = v.strip()
        if re.fullmatch(r"[+-]?\d{1,40}", text):
            return int(text)
        try:
            v = float(text)
        except ValueError:
            return None
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        if v.is_integer():
            return int(v)
        return v if t == "number" else None
    return v if isinstance(v, int) else None


def json_value(enum: list[Any]) -> str | None:
    """The member of a format switch's enum that asks for JSON ("json", "JSON"); members need not be text."""
    return next((e for e in enum if isinstance(e, str) and e.strip().lower() == "json"), None)


def _implied_out(param: JsonObject) -> JsonObject:
    if param.get("item_type") in (None, "string"):  # what an array's items were taken to be before item_type
        param.pop("item_type", None)
    return param


def spec_hash(tool: ToolRecord) -> str:
    """What a call depends on: method, URL, parameters, fields, envelope, body encoding. Fields added since
    count only where they say more than the record implied before them (items were strings, a body was JSON),
    so an unchanged document keeps its hash and re-registering it reports no change."""
    d = tool.model_dump(include={"method", "url", "params", "fields", "envelope"})
    d["params"] = [_implied_out(p) for p in d["params"]]
    if tool.body_media not in (None, JSON_MEDIA):
        d["body_media"] = tool.body_media
    return content_hash(d)


def param_hash(p: ParamRecord) -> str:
    return content_hash(_implied_out(p.model_dump(exclude={"example", "description"})))


def field_hash(f: FieldRecord) -> str:
    return content_hash(f.model_dump(exclude={"example", "description"}))
