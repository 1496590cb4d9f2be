"""Turn an OpenAPI 3.0/3.1 or Swagger 2.0 document into tools.

Each operation becomes a tool with a model-friendly unique name, its parameters (location, type, format,
pattern, enum, required, example, Korean description), the output fields reached through the provider's
envelope, the envelope profile, and the JSON Schema shown to a model. Malformed documents raise InvalidInput with
JSON-pointer locations; nothing here touches a store.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any
from urllib.parse import urlparse

import orjson
import yaml

from core.errors import InvalidInput
from graph import envelopes
from graph.models import ApiRecord, AuthConfig, FieldRecord, ParamRecord, RegistrationMeta, ToolRecord
from graph.schema_convert import pointer_parts, to_json_schema

METHODS = ("get", "post", "put", "patch", "delete")
KEY_PARAM_NAMES = ("serviceKey", "ServiceKey", "confmKey", "authKey", "apiKey", "api_key", "crtfc_key")
FORMAT_PARAM_NAMES = ("dataType", "_type", "returnType", "type", "resultType")
#: data.go.kr provider codes (first path segment) -> tool name prefix.
PROVIDER_PREFIX = {
    "1360000": "kma",
    "B552584": "airkorea",
    "1613000": "molit",
    "B551011": "tour",
    "B551182": "hira",
    "1471000": "mfds",
    "1741000": "mois",
    "B090041": "kasi",
    "1160100": "fsc",
    "B552015": "nps",
    "1230000": "customs",
    "B553077": "semas",
}
HOST_PREFIX = {"api.odcloud.kr": "nts", "business.juso.go.kr": "juso", "www.juso.go.kr": "juso"}
MAX_NAME = 64
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


def _esc(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*parts: Any) -> str:
    return "/" + "/".join(_esc(str(p)) for p in parts) if parts else "/"


#: Bounds on hostile documents (each breach is a 422 naming the limit).
MAX_DEPTH = 64
MAX_YAML_NODES = 2_000_000  # nodes after alias expansion: an alias bomb stops here, before anything is built
MAX_INT_DIGITS = 40
MAX_TITLE = 300
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _limit(message: str, where: str = "/") -> InvalidInput:
    return InvalidInput(f"the document exceeds a limit: {message}", locations=[{"pointer": where, "message": message}])


def _depth_ok(doc: Any) -> None:
    """Iterative (no recursion on hostile input): nesting depth of dicts and lists."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _limit(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, dict | list))


def _yaml_bounded(text: str) -> Any:
    """YAML without alias blow-up: the node graph is composed (aliases share nodes, so this is cheap), its size
    after expansion, its depth and its integers are checked iteratively, and only then is it constructed."""
    node = yaml.compose(text, Loader=_YAML_LOADER)
    if node is None:
        return None
    sizes: dict[int, int] = {}
    depth_of: dict[int, int] = {}
    # post-order over the DAG, memoised by node identity: O(distinct nodes), whatever the aliases expand to
    stack: list[tuple[Any, bool]] = [(node, False)]
    on_path: set[int] = set()
    while stack:
        n, done = stack.pop()
        key = id(n)
        if done:
            on_path.discard(key)
            children = _children(n)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            depth_of[key] = 1 + max((depth_of[id(c)] for c in children), default=0)
            if sizes[key] > MAX_YAML_NODES:
                raise _limit(f"YAML aliases expand to more than {MAX_YAML_NODES:,} nodes")
            if depth_of[key] > MAX_DEPTH:
                raise _limit(f"nesting deeper than {MAX_DEPTH} levels")
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise _limit("a YAML alias refers to its own ancestor (recursive document)")
        if isinstance(n, yaml.ScalarNode):
            if n.tag == "tag:yaml.org,2002:int" and len(n.value) > MAX_INT_DIGITS:
                raise _limit(f"an integer longer than {MAX_INT_DIGITS} digits")
            sizes[key], depth_of[key] = 1, 0
            continue
        on_path.add(key)
        stack.append((n, True))
        stack.extend((c, False) for c in _children(n) if id(c) not in sizes)
    return yaml.SafeLoader("").construct_document(node)


def _children(n: Any) -> list[Any]:
    if isinstance(n, yaml.MappingNode):
        return [x for pair in n.value for x in pair]
    if isinstance(n, yaml.SequenceNode):
        return list(n.value)
    return []


def load_document(raw: bytes | str, content_type: str = "") -> Any:
    """Parse a JSON or YAML body within bounds (depth, alias expansion, number size). Raises InvalidInput with
    location "/" when it is neither, or names the limit it breaks."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8", errors="strict")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                "the body is not UTF-8 text",
                locations=[{"pointer": "/", "message": f"byte {exc.start} is not UTF-8 ({exc.reason})"}],
            ) from exc
    else:
        text = raw
    if not text.strip():
        raise InvalidInput("the document is empty", locations=[{"pointer": "/", "message": "empty body"}])
    try:
        if "json" in content_type or text.lstrip()[:1] in ("{", "["):
            try:
                doc = orjson.loads(text)
            except orjson.JSONDecodeError as exc:
                message = str(exc)
                if "depth limit" in message:
                    raise _limit(f"nesting deeper than {MAX_DEPTH} levels") from exc
                if "number" in message:
                    raise _limit("a number too large for a 64-bit integer or a finite double") from exc
                raise InvalidInput(
                    "the body is neither valid JSON nor valid YAML",
                    locations=[{"pointer": "/", "message": message[:300]}],
                ) from exc
        else:
            doc = _yaml_bounded(text)
    except yaml.YAMLError as exc:
        if "nesting depth" in str(exc):
            raise _limit(f"nesting deeper than {MAX_DEPTH} levels") from exc
        raise InvalidInput(
            "the body is neither valid JSON nor valid YAML", locations=[{"pointer": "/", "message": str(exc)[:300]}]
        ) from exc
    except RecursionError as exc:
        raise _limit(f"nesting deeper than {MAX_DEPTH} levels") from exc
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit in a YAML scalar
        raise _limit(f"a value cannot be read ({str(exc)[:120]})") from exc
    _depth_ok(doc)
    return doc


_SNAKE_INPUT = 256


def snake(name: str) -> str:
    """camelCase / PascalCase / anything -> snake_case, in one linear pass (names are cut to 256 characters
    first; tool names are at most 64 anyway)."""
    name = name[:_SNAKE_INPUT]
    if name.endswith(".do"):
        name = name[:-3]
    out: list[str] = []
    n = len(name)
    for i, ch in enumerate(name):
        if ch.isascii() and ch.isalnum():
            if ch.isupper() and i > 0 and out and out[-1] != "_":
                prev = name[i - 1]
                nxt = name[i + 1] if i + 1 < n else ""
                # aB -> a_b, 1B -> 1_b, ABc -> a_bc (an acronym ends before the capital that starts a word)
                if (prev.isascii() and (prev.islower() or prev.isdigit())) or (
                    prev.isascii() and prev.isupper() and nxt.isascii() and nxt.islower()
                ):
                    out.append("_")
            out.append(ch.lower())
        elif out and out[-1] != "_":
            out.append("_")
    return "".join(out).strip("_") or "op"


def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()[:16]


class _Ctx:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.errors: list[dict[str, str]] = []

    def err(self, where: str, message: str) -> None:
        if len(self.errors) < 50:
            self.errors.append({"pointer": where, "message": message})

    def deref(self, node: Any, where: str, depth: int = 0) -> Any:
        """Follow local $refs; report broken ones at `where`."""
        while isinstance(node, dict) and "$ref" in node and depth < 20:
            ref = node["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#/"):
                self.err(where, f"unsupported reference {ref!r} (only local '#/...' references)")
                return {}
            target: Any = self.doc
            for part in pointer_parts(ref):
                if isinstance(target, dict) and part in target:
                    target = target[part]
                elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                    target = target[int(part)]
                else:
                    self.err(where, f"reference {ref!r} does not resolve")
                    return {}
            node = target
            depth += 1
        return node

    def schema(self, node: Any, where: str, depth: int = 0) -> dict[str, Any]:
        """Resolve refs and merge allOf; keep anyOf/oneOf as they are (callers choose)."""
        node = self.deref(node, where)
        if not isinstance(node, dict):
            return {}
        if "allOf" in node and isinstance(node["allOf"], list) and depth < 10:
            merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
            props: dict[str, Any] = dict(merged.get("properties", {}))
            required: list[str] = list(merged.get("required", []))
            for i, part in enumerate(node["allOf"]):
                sub = self.schema(part, f"{where}/allOf/{i}", depth + 1)
                props.update(sub.get("properties", {}))
                required.extend(sub.get("required", []))
                for k, v in sub.items():
                    if k not in ("properties", "required"):
                        merged.setdefault(k, v)
            if props:
                merged["properties"] = props
                merged.setdefault("type", "object")
            if required:
                merged["required"] = required
            return merged
        return node


def _alternatives(s: dict[str, Any]) -> list[Any]:
    return [*s.get("anyOf", []), *s.get("oneOf", [])]


def _find_items(ctx: _Ctx, schema: dict[str, Any], where: str) -> tuple[str, str, dict[str, Any]]:
    """(envelope profile, items path, item schema) for a success response schema."""

    def props(s: dict[str, Any], w: str) -> dict[str, Any]:
        s = ctx.schema(s, w)
        out = dict(s.get("properties") or {})
        for i, alt in enumerate(_alternatives(s)):
            out.update(ctx.schema(alt, f"{w}/anyOf/{i}").get("properties") or {})
        return out

    def array_item(s: Any, w: str) -> dict[str, Any] | None:
        s = ctx.schema(s, w)
        if s.get("type") == "array" or ("items" in s and not s.get("properties")):
            return ctx.schema(s.get("items", {}), w + "/items")
        for i, alt in enumerate(_alternatives(s)):
            got = array_item(alt, f"{w}/anyOf/{i}")
            if got is not None:
                return got
        return None

    top = props(schema, where)
    if "response" in top:
        resp = props(top["response"], where + "/properties/response")
        body = props(resp.get("body", {}), where + "/properties/response/properties/body")
        if "items" in body:
            items = body["items"]
            direct = array_item(items, where)
            if direct is not None:
                return "airkorea", "response.body.items[]", direct
            inner = props(items, where).get("item")
            if inner is not None:
                arr = array_item(inner, where)
                return "datagokr", "response.body.items.item[]", arr if arr is not None else ctx.schema(inner, where)
        if "item" in body:
            return "datagokr_single", "response.body.item", ctx.schema(body["item"], where)
    if "header" in top and "body" in top:
        body = props(top["body"], where)
        arr = array_item(body.get("items", {}), where) if "items" in body else None
        if arr is not None:
            return "mfds", "body.items[]", arr
    if "StanReginCd" in top:
        rows = array_item(top["StanReginCd"], where)
        if rows is not None and "row" in (rows.get("properties") or {}):
            arr = array_item(rows["properties"]["row"], where)
            if arr is not None:
                return "stanreg", "StanReginCd[].row[]", arr
    if "results" in top and "juso" in props(top["results"], where):
        arr = array_item(props(top["results"], where)["juso"], where)
        if arr is not None:
            return "juso", "results.juso[]", arr
    if "data" in top and ("status_code" in top or "request_cnt" in top):
        arr = array_item(top["data"], where)
        if arr is not None:
            return "odcloud", "data[]", arr
    # plain JSON: a top-level array, or the resource's array one level down (HAL's `_embedded` first, then by
    # resource name, never a metadata member), or one nested deeper, or a single resource object, or the object
    arr = array_item(schema, where)
    if arr is not None:
        return "plain", "[]", arr

    def rows_in(members: dict[str, Any], prefix: str, look_inside: bool) -> tuple[int, str, dict[str, Any]] | None:
        best: tuple[int, str, dict[str, Any]] | None = None
        for name, sub in members.items():
            low = str(name).lower()
            if low in META_NAMES:
                continue
            got: tuple[int, str, dict[str, Any]] | None = None
            if low in CONTAINER_NAMES and look_inside:
                inner = rows_in(props(sub, where), f"{prefix}{name}.", False)
                got = (-1, inner[1], inner[2]) if inner is not None else None
            else:
                arr = array_item(sub, where)
                if arr is not None and (arr.get("properties") or arr.get("type") == "object"):
                    got = (_RESOURCE_RANK.get(low, len(RESOURCE_NAMES)), f"{prefix}{name}[]", arr)
            if got is not None and (best is None or got[0] < best[0]):
                best = got
        return best

    found = rows_in(top, "", True)
    if found is not None:
        return "plain", found[1], found[2]

    def without_meta(node: Any) -> dict[str, Any]:
        s = ctx.schema(node, where)
        members = s.get("properties")
        if isinstance(members, dict) and any(str(k).lower() in META_NAMES for k in members):
            return {**s, "properties": {k: v for k, v in members.items() if str(k).lower() not in META_NAMES}}
        return s

    nested = envelopes.schema_items(without_meta(schema), without_meta)
    single = next(
        (
            (str(name), ctx.schema(sub, where))
            for name, sub in top.items()
            if str(name).lower() in _RESOURCE_RANK
            and _record([ctx.schema(v, where) for v in props(sub, where).values()])
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


def _record(members: list[dict[str, Any]]) -> bool:
    """(Resolved) property schemas of a resource object rather than a wrapper: one at least is a scalar."""
    return any(
        m and m.get("type") not in ("object", "array") and not m.get("properties") and "items" not in m for m in members
    )


def _row_named(items_path: str) -> bool:
    last = items_path.rsplit(".", 1)[-1].removesuffix("[]").lower()
    return last in _RESOURCE_RANK or last in envelopes.ROW_NAMES


def _type_of(s: dict[str, Any]) -> tuple[str, bool]:
    t = s.get("type")
    nullable = bool(s.get("nullable") or s.get("x-nullable"))
    if isinstance(t, list):
        nullable = nullable or "null" in t
        t = next((x for x in t if x != "null"), "string")
    if t is None:
        alts = [a for a in _alternatives(s) if isinstance(a, dict)]
        types = [a.get("type") for a in alts if a.get("type")]
        t = "string" if "string" in types else (types[0] if types else "string")
    return str(t), nullable


def _fields(ctx: _Ctx, item: dict[str, Any], items_path: str, where: str) -> list[FieldRecord]:
    props: dict[str, Any] = dict(item.get("properties") or {})
    for i, alt in enumerate(_alternatives(item)):
        props.update(ctx.schema(alt, f"{where}/anyOf/{i}").get("properties") or {})
    out = []
    for name, sub in props.items():
        s = ctx.schema(sub, where)
        t, nullable = _type_of(s)
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


def _response_schema(ctx: _Ctx, op: dict[str, Any], where: str, swagger2: bool) -> dict[str, Any]:
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
            (not _has_schema(obj), _response_rank(str(media)), i, str(media), obj)
            for i, (media, obj) in enumerate(content.items())
            if isinstance(obj, dict)
        ),
        default=None,
    )
    if picked is None or not _has_schema(picked[4]):
        return {}
    return ctx.schema(picked[4]["schema"], f"{where}/responses/{code}/content/{_esc(picked[3])}/schema")


JSON_MEDIA, FORM_MEDIA, MULTIPART_MEDIA = "application/json", "application/x-www-form-urlencoded", "multipart/form-data"
_BODY_ORDER = {JSON_MEDIA: 0, FORM_MEDIA: 1, MULTIPART_MEDIA: 2}


def _media_kind(media: str) -> str | None:
    """The encoding a media type names, parameters (`; charset=utf-8`) and case aside: every JSON type
    (`application/json`, `text/json`, `application/problem+json`, `application/vnd.x+json`, and a wildcard, which
    accepts JSON) is JSON; form and multipart bodies are themselves; anything else (XML, text) is None."""
    main = media.split(";", 1)[0].strip().lower()
    if main in (JSON_MEDIA, "text/json", "*/*", "application/*") or main.endswith("+json"):
        return JSON_MEDIA
    return main if main in (FORM_MEDIA, MULTIPART_MEDIA) else None


def _response_rank(media: str) -> int:
    main = media.split(";", 1)[0].strip().lower()
    if main == JSON_MEDIA:
        return 0
    if "*" in main:
        return 2
    if _media_kind(main) == JSON_MEDIA:
        return 1
    return 3 if main.endswith(("/xml", "+xml")) else 4


def _has_schema(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("schema"), dict) and bool(obj["schema"])


def _consumes(op: dict[str, Any], doc: dict[str, Any]) -> set[str]:
    """Swagger 2 `consumes` (the operation's, else the document's) as body encodings."""
    raw = op.get("consumes") if isinstance(op.get("consumes"), list) else doc.get("consumes")
    return {k for k in (_media_kind(m) for m in raw if isinstance(m, str)) if k} if isinstance(raw, list) else set()


_SCALARS = ("string", "integer", "number", "boolean")


def _enum(raw: Any) -> list[Any] | None:
    """Documented enum values with their types (1 stays 1, true stays true). Dates that YAML reads as dates
    become their text; members no parameter can take (objects, lists, NaN and infinities) are left out."""
    if not isinstance(raw, list):
        return None
    out: list[Any] = []
    for v in raw:
        if v is None or isinstance(v, str | int) or (isinstance(v, float) and math.isfinite(v)):
            out.append(v)
        elif not isinstance(v, dict | list | float):
            out.append(str(v))
    return out


def _param(ctx: _Ctx, raw: Any, where: str, swagger2: bool) -> ParamRecord | None:
    p = ctx.deref(raw, where)
    if not isinstance(p, dict):
        ctx.err(where, "a parameter must be an object")
        return None
    name, loc = p.get("name"), p.get("in")
    if not isinstance(name, str) or not name:
        ctx.err(where + "/name", "a parameter needs a non-empty string name")
        return None
    if loc not in ("query", "path", "header", "cookie", "body", "formData"):
        ctx.err(where + "/in", f"unknown parameter location {loc!r}")
        return None
    if loc in ("cookie", "body"):
        return None  # Swagger 2 body parameters are handled as request bodies
    schema = p if swagger2 else ctx.schema(p.get("schema", {}), where + "/schema")
    t, _ = _type_of(schema)
    # an array's enum and default are usually documented on its items (Swagger 2 `items`, `schema.items`)
    items = (
        ctx.schema(schema.get("items", {}), where + ("/items" if swagger2 else "/schema/items")) if t == "array" else {}
    )
    enum = _enum(schema.get("enum"))
    if enum is None and items:
        enum = _enum(items.get("enum"))
    default = schema.get("default")
    if default is None and items:
        default = items.get("default")
    return ParamRecord(
        # Swagger 2 formData parameters are fields of a form body; `type: file` is a binary part of it
        name=name,
        location="body" if loc == "formData" else loc,
        type=t if t in (*_SCALARS, "array") else "string",
        format=schema.get("format") or ("binary" if t == "file" else None),
        pattern=schema.get("pattern"),
        enum=enum,
        item_type=(_type_of(items)[0] if items else "string") if t == "array" else None,
        required=bool(p.get("required")) or loc == "path",
        example=p.get("example", schema.get("example")),
        default=default,
        description=str(p.get("description") or schema.get("description") or ""),
    )


def _body_params(
    ctx: _Ctx, op: dict[str, Any], shared: list[Any], where: str, swagger2: bool
) -> tuple[list[ParamRecord], str | None]:
    """The properties of the request body's schema as body parameters, and the encoding they travel in. Of an
    OpenAPI 3 body's media types, one with a schema is preferred, and JSON over form over multipart; a Swagger 2
    `in: body` parameter (the path's or the operation's) is JSON."""
    schema: dict[str, Any] = {}
    media: Any = None
    kind: str | None = None
    chosen = ""
    if swagger2:
        for base, raws in ((where.rsplit("/", 1)[0], shared), (where, op.get("parameters") or [])):
            for i, raw in enumerate(raws):
                p = ctx.deref(raw, f"{base}/parameters/{i}")
                if isinstance(p, dict) and p.get("in") == "body":
                    schema = ctx.schema(p.get("schema", {}), f"{base}/parameters/{i}/schema")
                    kind = JSON_MEDIA
    else:
        body = ctx.deref(op.get("requestBody", {}), where + "/requestBody")
        content = body.get("content", {}) if isinstance(body, dict) else {}
        best: tuple[bool, int, bool, int] | None = None
        for i, (m, obj) in enumerate(content.items() if isinstance(content, dict) else []):
            k = _media_kind(str(m))
            if k is None or not isinstance(obj, dict) or ("*" in str(m) and not _has_schema(obj)):
                continue
            rank = (not _has_schema(obj), _BODY_ORDER[k], str(m).strip().lower() != k, i)
            if best is None or rank < best:
                best, media, kind, chosen = rank, obj, k, str(m)
        if media is not None:
            schema = ctx.schema(media.get("schema", {}), f"{where}/requestBody/content/{_esc(chosen)}/schema")
    out = []
    required = set(schema.get("required") or [])
    whole = media.get("example") if not swagger2 and isinstance(media, dict) else schema.get("example")
    for name, sub in (schema.get("properties") or {}).items():
        s = ctx.schema(sub, where)
        t, _ = _type_of(s)
        items = ctx.schema(s.get("items", {}), where) if t == "array" else {}
        example = whole.get(name) if isinstance(whole, dict) and name in whole else s.get("example")
        if example is None and "example" in items:
            example = [items["example"]]
        enum = _enum(s.get("enum"))
        if enum is None and items:
            enum = _enum(items.get("enum"))
        out.append(
            ParamRecord(
                name=str(name),
                location="body",
                type=t,
                format=s.get("format"),
                pattern=s.get("pattern"),
                enum=enum,
                item_type=(_type_of(items)[0] if items else "string") if t == "array" else None,
                required=name in required,
                example=example,
                default=s.get("default", items.get("default")),
                description=str(s.get("description") or ""),
            )
        )
    return out, kind


def _form_media(consumes: set[str], form: list[ParamRecord]) -> str:
    """Swagger 2 formData travels urlencoded unless `consumes` names only multipart or a part is a file."""
    if any(p.format == "binary" for p in form) or (MULTIPART_MEDIA in consumes and FORM_MEDIA not in consumes):
        return MULTIPART_MEDIA
    return FORM_MEDIA


def _under_base(base_url: str, path: Any) -> str:
    """base_url in place of a server's scheme and host. The server's path stays under it, unless base_url
    already ends with that path (the whole server URL was given): neither host nor path is ever doubled."""
    base = base_url.rstrip("/")
    tail = path.strip("/") if isinstance(path, str) else ""
    if not tail or urlparse(base).path.rstrip("/").endswith("/" + tail):
        return base
    return f"{base}/{tail}"


def _server_url(ctx: _Ctx, doc: dict[str, Any], swagger2: bool, meta: RegistrationMeta) -> str:
    if swagger2:
        host, base_path = doc.get("host"), doc.get("basePath")
        if isinstance(host, str) and "//" in host:  # `host: https://apis.example.kr/` (a URL where a host belongs)
            parsed = urlparse(host if "://" in host else "https:" + host[host.index("//") :])
            parts = (parsed.path.strip("/"), base_path.strip("/") if isinstance(base_path, str) else "")
            host, base_path = parsed.netloc, "/".join(p for p in parts if p)
        if not isinstance(host, str) or not host.strip("/"):
            if meta.base_url:
                return _under_base(meta.base_url, base_path)  # basePath is relative to the host base_url names
            ctx.err("/host", "Swagger 2.0 documents need a host (or give base_url)")
            return ""
        schemes = doc.get("schemes") or ["https"]
        scheme = "https" if "https" in schemes else str(schemes[0])
        tail = base_path.strip("/") if isinstance(base_path, str) else ""
        return f"{scheme}://{host.strip('/')}" + (f"/{tail}" if tail else "")
    servers = doc.get("servers")
    if (
        isinstance(servers, list)
        and servers
        and isinstance(servers[0], dict)
        and isinstance(servers[0].get("url"), str)
    ):
        url: str = servers[0]["url"]
        for name, var in (servers[0].get("variables") or {}).items():
            if isinstance(var, dict) and "default" in var:
                url = url.replace("{" + name + "}", str(var["default"]))
        if url.startswith("//"):  # protocol-relative: base_url's scheme and host, else https
            if meta.base_url:
                return _under_base(meta.base_url, urlparse("https:" + url).path)
            url = "https:" + url
        elif url.startswith("/") and meta.base_url:
            return _under_base(meta.base_url, url)
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            if meta.base_url:
                return meta.base_url.rstrip("/")
            ctx.err("/servers/0/url", f"server URL {url!r} is not an absolute http(s) URL (give base_url)")
            return ""
        return url.rstrip("/")
    if meta.base_url:
        return meta.base_url.rstrip("/")
    ctx.err("/servers", "the document names no server (add servers[0].url or give base_url)")
    return ""


def _prefix(server_url: str, title: str) -> str:
    parsed = urlparse(server_url)
    segments = parsed.path.strip("/").split("/")
    first = segments[0]
    if first == "1613000" and len(segments) > 1 and segments[1].startswith(("Bus", "Arvl")):
        return "tago"
    if first in PROVIDER_PREFIX:
        return PROVIDER_PREFIX[first]
    if parsed.hostname in HOST_PREFIX:
        return HOST_PREFIX[parsed.hostname]
    slug = snake(re.sub(r"[^0-9A-Za-z ]+", " ", title))[:20].strip("_")
    # "교차로 정보 API", "공공데이터 OpenAPI v2": the only ASCII in a Korean title is generic, so it names nothing
    return slug if slug and not all(_GENERIC.fullmatch(w) for w in slug.split("_")) else _path_prefix(parsed)


#: Words and segments that name no API: versions, numbers, data.go.kr provider codes (`1360000`, `B553766`).
_GENERIC = re.compile(r"op|api|apis|open|openapi|rest|restapi|service|services|svc|www|v\d+|\d+", re.I)
_CODE_SEGMENT = re.compile(r"[A-Za-z]{0,3}\d{4,}|v\d+([._]\d+)*|\d+([._]\d+)*|api|apis|openapi|rest|services?", re.I)


def _words_cut(word: str, limit: int = 20) -> str:
    """At most `limit` characters, cut at a word boundary (a readable prefix, not `crsrd_map_info_servi`)."""
    if len(word) <= limit:
        return word
    out = ""
    for w in word.split("_"):
        if len(out) + len(w) + bool(out) > limit:
            break
        out = f"{out}_{w}" if out else w
    return out or word[:limit]


def _path_prefix(parsed: Any) -> str:
    """A stable readable prefix when the title gives none (Korean titles): the first path segment that names
    something (not a provider code, number, version or 'api'), without a generic tail (`CrsrdMapInfoService_2.0`
    gives `crsrd_map_info`), else the host's first label that names something."""
    for seg in parsed.path.strip("/").split("/"):
        if _CODE_SEGMENT.fullmatch(seg):
            continue
        words = snake(seg).split("_")
        while len(words) > 1 and _GENERIC.fullmatch(words[-1]):
            words.pop()
        word = "_".join(words)
        if word and not _GENERIC.fullmatch(word):
            return _words_cut(word)
    for label in (parsed.hostname or "").split(".")[:-1]:
        word = snake(label)
        if word and not _GENERIC.fullmatch(word):
            return _words_cut(word)
    return "api"


#: First words that make a path segment an operation name already (data.go.kr: `/getCrsrdMapInfo`).
_VERBS = frozenset(
    {
        "get",
        "list",
        "search",
        "find",
        "fetch",
        "retrieve",
        "read",
        "query",
        "inquire",
        "inqire",
        "lookup",
        "select",
        "count",
        "check",
        "validate",
        "verify",
        "create",
        "add",
        "insert",
        "post",
        "put",
        "register",
        "regist",
        "save",
        "upload",
        "send",
        "issue",
        "request",
        "apply",
        "update",
        "set",
        "modify",
        "patch",
        "edit",
        "delete",
        "remove",
        "del",
        "cancel",
        "download",
        "calc",
        "convert",
    }
)


def _path_words(method: str, path: str) -> str:
    """An operation's name when its operationId gives none, from the operation alone (so that adding an
    operation renames no other): a segment that is already a verb phrase stays as it is (`GET /getCrsrdMapInfo`
    -> `get_crsrd_map_info`); a REST path reads as method, resources and trailing path parameters
    (`DELETE /users/{id}` -> `delete_users_by_id`). Provider codes, versions and `.do` endings are left out."""
    segments = [seg for seg in path.strip("/").split("/") if seg]
    trailing: list[str] = []
    while segments and "{" in segments[-1]:
        trailing.insert(0, snake(segments.pop()))
    static = [re.sub(r"\.(do|json|xml|jsp|php|aspx?)$", "", seg, flags=re.I) for seg in segments if "{" not in seg]
    words = [w for w in (snake(seg) for seg in static if seg and not _CODE_SEGMENT.fullmatch(seg)) if w != "op"]
    name = words[-1] if words and words[-1].split("_", 1)[0] in _VERBS else "_".join([method, *words])
    return f"{name}_by_{'_'.join(trailing)}" if trailing else name


def api_id_for(doc: dict[str, Any], server_url: str) -> str:
    parsed = urlparse(server_url)
    base = snake(f"{parsed.hostname or 'api'} {parsed.path}")[:48].strip("_")
    return (base or "api") + "-" + _hash([server_url, (doc.get("info") or {}).get("title")])[:6]


def parse_document(doc: Any, meta: RegistrationMeta | None = None) -> tuple[ApiRecord, list[ToolRecord]]:
    """Parse a document into (API, tools). Raises InvalidInput (with JSON pointers) for anything malformed."""
    try:
        return _parse_document(doc, meta or RegistrationMeta())
    except InvalidInput:
        raise
    except (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError) as exc:
        # Safety net: a shape no specific check anticipated is still the client's error, never a 500.
        raise InvalidInput(
            "the document has an unexpected structure",
            locations=[{"pointer": "/", "message": f"{type(exc).__name__}: {exc}"[:300]}],
        ) from exc


def _parse_document(doc: Any, meta: RegistrationMeta) -> tuple[ApiRecord, list[ToolRecord]]:
    if not isinstance(doc, dict):
        raise InvalidInput(
            "the document must be a JSON/YAML object",
            locations=[{"pointer": "/", "message": f"got {type(doc).__name__}"}],
        )
    ctx = _Ctx(doc)
    swagger2 = "swagger" in doc
    if swagger2:
        if str(doc.get("swagger")) != "2.0":
            ctx.err("/swagger", f"unsupported Swagger version {doc.get('swagger')!r} (2.0 expected)")
        source = "swagger-2.0"
    elif "openapi" in doc:
        version = str(doc.get("openapi"))
        if not re.match(r"^3\.[01]\.\d+$", version):
            ctx.err("/openapi", f"unsupported OpenAPI version {version!r} (3.0.x or 3.1.x expected)")
        source = f"openapi-{version[:3]}"
    else:
        raise InvalidInput(
            "not an OpenAPI 3 or Swagger 2.0 document",
            locations=[{"pointer": "/", "message": "neither 'openapi' nor 'swagger' is present"}],
        )
    info: dict[str, Any] = doc["info"] if isinstance(doc.get("info"), dict) else {}
    if not isinstance(doc.get("info"), dict):
        ctx.err("/info", "info must be an object with a title")
    title = str(info.get("title") or "untitled API")[:MAX_TITLE]
    paths = doc.get("paths")
    if not isinstance(paths, dict):
        ctx.err("/paths", "paths must be an object")
        paths = {}
    server_url = _server_url(ctx, doc, swagger2, meta)

    security_param = None
    components: dict[str, Any] = doc["components"] if isinstance(doc.get("components"), dict) else {}
    schemes = components.get("securitySchemes") if not swagger2 else doc.get("securityDefinitions")
    if isinstance(schemes, dict):
        for sch in schemes.values():
            if isinstance(sch, dict) and sch.get("type") == "apiKey" and sch.get("in") == "query":
                security_param = sch.get("name")
    auth = meta.auth or AuthConfig(param=security_param)
    auth_param = auth.param or security_param

    prefix = _prefix(server_url, title)
    tools: list[ToolRecord] = []
    used: set[str] = set()
    for path, item in paths.items():
        where = pointer("paths", path)
        if not isinstance(path, str) or not path.startswith("/"):
            ctx.err(where, "a path must start with '/'")
            continue
        item = ctx.deref(item, where)
        if not isinstance(item, dict):
            ctx.err(where, "a path item must be an object")
            continue
        shared = item.get("parameters") or []
        for method in METHODS:
            if method not in item:
                continue
            op_where = f"{where}/{method}"
            op = item[method]
            if not isinstance(op, dict):
                ctx.err(op_where, "an operation must be an object")
                continue
            raw_params = op.get("parameters") or []
            if not isinstance(raw_params, list) or not isinstance(shared, list):
                ctx.err(op_where + "/parameters", "parameters must be a list")
                continue
            merged: dict[str, ParamRecord] = {}
            for i, raw in enumerate(shared):
                p = _param(ctx, raw, f"{where}/parameters/{i}", swagger2)
                if p:
                    merged[p.key()] = p
            for i, raw in enumerate(raw_params):
                p = _param(ctx, raw, f"{op_where}/parameters/{i}", swagger2)
                if p:
                    merged[p.key()] = p
            body, body_media = _body_params(ctx, op, shared, op_where, swagger2)
            form = [p for p in merged.values() if p.location == "body"]  # formData parameters
            if form and not body:
                body_media = _form_media(_consumes(op, doc), form)
            params = [*merged.values(), *body]
            key_param = auth_param or next((p.name for p in params if p.name in KEY_PARAM_NAMES), None)
            params = [p for p in params if p.name != key_param]
            fmt = next((p for p in params if p.name in FORMAT_PARAM_NAMES and p.enum and _json_value(p.enum)), None)
            fmt_value = _json_value(fmt.enum) if fmt and fmt.enum else None
            envelope, items_path, item_schema = _find_items(
                ctx, _response_schema(ctx, op, op_where, swagger2), op_where
            )
            fields = _fields(ctx, item_schema, items_path, op_where)
            op_id = snake(op["operationId"]) if isinstance(op.get("operationId"), str) else "op"
            words = op_id if op_id != "op" else _path_words(method, path)
            name = f"{prefix}_{words}"[:MAX_NAME].rstrip("_")
            base, n = name, 2
            while name in used:
                suffix = f"_{n}"
                name = base[: MAX_NAME - len(suffix)] + suffix
                n += 1
            used.add(name)
            visible = [p for p in params if fmt is None or p.name != fmt.name]
            summary = str(op.get("summary") or "")
            description = str(op.get("description") or "")
            tool = ToolRecord(
                name=name,
                api_id="",
                op_key=f"{method.upper()} {path}",
                method=method.upper(),
                url=server_url + path,
                summary=summary,
                description=description,
                description_en=" ".join(words.split("_")).capitalize(),
                intent=str(op.get("x-kopa-intent") or ""),
                envelope=envelope,
                items_path=items_path,
                params=params,
                fields=fields,
                json_schema=model_schema(summary or description, visible),
                format_param=f"{fmt.name}={fmt_value}" if fmt else None,
                auth_param=key_param,
                body_media=body_media,
            )
            tool.spec_hash = spec_hash(tool)
            tools.append(tool)
    if not tools and not ctx.errors:
        ctx.err("/paths", "the document declares no operations")
    if ctx.errors:
        raise InvalidInput(f"the document has {len(ctx.errors)} problem(s); see locations", locations=ctx.errors)
    api_id = meta.api_id or api_id_for(doc, server_url)
    for t in tools:
        t.api_id = api_id
    api = ApiRecord(
        id=api_id,
        title=title,
        version=str(info.get("version") or ""),
        source_format=source,
        server_url=server_url,
        base_url=meta.base_url,
        auth=AuthConfig(scheme=auth.scheme, param=auth_param, secret=auth.secret),
        rate_limit_per_s=meta.rate_limit_per_s,
        daily_quota=meta.daily_quota,
        doc_hash=_hash(doc),
        tool_count=len(tools),
    )
    return api, tools


def model_schema(description: str, params: list[ParamRecord]) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments, as shown to a model (no keys, no format switches). Enums keep
    their types, cast to the declared one, and an array's enum describes its items."""
    props: dict[str, Any] = {}
    for p in params:
        s: dict[str, Any] = {"type": p.type if p.type in (*_SCALARS, "array") else "string"}
        one = s
        if p.type == "array":
            one = s["items"] = {"type": p.item_type if p.item_type in (*_SCALARS, "object") else "string"}
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


def _json_value(enum: list[Any]) -> str | None:
    """The member of a format switch's enum that asks for JSON ("json", "JSON"); members need not be text."""
    return next((e for e in enum if isinstance(e, str) and e.strip().lower() == "json"), None)


def _implied_out(param: dict[str, Any]) -> dict[str, Any]:
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
    return _hash(d)


def param_hash(p: ParamRecord) -> str:
    return _hash(_implied_out(p.model_dump(exclude={"example", "description"})))


def field_hash(f: FieldRecord) -> str:
    return _hash(f.model_dump(exclude={"example", "description"}))
