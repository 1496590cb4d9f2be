"""Where benchmark tool calls go: live through the execution layer (the same executor, rate limits, quotas and
secret handling as verification and synthesis), or replayed from a content-addressed snapshot of responses.

Replay scores the model, not its spelling: a call matches a recording by the one canonical call of the tool's own
spec (`execution.canonical`, which the executor's cache, verification, GRPO's replay and the rewards use too):
argument order, the number and text forms of one value (`60`, `"60"`, `"60.0"` for an integer parameter),
surrounding whitespace, documented defaults (`pageNo=1` is the call without it), the response-format parameter the
executor sets anyway, and auth parameters (the executor never sends a caller's key) do not matter. A page of a
recorded listing is served from the recording when the recording covers it (`numOfRows=10&pageNo=3` from a
recorded `numOfRows=1000` holding those rows), as the upstream pages one ordered list; the lookup is
`execution.replay.Recordings`, as in GRPO's replay. Any other call is a replay miss: reported as an `error` result
with `miss=True`, never invented, and counted apart from the model's failures. The built-in conversion tools
(graph/conversions.py) are computed in replay as they are live, so a snapshot need not hold them.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol

from core.errors import KopaError
from execution import canonical
from execution.executor import Executor
from execution.replay import Listing, Recordings
from execution.result import CallResult, Outcome
from graph.conversions import TOOL_NAMES as CONVERSION_TOOLS
from graph.conversions import answer as conversion_answer
from graph.models import ToolRecord

SNAPSHOT_VERSION = 1
#: What a snapshot entry keeps of a result, besides the tool and its arguments (the replayed part).
REPLAYED = ("outcome", "items", "reason", "code", "total", "first")


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
        kept = canonical.canonical_call(record, args)
        doc = result.to_json()
        self.entries[canonical.call_key(tool, record, args)] = {
            "tool": tool,
            "args": kept,
            **{k: doc[k] for k in REPLAYED if k in doc and (k not in ("total", "first") or doc[k] not in (None, 1))},
        }

    def get(self, tool: str, args: dict[str, Any], record: ToolRecord | None = None) -> CallResult | None:
        e = self.entries.get(canonical.call_key(tool, record, args))
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
    """Answers calls from a snapshot through `execution.replay.Recordings`: an exact canonical match, else a page
    the recording covers, else a miss.

    With `tools` (the registry the run offers), entries are matched by the tools' specs; without, by the
    spelling rules alone (a snapshot replayed without specs)."""

    mode = "replay"

    def __init__(self, snapshot: Snapshot, tools: dict[str, ToolRecord] | None = None) -> None:
        self.snapshot = snapshot
        self.tools = tools or {}
        self.misses: list[dict[str, Any]] = []
        self.paged = 0  # calls answered by slicing a recorded page
        self.recordings: Recordings[dict[str, Any]] = Recordings()
        for entry in snapshot.entries.values():
            tool = str(entry.get("tool", ""))
            raw = entry.get("args")
            outcome = entry.get("outcome")
            listing = (
                Listing(
                    list(entry.get("items", [])) if outcome == Outcome.OK else [],
                    int(entry.get("first") or 1),
                    empty=outcome == Outcome.EMPTY,
                )
                if outcome in (Outcome.OK, Outcome.EMPTY)
                else None
            )
            self.recordings.add(tool, self.tools.get(tool), raw if isinstance(raw, dict) else {}, entry, listing)

    async def call(self, tool: str, args: dict[str, Any]) -> CallResult:
        if tool in CONVERSION_TOOLS:  # a built-in conversion is deterministic: computed, never recorded
            ans = conversion_answer(tool, args)
            return CallResult(Outcome(ans.outcome), ans.items, ans.reason, ans.code)
        record = self.tools.get(tool)
        hit = self.recordings.find(tool, record, args)
        if hit is not None and hit.page is None:
            return _replayed(hit.value)
        if hit is not None and hit.page is not None:
            self.paged += 1
            return _replayed(hit.value, items=hit.page.rows, first=hit.page.first)
        self.misses.append({"tool": tool, "args": canonical.canonical_call(record, args)})
        return CallResult(Outcome.ERROR, reason="replay miss: no recorded response for this call", miss=True)
