"""Parsing API bodies safely: JSON, or XML turned into the JSON shape that XML-to-JSON gateways produce.

XML is parsed with defusedxml (no entity expansion, no external entities); bodies over `MAX_BODY` bytes are
refused. A repeated tag becomes a list, a single one an object, a leaf its text ("" when empty).
"""

from __future__ import annotations

from typing import Any

import defusedxml.ElementTree as DET
import orjson

from core.json_types import JsonObject, JsonValue

MAX_BODY = 8 * 1024 * 1024


class PayloadError(ValueError):
    """The body cannot be read as JSON or XML (malformed, truncated, hostile or too large)."""


def _element(e: Any) -> JsonValue:
    children = list(e)
    if not children:
        return str((e.text or "").strip() if (e.text or "").strip() else (e.text or ""))
    out: dict[str, JsonValue] = {}
    for child in children:
        value = _element(child)
        if child.tag in out:
            prev = out[child.tag]
            if isinstance(prev, list) and getattr(prev, "_repeated", False):
                prev.append(value)
            else:
                lst = _RepeatList([prev, value])
                out[child.tag] = lst
        else:
            out[child.tag] = value
    return {k: list(v) if isinstance(v, _RepeatList) else v for k, v in out.items()}


class _RepeatList(list[JsonValue]):
    _repeated = True


def xml_to_obj(body: bytes) -> JsonObject:
    if len(body) > MAX_BODY:
        raise PayloadError(f"body of {len(body)} bytes is over the {MAX_BODY} byte limit")
    try:
        root = DET.fromstring(body)
    except DET.ParseError as exc:
        raise PayloadError(f"malformed XML: {exc}") from exc
    except Exception as exc:  # defusedxml raises its own errors for entity tricks
        raise PayloadError(f"refused XML: {type(exc).__name__}") from exc
    return {root.tag: _element(root)}


def parse_body(body: bytes, content_type: str = "") -> Any:
    """JSON or XML (by content, not only by the declared type, since providers mislabel: text/html JSON)."""
    if len(body) > MAX_BODY:
        raise PayloadError(f"body of {len(body)} bytes is over the {MAX_BODY} byte limit")
    text = body.lstrip()[:1]
    if text in (b"{", b"["):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise PayloadError(f"malformed JSON: {exc}") from exc
    if text == b"<":
        return xml_to_obj(body)
    raise PayloadError(f"neither JSON nor XML (content type {content_type or 'unknown'})")
