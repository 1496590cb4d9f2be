"""Reading an OpenAPI document's schemas: JSON pointers, local $refs and allOf (DocContext, which also collects
the problems found, by pointer), types, and media types."""

from __future__ import annotations

from typing import Any

from graph.schema_convert import pointer_parts


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*parts: Any) -> str:
    return "/" + "/".join(escape(str(p)) for p in parts) if parts else "/"


class DocContext:
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


def alternatives(s: dict[str, Any]) -> list[Any]:
    return [*s.get("anyOf", []), *s.get("oneOf", [])]


def type_of(s: dict[str, Any]) -> tuple[str, bool]:
    t = s.get("type")
    nullable = bool(s.get("nullable") or s.get("x-nullable"))
    if isinstance(t, list):
        nullable = nullable or "null" in t
        t = next((x for x in t if x != "null"), "string")
    if t is None:
        alts = [a for a in alternatives(s) if isinstance(a, dict)]
        types = [a.get("type") for a in alts if a.get("type")]
        t = "string" if "string" in types else (types[0] if types else "string")
    return str(t), nullable


JSON_MEDIA, FORM_MEDIA, MULTIPART_MEDIA = "application/json", "application/x-www-form-urlencoded", "multipart/form-data"
BODY_ORDER = {JSON_MEDIA: 0, FORM_MEDIA: 1, MULTIPART_MEDIA: 2}


def media_kind(media: str) -> str | None:
    """The encoding a media type names, parameters (`; charset=utf-8`) and case aside: every JSON type
    (`application/json`, `text/json`, `application/problem+json`, `application/vnd.x+json`, and a wildcard, which
    accepts JSON) is JSON; form and multipart bodies are themselves; anything else (XML, text) is None."""
    main = media.split(";", 1)[0].strip().lower()
    if main in (JSON_MEDIA, "text/json", "*/*", "application/*") or main.endswith("+json"):
        return JSON_MEDIA
    return main if main in (FORM_MEDIA, MULTIPART_MEDIA) else None


def has_schema(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("schema"), dict) and bool(obj["schema"])
