"""The result of one tool call, the one record that execution, verification and the benchmark pass around: the
judge (execution/judge.py) fills in what the response says, the executor adds how the call went (status, latency,
the response's hash, cache), and the benchmark's backends add replay misses and the failures of a model's call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any

from core.json_types import JsonObject


class Outcome(StrEnum):
    """What a call gave. A `StrEnum`: `outcome == "ok"` holds, and the JSON of an outcome is its text."""

    OK = "ok"  # success with substantive rows
    EMPTY = "empty"  # success, but no rows (or only hollow ones)
    INVALID = "invalid"  # a definitive provider/gateway refusal of these inputs (10, 11, 12, E-codes, 4xx)
    HOSTILE = "hostile"  # a response rejected for safety (too large, entity tricks, undecodable): definitive
    #: timeouts, 5xx, quota and throttling (22, 23), auth (20, 30), application errors (01, 99), malformed or
    #: truncated bodies: retry later, never a refutation
    TRANSIENT = "transient"
    # Only in the benchmark, where a model makes the call:
    MALFORMED = "malformed"  # the model's call could not be read (bad JSON arguments)
    UNKNOWN_TOOL = "unknown_tool"  # the model called a tool it was not offered
    ERROR = "error"  # the backend failed, or a replay has no recording of the call (`miss`)


#: Outcomes that settle what the upstream answers to these inputs (worth caching and replaying).
DEFINITIVE = frozenset({Outcome.OK, Outcome.EMPTY, Outcome.INVALID, Outcome.HOSTILE})


@dataclass
class CallResult:
    outcome: Outcome
    items: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    code: str = ""  # the provider's or gateway's result code, the HTTP status, or the executor's own ("blocked")
    quota: bool = False  # a quota or throttling answer
    items_path: str = ""  # where the rows were found (the declared path, or one learnt from this response)
    total: int | None = None  # the rows the query has in all, as the provider states it (None: not stated)
    first: int = 1  # 1-based position of the first row of this page in the whole answer
    #: what the tool's next-page parameter (graph.envelopes.next_param) takes for the next page: the answer's cursor
    #: token, or the next page number when the answer only flags `hasNext`; "" when no page follows or none is said
    next_token: str = ""
    more: bool = False  # the answer flags that a page follows without giving its token (`hasNext: true`)
    # Set by the executor:
    status: int | None = None
    latency_ms: float = 0.0
    response_hash: str = ""
    cached: bool = False
    url: str = ""  # the request URL as evidence, never holding a key
    # Set by the benchmark's replay:
    miss: bool = False  # no recorded response for this call

    def __post_init__(self) -> None:
        self.outcome = Outcome(self.outcome)  # read back from JSON (cache, snapshot) as its text

    @property
    def ok(self) -> bool:
        return self.outcome == Outcome.OK

    @property
    def definitive(self) -> bool:
        return self.outcome in DEFINITIVE

    def to_json(self) -> JsonObject:
        return {**asdict(self), "outcome": self.outcome.value}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CallResult:
        """A result read back from its JSON (a cache entry). Members this version does not know are left out: an
        entry written by another version of the code (a rolling upgrade shares Redis) still reads."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in doc.items() if k in known})
