"""What a value can be said of, and the clauses that say it of something else: pure functions of the judge
(`synthesis.facts.check_answer`).

* `Qualifier`: an hour, a date, or a name or identifier that tells a row apart (`row_context` finds a row's own and
  its rivals').
* `named`, `names_other_day`, `names_other_month`, `names_other_hour`, `names_other_weekday`, `other_area`: whether a
  clause names the row's qualifier, or another day, month, hour, weekday or area than the row's.
* `places_in`, `clock_spans`: the region names and the clock times a text writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from graph.regions import place_names
from synthesis.answer_dates import as_date, date_spans, time_spans, time_values
from synthesis.answer_values import (
    nfkc,
    normalise_name,
    prepare_text,
)

DATE_PART = re.compile(r"(year|month|day)$", re.I)


def mkdate(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def clock_spans(text: str) -> list[tuple[set[int], int, int]]:
    """Clock times written as times (HH:MM, 오후 3시, 정오), not bare four-digit numbers."""
    return time_spans(text, raw=False)


@lru_cache(maxsize=1)
def _place_rx() -> re.Pattern[str]:
    names = sorted((n for n in place_names() if len(n) >= 2), key=len, reverse=True)
    return re.compile("(?<![가-힣])(?:" + "|".join(re.escape(n) for n in names) + ")")


def places_in(text: str) -> list[str]:
    """Region names written in the (prepared) text, normalised (the long forms of 시도 already shortened)."""
    return list(dict.fromkeys(normalise_name(m.group()) for m in _place_rx().finditer(text)))


@dataclass(frozen=True)
class Qualifier:
    """What a value can be said of: an hour, a date, or a name or identifier (normalised)."""

    kind: str  # time | date | name
    minutes: frozenset[int] = frozenset()
    day: date | None = None
    name: str = ""
    #: what a product name gives in its closing parenthesis (`…캡슐20밀리그램(로라타딘)`: its ingredient), another
    #: name of it
    alias: str = ""


@lru_cache(maxsize=4096)
def qualifier(raw: str) -> Qualifier | None:
    text = nfkc(raw).strip()
    t = time_values(text)
    if t and len(t) == 1:
        return Qualifier("time", minutes=frozenset(t))
    m = re.fullmatch(r"(\d{4}[-./]?\d{2}[-./]?\d{2})[ T](\d{2}):?(\d{2})(?::\d{2})?", text)
    if m:
        return Qualifier("time", minutes=frozenset({int(m.group(2)) * 60 + int(m.group(3))}), day=as_date(m.group(1)))
    if re.fullmatch(r"\d{4}[-./]?\d{2}[-./]?\d{2}", text):
        d = as_date(text)
        return Qualifier("date", day=d) if d else None
    name = normalise_name(text)
    if len(name) >= 2 and (re.search(r"[가-힣]", name) or re.fullmatch(r"\d{6,}", name)):
        inner = re.fullmatch(r"[^()]*[가-힣A-Za-z0-9][^()]*\(([가-힣]{2,})\)", text)
        return Qualifier("name", name=name, alias=normalise_name(inner.group(1)) if inner else "")
    return None


def descriptive(value: Any) -> bool:
    """A row value that tells its row apart to a reader: a name, an identifier, an hour or a date."""
    if value is None or isinstance(value, bool | dict | list):
        return False
    text = str(value).strip()
    if not text or len(text) > 40 or (re.search(r"\d\.\d", text) and not re.search(r"[가-힣]", text)):
        return False
    return qualifier(text) is not None


def named(clause: str, q: Qualifier, now: datetime | None) -> bool:
    """Whether the (prepared) clause names the qualifier (an address also by its road and number alone)."""
    if q.kind == "name":
        text = normalise_name(clause)
        road = _road_of(q.name)
        if q.name in text or (road is not None and road in text) or (q.alias and q.alias in text):
            return True
        # a district or 동 by its short name, as a word of its own (`서초 7㎍/㎥` for 서초구, `송도 032-…` for 송도동;
        # not 서초동)
        short = q.name[:-1] if re.fullmatch(r"[가-힣]{2,4}[구군동]", q.name) else ""
        return bool(short) and re.search(rf"(?<![가-힣]){short}(?![가-힣])", clause) is not None
    hit = False
    if q.minutes:
        hit = any(mins & q.minutes for mins, _, _ in clock_spans(clause))
    if q.day is not None and not hit:
        year = now.year if now else q.day.year
        hit = any(d == q.day for d, _, _ in date_spans(clause, year)) or _relative_day(clause, q.day, now)
    return hit


def _road_of(name: str) -> str | None:
    """The road and number of a (normalised) address (`대전유성구어은로23길302` -> `어은로23길302`)."""
    m = re.search(r"(?:구|군|시|동|읍|면)([가-힣]{1,6}(?:로|길)(?:\d{1,3}(?:번)?길)?\d{1,8})$", name)
    return m.group(1) if m and len(m.group(1)) >= 6 else None


_RELATIVE = {"그제": -2, "그저께": -2, "어제": -1, "오늘": 0, "내일": 1, "모레": 2, "글피": 3}


def _says(clause: str, word: str) -> bool:
    return re.search(rf"(?<![가-힣]){word}", clause) is not None


def _relative_day(clause: str, day: date, now: datetime | None) -> bool:
    if now is None:
        return False
    return any(_says(clause, w) and now.date() + timedelta(days=k) == day for w, k in _RELATIVE.items())


def names_other_day(clause: str, day: date | None, now: datetime | None, also: frozenset[date] = frozenset()) -> bool:
    """The clause names a day other than `day`: a relative day (오늘, 내일, 어제) that is not `day`, or a date that is
    neither `day` nor one of `also` (the other days its row states, such as a forecast's issue date)."""
    if day is None or now is None:
        return False
    for w, k in _RELATIVE.items():
        if _says(clause, w) and now.date() + timedelta(days=k) != day and not _relative_day(clause, day, now):
            return True
    return any(d != day and d not in also for d, _, _ in date_spans(clause, now.year))


def _with_day(row: dict[str, Any]) -> dict[str, Any]:
    """The row with the day it states in separate fields (`dealYear`, `dealMonth`, `dealDay`) as one date, which
    tells it apart from a row of another day."""
    parts: dict[str, int] = {}
    for k, v in row.items():
        kind = DATE_PART.search(str(k))
        if kind and re.fullmatch(r"\d{1,4}", str(v).strip()):
            parts.setdefault(kind.group(1).lower()[0], int(str(v)))
    day = mkdate(parts.get("y", 0), parts.get("m", 0), parts.get("d", 0)) if len(parts) == 3 else None
    return {"_day": day.isoformat(), **row} if day else row


#: A 동 written in a text (`십정동`, `종로1가동`, `(덕명동)`), at least three characters.
_AREA = re.compile(r"(?<![가-힣\d])([가-힣]{2,5}\d{0,2}(?:가)?동)(?=[^가-힣]|에|은|는|이|의|$)")


def _areas(text: str) -> dict[str, set[str]]:
    """The 동/리/읍/면 and the 구/군 a text names, by level."""
    prepared = prepare_text(text)
    out: dict[str, set[str]] = {"area": {m.group(1) for m in _AREA.finditer(prepared)}, "gu": set()}
    out["gu"] = {p for p in places_in(prepared) if p.endswith(("구", "군"))}
    return out


def other_area(clause: str, about: list[str], values: frozenset[str] = frozenset()) -> bool:
    """The clause names a 동 (or 구) other than the one the row is in, and not the row's own; `values`: the asked
    values (normalised), which are no place however they end (an apartment called `과해극동`)."""
    if not about:
        return False
    own = _areas(" ".join(str(x) for x in about))
    said = _areas(clause)
    said["area"] = {w for w in said["area"] if not any(w in v for v in values)}
    for level in ("area", "gu"):
        if (
            own[level]
            and said[level]
            and not (said[level] & own[level])
            and any(not any(w in o or o in w for o in own[level]) for w in said[level])
        ):
            return True
    return False


_RELATIVE_MONTH = {
    "이번 달": 0,
    "이번달": 0,
    "이달": 0,
    "지난달": -1,
    "지난 달": -1,
    "전월": -1,
    "다음 달": 1,
    "다음달": 1,
}


def names_other_month(clause: str, about: list[str], now: datetime | None) -> bool:
    """The clause names a month (`이번 달`, `지난달`, `9월`) other than the one the row is of (a `YYYYMM` it is
    about), and not that month."""
    months = {(int(x[:4]), int(x[4:])) for x in map(str, about) if re.fullmatch(r"(?:19|20)\d{2}(?:0[1-9]|1[0-2])", x)}
    if len(months) != 1 or now is None:
        return False
    (year, month) = next(iter(months))
    said: set[tuple[int, int]] = set()
    for word, k in _RELATIVE_MONTH.items():
        if re.search(rf"(?<![가-힣]){word}(?!세)", clause):  # 전월, not 전월세
            m0 = now.year * 12 + now.month - 1 + k
            said.add((m0 // 12, m0 % 12 + 1))
    if said and (year, month) not in said:
        return True  # `이번 달(9월)` for last month's deals: the month written does not make 이번 달 last month
    for m in re.finditer(r"(?:((?:19|20)\d{2})\s*년\s*)?(?<!\d)(\d{1,2})\s*월(?!\s*\d{1,2}\s*일)", clause):
        said.add((int(m.group(1)) if m.group(1) else year, int(m.group(2))))
    return bool(said) and (year, month) not in said


def names_other_hour(clause: str, own: list[Qualifier]) -> bool:
    """The clause states clock times and none is the hour of the row (a timestamp it is about, such as a reading's
    `2026-10-15 14:00`; a bare opening or closing time of the row tells nothing of the hour it is said of)."""
    mine = {x for q in own if q.kind == "time" and q.day is not None for x in q.minutes}
    if not mine:
        return False
    said = [mins for mins, _, _ in clock_spans(clause)]
    return bool(said) and not any(mins & mine or {x // 60 for x in mins} & {x // 60 for x in mine} for mins in said)


WEEKDAYS = ("월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일")


def names_other_weekday(clause: str, day: date | None, now: datetime | None) -> bool:
    """The clause names a weekday and not the weekday of the row's day, where that day is within a week of the
    clock (a forecast's day, not an opening date)."""
    if day is None or now is None or abs((day - now.date()).days) > 7 or "매주" in clause:
        return False
    said = {i for i, w in enumerate(WEEKDAYS) if w in clause or f"{w[0]}요일" in clause}
    return bool(said) and day.weekday() not in said


def row_context(
    rows: list[dict[str, Any]], row: dict[str, Any], field_name: str, same: tuple[str, ...] = ()
) -> tuple[list[str], list[dict[str, Any]]]:
    """What tells the fact's row apart (`about`: its names, identifiers, hours and dates that another row does not
    share) and the other rows' values of the same field with what tells each apart (`rivals`). `same`: fields a
    rival must share with the row (the kind of thing asked, such as a forecast's category)."""
    value = row.get(field_name)
    about: list[str] = []
    rivals: list[dict[str, Any]] = []
    mine = _with_day(row)
    for original in rows[:60]:
        other = _with_day(original)
        if original is row or other.get(field_name) in (None, "") or str(other.get(field_name)) == str(value):
            continue
        if any(str(other.get(k)) != str(mine.get(k)) for k in same):
            continue
        differ = [
            k for k in mine if k != field_name and k in other and str(other[k]) != str(mine[k]) and descriptive(mine[k])
        ]
        theirs = [str(other[k]) for k in differ if descriptive(other[k])][:8]
        about.extend(str(mine[k]) for k in differ)
        rivals.append({"value": other[field_name], "about": theirs})
    if not rivals:
        about = [str(v) for k, v in mine.items() if k != field_name and descriptive(v)][:6]
    # the day the row is about (the latest it states: a forecast's target, not its issue)
    days = [(q.day, str(v)) for v in mine.values() if descriptive(v) and (q := qualifier(str(v))) and q.day]
    if days:
        about.append(max(days)[1])
    return list(dict.fromkeys(about))[:8], rivals[:40]
