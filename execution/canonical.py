"""One canonical form of a call: what request a tool call makes, independent of how it was spelt. The executor
sends each scalar as its canonical text, so one cache key is one request on the wire.

Every place that asks "is this the same call?" asks it here: the executor's response cache (`Executor.call`), the
inputs verification has tried (`verification.engine`), GRPO's replay and rewards (`training.environment`,
`training.rewards`) and the benchmark's replay (`bench.backends`). Two calls are the same request when their
canonical forms are equal:

* argument order does not matter (names sorted);
* a value has one text per documented type: a number given as a number or as its text is one number (`60`,
  `"60"`, `"60.0"`, `" 60"` for an integer parameter), a JSON number `1.0` is `1` whatever the type says, a flag
  is `true`/`false`, surrounding whitespace is dropped; a text keeps its text otherwise, and so does a number
  written with a leading zero (`"0012"` is not `"12"`, even for an integer parameter: upstreams answer the code
  apart from the number, as the sandbox's juso `buldSlno=0000` and `0` do);
* documented defaults are the call without them (`pageNo=1` is the call that omits it); the page number of a
  portal's paging pair (`graph.envelopes.portal_pair`: data.go.kr `pageNo`/`numOfRows`, juso
  `currentPage`/`countPerPage`, odcloud `page`/`perPage`, eGovFrame `pageIndex`/`pageSize`) counts from 1, so it
  defaults to 1 where the document says nothing;
* the auth parameters (the executor never sends a caller's key) and the executor's own response-format switch
  (`dataType=JSON`, sent when the caller does not) are left out.

The spec comes from the tool's record (`ToolRecord`: types, defaults, auth and format parameters) or, where only
the model-facing function definition is at hand (a GRPO record's offered tools, the rewards' `tool_schemas`), from
its JSON schema (types, any `default`); without either, only the spelling rules apply. `replay.Recordings` looks
recorded answers up by this form.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from graph import envelopes
from graph.models import ToolRecord

_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_CODE = re.compile(r"^[+-]?0\d")  # a leading zero: a code, whatever the type says


@dataclass(frozen=True)
class CallSpec:
    """What the canonical form needs of a tool's spec: each parameter's type and default, the auth parameters
    (lower case), the format switch the executor sends (name, value) and the paging pair."""

    types: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    auth: frozenset[str] = frozenset()
    format: tuple[str, str] | None = None
    paging: tuple[str, str] | None = None


def _spec(types: dict[str, str], defaults: dict[str, Any], **rest: Any) -> CallSpec:
    paging = envelopes.portal_pair(types)
    if paging is not None and defaults.get(paging[0]) is None:
        defaults = {**defaults, paging[0]: 1}  # pages count from 1 where the document says nothing
    return CallSpec(types, {k: v for k, v in defaults.items() if v is not None}, paging=paging, **rest)


def tool_spec(tool: ToolRecord) -> CallSpec:
    """The spec of a tool's record."""
    fmt_name, _, fmt_value = (tool.format_param or "").partition("=")
    return _spec(
        {p.name: p.type for p in tool.params},
        {p.name: p.default for p in tool.params},
        auth=frozenset({tool.auth_param.lower()} if tool.auth_param else ()),
        format=(fmt_name, fmt_value) if fmt_name else None,
    )


def schema_spec(schema: Mapping[str, Any]) -> CallSpec:
    """The spec of a model-facing function definition (`{"type": "function", "function": {...}}`) or of its
    parameters' JSON schema: the properties' types and any `default` they state (the model never sees keys or the
    format switch, so none are named)."""
    inner = schema.get("function")
    if isinstance(inner, Mapping):
        schema = inner.get("parameters") or {}
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    types = {str(k): str(v.get("type", "string")) if isinstance(v, Mapping) else "string" for k, v in props.items()}
    defaults = {str(k): v.get("default") for k, v in props.items() if isinstance(v, Mapping)}
    return _spec(types, defaults)


#: What describes a tool to the canonical form: its record, its spec, a function definition or JSON schema, or
#: nothing.
Described = ToolRecord | CallSpec | Mapping[str, Any] | None


def spec_of(tool: Described) -> CallSpec:
    """The spec of whatever describes the tool: its record, a function definition or JSON schema, or nothing."""
    if isinstance(tool, CallSpec):
        return tool
    if isinstance(tool, ToolRecord):
        return tool_spec(tool)
    if isinstance(tool, Mapping):
        return schema_spec(tool)
    return CallSpec()


# ---------------------------------------------------------------------------------------------- values


def _number_text(value: Any) -> str | None:
    """The one text of a number given as a number or as its text (60, "60", "60.0", " 60" -> "60"), else None; a
    text with a leading zero ("0185", "0000") is a code, not a number: upstreams answer it apart from 185 and 0."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        d = Decimal(repr(value))
    elif isinstance(value, str) and _DECIMAL.match(value.strip()) and not _CODE.match(value.strip()):
        try:
            d = Decimal(value.strip())
        except InvalidOperation:
            return None
    else:
        return None
    if d == d.to_integral_value():
        return str(int(d))
    return format(d.normalize(), "f")


def _bool_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower()
    return None


def _nested(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _nested(value[k]) for k in sorted(value, key=str) if value[k] is not None}
    if isinstance(value, list | tuple):
        return [_nested(v) for v in value]
    return scalar_text(value, "string")


def scalar_text(value: Any, kind: str = "string") -> Any:
    """One value's canonical form for a parameter of type `kind`: the text the upstream reads (a list or an
    object keeps its shape, each scalar in it canonical)."""
    if isinstance(value, list | tuple | dict):
        return _nested(value)
    if kind in ("integer", "number"):
        num = _number_text(value)
        if num is not None:
            return num
    if kind == "boolean" or isinstance(value, bool):
        flag = _bool_text(value)
        if flag is not None:
            return flag
    if isinstance(value, float):
        return _number_text(value) or str(value)  # a JSON number 1.0 is the number 1 whatever the type says
    return str(value).strip()


def canonical_value(tool: Described, name: str, value: Any) -> Any:
    """One argument's canonical form by the tool's spec (the form `canonical_call` compares)."""
    return scalar_text(value, spec_of(tool).types.get(name, "string"))


# ---------------------------------------------------------------------------------------------- calls


def canonical_call(tool: Described, args: Mapping[str, Any]) -> dict[str, Any]:
    """The request a call makes, independent of its spelling: sorted names, one form per value, documented
    defaults left out, the auth parameters and the executor's own response format dropped."""
    spec = spec_of(tool)
    fmt_name, fmt_value = spec.format or ("", "")
    out: dict[str, Any] = {}
    for name in sorted(args):
        value = args[name]
        if value is None or name.lower() in spec.auth:
            continue
        if fmt_name and name == fmt_name:
            if str(value).strip().lower() != fmt_value.lower():
                out[name] = str(value).strip()
            continue  # the executor sends exactly the format value when the caller does not
        kind = spec.types.get(name, "string")
        canon = scalar_text(value, kind)
        if name in spec.defaults and canon == scalar_text(spec.defaults[name], kind):
            continue
        out[name] = canon
    return out


def call_key(name: str, tool: Described, args: Mapping[str, Any]) -> str:
    """The key of a call: the tool's name and its canonical request, hashed."""
    raw = json.dumps([name, canonical_call(tool, args)], ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def page_window(tool: Described, canon: Mapping[str, Any]) -> tuple[int, int] | None:
    """(offset of the first row, page size) of a canonical call of a paged tool, or None when the tool has no
    paging pair or the page size is not known."""
    spec = spec_of(tool)
    if spec.paging is None:
        return None
    page_name, size_name = spec.paging
    page = canon.get(page_name, scalar_text(spec.defaults.get(page_name, 1), "integer"))
    size = canon.get(size_name)
    if size is None and size_name in spec.defaults:
        size = scalar_text(spec.defaults[size_name], spec.types.get(size_name, "string"))
    if not (isinstance(page, str) and page.isdigit() and isinstance(size, str) and size.isdigit()):
        return None
    p, n = int(page), int(size)
    return ((p - 1) * n, n) if p >= 1 and n >= 1 else None
