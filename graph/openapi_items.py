"""Where the rows of a response are: the envelope kind (Korean public-data envelopes by their shape, the kinds of
`core.envelope_kinds`; plain JSON by the conventions real APIs follow), the path to the rows, and the fields of one
row."""

from __future__ import annotations

from typing import Any

from core.envelope_kinds import EnvelopeKind
from core.json_types import JsonObject
from graph import envelopes
from graph.models import FieldRecord
from graph.openapi_schema import JSON_MEDIA, DocContext, alternatives, escape, has_schema, media_kind, type_of

#: Response members that describe the response, never hold its resource, by the conventions real APIs follow:
#: JSON:API (`errors`, `meta`, `links`, `jsonapi`), HAL (`_links`), GraphQL over HTTP (`errors`, `extensions`),
#: error envelopes (`error(s)`, `warning(s)`, `message(s)`) and paging blocks, plus the envelope headers.
META_NAMES = envelopes.HEADER_NAMES | {
    "errors",
    "warning",
    "warnings",
    "message",
    "messages",
    "notices",
    "_links",
    "links",
    "_meta",
    "metadata",
    "jsonapi",
    "extensions",
    "pagination",
    "page_info",
    "paginginfo",
    "debug",
}
#: Members that hold the resource by convention, best first: `items` (Google APIs, Kubernetes, GitHub search),
#: `data` (JSON:API, Stripe), `results` (Django REST), `content` (Spring Data pages), `value` (OData), `records`
#: (Salesforce), `hits` (search engines), `features` (GeoJSON), and the row names of Korean envelopes.
RESOURCE_NAMES = (
    "items",
    "data",
    "results",
    "result",
    "list",
    "rows",
    "records",
    "content",
    "value",
    "entries",
    "hits",
    "features",
    "elements",
    "item",
    "row",
    "record",
)
_RESOURCE_RANK = {n: i for i, n in enumerate(RESOURCE_NAMES)}
#: HAL (`application/hal+json`) puts the resource one level down, under `_embedded`.
CONTAINER_NAMES = ("_embedded",)


Found = tuple[EnvelopeKind, str, dict[str, Any]]  # (envelope kind, items path, item schema)


class _Reader:
    """The schema views find_items reads a response through, all resolved against one document at `where`."""

    def __init__(self, ctx: DocContext, where: str) -> None:
        self.ctx = ctx
        self.where = where

    def props(self, s: Any, w: str | None = None) -> JsonObject:
        """A schema's properties, those of its anyOf/oneOf alternatives included."""
        w = self.where if w is None else w
        s = self.ctx.schema(s, w)
        out = dict(s.get("properties") or {})
        for i, alt in enumerate(alternatives(s)):
            out.update(self.ctx.schema(alt, f"{w}/anyOf/{i}").get("properties") or {})
        return out

    def array_item(self, s: Any, w: str | None = None) -> JsonObject | None:
        """The item schema when a schema (or one of its alternatives) is an array, else None."""
        w = self.where if w is None else w
        s = self.ctx.schema(s, w)
        if s.get("type") == "array" or ("items" in s and not s.get("properties")):
            return self.ctx.schema(s.get("items", {}), w + "/items")
        for i, alt in enumerate(alternatives(s)):
            got = self.array_item(alt, f"{w}/anyOf/{i}")
            if got is not None:
                return got
        return None

    def korean(self, top: dict[str, Any]) -> Found | None:
        """The envelopes of Korean public data by their shape (data.go.kr, AirKorea, MFDS, juso, odcloud...)."""
        where = self.where
        props, array_item = self.props, self.array_item
        if "response" in top:
            resp = props(top["response"], where + "/properties/response")
            body = props(resp.get("body", {}), where + "/properties/response/properties/body")
            if "items" in body:
                items = body["items"]
                direct = array_item(items)
                if direct is not None:
                    return "airkorea", "response.body.items[]", direct
                inner = props(items).get("item")
                if inner is not None:
                    arr = array_item(inner)
                    return (
                        "datagokr",
                        "response.body.items.item[]",
                        arr if arr is not None else self.ctx.schema(inner, where),
                    )
            if "item" in body:
                return "datagokr_single", "response.body.item", self.ctx.schema(body["item"], where)
        if "header" in top and "body" in top:
            body = props(top["body"])
            arr = array_item(body.get("items", {})) if "items" in body else None
            if arr is not None:
                return "mfds", "body.items[]", arr
        if "StanReginCd" in top:
            rows = array_item(top["StanReginCd"])
            members = rows.get("properties") if rows is not None else None
            if isinstance(members, dict) and "row" in members:
                arr = array_item(members["row"])
                if arr is not None:
                    return "stanreg", "StanReginCd[].row[]", arr
        if "results" in top and "juso" in props(top["results"]):
            arr = array_item(props(top["results"])["juso"])
            if arr is not None:
                return "juso", "results.juso[]", arr
        if "data" in top and ("status_code" in top or "request_cnt" in top):
            arr = array_item(top["data"])
            if arr is not None:
                return "odcloud", "data[]", arr
        return None

    def rows_in(self, members: dict[str, Any], prefix: str, look_inside: bool) -> tuple[int, str, JsonObject] | None:
        """The best-ranked member holding an array of records (HAL's `_embedded` looked inside first, then by
        resource name, never a metadata member): (rank, items path, item schema)."""
        best: tuple[int, str, JsonObject] | None = None
        for name, sub in members.items():
            low = str(name).lower()
            if low in META_NAMES:
                continue
            got: tuple[int, str, JsonObject] | None = None
            if low in CONTAINER_NAMES and look_inside:
                inner = self.rows_in(self.props(sub), f"{prefix}{name}.", False)
                got = (-1, inner[1], inner[2]) if inner is not None else None
            else:
                arr = self.array_item(sub)
                if (
                    arr is not None
                    and (arr.get("properties") or arr.get("type") == "object")
                    and not envelopes.wrapper_schema(self.props(arr), lambda x: self.ctx.schema(x, self.where))
                ):
                    got = (_RESOURCE_RANK.get(low, len(RESOURCE_NAMES)), f"{prefix}{name}[]", arr)
            if got is not None and (best is None or got[0] < best[0]):
                best = got
        return best

    def without_meta(self, node: Any) -> JsonObject:
        s = self.ctx.schema(node, self.where)
        members = s.get("properties")
        if isinstance(members, dict) and any(str(k).lower() in META_NAMES for k in members):
            return {**s, "properties": {k: v for k, v in members.items() if str(k).lower() not in META_NAMES}}
        return s

    def plain(self, schema: dict[str, Any], top: dict[str, Any]) -> Found:
        """Plain JSON: a top-level array, or the resource's array one level down, or one nested deeper, or a
        single resource object, or the object itself."""
        ctx, where = self.ctx, self.where
        arr = self.array_item(schema)
        if arr is not None:
            return "plain", "[]", arr
        found = self.rows_in(top, "", True)
        if found is not None:
            return "plain", found[1], found[2]
        nested = envelopes.schema_items(self.without_meta(schema), self.without_meta)
        single = next(
            (
                (str(name), ctx.schema(sub, where))
                for name, sub in top.items()
                if str(name).lower() in _RESOURCE_RANK
                and _record([ctx.schema(v, where) for v in self.props(sub).values()])
            ),
            None,
        )
        # {"data": {"id", "name", "tags": [...]}} is one resource (with a list inside), not rows of tags;
        # {"result": {"resultCode", "item": {...}}} wraps its rows under a row name
        if nested is not None and (single is None or _row_named(nested[0])):
            return "plain", nested[0], nested[1]
        if single is not None:
            return "plain", single[0], single[1]
        return "plain", "", ctx.schema(schema, where)


def schema_member(
    ctx: DocContext, schema: dict[str, Any], where: str, names: tuple[str, ...], items_path: str
) -> str | None:
    """The dotted path of the shallowest scalar member named one of `names` (in any case) in a response schema,
    outside its rows (`items_path`), looked for through objects and arrays of wrappers; None when there is none.
    Of several at one depth, the one `names` lists first (odcloud's filtered `matchCount` before `totalCount`), as
    the answers are read."""
    reader = _Reader(ctx, where)
    rank = {n.lower(): i for i, n in reversed(list(enumerate(names)))}
    rows = items_path.rstrip("[]").replace("[]", "")
    level: list[tuple[str, Any]] = [("", schema)]
    for _ in range(envelopes.MAX_DEPTH):
        found: str | None = None
        deeper: list[tuple[str, Any]] = []
        for prefix, node in level:
            for name, sub in reader.props(node).items():
                path = f"{prefix}{name}"
                if rows and path.replace("[]", "") == rows:
                    continue
                resolved = ctx.schema(sub, where)
                item = reader.array_item(resolved)
                if item is not None:
                    deeper.append((path + "[].", item))
                elif resolved.get("properties") or alternatives(resolved):
                    deeper.append((path + ".", resolved))
                elif str(name).lower() in rank and (
                    found is None or rank[str(name).lower()] < rank[found.rsplit(".", 1)[-1].lower()]
                ):
                    found = path
        if found is not None:
            return found
        level = deeper
    return None


def find_items(ctx: DocContext, schema: dict[str, Any], where: str) -> Found:
    """(envelope profile, items path, item schema) for a success response schema."""
    reader = _Reader(ctx, where)
    top = reader.props(schema)
    return reader.korean(top) or reader.plain(schema, top)


def _record(members: list[dict[str, Any]]) -> bool:
    """(Resolved) property schemas of a resource object rather than a wrapper: one at least is a scalar."""
    return any(
        m and m.get("type") not in ("object", "array") and not m.get("properties") and "items" not in m for m in members
    )


def _row_named(items_path: str) -> bool:
    last = items_path.rsplit(".", 1)[-1].removesuffix("[]").lower()
    return last in _RESOURCE_RANK or last in envelopes.ROW_NAMES


def item_fields(ctx: DocContext, item: dict[str, Any], items_path: str, where: str) -> list[FieldRecord]:
    props: dict[str, Any] = dict(item.get("properties") or {})
    for i, alt in enumerate(alternatives(item)):
        props.update(ctx.schema(alt, f"{where}/anyOf/{i}").get("properties") or {})
    out = []
    for name, sub in props.items():
        s = ctx.schema(sub, where)
        t, nullable = type_of(s)
        prefix = items_path + "." if items_path else ""
        out.append(
            FieldRecord(
                name=str(name),
                path=f"{prefix}{name}",
                type=t,
                nullable=nullable,
                description=str(s.get("description") or s.get("title") or ""),
                example=s.get("example"),
            )
        )
    return out


def response_schema(ctx: DocContext, op: dict[str, Any], where: str, swagger2: bool) -> JsonObject:
    responses = op.get("responses") or {}
    if not isinstance(responses, dict):
        ctx.err(where + "/responses", "responses must be an object")
        return {}
    resp: Any = None
    code: Any = "200"
    for code in ("200", 200, "201", "2XX", "default"):
        if code in responses:
            resp = ctx.deref(responses[code], f"{where}/responses/{code}")
            break
    if not isinstance(resp, dict):
        return {}
    if swagger2:
        return ctx.schema(resp.get("schema", {}), f"{where}/responses/{code}/schema")
    content = resp.get("content") or {}
    if not isinstance(content, dict):
        return {}
    picked = min(
        (
            (not has_schema(obj), _response_rank(str(media)), i, str(media), obj)
            for i, (media, obj) in enumerate(content.items())
            if isinstance(obj, dict)
        ),
        default=None,
    )
    if picked is None or not has_schema(picked[4]):
        return {}
    return ctx.schema(picked[4]["schema"], f"{where}/responses/{code}/content/{escape(picked[3])}/schema")


def _response_rank(media: str) -> int:
    main = media.split(";", 1)[0].strip().lower()
    if main == JSON_MEDIA:
        return 0
    if "*" in main:
        return 2
    if media_kind(main) == JSON_MEDIA:
        return 1
    return 3 if main.endswith(("/xml", "+xml")) else 4
