"""Turn an OpenAPI 3.0/3.1 or Swagger 2.0 document into tools.

Each operation becomes a tool with a model-friendly unique name, its parameters (location, type, format,
pattern, enum, required, example, Korean description), the output fields reached through the provider's
envelope, the envelope profile, and the JSON Schema shown to a model. Malformed documents raise InvalidInput with
JSON-pointer locations; nothing here touches a store.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any
from urllib.parse import urlparse

import orjson
import yaml

from core.errors import InvalidInput
from graph import envelopes
from graph.models import ApiRecord, AuthConfig, FieldRecord, ParamRecord, RegistrationMeta, ToolRecord
from graph.schema_convert import to_json_schema

METHODS = ("get", "post", "put", "patch", "delete")
KEY_PARAM_NAMES = ("serviceKey", "ServiceKey", "confmKey", "authKey", "apiKey", "api_key", "crtfc_key")
FORMAT_PARAM_NAMES = ("dataType", "_type", "returnType", "type", "resultType")
#: data.go.kr provider codes (first path segment) -> tool name prefix.
PROVIDER_PREFIX = {
    "1360000": "kma", "B552584": "airkorea", "1613000": "molit", "B551011": "tour", "B551182": "hira",
    "1471000": "mfds", "1741000": "mois", "B090041": "kasi", "1160100": "fsc", "B552015": "nps",
    "1230000": "customs", "B553077": "semas",
}
HOST_PREFIX = {"api.odcloud.kr": "nts", "business.juso.go.kr": "juso", "www.juso.go.kr": "juso"}
MAX_NAME = 64


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
            raise InvalidInput("the body is not UTF-8 text", locations=[
                {"pointer": "/", "message": f"byte {exc.start} is not UTF-8 ({exc.reason})"}]) from exc
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
                raise InvalidInput("the body is neither valid JSON nor valid YAML",
                                   locations=[{"pointer": "/", "message": message[:300]}]) from exc
        else:
            doc = _yaml_bounded(text)
    except yaml.YAMLError as exc:
        if "nesting depth" in str(exc):
            raise _limit(f"nesting deeper than {MAX_DEPTH} levels") from exc
        raise InvalidInput("the body is neither valid JSON nor valid YAML",
                           locations=[{"pointer": "/", "message": str(exc)[:300]}]) from exc
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
                        prev.isascii() and prev.isupper() and nxt.isascii() and nxt.islower()):
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
            for part in ref[2:].split("/"):
                part = part.replace("~1", "/").replace("~0", "~")
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
    # plain JSON: a top-level array, or the first array of objects one level down, or the object itself
    arr = array_item(schema, where)
    if arr is not None:
        return "plain", "[]", arr
    for name, sub in top.items():
        arr = array_item(sub, where)
        if arr is not None and (arr.get("properties") or arr.get("type") == "object"):
            return "plain", f"{name}[]", arr
    nested = envelopes.schema_items(ctx.schema(schema, where), lambda s: ctx.schema(s, where))
    if nested is not None:
        return "plain", nested[0], nested[1]
    return "plain", "", ctx.schema(schema, where)


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
        out.append(FieldRecord(name=str(name), path=f"{prefix}{name}", type=t, nullable=nullable,
                               description=str(s.get("description") or s.get("title") or ""),
                               example=s.get("example")))
    return out


def _response_schema(ctx: _Ctx, op: dict[str, Any], where: str, swagger2: bool) -> dict[str, Any]:
    responses = op.get("responses") or {}
    if not isinstance(responses, dict):
        ctx.err(where + "/responses", "responses must be an object")
        return {}
    resp = None
    for code in ("200", 200, "201", "2XX", "default"):
        if code in responses:
            resp = ctx.deref(responses[code], f"{where}/responses/{code}")
            break
    if not isinstance(resp, dict):
        return {}
    if swagger2:
        return ctx.schema(resp.get("schema", {}), f"{where}/responses/200/schema")
    content = resp.get("content") or {}
    if not isinstance(content, dict):
        return {}
    for media in ("application/json", "application/json;charset=UTF-8", "*/*", "application/xml", "text/xml"):
        if media in content and isinstance(content[media], dict):
            return ctx.schema(content[media].get("schema", {}), f"{where}/responses/200/content/{_esc(media)}/schema")
    for media, obj in content.items():
        if isinstance(obj, dict) and "schema" in obj:
            return ctx.schema(obj["schema"], f"{where}/responses/200/content/{_esc(media)}/schema")
    return {}


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
    if loc in ("cookie", "formData", "body"):
        return None  # Swagger 2 body parameters are handled as request bodies
    schema = p if swagger2 else ctx.schema(p.get("schema", {}), where + "/schema")
    t, _ = _type_of(schema)
    enum = schema.get("enum")
    return ParamRecord(
        name=name, location=loc, type=t if t in ("string", "integer", "number", "boolean", "array") else "string",
        format=schema.get("format"), pattern=schema.get("pattern"),
        enum=[str(e) for e in enum] if isinstance(enum, list) else None, required=bool(p.get("required")) or loc == "path",
        example=p.get("example", schema.get("example")), default=schema.get("default"),
        description=str(p.get("description") or schema.get("description") or ""),
    )


def _body_params(ctx: _Ctx, op: dict[str, Any], where: str, swagger2: bool) -> list[ParamRecord]:
    schema: dict[str, Any] = {}
    media: Any = None
    if swagger2:
        for i, raw in enumerate(op.get("parameters") or []):
            p = ctx.deref(raw, f"{where}/parameters/{i}")
            if isinstance(p, dict) and p.get("in") == "body":
                schema = ctx.schema(p.get("schema", {}), f"{where}/parameters/{i}/schema")
    else:
        body = ctx.deref(op.get("requestBody", {}), where + "/requestBody")
        content = body.get("content", {}) if isinstance(body, dict) else {}
        media = content.get("application/json") if isinstance(content, dict) else None
        if isinstance(media, dict):
            schema = ctx.schema(media.get("schema", {}), where + "/requestBody/content/application~1json/schema")
    out = []
    required = set(schema.get("required") or [])
    whole = media.get("example") if not swagger2 and isinstance(media, dict) else schema.get("example")
    for name, sub in (schema.get("properties") or {}).items():
        s = ctx.schema(sub, where)
        t, _ = _type_of(s)
        example = whole.get(name) if isinstance(whole, dict) and name in whole else s.get("example")
        if example is None and t == "array" and isinstance(s.get("items"), dict) and "example" in s["items"]:
            example = [s["items"]["example"]]
        out.append(ParamRecord(name=str(name), location="body", type=t, format=s.get("format"),
                               pattern=s.get("pattern"), enum=[str(e) for e in s["enum"]] if isinstance(s.get("enum"), list) else None,
                               required=name in required, example=example,
                               description=str(s.get("description") or "")))
    return out


def _server_url(ctx: _Ctx, doc: dict[str, Any], swagger2: bool, meta: RegistrationMeta) -> str:
    if swagger2:
        host = doc.get("host")
        if not isinstance(host, str) or not host:
            if meta.base_url:
                return meta.base_url.rstrip("/")
            ctx.err("/host", "Swagger 2.0 documents need a host (or give base_url)")
            return ""
        schemes = doc.get("schemes") or ["https"]
        scheme = "https" if "https" in schemes else str(schemes[0])
        return f"{scheme}://{host}{doc.get('basePath') or ''}".rstrip("/")
    servers = doc.get("servers")
    if isinstance(servers, list) and servers and isinstance(servers[0], dict) and isinstance(servers[0].get("url"), str):
        url: str = servers[0]["url"]
        for name, var in (servers[0].get("variables") or {}).items():
            if isinstance(var, dict) and "default" in var:
                url = url.replace("{" + name + "}", str(var["default"]))
        if url.startswith("/") and meta.base_url:
            return meta.base_url.rstrip("/") + url.rstrip("/")
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
    return slug if slug and slug != "op" else _path_prefix(parsed)


def _path_prefix(parsed: Any) -> str:
    """A stable readable prefix when the title gives none (Korean titles): the first path segment that names
    something (not a number, version or 'api'), else the host's first label."""
    for seg in parsed.path.strip("/").split("/"):
        word = snake(seg)
        if word and word != "op" and not re.fullmatch(r"(v\d+(_\d+)*|\d+|api|apis|openapi|rest|service)", word):
            return word[:20].strip("_")
    label = snake((parsed.hostname or "").split(".")[0])
    return label[:20].strip("_") if label and label not in ("op", "api", "apis", "www") else "api"


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
        raise InvalidInput("the document has an unexpected structure",
                           locations=[{"pointer": "/", "message": f"{type(exc).__name__}: {exc}"[:300]}]) from exc


def _parse_document(doc: Any, meta: RegistrationMeta) -> tuple[ApiRecord, list[ToolRecord]]:
    if not isinstance(doc, dict):
        raise InvalidInput("the document must be a JSON/YAML object",
                           locations=[{"pointer": "/", "message": f"got {type(doc).__name__}"}])
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
        raise InvalidInput("not an OpenAPI 3 or Swagger 2.0 document",
                           locations=[{"pointer": "/", "message": "neither 'openapi' nor 'swagger' is present"}])
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
            params = [*merged.values(), *_body_params(ctx, op, op_where, swagger2)]
            key_param = auth_param or next((p.name for p in params if p.name in KEY_PARAM_NAMES), None)
            params = [p for p in params if p.name != key_param]
            fmt = next((p for p in params if p.name in FORMAT_PARAM_NAMES and p.enum
                        and any(e.lower() == "json" for e in p.enum)), None)
            fmt_value = next(e for e in fmt.enum if e.lower() == "json") if fmt and fmt.enum else None
            envelope, items_path, item_schema = _find_items(ctx, _response_schema(ctx, op, op_where, swagger2), op_where)
            fields = _fields(ctx, item_schema, items_path, op_where)
            op_name = op.get("operationId") if isinstance(op.get("operationId"), str) else path.strip("/").split("/")[-1]
            name = f"{prefix}_{snake(op_name or method)}"[:MAX_NAME].rstrip("_")
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
                name=name, api_id="", op_key=f"{method.upper()} {path}", method=method.upper(),
                url=server_url + path, summary=summary, description=description,
                description_en=" ".join(snake(op_name or method).split("_")).capitalize(),
                intent=str(op.get("x-kopa-intent") or ""), envelope=envelope, items_path=items_path,
                params=params, fields=fields, json_schema=model_schema(summary or description, visible),
                format_param=f"{fmt.name}={fmt_value}" if fmt else None, auth_param=key_param,
            )
            tool.spec_hash = _hash(tool.model_dump(include={"method", "url", "params", "fields", "envelope"}))
            tools.append(tool)
    if not tools and not ctx.errors:
        ctx.err("/paths", "the document declares no operations")
    if ctx.errors:
        raise InvalidInput(f"the document has {len(ctx.errors)} problem(s); see locations", locations=ctx.errors)
    api_id = meta.api_id or api_id_for(doc, server_url)
    for t in tools:
        t.api_id = api_id
    api = ApiRecord(id=api_id, title=title, version=str(info.get("version") or ""), source_format=source,
                    server_url=server_url, base_url=meta.base_url, auth=AuthConfig(
                        scheme=auth.scheme, param=auth_param, secret=auth.secret),
                    rate_limit_per_s=meta.rate_limit_per_s, daily_quota=meta.daily_quota,
                    doc_hash=_hash(doc), tool_count=len(tools))
    return api, tools


def model_schema(description: str, params: list[ParamRecord]) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments, as shown to a model (no keys, no format switches)."""
    props: dict[str, Any] = {}
    for p in params:
        s: dict[str, Any] = {"type": p.type if p.type in ("string", "integer", "number", "boolean", "array") else "string"}
        if p.type == "array":
            s["items"] = {"type": "string"}
        if p.description:
            s["description"] = p.description
        if p.enum:
            s["enum"] = p.enum
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


def param_hash(p: ParamRecord) -> str:
    return _hash(p.model_dump(exclude={"example", "description"}))


def field_hash(f: FieldRecord) -> str:
    return _hash(f.model_dump(exclude={"example", "description"}))
