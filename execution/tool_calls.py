"""Tool calls a model wrote as text: the one reader of the training probes and the benchmark's text fallback.

Chat templates render a call in one of two forms, both inside `<tool_call>` ... `</tool_call>`:

* Hermes JSON (Qwen2.5, Qwen3): `{"name": NAME, "arguments": {...}}` (`parameters` is read like `arguments`,
  and arguments given as a JSON string are decoded);
* Qwen3.5 XML: `<function=NAME>` with one `<parameter=P>` ... `</parameter>` per argument, then `</function>`.
  A value is plain text with one newline either side; it is kept as text for a parameter whose schema says
  `string`, else read as JSON when it parses (numbers, lists, objects, booleans) and kept as text when it does not,
  as vLLM's `qwen3_coder` parser and trl's `parse_response` type it.

Text without a `<tool_call>` block is read as XML `<function=...>` blocks standing alone, or as one bare JSON object
with a `name` and `arguments` (a server or model that dropped the wrapper). A block that cannot be read is a call
with an `error`, never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.json_types import JsonObject

_BLOCK = re.compile(r"<tool_call>(.*?)(</tool_call>|$)", re.S)
_FUNCTION = re.compile(r"<function=([^>]*)>(.*?)(</function>|$)", re.S)
_PARAMETER = re.compile(r"<parameter=([^>]*)>(.*?)</parameter>", re.S)
_THINK = re.compile(r"<think>.*?</think>", re.S)
RAW_CHARS = 500


@dataclass(frozen=True)
class TextCall:
    """One call read from text: `arguments` is None and `error` says why when the call could not be read."""

    name: str
    arguments: dict[str, Any] | None
    raw: str = ""
    error: str = ""
    form: str = "json"  # "json" (Hermes or bare object) or "xml" (Qwen3.5)
    wrapped: bool = True  # inside a `<tool_call>` block
    closed: bool = True  # the block (and its `<function=...>`) ended with its closing tag

    @property
    def ok(self) -> bool:
        """Read without error from a complete `<tool_call>` block: what a template-following model writes."""
        return not self.error and self.wrapped and self.closed


def strip_think(text: str) -> str:
    """The text without reasoning: `<think>...</think>` blocks, everything up to a lone `</think>` (templates that
    open the block in the prompt), and an unclosed `<think>` to the end (a reply cut off while reasoning)."""
    text = _THINK.sub("", text)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    if "<think>" in text:
        text = text.split("<think>", 1)[0]
    return text.strip()


def _schemas(tools: Sequence[dict[str, Any]] | None) -> dict[str, JsonObject]:
    """Parameter schemas (`properties`) by tool name, from OpenAI-style tool definitions."""
    out: dict[str, JsonObject] = {}
    for tool in tools or ():
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            props = params.get("properties") if isinstance(params, dict) else None
            out[fn["name"]] = props if isinstance(props, dict) else {}
    return out


def _types(schema: Any) -> set[str]:
    """The JSON types a parameter schema allows, `null` left out (empty when it does not say)."""
    if not isinstance(schema, dict):
        return set()
    declared = schema.get("type")
    types = {declared} if isinstance(declared, str) else {t for t in declared or () if isinstance(t, str)}
    for alt in schema.get("anyOf") or schema.get("oneOf") or ():
        types |= _types(alt)
    return types - {"null"}


def xml_value(raw: str, schema: Any = None) -> Any:
    """A `<parameter>` body as a value: the template's newline either side removed; text for a string parameter,
    else JSON when it parses (a boolean parameter also reads `True`/`False`), else the text."""
    text = raw.removeprefix("\n").removesuffix("\n")
    types = _types(schema)
    if types == {"string"}:
        return text
    if types == {"boolean"} and text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    try:
        return json.loads(text)
    except ValueError:
        return text


def _xml_calls(body: str, schemas: dict[str, dict[str, Any]], *, wrapped: bool, closed: bool) -> list[TextCall]:
    """The `<function=...>` blocks of one `<tool_call>` body (or of text without one), each a call."""
    calls: list[TextCall] = []
    for m in _FUNCTION.finditer(body):
        name, inner, end = m.group(1).strip(), m.group(2), m.group(3)
        raw = m.group(0)[:RAW_CHARS]
        if not name:
            calls.append(TextCall("", None, raw, "the <function=...> tag needs a tool name", "xml", wrapped, closed))
            continue
        if not end:
            calls.append(TextCall(name, None, raw, f"<function={name}> is not closed", "xml", wrapped, False))
            continue
        props = schemas.get(name, {})
        args: dict[str, Any] = {}
        for p in _PARAMETER.finditer(inner):
            key = p.group(1).strip()
            args[key] = xml_value(p.group(2), props.get(key))
        rest = _PARAMETER.sub("", inner).strip()
        if any(not p.group(1).strip() for p in _PARAMETER.finditer(inner)):
            calls.append(TextCall(name, None, raw, "a <parameter=...> tag needs a name", "xml", wrapped, closed))
        elif rest:
            why = (
                "a <parameter=...> block is not closed" if "<parameter=" in rest else "text outside <parameter> blocks"
            )
            calls.append(TextCall(name, None, raw, f"<function={name}>: {why}", "xml", wrapped, closed))
        else:
            calls.append(TextCall(name, args, raw, "", "xml", wrapped, closed))
    return calls


def _json_call(raw: str, *, wrapped: bool, closed: bool) -> TextCall:
    """A Hermes block's JSON: `{"name": ..., "arguments": {...}}` (arguments also under `parameters` or as a JSON
    string)."""
    clip = raw[:RAW_CHARS]
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        return TextCall("", None, clip, f"the tool call is not JSON: {exc.msg}", "json", wrapped, closed)
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        return TextCall("", None, clip, "the tool call needs a string `name`", "json", wrapped, closed)
    args = doc.get("arguments", doc.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            args = None
    if not isinstance(args, dict):
        return TextCall(doc["name"], None, clip, "`arguments` is not a JSON object", "json", wrapped, closed)
    return TextCall(doc["name"], args, clip, "", "json", wrapped, closed)


def _bare(text: str, schemas: dict[str, dict[str, Any]]) -> tuple[str, list[TextCall]]:
    """Calls in text without `<tool_call>`: standalone `<function=...>` blocks, or the whole text one JSON object
    with a string `name` and `arguments` (or `parameters`)."""
    if "<function=" in text:
        calls = _xml_calls(text, schemas, wrapped=False, closed=True)
        return _FUNCTION.sub("", text).strip(), calls
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            doc = json.loads(stripped)
        except ValueError:
            return stripped, []
        if isinstance(doc, dict) and isinstance(doc.get("name"), str) and ("arguments" in doc or "parameters" in doc):
            return "", [_json_call(stripped, wrapped=False, closed=True)]
    return stripped, []


def parse_tool_calls(text: str, tools: Sequence[dict[str, Any]] | None = None) -> tuple[str, list[TextCall]]:
    """(the text without its calls, the calls in order) from a model's text. `tools` (OpenAI-style definitions)
    type XML parameter values by their schema; reasoning is the caller's to strip (`strip_think`)."""
    schemas = _schemas(tools)
    if "<tool_call>" not in text:
        return _bare(text, schemas)
    calls: list[TextCall] = []
    for m in _BLOCK.finditer(text):
        body, closed = m.group(1).strip(), bool(m.group(2))
        if "<function=" in body:
            found = _xml_calls(body, schemas, wrapped=True, closed=closed)
            outside = _FUNCTION.sub("", body).strip()
            if outside:  # text in the block besides its function: the block is malformed, whatever it held
                name = found[0].name if found else ""
                error = f"text outside <function=...> in the <tool_call> block: {outside[:80]!r}"
                found = [TextCall(name, None, body[:RAW_CHARS], error, "xml", True, closed)]
            calls.extend(found)
        else:
            calls.append(_json_call(body, wrapped=True, closed=closed))
    return _BLOCK.sub("", text).strip(), calls
