"""Where benchmark tool calls go: live through the execution layer (the same executor, rate limits, quotas and
secret handling as verification and synthesis), or replayed from a content-addressed snapshot of responses keyed
by (tool, canonical arguments). A replay miss is reported as an error observation, never invented. The built-in
conversion tools (graph/conversions.py) are computed in replay as they are live, so a snapshot need not hold them.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from core.errors import KopaError
from execution.executor import Executor
from graph.conversions import TOOL_NAMES as CONVERSION_TOOLS
from graph.conversions import answer as conversion_answer
from graph.models import ToolRecord

SNAPSHOT_VERSION = 1


@dataclass
class Observation:
    """What one tool call gave: the judged outcome and every row (the model sees a trimmed view)."""

    outcome: str
    items: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    code: str = ""
    miss: bool = False

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def canonical_args(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the upstream sees them: scalars as text (1 and "1" are the same request)."""
    out: dict[str, Any] = {}
    for k in sorted(args):
        v = args[k]
        if v is None:
            continue
        out[k] = v if isinstance(v, list | dict) else str(v)
    return out


def call_key(tool: str, args: dict[str, Any]) -> str:
    raw = json.dumps([tool, canonical_args(args)], ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class Backend(Protocol):
    mode: str

    async def call(self, tool: str, args: dict[str, Any]) -> Observation: ...


class SnapshotError(KopaError):
    status_code = 422
    code = "invalid_snapshot"


class Snapshot:
    """Recorded responses by call key. The file's id is the hash of its entries (content-addressed)."""

    def __init__(self, entries: dict[str, dict[str, Any]] | None = None) -> None:
        self.entries: dict[str, dict[str, Any]] = entries or {}

    @property
    def id(self) -> str:
        raw = json.dumps(self.entries, ensure_ascii=False, sort_keys=True)
        return "snap_" + hashlib.sha256(raw.encode()).hexdigest()[:16]

    def put(self, tool: str, args: dict[str, Any], obs: Observation) -> None:
        if obs.miss or obs.outcome == "transient":
            return  # only definitive answers are worth replaying
        self.entries[call_key(tool, args)] = {"tool": tool, "args": canonical_args(args),
                                              **{k: v for k, v in obs.to_json().items() if k != "miss"}}

    def get(self, tool: str, args: dict[str, Any]) -> Observation | None:
        e = self.entries.get(call_key(tool, args))
        if e is None:
            return None
        return Observation(e["outcome"], list(e.get("items", [])), e.get("reason", ""), e.get("code", ""))

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
        if not isinstance(doc, dict) or doc.get("version") != SNAPSHOT_VERSION or not isinstance(doc.get("entries"), dict):
            raise SnapshotError(f"{path}: not a KOPA-Bench snapshot (version {SNAPSHOT_VERSION})")
        snap = cls(doc["entries"])
        if doc.get("id") and doc["id"] != snap.id:
            raise SnapshotError(f"{path}: content does not match its id {doc['id']} (edited or truncated)")
        return snap


class LiveBackend:
    """Calls through the executor; every definitive answer can be recorded into a snapshot for replay."""

    mode = "live"

    def __init__(self, executor: Executor, tools: dict[str, ToolRecord], record: Snapshot | None = None) -> None:
        self.executor = executor
        self.tools = tools
        self.record = record

    async def call(self, tool: str, args: dict[str, Any]) -> Observation:
        record = self.tools.get(tool)
        if record is None:
            return Observation("invalid", reason=f"unknown tool {tool!r}")
        result = await self.executor.call(record, args)
        obs = Observation(result.outcome, [r for r in result.items if isinstance(r, dict)], result.reason, result.code)
        if self.record is not None and tool not in CONVERSION_TOOLS:  # replay computes conversions itself
            self.record.put(tool, args, obs)
        return obs


class ReplayBackend:
    mode = "replay"

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.misses: list[dict[str, Any]] = []

    async def call(self, tool: str, args: dict[str, Any]) -> Observation:
        if tool in CONVERSION_TOOLS:  # a built-in conversion is deterministic: computed, never recorded
            ans = conversion_answer(tool, args)
            return Observation(ans.outcome, ans.items, ans.reason, ans.code)
        obs = self.snapshot.get(tool, args)
        if obs is None:
            self.misses.append({"tool": tool, "args": canonical_args(args)})
            return Observation("error", reason="replay miss: no recorded response for this call", miss=True)
        return obs
