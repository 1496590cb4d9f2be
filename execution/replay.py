"""One replay lookup: recorded answers found by the canonical call (`execution.canonical`), for GRPO's replay
(`training.environment.ReplayBackend`) and the benchmark's (`bench.backends.ReplayBackend`) alike.

A call is answered by the recording of the same canonical request, else by a page of a recorded listing that
holds it, as the upstream pages one ordered list (`numOfRows=10&pageNo=3` from a recorded `numOfRows=1000` holding
those rows); anything else is a miss (None), never invented. Only rows the recording holds serve a page: a short
recorded page does not prove the listing ended there (APIs cap the page size, juso at 100 rows), so a page reaching
past the recorded rows is a miss; an empty listing recorded from its start is empty on every page.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from execution.canonical import Described, call_key, canonical_call, page_window, spec_of

T = TypeVar("T")


@dataclass(frozen=True)
class Listing:
    """The rows of a recorded listing answer: `rows` from the 1-based position `first`; `empty` when the listing
    had no rows at all."""

    rows: list[dict[str, Any]]
    first: int = 1
    empty: bool = False


@dataclass(frozen=True)
class Hit(Generic[T]):
    """A recorded answer; `page` is the rows and first position of the page served from a recorded listing (None
    for the recording of the very call)."""

    value: T
    page: Listing | None = None


@dataclass(frozen=True)
class _Recorded(Generic[T]):
    offset: int
    value: T
    listing: Listing


class Recordings(Generic[T]):
    """Recorded answers by canonical call, with the listings that can serve other pages."""

    def __init__(self) -> None:
        self._exact: dict[str, T] = {}
        self._listings: dict[str, list[_Recorded[T]]] = {}

    def __len__(self) -> int:
        return len(self._exact)

    @staticmethod
    def _rest(name: str, canon: dict[str, Any], paging: tuple[str, str]) -> str:
        rest = {k: v for k, v in canon.items() if k not in paging}
        return json.dumps([name, rest], ensure_ascii=False, sort_keys=True, default=str)

    def add(
        self, name: str, tool: Described, args: Mapping[str, Any], value: T, listing: Listing | None = None
    ) -> None:
        """Record `value` as the answer of the call; with `listing`, its rows serve the pages they hold. The
        first recording of a call stays."""
        spec = spec_of(tool)
        self._exact.setdefault(call_key(name, spec, args), value)
        if listing is None or spec.paging is None:
            return
        canon = canonical_call(spec, args)
        window = page_window(spec, canon)
        if window is not None:
            self._listings.setdefault(self._rest(name, canon, spec.paging), []).append(
                _Recorded(window[0], value, listing)
            )

    def find(self, name: str, tool: Described, args: Mapping[str, Any]) -> Hit[T] | None:
        """The recording of this call, else a page a recorded listing holds, else None."""
        spec = spec_of(tool)
        exact = self._exact.get(call_key(name, spec, args))
        if exact is not None:
            return Hit(exact)
        if spec.paging is None:
            return None
        canon = canonical_call(spec, args)
        window = page_window(spec, canon)
        if window is None:
            return None
        offset, size = window
        for rec in self._listings.get(self._rest(name, canon, spec.paging), []):
            if rec.listing.empty and rec.offset == 0:
                return Hit(rec.value)  # an empty listing is empty on every page
            rows = rec.listing.rows
            if rec.offset <= offset and offset + size <= rec.offset + len(rows):
                start = offset - rec.offset
                return Hit(rec.value, Listing(rows[start : start + size], rec.listing.first + start))
        return None
