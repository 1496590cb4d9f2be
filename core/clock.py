"""The instant a conversation happens at, when it is not the machine's.

Real APIs answer at real time, so against them every trajectory is at the machine clock (or the configured
`verify.now`). A simulated world can be asked about another instant: synthesis draws one per trajectory so the data
spans days, hours and seasons, sets it here for the duration of that trajectory's calls, and everything that reads
the clock (`execution.seeds.now`, the executor's cache key, a simulator's transport) sees the same instant.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

#: The conversation's instant (aware), or None: the configured clock.
WORLD_NOW: ContextVar[datetime | None] = ContextVar("kopa_world_now", default=None)
#: The header a simulated world reads the instant from (a real API ignores it; only simulators' transports send it).
WORLD_NOW_HEADER = "x-sandbox-now"


@contextmanager
def world_at(instant: datetime | None) -> Iterator[None]:
    """Run the enclosed calls at `instant` (None: at the configured clock)."""
    token = WORLD_NOW.set(instant)
    try:
        yield
    finally:
        WORLD_NOW.reset(token)


def world_now() -> datetime | None:
    return WORLD_NOW.get()
