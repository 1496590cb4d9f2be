"""Names for an API's tools: a prefix per provider (data.go.kr provider codes and known hosts, read off
`graph.providers`; the title, else the path), the operation's words (its operationId, else its method and path),
snake_case, at most MAX_NAME characters and unique within the document."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlparse

from graph import providers

MAX_NAME = 64

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


def provider_of(tool: str) -> str:
    """The provider (API family) a tool belongs to: the prefix `tool_prefix` gave its name (`airkorea`, `kma`,
    `tago`; `kopa` for the built-in conversions)."""
    return tool.split("_", 1)[0]


def tool_prefix(server_url: str, title: str) -> str:
    parsed = urlparse(server_url)
    segments = parsed.path.strip("/").split("/")
    first = segments[0]
    service = segments[1] if len(segments) > 1 else ""
    own = next((p for org, starts, p in providers.SERVICE_PREFIX if org == first and service.startswith(starts)), None)
    if own is not None:
        return own
    if first in providers.ORG_PREFIX:
        return providers.ORG_PREFIX[first]
    if parsed.hostname in providers.HOST_PREFIX:
        return providers.HOST_PREFIX[parsed.hostname]
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


def path_words(method: str, path: str) -> str:
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


def operation_words(op: dict[str, Any], method: str, path: str) -> str:
    """The words of an operation's tool name: its operationId in snake_case, else read off its method and path."""
    op_id = snake(op["operationId"]) if isinstance(op.get("operationId"), str) else "op"
    return op_id if op_id != "op" else path_words(method, path)


def unique_name(prefix: str, words: str, used: set[str]) -> str:
    """`prefix_words` in at most MAX_NAME characters, numbered (`_2`, `_3`...) past the names already `used`, to
    which it is added."""
    name = f"{prefix}_{words}"[:MAX_NAME].rstrip("_")
    base, n = name, 2
    while name in used:
        suffix = f"_{n}"
        name = base[: MAX_NAME - len(suffix)] + suffix
        n += 1
    used.add(name)
    return name
