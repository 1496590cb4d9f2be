"""Dates and times written in an answer: ISO, dotted, compact, Korean and English dates (`2026년 10월 15일(목)`,
`March 26, 2003`, `10월 15일` or `Oct 15` in a given year), and clock times (`13:00`, `오후 1시 30분`, `정오`) with
ranges."""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache
from typing import Any

from synthesis.answer_values import nfkc

# ---------------------------------------------------------------------------------------------- dates and times

_ISO = re.compile(r"(?<![0-9])(\d{4})\s*[-./]\s*(\d{1,2})\s*[-./]\s*(\d{1,2})(?![0-9])")
_COMPACT = re.compile(r"(?<![0-9])((?:19|20)\d{2})(\d{2})(\d{2})(?![0-9])")
_SHORT_YEAR = re.compile(r"(?<![0-9.])(\d{2})\.(\d{1,2})\.(\d{1,2})(?![0-9])")
_KOREAN = re.compile(r"(?:(\d{4})\s*년\s*)?(\d{1,2})\s*월\s*(\d{1,2})\s*일")
#: English month names and their short forms (`March`, `Sep`, `Sept.`).
_EN_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_EN_MONTH = "|".join(sorted(_EN_MONTHS, key=len, reverse=True))
#: An English date, month first (`March 26, 2003`, `Oct 15`) or day first (`2 Sep 2025`, `15th of October`).
_ENGLISH = re.compile(
    rf"\b(?:(?P<m1>{_EN_MONTH})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?![\d:])"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_EN_MONTH})\b\.?)"
    r"(?:,?\s+(?P<y>(?:19|20)\d{2})(?!\d))?",
    re.I,
)
#: A month and day as lists write them (`9/3`, `10/15`), never a fraction, a ratio or `51 / 27` of two values.
_MONTH_DAY = re.compile(r"(?<![\d./-])()(1[0-2]|0?[1-9])/([12]\d|3[01]|0?[1-9])(?![\d./%])")


def _mkdate(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def date_spans(text: str, default_year: int | None = None) -> list[tuple[date, int, int]]:
    """(date, start, end) of every date written in the text."""
    return list(_date_spans(text, default_year))


@lru_cache(maxsize=512)
def _date_spans(text: str, default_year: int | None) -> tuple[tuple[date, int, int], ...]:
    text = nfkc(text)
    found: list[tuple[date, int, int]] = []
    taken: list[tuple[int, int]] = []
    for rx in (_ISO, _COMPACT, _KOREAN, _ENGLISH, _SHORT_YEAR, _MONTH_DAY):
        for m in rx.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            if rx is _ENGLISH:
                year = int(m.group("y")) if m.group("y") else default_year
                month = _EN_MONTHS[(m.group("m1") or m.group("m2")).lower()]
                if m.group("m1") == "may" and not m.group("y") and not re.search(r"\d(?:st|nd|rd|th)", m.group()):
                    continue  # `may 5 times` is the verb
                d = None if year is None else _mkdate(year, month, int(m.group("d1") or m.group("d2")))
                if d:
                    found.append((d, m.start(), m.end()))
                    taken.append((m.start(), m.end()))
                continue
            if rx is _KOREAN or rx is _MONTH_DAY:
                year = int(m.group(1)) if m.group(1) else default_year
                if year is None:
                    continue
            elif rx is _SHORT_YEAR:
                year = 2000 + int(m.group(1))
            else:
                year = int(m.group(1))
            d = _mkdate(year, int(m.group(2)), int(m.group(3)))
            if d:
                found.append((d, m.start(), m.end()))
                taken.append((m.start(), m.end()))
    return tuple(sorted(found, key=lambda x: x[1]))


def dates_in(text: str, default_year: int | None = None) -> set[date]:
    """Dates written as 2026-10-15, 2026.10.15, 2026/10/15, 20261015, 2026년 10월 15일, 26.10.15 or (with a default
    year) 10월 15일."""
    return {d for d, _, _ in date_spans(text, default_year)}


def as_date(value: Any) -> date | None:
    """A date from a fact value: a date, or text in any form `dates_in` reads (the first one)."""
    if isinstance(value, date):
        return value
    found = sorted(dates_in(str(value)))
    return found[0] if found else None


_TIME_VALUE = re.compile(r"^(?:([01]\d|2[0-4]):?([0-5]\d))$")
_CLOCK = re.compile(r"(?<![\d:])([01]?\d|2[0-4]):([0-5]\d)(?![\d:])")
_HOUR = re.compile(
    r"(오전|오후|아침|새벽|낮|저녁|밤|am|pm)?\s*(\d{1,2})\s*시(?!간)(?:\s*(반(?![가-힣])|(\d{1,2})\s*분))?"
)
_EN_CLOCK = re.compile(r"(?<![\d:.])(\d{1,2})(?::([0-5]\d))?\s?(a\.m\.|p\.m\.|am\b|pm\b)")
_RAW_TIME = re.compile(r"(?<![\d.,:])([01]\d|2[0-3])([0-5]\d)(?![\d:]|[.,]\d)")


def time_values(value: Any) -> list[int] | None:
    """The minutes after midnight of a time fact value (`1300`, `13:00`, `09:00~18:00`), or None."""
    text = nfkc(value).strip()
    parts = [p.strip() for p in re.split(r"\s*[~\-–]\s*", text) if p.strip()]
    if not parts or len(parts) > 2:
        return None
    out = []
    for p in parts:
        m = _TIME_VALUE.match(p)
        if not m:
            return None
        out.append(int(m.group(1)) * 60 + int(m.group(2)))
    return out


def time_spans(text: str, *, raw: bool = True) -> list[tuple[set[int], int, int]]:
    """(possible minutes after midnight, start, end) of every time written in the text: a bare 12-hour `1시` may be
    either half of the day. `raw=False` leaves out bare four-digit numbers (`1500`), which may be anything."""
    return [(set(m), a, b) for m, a, b in _time_spans(text, raw)]


@lru_cache(maxsize=512)
def _time_spans(text: str, raw: bool = True) -> tuple[tuple[frozenset[int], int, int], ...]:
    text = nfkc(text).lower()
    out: list[tuple[set[int], int, int]] = []
    for m in _EN_CLOCK.finditer(text):  # `3 p.m.`, `5:20 a.m.`, `11am`
        h, minute = int(m.group(1)), int(m.group(2) or 0)
        if 1 <= h <= 12:
            h = h % 12 + (12 if m.group(3).startswith("p") else 0)
            out.append(({h * 60 + minute}, m.start(), m.end()))
    english = [(a, b) for _, a, b in out]
    for m in _CLOCK.finditer(text):
        if not any(a <= m.start() < b for a, b in english):
            out.append(({int(m.group(1)) * 60 + int(m.group(2))}, m.start(), m.end()))
    for m in _HOUR.finditer(text):
        h = int(m.group(2))
        if h > 24:
            continue
        minute = 30 if m.group(3) == "반" else int(m.group(4) or 0)
        period = m.group(1)
        if period in ("오후", "저녁", "밤", "pm") and h < 12:
            hours = {h + 12}
        elif period in ("오전", "아침", "새벽", "am"):
            hours = {0 if h == 12 else h}
        elif period == "낮":
            hours = {h if h >= 11 else h + 12}
        else:
            hours = {h, h + 12} if h < 12 else {h}
        out.append(({x * 60 + minute for x in hours}, m.start(), m.end()))
    for word, minutes in (("정오", 12 * 60), ("자정", 0), (r"\bnoon\b", 12 * 60), (r"\bmidnight\b", 0)):
        for m in re.finditer(word, text):
            out.append(({minutes} if minutes else {minutes, 24 * 60}, m.start(), m.end()))
    for m in _RAW_TIME.finditer(text) if raw else ():
        if not any(a <= m.start() < b for _, a, b in out):
            out.append(({int(m.group(1)) * 60 + int(m.group(2))}, m.start(), m.end()))
    return tuple((frozenset(m), a, b) for m, a, b in sorted(out, key=lambda x: x[1]))
