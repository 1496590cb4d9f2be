"""What an answer may rest on (`Seen`): the tool results the model read, the user's turns and the clock, with the
figures, counts, dates, months and clock times they support, for the judge (`synthesis.facts.check_answer`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cached_property
from typing import Any

from graph.concepts import AIR_GRADES
from synthesis.answer_dates import date_spans, time_values
from synthesis.answer_values import (
    mentions,
    nfkc,
    normalise_name,
    prepare_text,
)
from synthesis.qualifiers import DATE_PART, clock_spans, mkdate, qualifier

_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def _leaves(
    doc: Any, out: list[str], keys: set[str], keyed: list[tuple[str, str]] | None = None, key: str = ""
) -> None:
    if isinstance(doc, dict):
        for k, v in doc.items():
            keys.add(str(k))
            _leaves(v, out, keys, keyed, str(k))
    elif isinstance(doc, list):
        for v in doc:
            _leaves(v, out, keys, keyed, key)
    elif doc is not None and not isinstance(doc, bool):
        out.append(str(doc))
        if keyed is not None:
            keyed.append((key, str(doc)))


#: Fields whose values are codes, identifiers, grid cells or parts of a date, never a measurement (`areaCode`,
#: `nodeId`, `stationNo`, `nx`, `dealDay`), and the view's counts of rows.
NOT_MEASURES = re.compile(
    r"(?:cd|code|id|ids|seq|no|num|key|year|month|day|date|dt)$|^(?:nx|ny|rows|shown|first|total)$", re.I
)
#: Fields that hold a coordinate (`gpslati`, `mapx`, `tmY`, `lng`): a position, never a measurement with a unit.
_COORDINATE = re.compile(r"lati|longi|^(?:gps)?long$|^lat$|^lo?ng?$|^map[xy]$|^gps[xy]$|^tm[xy]$|^[xy]$|^wgs", re.I)
#: A figure glued to the letters before it is part of a code or a name (`D000360`, `탄방5`), unless a unit follows
#: (`서방정40밀리그램`).
_GLUED = re.compile(r"(?<=[A-Za-z가-힣])\d+(?:\.\d+)?(?![\d.]|\s?(?:mg|g|kg|ml|밀리|그램|킬로|%|도|℃|m|km|cm))")


#: A figure with a unit inside a name (`다온심바스타틴정20밀리그램`): the strength of that product, a measure only of
#: it.
_NAMED = re.compile(r"([가-힣A-Za-z]{2,})(\d+(?:\.\d+)?)(?=\s?(?:mg|g|kg|ml|밀리|그램|킬로|%|m|km|cm))")


def _measures_of(text: str) -> list[float]:
    return _numbers_of(_NAMED.sub(r"\1 ", _GLUED.sub(" ", nfkc(text))), parts=False)


def _numbers_of(text: str, *, parts: bool = True) -> list[float]:
    """Every figure in a seen value, with (`parts`) the parts of compact dates and clock times (`20261015`,
    `1500`)."""
    flat = re.sub(r"(?<=\d),(?=\d{3})", "", nfkc(text))
    out: list[float] = []
    for m in _DIGITS.finditer(flat):
        raw = m.group()
        out.append(float(raw))
        if parts and "." not in raw and len(raw) in (4, 6, 8, 10, 12):
            out.extend(float(raw[i : i + 2]) for i in range(0, len(raw), 2))
            out.append(float(raw[:4]))
    return out


def one_figure(value: Any) -> float | None:
    """A row value that is one figure (`11.7`, `-3`), not a code, date or text."""
    text = str(value).strip()
    if isinstance(value, bool) or not re.fullmatch(r"-?\d{1,6}(?:\.\d+)?", text) or re.fullmatch(r"0\d+", text):
        return None
    return float(text)


@dataclass(frozen=True)
class Seen:
    """What an answer may rest on: the tool results the model read (their text), the user's turns and the clock."""

    results: tuple[str, ...] = ()
    user: tuple[str, ...] = ()
    now: datetime | None = None
    #: the argument values of the calls the model made (a code it sent, such as 30200, is something it knows)
    sent: tuple[str, ...] = ()

    @cached_property
    def _parsed(self) -> tuple[list[str], set[str], list[dict[str, Any]], list[tuple[str, str]]]:
        """Every result parsed once: its leaf values (a result that is not JSON is one text), field names, rows,
        and the leaves with their field names."""
        leaves: list[str] = []
        keys: set[str] = set()
        rows: list[dict[str, Any]] = []
        keyed: list[tuple[str, str]] = []
        for content in self.results:
            try:
                doc = json.loads(content)
            except ValueError:
                leaves.append(content)
                keyed.append(("", content))
                continue
            _leaves(doc, leaves, keys, keyed)
            items = doc.get("items") if isinstance(doc, dict) else None
            if isinstance(items, list):
                rows.extend(r for r in items if isinstance(r, dict))
        return leaves, keys, rows, keyed

    @cached_property
    def counts(self) -> frozenset[float]:
        """What a count may be: the rows a result lists or reports, a count field's value, the user's figures."""
        out = {float(len(rows)) for rows in self.listings} | set(self.user_numbers) | {0.0, 1.0}
        for rows in self.listings:  # rows of one name among them (`신정한양 6건, 푸르지오목3차 4건`)
            named = Counter(n for n in (row_name(v) for r in rows for v in r.values()) if n)
            out |= {float(n) for n in named.values()}
        for key, text in self._parsed[3]:
            if COUNT_FIELD.search(key) and (x := one_figure(text)) is not None:
                out.add(x)
        return frozenset(out)

    @cached_property
    def row_names(self) -> frozenset[str]:
        return frozenset(n for rows in self.listings for r in rows for v in r.values() if (n := row_name(v)))

    def names_in(self, text: str) -> int:
        """How many of the rows' names the text states."""
        squeezed = normalise_name(text)
        return sum(1 for n in self.row_names if n in squeezed)

    @cached_property
    def listings(self) -> list[list[dict[str, Any]]]:
        """The rows of each result, one list a result."""
        out: list[list[dict[str, Any]]] = []
        for content in self.results:
            try:
                doc = json.loads(content)
            except ValueError:
                continue
            items = doc.get("items") if isinstance(doc, dict) else None
            if isinstance(items, list):
                out.append([r for r in items if isinstance(r, dict)])
        return out

    @cached_property
    def outside_listings(self) -> frozenset[float]:
        """Figures seen outside any listing of several rows: single rows, the user's words."""
        out = {
            round(x, 9)
            for rows in self.listings
            if len(rows) < 2
            for r in rows
            for v in r.values()
            if (x := one_figure(v)) is not None
        }
        return frozenset(out | self.user_numbers)

    @property
    def leaves(self) -> list[str]:
        return self._parsed[0]

    @property
    def keys(self) -> set[str]:
        """The field names of the results (an answer that writes them pastes rows)."""
        return self._parsed[1]

    @cached_property
    def by_field(self) -> dict[str, set[str]]:
        """The values each field of the results holds (normalised; a figure also as a plain number)."""
        out: dict[str, set[str]] = {}
        for key, text in self._parsed[3]:
            values = out.setdefault(key, set())
            values.add(normalise_name(text))
            if (x := one_figure(text)) is not None:
                values.add(f"{x:g}")
        return out

    @cached_property
    def grades(self) -> dict[float, set[str]]:
        """The AirKorea grade codes the rows give their figures (`pm10Value` 61 with `pm10Grade` 2: {61: {"2"}})."""
        out: dict[float, set[str]] = {}
        for row in self._parsed[2]:
            for key, value in row.items():
                sibling = re.sub(r"(?i)value$", "Grade", str(key))
                grade = row.get(sibling) if sibling != str(key) else None
                if grade is not None and str(grade).strip() in AIR_GRADES and (x := one_figure(value)) is not None:
                    out.setdefault(round(x, 9), set()).add(str(grade).strip())
        return out

    @cached_property
    def texts(self) -> list[str]:
        return [*self.leaves, *self.user, *self.sent]

    @cached_property
    def user_numbers(self) -> frozenset[float]:
        """The figures the user wrote (their own threshold, address or route number is no rival value)."""
        return frozenset(m.value for t in self.user for m in mentions(prepare_text(t)))

    @cached_property
    def numbers(self) -> list[float]:
        """Sorted figures of everything seen, the clock's parts included."""
        out: list[float] = [0.0, 1.0]
        for text in self.texts:
            out.extend(_numbers_of(text))
        out.extend(self.user_numbers)
        if self.now is not None:
            n = self.now
            out += [n.year, n.month, n.day, n.hour, n.minute, n.hour % 12 or 12, n.year % 100]
            for d in self.clock_dates:
                out += [d.year, d.month, d.day]
        return sorted({round(x, 9) for x in out})

    @cached_property
    def figures(self) -> list[float]:
        """The figures the results and the user state as figures: no part of a date or clock time, no clock. A
        count an answer states beyond the listings' must be one of these."""
        return self._figures(counts=True)

    @cached_property
    def measures(self) -> list[float]:
        """The figures that may support a measurement an answer states (15.9도, 37%, 6분): those of `figures` but
        a count field's or a coordinate's (`arrprevstationcnt` 3 is no 3 minutes, `gpslong` 127.4 no 127 m)."""
        return self._figures(counts=False)

    def _figures(self, *, counts: bool) -> list[float]:
        out = {0.0}
        for key, text in self._parsed[3]:
            if NOT_MEASURES.search(key) or (not counts and (COUNT_FIELD.search(key) or _COORDINATE.search(key))):
                continue
            q = qualifier(text) if len(text) <= 40 else None
            if q is None or q.kind == "name" or (q.day is None and ":" not in text):  # a bare 1051 may be seconds
                out |= {round(x, 9) for x in _measures_of(text)}
        out |= self.user_numbers
        return sorted(out)

    @cached_property
    def named_figures(self) -> dict[float, set[str]]:
        """The figures written inside names (a product's strength), each with the letters of the names before it
        (normalised): such a figure is a measure of that product only."""
        out: dict[float, set[str]] = {}
        for text in self.texts:
            for m in _NAMED.finditer(nfkc(text)):
                out.setdefault(round(float(m.group(2)), 9), set()).add(normalise_name(m.group(1)))
        return out

    @cached_property
    def measured(self) -> list[float]:
        """The figures the results and the user state (not the clock, nothing at or below 1)."""
        out = {round(x, 9) for text in self.texts for x in _numbers_of(text) if abs(x) > 1}
        return sorted(out)

    @cached_property
    def row_differences(self) -> list[float]:
        """Differences of two figures of one row (a day's highest and lowest temperature)."""
        out: set[float] = set()
        for row in self._parsed[2][:60]:
            values = [x for v in row.values() if isinstance(v, int | float | str) and (x := one_figure(v)) is not None]
            out |= {round(abs(a - b), 9) for i, a in enumerate(values[:30]) for b in values[i + 1 : 30]}
        return sorted(out)

    @cached_property
    def clock_dates(self) -> set[date]:
        if self.now is None:
            return set()
        today = self.now.date()
        first = today.replace(day=1)
        last_end = first - timedelta(days=1)
        out = {today + timedelta(days=k) for k in range(-7, 8)}
        return out | {first, last_end, last_end.replace(day=1)}

    @cached_property
    def dates(self) -> set[date]:
        year = self.now.year if self.now else None
        out = set(self.clock_dates) | {x for y, m, d in self._parts if y and m and d and (x := mkdate(y, m, d))}
        for text in self.texts:
            out |= {d for d, _, _ in date_spans(text, year)}
            compact = re.fullmatch(r"((?:19|20)\d{2})(\d{2})(\d{2})\d{0,6}", text.strip())
            if compact and (d := mkdate(*(int(g) for g in compact.groups()))):
                out.add(d)
        return out

    @cached_property
    def months(self) -> set[int]:
        """Months seen: of every date seen, of the clock (this month, last month) and written as months."""
        out = {d.month for d in self.dates}
        if self.now is not None:  # this month, last month, next month
            out |= {(self.now.month + k - 1) % 12 + 1 for k in (-1, 0, 1)}
        for text in self.texts:
            out |= {int(m.group(1)) for m in re.finditer(r"(?<!\d)(\d{1,2})\s*월", nfkc(text))}
            compact = re.fullmatch(r"((?:19|20)\d{2})(\d{2})", text.strip())
            if compact:
                out.add(int(compact.group(2)))
        out |= {m for _, m, _ in self._parts if m}
        return out

    @cached_property
    def _parts(self) -> list[tuple[int, int, int]]:
        """(year, month, day) a row states in separate fields (`dealYear`, `dealMonth`, `dealDay`; 0 for a part it
        lacks)."""
        out: list[tuple[int, int, int]] = []
        for row in self._parsed[2]:
            parts: dict[str, int] = {}
            for k, v in row.items():
                kind = DATE_PART.search(str(k))
                if kind and re.fullmatch(r"\d{1,4}", str(v).strip()):
                    parts.setdefault(kind.group(1).lower()[0], int(str(v)))
            if "m" in parts:
                out.append((parts.get("y", 0), parts["m"], parts.get("d", 0)))
        return out

    @cached_property
    def minutes(self) -> set[int]:
        """Clock times seen (minutes after midnight): HHMM and HH:MM values, times in the user's words, the clock."""
        out: set[int] = set()
        for text in self.texts:
            t = time_values(text.zfill(4) if re.fullmatch(r"\d{3}", text.strip()) else text)
            if t:
                out.update(t)
            stamp = re.fullmatch(r"(?:19|20)\d{6}([01]\d|2[0-3])([0-5]\d)(?:[0-5]\d)?", text.strip())
            if stamp:  # a compact timestamp (`tmFc=202610150600`): its clock time was seen
                out.add(int(stamp.group(1)) * 60 + int(stamp.group(2)))
            for mins, _, _ in clock_spans(prepare_text(text)):
                out |= mins
        if self.now is not None:
            out |= {self.now.hour * 60 + self.now.minute, self.now.hour * 60}
        return out

    @cached_property
    def result_text(self) -> str:
        """What the results say (normalised), without the user's words."""
        return normalise_name(" ".join(self.leaves))

    @cached_property
    def text(self) -> str:
        return normalise_name(" ".join(self.texts))


#: Fields that count something (`dongCnt`, `hhldCnt`, `arrprevstationcnt`, `totalCount`).
COUNT_FIELD = re.compile(r"cnt|count|total|^rows$|^shown$|수$", re.I)


def row_name(value: Any) -> str:
    """A row value that names its row to a reader (a station, a shop, a district), normalised, or ''."""
    text = str(value).strip() if isinstance(value, str) else ""
    if not text or len(text) > 20 or re.search(r"\d", text) or not re.search(r"[가-힣]", text):
        return ""
    name = normalise_name(text)
    return name if len(name) >= 2 and name not in _COMMON_WORDS else ""


#: Row names that are also everyday words of an answer (a station called 가장 beside `가장 높은 곳`): they name
#: no row in a sentence.
_COMMON_WORDS = frozenset(
    {"가장", "제일", "현재", "지금", "오늘", "내일", "최고", "최저", "평균", "전체", "기준", "정보"}
)
