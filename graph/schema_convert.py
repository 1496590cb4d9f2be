"""OpenAPI schema objects (3.0, 3.1, Swagger 2.0) to plain JSON Schema (draft 2020-12)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

_DROP = {"example", "examples", "xml", "externalDocs", "discriminator", "readOnly", "writeOnly", "deprecated"}


def pointer_parts(ref: str) -> list[str]:
    """The reference tokens of a local `$ref` ("#/..."). A `$ref` is a URI fragment, so it is percent-decoded
    first (`My%20Schema`, `%7Bid%7D`) and only then split and unescaped (`~1` is "/", `~0` is "~"; RFC 6901 §6)."""
    body = unquote(ref[2:]) if "%" in ref else ref[2:]
    return [part.replace("~1", "/").replace("~0", "~") for part in body.split("/")]


def resolve_ref(doc: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        raise KeyError(f"only local references are supported: {ref}")
    node: Any = doc
    for part in pointer_parts(ref):
        node = node[int(part)] if isinstance(node, list) and part.isdigit() else node[part]
    return node


def to_json_schema(schema: Any, doc: dict[str, Any], *, depth: int = 0) -> Any:
    """Inline local $refs and translate `nullable` / `x-nullable`; keeps descriptions, patterns and enums."""
    if depth > 40:
        return {}
    if isinstance(schema, list):
        return [to_json_schema(s, doc, depth=depth + 1) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return to_json_schema(resolve_ref(doc, schema["$ref"]), doc, depth=depth + 1)
    out: dict[str, Any] = {}
    nullable = bool(schema.get("nullable") or schema.get("x-nullable"))
    for key, value in schema.items():
        if key in _DROP or key in ("nullable", "x-nullable") or key.startswith("x-"):
            continue
        if key in ("properties", "patternProperties", "definitions", "$defs"):
            out[key] = {k: to_json_schema(v, doc, depth=depth + 1) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = to_json_schema(value, doc, depth=depth + 1)
        else:
            out[key] = value
    if nullable:
        t = out.get("type")
        if isinstance(t, str):
            out["type"] = [t, "null"]
        elif isinstance(t, list) and "null" not in t:
            out["type"] = [*t, "null"]
        elif "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out
