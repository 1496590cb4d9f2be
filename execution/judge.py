"""Judging one upstream response: transport, gateway and provider errors (inside HTTP 200 too), rows through the
envelope profile, emptiness and schema conformance. The verdict is a `CallResult` (execution/result.py, where
the outcomes are described); the executor adds how the call went.
"""

from __future__ import annotations

from typing import Any

from core.json_types import JsonObject
from core.payload import PayloadError, parse_body
from execution.result import CallResult, Outcome
from graph import envelopes, providers

#: The code a refused key is reported with when the provider's own vocabulary says it (the executor blocks the API).
KEY_REFUSED = "key_refused"


def _rows(obj: Any) -> list[JsonObject]:
    if obj is None or obj == "":
        return []
    if isinstance(obj, dict):
        return [obj]
    if isinstance(obj, list):
        return [r for r in obj if isinstance(r, dict)]
    return []


def _walk(doc: Any, path: str) -> list[JsonObject]:
    """Follow an items path like 'response.body.items.item[]' or 'StanReginCd[].row[]'."""
    nodes: list[Any] = [doc]
    for part in [p for p in path.split(".") if p]:
        name, is_list = (part[:-2], True) if part.endswith("[]") else (part, False)
        nxt: list[Any] = []
        for n in nodes:
            if name:
                n = n.get(name) if isinstance(n, dict) else None
            if n is None or n == "":
                continue
            if is_list:
                nxt.extend(n if isinstance(n, list) else [n])
            else:
                nxt.append(n)
        nodes = nxt
    return [r for n in nodes for r in _rows(n)]


def _at(doc: Any, path: tuple[str | int, ...]) -> dict[str, Any] | None:
    """The record at `path` (member names, list positions) from the top of an answer; None when there is none."""
    node: Any = doc
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return None
    return node if isinstance(node, dict) else None


def _err_object(doc: Any) -> CallResult | None:
    """A KOSIS-style error object (`graph.providers.STAT_ERROR`: its code and message and nothing else of substance,
    read by `STAT_ERRORS`); None for any other answer."""
    at = providers.STAT_ERROR
    if not (isinstance(doc, dict) and at.code in doc and at.msg in doc and len(doc) <= 3):
        return None
    code, msg = str(doc[at.code]).strip(), str(doc[at.msg])
    kind = providers.STAT_ERRORS.get(code)
    reason = f"provider {code} {msg}"
    if kind == "key":
        return CallResult(Outcome.TRANSIENT, reason=reason, code=KEY_REFUSED)
    if kind == "empty":
        return CallResult(Outcome.EMPTY, reason=reason, code=code)
    if kind in ("quota", "server"):
        return CallResult(Outcome.TRANSIENT, reason=reason, code=code, quota=kind == "quota")
    return CallResult(Outcome.INVALID, reason=reason, code=code)


def _gateway(doc: Any) -> CallResult | None:
    """The data.go.kr gateway's own error envelope (`graph.providers.GATEWAY_ERROR`): a retired service is an error
    of the inputs, anything else (key, quota, permission) transient; None for any other answer."""
    at = providers.GATEWAY_ERROR
    if not (isinstance(doc, dict) and at.path[0] in doc):
        return None
    hdr = _at(doc, at.path) or {}
    code = str(hdr.get(at.code, "")).strip()
    msg = f"gateway {code} {hdr.get(at.msg, '')} {hdr.get(providers.GATEWAY_DETAIL, '')}".strip()
    if code in providers.RETIRED_CODES:
        return CallResult(Outcome.INVALID, reason=msg + " (service retired or wrong URL)", code=code)
    return CallResult(Outcome.TRANSIENT, reason=msg, code=code, quota=code in providers.QUOTA_CODES)


def _header(envelope: str, doc: Any) -> tuple[str, str] | None:
    """(result code, message) where the tool's kind of envelope states them (`graph.providers.HEADERS`, its places
    tried in order); None when the kind has no known place or the answer holds nothing there."""
    for at in providers.header_places(envelope):
        node = _at(doc, at.path)
        if node is not None:
            return str(node.get(at.code, "")), str(node.get(at.msg, ""))
    return None


def code_verdict(code: str, msg: str) -> CallResult | None:
    """What a response's own result code says, None when it says success. The data.go.kr family's code sets
    first; then success in words or zeros (`SUCCESS`, `INFO-000`, `0`), no data said in the message, a key
    refused said by code or message (`KEY_REFUSED`: retry later, never a refutation, and the API is blocked),
    server-side codes (transient); any other code is an error of these inputs, whatever HTTP said."""
    if code in providers.NO_DATA_CODES:
        return CallResult(Outcome.EMPTY, reason=f"{code} {msg}", code=code)
    if code in providers.SUCCESS_CODES:
        return None
    if code in providers.TRANSIENT_CODES:
        return CallResult(
            Outcome.TRANSIENT, reason=f"provider {code} {msg}", code=code, quota=code in providers.QUOTA_CODES
        )
    if code in providers.INVALID_CODES:
        return CallResult(Outcome.INVALID, reason=f"provider {code} {msg}", code=code)
    upper = code.strip().upper()
    if upper in providers.SUCCESS_WORDS or providers.ZERO_CODE.match(upper):
        return None
    text = msg.lower()
    if any(w in text for w in providers.NO_DATA_WORDS):
        return CallResult(Outcome.EMPTY, reason=f"{code} {msg}", code=code)
    if upper in providers.KEY_CODES or any(w in text for w in providers.KEY_WORDS):
        return CallResult(Outcome.TRANSIENT, reason=f"provider (credentials?) {code} {msg}", code=KEY_REFUSED)
    if providers.SERVER_CODE.match(upper):
        return CallResult(Outcome.TRANSIENT, reason=f"provider {code} {msg}", code=code)
    return CallResult(Outcome.INVALID, reason=f"provider {code} {msg}", code=code)


def substantive(row: dict[str, Any], inputs: set[str]) -> bool:
    """A row is hollow when most of its values are empty, ignoring the ones that merely echo our inputs."""
    values = [v for v in row.values() if not isinstance(v, dict | list)]
    values = [v for v in values if str(v) not in inputs]
    if not values:
        return False
    filled = sum(1 for v in values if v is not None and str(v).strip() != "")
    return filled / len(values) > 0.5


def judge(
    status: int,
    content: bytes,
    content_type: str,
    *,
    envelope: str,
    items_path: str,
    declared_fields: set[str],
    inputs: set[str] | None = None,
) -> CallResult:
    if status in (408, 429) or status >= 500:
        return CallResult(Outcome.TRANSIENT, reason=f"HTTP {status}", code=str(status), quota=status == 429)
    try:
        doc = parse_body(content, content_type)
    except PayloadError as exc:
        text = str(exc)
        if "over the" in text or "refused XML" in text:
            return CallResult(Outcome.HOSTILE, reason=f"rejected response: {text}")
        if status >= 400:
            return CallResult(
                Outcome.INVALID if status not in (401, 403) else Outcome.TRANSIENT,
                reason=f"HTTP {status}: {text}",
                code=str(status),
            )
        return CallResult(Outcome.TRANSIENT, reason=f"unreadable response ({text}); will retry")
    gw = _gateway(doc) or _err_object(doc)
    if gw is not None:
        return gw
    if status in (401, 403):
        return CallResult(Outcome.TRANSIENT, reason=f"HTTP {status} (credentials?)", code=str(status))
    if status >= 400:
        code = str(doc.get("status_code", status)) if isinstance(doc, dict) else str(status)
        return CallResult(Outcome.INVALID, reason=f"HTTP {status} {code}", code=code)
    header = _header(envelope, doc)
    if header is None and envelope == "plain":
        header = envelopes.detect_header(doc)
        if header is not None and header[0] == "ERROR":
            kind = envelopes.error_kind(header[1])
            if kind == "empty":
                return CallResult(Outcome.EMPTY, reason=f"provider: {header[1]}", code="ERROR")
            if kind == "auth":
                return CallResult(Outcome.TRANSIENT, reason=f"provider (credentials?): {header[1]}", code="30")
            return CallResult(Outcome.INVALID, reason=f"provider error: {header[1]}", code="ERROR")
    if header is not None:
        failed = code_verdict(*header)
        if failed is not None:
            return failed
    rows, used = learn_rows(doc, items_path, declared_fields)
    if not rows:
        return CallResult(Outcome.EMPTY, reason="no rows", items_path=used)
    if declared_fields and not any(set(r) & declared_fields for r in rows):
        return CallResult(Outcome.INVALID, reason="rows do not match the declared schema (no declared field present)")
    inputs = inputs or set()
    total, page, size = envelopes.detect_paging(doc, rows)
    rows = [r for r in rows if substantive(r, inputs)]
    if not rows:
        return CallResult(Outcome.EMPTY, reason="only hollow rows (the provider echoed the input)", items_path=used)
    first = (page - 1) * size + 1 if page >= 1 and size >= 1 else 1
    if total is not None and total < first - 1 + len(rows):
        total, first = None, 1  # an echo that does not add up to the rows sent is no evidence
    following = envelopes.detect_next(doc, rows, inputs)
    more = bool(envelopes.detect_more(doc, rows)) and not following
    return CallResult(
        Outcome.OK, items=rows, items_path=used, total=total, first=first, next_token=following, more=more
    )


def learn_rows(doc: Any, items_path: str, declared_fields: set[str]) -> tuple[list[JsonObject], str]:
    """Rows through the declared items path; where it finds none (or the document declares none), the path read
    off the response itself, accepted when its rows carry a declared field (any flat rows without a schema)."""
    rows = _walk(doc, items_path) if items_path else []
    if rows:
        return rows, items_path
    learnt = envelopes.detect_items(doc)
    if learnt is not None and (not declared_fields or any(set(r) & declared_fields for r in learnt[1])):
        return learnt[1], learnt[0]
    if not items_path and isinstance(doc, dict) and not declared_fields and envelopes.detect_header(doc) is None:
        return _rows(doc), ""
    return [], items_path
