"""The round ledger of a Celery run: which sources of a round are still outstanding, and who closes it.

A round opens with one pending entry per source tool; each `verify_source` task records its source as
finished; the task that sees none outstanding claims the closing, and only one claim succeeds. A claim
whose closing failed half-way is released, so the retried task resumes and closes the round. Every key
expires after `ttl_s`, so a run that never finishes leaves nothing behind. All key names live here.
"""

from __future__ import annotations

from collections.abc import Iterable

import redis

#: How long a round's keys outlive their last write: longer than any run, short enough to clean up after one.
ROUND_TTL_S = 7 * 86400


class RoundLedger:
    """The bookkeeping of a run's rounds in Redis, shared by every worker process."""

    def __init__(self, client: redis.Redis, prefix: str = "kopa", ttl_s: int = ROUND_TTL_S) -> None:
        self.r = client
        self.prefix = prefix
        self.ttl_s = ttl_s

    def pending_key(self, run_id: str, round_no: int) -> str:
        return f"{self.prefix}:run:{run_id}:round:{round_no}:pending"

    def closing_key(self, run_id: str, round_no: int) -> str:
        return f"{self.prefix}:run:{run_id}:round:{round_no}:done"

    def open(self, run_id: str, round_no: int, sources: Iterable[str]) -> None:
        """Record `sources` as outstanding in the round (again, harmlessly, when a start is redelivered)."""
        names = list(sources)
        if not names:
            raise ValueError("a round opens with at least one source; a round without any closes at once")
        key = self.pending_key(run_id, round_no)
        pipe = self.r.pipeline(transaction=True)
        pipe.sadd(key, *names)
        pipe.expire(key, self.ttl_s)
        pipe.execute()

    def finish(self, run_id: str, round_no: int, source: str) -> int:
        """Record `source` as finished (idempotent) and return how many sources are still outstanding."""
        key = self.pending_key(run_id, round_no)
        pipe = self.r.pipeline(transaction=True)
        pipe.srem(key, source)
        pipe.scard(key)
        _removed, left = pipe.execute()
        return int(left)

    def outstanding(self, run_id: str, round_no: int) -> set[str]:
        """The sources of the round not yet recorded as finished."""
        return {
            m.decode() if isinstance(m, bytes) else str(m) for m in self.r.smembers(self.pending_key(run_id, round_no))
        }

    def claim_closing(self, run_id: str, round_no: int) -> bool:
        """Whether this caller closes the round: true for exactly one caller until the claim is released."""
        return bool(self.r.set(self.closing_key(run_id, round_no), 1, nx=True, ex=self.ttl_s))

    def release_closing(self, run_id: str, round_no: int) -> None:
        """Give the closing back (it failed half-way), so that the retried task claims it and resumes."""
        self.r.delete(self.closing_key(run_id, round_no))
