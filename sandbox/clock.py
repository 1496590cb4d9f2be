"""The sandbox clock: frozen at a configurable instant (reproducible tests) or following real time."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

KST = timezone(timedelta(hours=9), "KST")
#: Default "now" of every seed: a weekday afternoon, late enough that all KMA issues of the day exist.
DEFAULT_NOW = datetime(2026, 10, 15, 14, 20, tzinfo=KST)


def parse_instant(text: str) -> datetime:
    """ISO text to an aware datetime; naive text is taken as KST."""
    dt = datetime.fromisoformat(text)
    return dt if dt.tzinfo else dt.replace(tzinfo=KST)


class Clock:
    def __init__(self, now: str = "") -> None:
        self._frozen: datetime | None = DEFAULT_NOW
        self._offset = timedelta(0)
        self.set(now)

    def set(self, now: str) -> None:
        """'' keeps the default, 'live' follows the machine clock, anything else is an ISO instant."""
        if not now:
            return
        if now == "live":
            self._frozen, self._offset = None, timedelta(0)
        else:
            self._frozen = parse_instant(now).astimezone(KST)

    def now(self) -> datetime:
        if self._frozen is not None:
            return self._frozen
        return datetime.now(KST) + self._offset

    def describe(self) -> dict[str, str]:
        return {"now": self.now().isoformat(), "mode": "frozen" if self._frozen is not None else "live"}
