"""Where benchmark tool calls go: live through the execution layer (the same executor, rate limits, quotas and
secret handling as verification and synthesis), or replayed from a content-addressed snapshot of responses.

Replay scores the model, not its spelling: a call matches a recording after canonicalisation by the tool's own
spec (`canonical_call`): argument order, the number and text forms of one value (`60`, `"60"`, `"60.0"` for an
integer parameter), documented defaults (`pageNo=1` is the call without it), the response-format parameter the
executor sets anyway, and auth parameters (the executor never sends a caller's key) do not matter. A page of a
recorded listing is served from the recording when the recording covers it (`numOfRows=10&pageNo=3` from a
recorded `numOfRows=1000` holding those rows), as the upstream pages one ordered list. Any other call is a replay
miss: reported as an `error` result with `miss=True`, never invented, and counted apart from the model's
failures. The built-in conversion tools (graph/conversions.py) are computed in replay as they are live, so a
snapshot need not hold them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Protocol

from core.errors import KopaError
from execution.executor import Executor
from execution.result import CallResult, Outcome
from graph.conversions import TOOL_NAMES as CONVERSION_TOOLS
from graph.conversions import answer as conversion_answer
from graph.models import ParamRecord, ToolRecord

SNAPSHOT_VERSION = 1
#: What a snapshot entry keeps of a result, besides the tool and its arguments (the replayed part).
REPLAYED = ("outcome", "items", "reason", "code", "total", "first")


def canonical_args(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the upstream sees them: scalars as text (1 and "1" are the same request)."""
    out: dict[str, Any] = {}
    for k in sorted(args):
        v = args[k]
        if v is None:
            continue
        out[k] = v if isinstance(v, list | dict) else str(v)
    return out


# ---------------------------------------------------------------------------------------------- canonical calls

#: Page-number and page-size parameter pairs of the public-API gateways (data.go.kr `pageNo`/`numOfRows`, juso
#: `currentPage`/`countPerPage`, odcloud `page`/`perPage`, and the common `pageIndex`/`pageSize`). Pages count
#: from 1 on all of them.
PAGING_PAIRS = (
    ("pageNo", "numOfRows"),
    ("currentPage", "countPerPage"),
    ("page", "perPage"),
    ("pageIndex", "pageSize"),
)
_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")


def _number_text(value: Any) -> str | None:
    """The one text of a number given as a number or as its text (60, "60", "60.0", " 60" -> "60"), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        d = Decimal(repr(value))
    elif isinstance(value, str) and _DECIMAL.match(value.strip()):
        try:
            d = Decimal(value.strip())
        except InvalidOperation:
            return None
    else:
        return None
    if d == d.to_integral_value():
        return str(int(d))
    return format(d.normalize(), "f")


def _bool_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower()
    return None


def _nested(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _nested(value[k]) for k in sorted(value, key=str) if value[k] is not None}
    if isinstance(value, list):
        return [_nested(v) for v in value]
    return _scalar(value, None)


def _scalar(value: Any, param: ParamRecord | None) -> Any:
    """One argument's canonical form: by the parameter's documented type, else as the text the upstream reads."""
    if isinstance(value, list | dict):
        return _nested(value)
    kind = param.type if param else "string"
    if kind in ("integer", "number"):
        num = _number_text(value)
        if num is not None:
            return num
    if kind == "boolean" or isinstance(value, bool):
        flag = _bool_text(value)
        if flag is not None:
            return flag
    if isinstance(value, float):
        return _number_text(value) or str(value)  # a JSON number 1.0 is the number 1 whatever the type says
    return str(value)


def canonical_value(tool: ToolRecord | None, name: str, value: Any) -> Any:
    """One argument's canonical form by the tool's spec (the form `canonical_call` compares)."""
    param = next((p for p in tool.params if p.name == name), None) if tool else None
    return _scalar(value, param)


def paging_of(tool: ToolRecord | None) -> tuple[str, str] | None:
    """The tool's (page number, page size) parameters, when it has such a pair."""
    if tool is None:
        return None
    names = {p.name for p in tool.params}
    return next(((a, b) for a, b in PAGING_PAIRS if a in names and b in names), None)


def canonical_call(tool: ToolRecord | None, args: dict[str, Any]) -> dict[str, Any]:
    """The request a call makes, independent of its spelling: sorted names, one form per value, documented
    defaults left out, the auth parameters and the executor's own response format dropped. Without the tool's
    record (an unknown tool) only the spelling-free form of `canonical_args` applies."""
    params = {p.name: p for p in tool.params} if tool else {}
    auth = {n.lower() for n in ((tool.auth_param,) if tool and tool.auth_param else ())}
    fmt_name, _, fmt_value = (tool.format_param or "").partition("=") if tool else ("", "", "")
    out: dict[str, Any] = {}
    for name in sorted(args):
        value = args[name]
        if value is None or name.lower() in auth:
            continue
        if fmt_name and name == fmt_name:
            if str(value).strip().lower() == fmt_value.lower():
                continue  # the executor sends exactly this when the caller does not
            out[name] = str(value)
            continue
        param = params.get(name)
        canon = _scalar(value, param)
        if param is not None and param.default is not None and canon == _scalar(param.default, param):
            continue
        out[name] = canon
    return out


def call_key(tool: str, args: dict[str, Any], record: ToolRecord | None = None) -> str:
    """The key of a call: the tool and its canonical request (`canonical_call` with the tool's record)."""
    canon = canonical_call(record, args) if record is not None else canonical_args(args)
    raw = json.dumps([tool, canon], ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def _page_window(tool: ToolRecord, canon: dict[str, Any], paging: tuple[str, str]) -> tuple[int, int] | None:
    """(offset of the first row, page size) of a canonical call, or None when the page size is not known."""
    by_name = {p.name: p for p in tool.params}
    page_name, size_name = paging
    page = canon.get(
        page_name,
        _scalar(by_name[page_name].default, by_name[page_name]) if by_name[page_name].default is not None else "1",
    )
    size = canon.get(
        size_name,
        _scalar(by_name[size_name].default, by_name[size_name]) if by_name[size_name].default is not None else None,
    )
    if not (isinstance(page, str) and page.isdigit() and isinstance(size, str) and size.isdigit()):
        return None
    p, n = int(page), int(size)
    return ((p - 1) * n, n) if p >= 1 and n >= 1 else None


class Backend(Protocol):
    mode: str

    async def call(self, tool: str, args: dict[str, Any]) -> CallResult: ...


class SnapshotError(KopaError):
    status_code = 422
    code = "invalid_snapshot"


def _replayed(entry: dict[str, Any], **over: Any) -> CallResult:
    doc = {k: entry[k] for k in REPLAYED if k in entry}
    doc["items"] = list(doc.get("items", []))
    doc.update(over)
    return CallResult(**doc)


class Snapshot:
    """Recorded responses by call key. The file's id is the hash of its entries (content-addressed). Each entry
    keeps the tool and the arguments it was called with (auth parameters left out), so a replay re-keys the
    entries by the current canonicalisation."""

    def __init__(self, entries: dict[str, dict[str, Any]] | None = None) -> None:
        self.entries: dict[str, dict[str, Any]] = entries or {}

    @property
    def id(self) -> str:
        raw = json.dumps(self.entries, ensure_ascii=False, sort_keys=True)
        return "snap_" + hashlib.sha256(raw.encode()).hexdigest()[:16]

    def put(self, tool: str, args: dict[str, Any], result: CallResult, record: ToolRecord | None = None) -> None:
        if result.miss or result.outcome == Outcome.TRANSIENT:
            return  # only definitive answers are worth replaying
        kept = canonical_call(record, args) if record is not None else canonical_args(args)
        doc = result.to_json()
        self.entries[call_key(tool, args, record)] = {
            "tool": tool,
            "args": kept,
            **{k: doc[k] for k in REPLAYED if k in doc and (k not in ("total", "first") or doc[k] not in (None, 1))},
        }

    def get(self, tool: str, args: dict[str, Any], record: ToolRecord | None = None) -> CallResult | None:
        e = self.entries.get(call_key(tool, args, record))
        return None if e is None else _replayed(e)

    def save(self, path: Path) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"version": SNAPSHOT_VERSION, "id": self.id, "entries": self.entries}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".snap-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False)  # row field order matters (trimming keeps the first fields)
        os.replace(tmp, path)
        return self.id

    @classmethod
    def load(cls, path: Path) -> Snapshot:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SnapshotError(f"{path}: no such snapshot file") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SnapshotError(f"{path}: not a snapshot file ({exc})") from None
        if (
            not isinstance(doc, dict)
            or doc.get("version") != SNAPSHOT_VERSION
            or not isinstance(doc.get("entries"), dict)
        ):
            raise SnapshotError(f"{path}: not a KOPA-Bench snapshot (version {SNAPSHOT_VERSION})")
        snap = cls(doc["entries"])
        if doc.get("id") and doc["id"] != snap.id:
            raise SnapshotError(f"{path}: content does not match its id {doc['id']} (edited or truncated)")
        known = {o.value for o in Outcome}
        bad = next(
            (k for k, e in snap.entries.items() if not isinstance(e, dict) or e.get("outcome") not in known), None
        )
        if bad is not None:
            raise SnapshotError(f"{path}: entry {bad} has no known outcome ({', '.join(sorted(known))})")
        return snap


class LiveBackend:
    """Calls through the executor; every definitive answer can be recorded into a snapshot for replay."""

    mode = "live"

    def __init__(self, executor: Executor, tools: dict[str, ToolRecord], record: Snapshot | None = None) -> None:
        self.executor = executor
        self.tools = tools
        self.record = record

    async def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        record = self.tools.get(tool)
        if record is None:
            return CallResult(Outcome.INVALID, reason=f"unknown tool {tool!r}")
        result = await self.executor.call(record, args)
        if self.record is not None and tool not in CONVERSION_TOOLS:  # replay computes conversions itself
            self.record.put(tool, args, result, record)
        return result


class ReplayBackend:
    """Answers calls from a snapshot: an exact canonical match, else a page the recording covers, else a miss.

    With `tools` (the registry the run offers), entries are matched by `canonical_call`; without, by the
    spelling-only `canonical_args` (a snapshot replayed without specs)."""

    mode = "replay"

    def __init__(self, snapshot: Snapshot, tools: dict[str, ToolRecord] | None = None) -> None:
        self.snapshot = snapshot
        self.tools = tools or {}
        self.misses: list[dict[str, Any]] = []
        self.paged = 0  # calls answered by slicing a recorded page
        self._exact: dict[str, dict[str, Any]] = {}
        self._listings: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
        for entry in snapshot.entries.values():
            self._index(entry)

    def _rest_key(self, tool: str, canon: dict[str, Any], paging: tuple[str, str]) -> str:
        return json.dumps(
            [tool, {k: v for k, v in canon.items() if k not in paging}], ensure_ascii=False, sort_keys=True, default=str
        )

    def _index(self, entry: dict[str, Any]) -> None:
        tool = str(entry.get("tool", ""))
        raw = entry.get("args")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        record = self.tools.get(tool)
        self._exact.setdefault(call_key(tool, args, record), entry)
        paging = paging_of(record)
        if record is None or paging is None or entry.get("outcome") not in (Outcome.OK, Outcome.EMPTY):
            return
        canon = canonical_call(record, args)
        window = _page_window(record, canon, paging)
        if window is not None:
            self._listings.setdefault(self._rest_key(tool, canon, paging), []).append((*window, entry))

    def _page(self, tool: str, record: ToolRecord, canon: dict[str, Any]) -> CallResult | None:
        paging = paging_of(record)
        window = _page_window(record, canon, paging) if paging else None
        if paging is None or window is None:
            return None
        offset, size = window
        for r_offset, _r_size, entry in self._listings.get(self._rest_key(tool, canon, paging), []):
            if entry.get("outcome") == Outcome.EMPTY and r_offset == 0:
                return _replayed(entry)  # an empty listing is empty on every page
            rows = list(entry.get("items", [])) if entry.get("outcome") == Outcome.OK else []
            # Only rows the recording holds: a short recorded page does not prove the listing ended there (APIs
            # cap the page size, juso at 100 rows), so a page reaching past the recorded rows is a miss.
            if r_offset <= offset and offset + size <= r_offset + len(rows):
                first = int(entry.get("first") or 1) + offset - r_offset
                return _replayed(entry, items=rows[offset - r_offset : offset - r_offset + size], first=first)
        return None

    async def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        if tool in CONVERSION_TOOLS:  # a built-in conversion is deterministic: computed, never recorded
            ans = conversion_answer(tool, args)
            return CallResult(Outcome(ans.outcome), ans.items, ans.reason, ans.code)
        record = self.tools.get(tool)
        entry = self._exact.get(call_key(tool, args, record))
        if entry is not None:
            return _replayed(entry)
        if record is not None:
            paged = self._page(tool, record, canonical_call(record, args))
            if paged is not None:
                self.paged += 1
                return paged
        self.misses.append({"tool": tool, "args": canonical_call(record, args)})
        return CallResult(Outcome.ERROR, reason="replay miss: no recorded response for this call", miss=True)
