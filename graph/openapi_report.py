"""What a registration understood of each operation, said so that a user can check it and correct it with a
registration option instead of reading code: where the key goes, the paging kind, where the rows are, the total, and
how success is told, each with its reason, and what could not be worked out."""

from __future__ import annotations

from typing import Any, TypedDict

from graph import envelopes
from graph.models import ToolRecord

#: Where a key parameter was recognised, as a report says it.
KEY_REASONS = {
    "option": "named at registration (auth_param)",
    "scheme": "an apiKey security scheme of the document names it",
    "name": "its name is a key's",
    "description": "its description says it is the key",
    "known": "a well-known key parameter name",
}
SUCCESS_RULE = (
    "success when the code is one of the data.go.kr family's (00, 0000, INFO-0), a word (SUCCESS, OK, NORMAL "
    "SERVICE) or zeros (0, INFO-000); no data for 03, INFO-200 or a no-data message; a refused key (gateway 20/30/31, "
    "INFO-100, ERROR-290, a message naming the key) blocks the API; server codes (ERROR-5xx) are retried; any other "
    "code is an error of the inputs, even on HTTP 200"
)

#: Where the key goes ("query", "header", "cookie", "path" or "none"), which parameter, and why.
KeyReport = TypedDict("KeyReport", {"in": str, "param": str | None, "reason": str})


class PagingReport(TypedDict):
    kind: str  # graph.envelopes.paging_kind's kind
    params: list[str]
    reason: str


class PathReport(TypedDict):
    """Where the rows (or the total) are in an answer; None when the schema does not say."""

    path: str | None
    reason: str


class SuccessReport(TypedDict):
    code: str | None  # the path of the result code the schema declares
    rule: str
    reason: str


class OperationReport(TypedDict):
    """What a registration understood of one operation (the module docstring)."""

    tool: str
    op: str
    key: KeyReport
    paging: PagingReport
    rows: PathReport
    total: PathReport
    success: SuccessReport
    unresolved: list[str]


def key_report(tool: ToolRecord, scheme: str, source: str | None) -> KeyReport:
    """Where the tool's key goes and why (`source`: a KEY_REASONS key, None when none was recognised)."""
    if scheme == "none":
        return {"in": "none", "param": None, "reason": "the registration says the API takes no key"}
    if not tool.auth_param:
        return {
            "in": "none",
            "param": None,
            "reason": "no key parameter recognised; if the API needs one, register with auth_param (a query "
            "parameter, or a path parameter such as KEY)",
        }
    where = "path" if tool.key_in_path else {"header_key": "header", "cookie_key": "cookie"}.get(scheme, "query")
    why = KEY_REASONS.get(source or "", "the registration's auth parameter")
    return {
        "in": where,
        "param": tool.auth_param,
        "reason": f"{why}; filled from the registration's secret at call time, never a parameter the model sees",
    }


def paging_report(tool: ToolRecord) -> PagingReport:
    kind, names = envelopes.paging_kind([(p.name, p.type) for p in tool.params])
    reasons = {
        "index_range": "a start and an end position of the rows (1-based, inclusive)",
        "page": "a page number and/or a page size",
        "offset": "an offset and a limit",
        "cursor": "a cursor token from the previous answer",
        "none": "no paging parameter recognised: the first answer is all a call can see",
    }
    return {"kind": kind, "params": names, "reason": reasons[kind]}


def operation_report(
    tool: ToolRecord, *, scheme: str, key_source: str | None, total_path: str | None, code_path: str | None
) -> OperationReport:
    """The report of one operation (see the module docstring)."""
    unresolved: list[str] = []
    rows: PathReport
    total: PathReport
    success: SuccessReport
    if tool.items_path:
        hint = f" (a {tool.envelope} envelope)" if tool.envelope != "plain" else ""
        rows = {"path": tool.items_path, "reason": f"the response schema's records{hint}, confirmed on each answer"}
    else:
        rows = {
            "path": None,
            "reason": "the response schema shows no rows: they are learnt from the answers at call time",
        }
        unresolved.append("rows")
    if total_path:
        total = {"path": total_path, "reason": "a total count the response schema declares outside the rows"}
    else:
        total = {"path": None, "reason": "none declared: a total the answers state is read, else the rows received"}
    if code_path:
        success = {"code": code_path, "rule": SUCCESS_RULE, "reason": "the response schema declares a result code"}
    else:
        success = {
            "code": None,
            "rule": "the HTTP status, then a result code wherever an answer carries one: " + SUCCESS_RULE,
            "reason": "the response schema declares no result code",
        }
    key = key_report(tool, scheme, key_source)
    if key["in"] == "none" and scheme != "none":
        unresolved.append("key")
    return {
        "tool": tool.name,
        "op": tool.op_key,
        "key": key,
        "paging": paging_report(tool),
        "rows": rows,
        "total": total,
        "success": success,
        "unresolved": unresolved,
    }


def understood_line(u: dict[str, Any]) -> str:
    """One operation's report as one line of `kopa register` output."""
    key = u["key"]
    paging = u["paging"]
    parts = [
        f"{u['tool']} ({u['op']}):",
        f"key {key['in']}" + (f" {key['param']} ({key['reason'].split(';')[0]})" if key["param"] else ""),
        f"paging {paging['kind']}" + (f" {'/'.join(paging['params'])}" if paging["params"] else ""),
        f"rows {u['rows']['path'] or '(learnt from answers)'}",
        f"total {u['total']['path'] or '-'}",
        f"result code {u['success']['code'] or '-'}",
    ]
    if u["unresolved"]:
        parts.append("not worked out: " + ", ".join(u["unresolved"]))
    return " ".join(parts[:1]) + " " + "; ".join(parts[1:])
