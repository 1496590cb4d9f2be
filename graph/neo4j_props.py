"""How the graph's records are stored as Neo4j properties and read back: JSON text for the values Neo4j cannot hold
(schemas, enums, examples, a link's transform and evidence), params and fields as value lists in a fixed column
order, readable captions on links for Neo4j Browser (never read back)."""

from __future__ import annotations

import json
from typing import Any, TypedDict

from core.json_types import JsonObject
from graph import queries
from graph.models import ApiRecord, FieldRecord, LinkRecord, ParamRecord, ToolRecord
from graph.tool_schema import field_hash, param_hash
from graph.transforms import describe

_TOOL_JSON = ("json_schema",)
#: Param and Field properties that hold any JSON value (typed enum values, examples, defaults): stored as JSON text.
_PARAM_JSON = ("example", "default", "enum")
_FIELD_JSON = ("example",)
#: Params and fields travel as value lists in these column orders (maps would repeat every key in every row);
#: queries.tool_write_queries turns them back into properties, adding id, tool, key and removed.
PARAM_COLUMNS = (*ParamRecord.model_fields, "hash")
FIELD_COLUMNS = (*FieldRecord.model_fields, "hash")
CREATE_TOOLS, UPSERT_TOOLS = queries.tool_write_queries(PARAM_COLUMNS, FIELD_COLUMNS)
_LINK_JSON = ("transform", "evidence", "history")


class ToolRow(TypedDict):
    """One tool as the tool write queries take it (tool_row)."""

    name: str
    props: JsonObject  # the Tool node's properties
    params: list[list[Any]]  # one value list per param, in PARAM_COLUMNS order
    fields: list[list[Any]]  # one value list per field, in FIELD_COLUMNS order


class FlagRow(TypedDict):
    """A tool's params (keys) and fields (names) whose links are flagged for re-verification (queries.FLAG_LINKS)."""

    tool: str
    params: list[str]
    fields: list[str]


def api_props(api: ApiRecord) -> JsonObject:
    d = api.model_dump(exclude={"auth"})
    d["auth"] = api.auth.model_dump_json()
    return {k: v for k, v in d.items() if v is not None}


def api_from(props: dict[str, Any]) -> ApiRecord:
    props = dict(props)
    props["auth"] = json.loads(props.get("auth") or "{}")
    return ApiRecord.model_validate(props)


def _json_or_none(value: Any) -> str | None:
    """A property holding any JSON value (Neo4j keeps only primitives and homogeneous lists of them); None stays
    None, so the property is not written at all and reads back as None."""
    return None if value is None else json.dumps(value, ensure_ascii=False)


def tool_row(t: ToolRecord) -> ToolRow:
    """One tool as a row of the tool write queries: its property map (None values left out; the queries add
    param_order and field_order), and its params and fields as value lists in PARAM_COLUMNS / FIELD_COLUMNS order."""
    props = t.model_dump(exclude={"params", "fields"})
    for k in _TOOL_JSON:
        props[k] = json.dumps(props[k], ensure_ascii=False)
    props = {k: v for k, v in props.items() if v is not None}
    params = []
    for p in t.params:
        row = dict(vars(p))  # the field values as they are (all primitives; the JSON ones are encoded next)
        for k in _PARAM_JSON:
            row[k] = _json_or_none(row[k])
        row["hash"] = param_hash(p)
        params.append([row[c] for c in PARAM_COLUMNS])
    fields = []
    for f in t.fields:
        row = dict(vars(f))
        for k in _FIELD_JSON:
            row[k] = _json_or_none(row[k])
        row["hash"] = field_hash(f)
        fields.append([row[c] for c in FIELD_COLUMNS])
    return {"name": t.name, "props": props, "params": params, "fields": fields}


def _json_prop(value: Any, empty: str = "null") -> Any:
    """Decode a JSON property; a value that is not a string (a list written before enums were JSON) stays as it is."""
    if value is None or value == "":
        return json.loads(empty)
    return json.loads(value) if isinstance(value, str) else value


def tool_from(tool: dict[str, Any], params: list[dict[str, Any]], fields: list[dict[str, Any]]) -> ToolRecord:
    tool = dict(tool)
    for k in _TOOL_JSON:
        tool[k] = json.loads(tool.get(k) or "{}")
    plist = []
    for p in params:
        p = {k: v for k, v in p.items() if k not in ("id", "tool", "key", "hash", "removed")}
        for k in _PARAM_JSON:
            p[k] = _json_prop(p.get(k))
        plist.append(ParamRecord.model_validate(p))
    flist = []
    for f in fields:
        f = {k: v for k, v in f.items() if k not in ("id", "tool", "hash", "removed")}
        for k in _FIELD_JSON:
            f[k] = _json_prop(f.get(k))
        flist.append(FieldRecord.model_validate(f))
    order = {n: i for i, n in enumerate(tool.get("param_order") or [])}
    tool.pop("param_order", None)
    plist.sort(key=lambda p: order.get(p.key(), len(order)))
    forder = {n: i for i, n in enumerate(tool.pop("field_order", None) or [])}
    flist.sort(key=lambda f: forder.get(f.name, len(forder)))
    return ToolRecord.model_validate({**tool, "params": plist, "fields": flist})


def link_props(link: LinkRecord) -> JsonObject:
    d = link.model_dump()
    for k in _LINK_JSON:
        d[k] = json.dumps(d[k], ensure_ascii=False)
    d.update(_captions(link))
    return d


#: Readable copies of a link's transform and evidence (the JSON properties are unreadable as captions): Neo4j
#: Browser shows them on LINK and on the VERIFIED mirror (graph/browser/kopa.grass). Never read back.
_CAPTIONS = ("transform_label", "evidence_label")


def _captions(link: LinkRecord) -> dict[str, str]:
    ev = link.evidence
    trials = ev.get("trials")
    evidence = f"{ev.get('successes', 0)}/{trials} ok" if isinstance(trials, int) and trials else ""
    return {"transform_label": describe(link.transform), "evidence_label": evidence}


def link_from(props: dict[str, Any]) -> LinkRecord:
    props = {k: v for k, v in props.items() if k not in _CAPTIONS}
    for k in _LINK_JSON:
        props[k] = json.loads(props.get(k) or ("[]" if k == "history" else "{}"))
    return LinkRecord.model_validate(props)
