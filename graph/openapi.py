"""Turn an OpenAPI 3.0/3.1 or Swagger 2.0 document into tools.

Each operation becomes a tool with a model-friendly unique name, its parameters (location, type, format,
pattern, enum, required, example, Korean description), the output fields reached through the provider's
envelope, the envelope profile, and the JSON Schema shown to a model. Malformed documents raise InvalidInput with
JSON-pointer locations; nothing here touches a store.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal
from urllib.parse import urlparse

from core.errors import InvalidInput
from graph import envelopes, providers
from graph.models import ApiRecord, AuthConfig, ParamRecord, RegistrationMeta, ToolRecord
from graph.openapi_items import find_items, item_fields, response_schema, schema_member
from graph.openapi_load import MAX_DEPTH as MAX_DEPTH
from graph.openapi_load import load_document as load_document
from graph.openapi_names import MAX_NAME as MAX_NAME
from graph.openapi_names import operation_words, tool_prefix, unique_name
from graph.openapi_names import snake as snake
from graph.openapi_report import OperationReport, operation_report
from graph.openapi_schema import (
    BODY_ORDER,
    FORM_MEDIA,
    JSON_MEDIA,
    MULTIPART_MEDIA,
    DocContext,
    escape,
    has_schema,
    media_kind,
    pointer,
    type_of,
)
from graph.tool_schema import SCALARS, content_hash, json_value, model_schema, spec_hash

METHODS = ("get", "post", "put", "patch", "delete")
MAX_TITLE = 300


def _consumes(op: dict[str, Any], doc: dict[str, Any]) -> set[str]:
    """Swagger 2 `consumes` (the operation's, else the document's) as body encodings."""
    raw = op.get("consumes") if isinstance(op.get("consumes"), list) else doc.get("consumes")
    return {k for k in (media_kind(m) for m in raw if isinstance(m, str)) if k} if isinstance(raw, list) else set()


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


def _param(ctx: DocContext, raw: Any, where: str, swagger2: bool) -> ParamRecord | None:
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
    t, _ = type_of(schema)
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
        type=t if t in (*SCALARS, "array") else "string",
        format=schema.get("format") or ("binary" if t == "file" else None),
        pattern=schema.get("pattern"),
        enum=enum,
        item_type=(type_of(items)[0] if items else "string") if t == "array" else None,
        # a path segment is required, unless the document says otherwise (graph.openapi.optional_tail decides)
        required=bool(p.get("required")) or (loc == "path" and p.get("required") is not False),
        example=p.get("example", schema.get("example")),
        default=default,
        description=str(p.get("description") or schema.get("description") or ""),
    )


def _body_params(
    ctx: DocContext, op: dict[str, Any], shared: list[Any], where: str, swagger2: bool
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
            k = media_kind(str(m))
            if k is None or not isinstance(obj, dict) or ("*" in str(m) and not has_schema(obj)):
                continue
            rank = (not has_schema(obj), BODY_ORDER[k], str(m).strip().lower() != k, i)
            if best is None or rank < best:
                best, media, kind, chosen = rank, obj, k, str(m)
        if media is not None:
            schema = ctx.schema(media.get("schema", {}), f"{where}/requestBody/content/{escape(chosen)}/schema")
    out = []
    required = set(schema.get("required") or [])
    whole = media.get("example") if not swagger2 and isinstance(media, dict) else schema.get("example")
    for name, sub in (schema.get("properties") or {}).items():
        s = ctx.schema(sub, where)
        t, _ = type_of(s)
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
                item_type=(type_of(items)[0] if items else "string") if t == "array" else None,
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


def _server_url(ctx: DocContext, doc: dict[str, Any], swagger2: bool, meta: RegistrationMeta) -> str:
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


def api_id_for(doc: dict[str, Any], server_url: str) -> str:
    parsed = urlparse(server_url)
    base = snake(f"{parsed.hostname or 'api'} {parsed.path}")[:48].strip("_")
    return (base or "api") + "-" + content_hash([server_url, (doc.get("info") or {}).get("title")])[:6]


def parse_document(doc: Any, meta: RegistrationMeta | None = None) -> tuple[ApiRecord, list[ToolRecord]]:
    """Parse a document into (API, tools). Raises InvalidInput (with JSON pointers) for anything malformed."""
    api, tools, _ = parse_with_report(doc, meta)
    return api, tools


def parse_with_report(
    doc: Any, meta: RegistrationMeta | None = None
) -> tuple[ApiRecord, list[ToolRecord], list[OperationReport]]:
    """`parse_document`, and what was understood of each operation (graph.openapi_report), in the tools' order."""
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


def _source_format(ctx: DocContext, doc: dict[str, Any]) -> tuple[bool, str]:
    """(Swagger 2?, the source format: `swagger-2.0`, `openapi-3.0`, `openapi-3.1`)."""
    if "swagger" in doc:
        if str(doc.get("swagger")) != "2.0":
            ctx.err("/swagger", f"unsupported Swagger version {doc.get('swagger')!r} (2.0 expected)")
        return True, "swagger-2.0"
    if "openapi" in doc:
        version = str(doc.get("openapi"))
        if not re.match(r"^3\.[01]\.\d+$", version):
            ctx.err("/openapi", f"unsupported OpenAPI version {version!r} (3.0.x or 3.1.x expected)")
        return False, f"openapi-{version[:3]}"
    raise InvalidInput(
        "not an OpenAPI 3 or Swagger 2.0 document",
        locations=[{"pointer": "/", "message": "neither 'openapi' nor 'swagger' is present"}],
    )


def _key_schemes(doc: dict[str, Any], swagger2: bool) -> list[tuple[str, str]]:
    """(in, name) of every apiKey security scheme, in the order declared."""
    components: dict[str, Any] = doc["components"] if isinstance(doc.get("components"), dict) else {}
    schemes = components.get("securitySchemes") if not swagger2 else doc.get("securityDefinitions")
    if not isinstance(schemes, dict):
        return []
    return [
        (str(sch.get("in")), sch["name"])
        for sch in schemes.values()
        if isinstance(sch, dict) and sch.get("type") == "apiKey" and isinstance(sch.get("name"), str)
    ]


def _query_key_param(doc: dict[str, Any], swagger2: bool) -> str | None:
    """The query parameter an apiKey security scheme names (the last one declared), if any."""
    return next((name for where, name in reversed(_key_schemes(doc, swagger2)) if where == "query"), None)


def optional_tail(path: str, params: list[ParamRecord]) -> list[ParamRecord]:
    """Path parameters as sent: one the document marks `required: false` stays optional only in the run of such
    segments that ends the path (서울 열린데이터광장 `/{KEY}/json/{SERVICE}/{START_INDEX}/{END_INDEX}/{GU}`: a filter
    segment left off the end); any other path segment is required, as OpenAPI says."""
    optional = {p.name for p in params if p.location == "path" and not p.required}
    tail: set[str] = set()
    for segment in reversed([s for s in path.split("/") if s]):
        if not (segment.startswith("{") and segment.endswith("}") and segment[1:-1] in optional):
            break
        tail.add(segment[1:-1])
    return [
        p.model_copy(update={"required": True}) if p.location == "path" and not p.required and p.name not in tail else p
        for p in params
    ]


def path_key(params: list[ParamRecord], scheme_names: set[str]) -> tuple[str, str] | None:
    """The path parameter that is the key (`/{KEY}/json/...`) and why (a `graph.openapi_report.KEY_REASONS` key):
    one an apiKey security scheme names, else one named or described as the key; None when no segment is."""
    path = [p for p in params if p.location == "path"]
    by_scheme = next((p.name for p in path if p.name in scheme_names), None)
    if by_scheme is not None:
        return by_scheme, "scheme"
    for p in path:
        if p.name.lower() in providers.PATH_KEY_NAMES:
            return p.name, "name"
        if any(w in p.description.lower() for w in providers.PATH_KEY_WORDS):
            return p.name, "description"
    return None


class _Operations:
    """Reads every operation of a document's `paths` into a tool, reporting problems to the context."""

    def __init__(
        self,
        ctx: DocContext,
        swagger2: bool,
        server_url: str,
        prefix: str,
        auth: tuple[str | None, str | None, str],
    ) -> None:
        self.ctx = ctx
        self.swagger2 = swagger2
        self.server_url = server_url
        self.prefix = prefix
        self.auth_param, self.auth_source, self.scheme = auth  # (name, why: a KEY_REASONS key, the auth scheme)
        self.scheme_names = {name for _, name in _key_schemes(ctx.doc, swagger2)}
        self.used: set[str] = set()  # tool names given so far
        self.reports: list[OperationReport] = []  # what was understood of each operation (graph.openapi_report)

    def tools(self, paths: dict[Any, Any]) -> list[ToolRecord]:
        ctx = self.ctx
        tools: list[ToolRecord] = []
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
                tool = self._tool(path, method, op, shared, where, op_where)
                if tool is not None:
                    tools.append(tool)
        return tools

    def _params(
        self, op: dict[str, Any], shared: Any, where: str, op_where: str
    ) -> tuple[list[ParamRecord], str | None] | None:
        """An operation's parameters (the path item's, overridden by the operation's, then the body's) and the
        encoding of its body; None when the parameters are no list."""
        ctx, swagger2 = self.ctx, self.swagger2
        raw_params = op.get("parameters") or []
        if not isinstance(raw_params, list) or not isinstance(shared, list):
            ctx.err(op_where + "/parameters", "parameters must be a list")
            return None
        merged: dict[str, ParamRecord] = {}
        for base, raws in ((where, shared), (op_where, raw_params)):
            for i, raw in enumerate(raws):
                p = _param(ctx, raw, f"{base}/parameters/{i}", swagger2)
                if p:
                    merged[p.key()] = p
        body, body_media = _body_params(ctx, op, shared, op_where, swagger2)
        form = [p for p in merged.values() if p.location == "body"]  # formData parameters
        if form and not body:
            body_media = _form_media(_consumes(op, ctx.doc), form)
        return [*merged.values(), *body], body_media

    def _tool(
        self, path: str, method: str, op: dict[str, Any], shared: Any, where: str, op_where: str
    ) -> ToolRecord | None:
        ctx = self.ctx
        read = self._params(op, shared, where, op_where)
        if read is None:
            return None
        params, body_media = read
        params = optional_tail(path, params)
        in_path = None if self.auth_param else path_key(params, self.scheme_names)
        known = next((p.name for p in params if p.name in providers.KEY_NAMES), None)
        key_param, key_source = (
            (self.auth_param, self.auth_source)
            if self.auth_param
            else in_path
            if in_path
            else (known, "known" if known else None)
        )
        params = [p for p in params if p.name != key_param]
        fmt = next((p for p in params if providers.format_name(p.name) and p.enum and json_value(p.enum)), None)
        fmt_value = json_value(fmt.enum) if fmt and fmt.enum else None
        response = response_schema(ctx, op, op_where, self.swagger2)
        envelope, items_path, item_schema = find_items(ctx, response, op_where)
        fields = item_fields(ctx, item_schema, items_path, op_where)
        words = operation_words(op, method, path)
        name = unique_name(self.prefix, words, self.used)
        visible = [p for p in params if fmt is None or p.name != fmt.name]
        summary = str(op.get("summary") or "")
        description = str(op.get("description") or "")
        tool = ToolRecord(
            name=name,
            api_id="",
            op_key=f"{method.upper()} {path}",
            method=method.upper(),
            url=self.server_url + path,
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
        self.reports.append(
            operation_report(
                tool,
                scheme=self.scheme,
                key_source=key_source,
                total_path=schema_member(ctx, response, op_where, envelopes.TOTAL_NAMES, items_path),
                code_path=schema_member(ctx, response, op_where, providers.CODE_NAMES, items_path),
            )
        )
        return tool


def _parse_document(doc: Any, meta: RegistrationMeta) -> tuple[ApiRecord, list[ToolRecord], list[OperationReport]]:
    if not isinstance(doc, dict):
        raise InvalidInput(
            "the document must be a JSON/YAML object",
            locations=[{"pointer": "/", "message": f"got {type(doc).__name__}"}],
        )
    ctx = DocContext(doc)
    swagger2, source = _source_format(ctx, doc)
    info: dict[str, Any] = doc["info"] if isinstance(doc.get("info"), dict) else {}
    if not isinstance(doc.get("info"), dict):
        ctx.err("/info", "info must be an object with a title")
    title = str(info.get("title") or "untitled API")[:MAX_TITLE]
    paths = doc.get("paths")
    if not isinstance(paths, dict):
        ctx.err("/paths", "paths must be an object")
        paths = {}
    server_url = _server_url(ctx, doc, swagger2, meta)
    security_param = _query_key_param(doc, swagger2)
    header_param = next((n for w, n in reversed(_key_schemes(doc, swagger2)) if w == "header"), None)
    cookie_param = next((n for w, n in reversed(_key_schemes(doc, swagger2)) if w == "cookie"), None)
    asked = meta.auth is not None and (meta.auth.param is not None or "scheme" in meta.auth.model_fields_set)
    if security_param is None and (header_param or cookie_param) is not None and not asked:
        # the document's apiKey goes in a header (else a cookie), and the registration says nothing else
        scheme: Literal["header_key", "cookie_key"] = "header_key" if header_param else "cookie_key"
        security_param = header_param or cookie_param
        auth = AuthConfig(scheme=scheme, param=security_param, secret=meta.auth.secret if meta.auth else None)
    else:
        auth = meta.auth or AuthConfig(param=security_param)
    auth_param = auth.param or security_param
    key_source = "option" if meta.auth and meta.auth.param else "scheme" if auth_param else None
    ops = _Operations(ctx, swagger2, server_url, tool_prefix(server_url, title), (auth_param, key_source, auth.scheme))
    tools = ops.tools(paths)
    if not tools and not ctx.errors:
        ctx.err("/paths", "the document declares no operations")
    if ctx.errors:
        raise InvalidInput(f"the document has {len(ctx.errors)} problem(s); see locations", locations=ctx.errors)
    api_id = meta.api_id or api_id_for(doc, server_url)
    for t in tools:
        t.api_id = api_id
    if auth_param is None:  # a key found only as a path segment is still the API's key
        auth_param = next((t.auth_param for t in tools if t.auth_param and t.key_in_path), None)
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
        doc_hash=content_hash(doc),
        tool_count=len(tools),
    )
    return api, tools, ops.reports
