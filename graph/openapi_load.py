"""Read an API document's bytes (JSON or YAML) within bounds: nesting depth, YAML alias expansion and number
size are checked before anything is built, and each breach is an InvalidInput (a 422) naming the limit."""

from __future__ import annotations

from typing import Any

import orjson
import yaml

from core.errors import InvalidInput

#: Bounds on hostile documents (each breach is a 422 naming the limit).
MAX_DEPTH = 64
MAX_YAML_NODES = 2_000_000  # nodes after alias expansion: an alias bomb stops here, before anything is built
MAX_INT_DIGITS = 40
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
