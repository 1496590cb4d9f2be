"""Checking a final answer against the facts it must state: pure functions shared by KOPA-Bench scoring and the
training rewards.

Matching rules: numbers within a tolerance (with an optional unit written after the number or one of its Korean
aliases), dates in any common Korean or ISO form, names normalised (spaces, punctuation, 특별시/광역시 short forms),
counts as numbers, and literal text as a normalised substring.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from typing import Any

KINDS = ("number", "text", "date", "count", "name")

SIDO_LONG = {
    "서울특별시": "서울", "부산광역시": "부산", "대구광역시": "대구", "인천광역시": "인천", "광주광역시": "광주",
    "대전광역시": "대전", "울산광역시": "울산", "세종특별자치시": "세종", "경기도": "경기", "강원특별자치도": "강원",
    "강원도": "강원", "충청북도": "충북", "충청남도": "충남", "전북특별자치도": "전북", "전라북도": "전북",
    "전라남도": "전남", "경상북도": "경북", "경상남도": "경남", "제주특별자치도": "제주",
}
#: Units and the ways an answer may write them.
UNIT_ALIASES: dict[str, tuple[str, ...]] = {
    "℃": ("℃", "°c", "°", "도", "c", "섭씨"),
    "%": ("%", "퍼센트", "프로"),
    "원": ("원",),
    "만원": ("만원", "만 원"),
    "㎍/㎥": ("㎍/㎥", "µg/m³", "μg/m³", "ug/m3", "㎍/m³", "마이크로그램"),
    "ppm": ("ppm",),
    "mm": ("mm", "㎜", "밀리미터", "밀리"),
    "m/s": ("m/s", "㎧", "미터"),
    "분": ("분",),
    "건": ("건", "개", "곳", "명", "대"),
    "km": ("km", "㎞", "킬로미터", "킬로"),
    "m": ("m", "미터"),
    "㎡": ("㎡", "m²", "m2", "제곱미터"),
}


@dataclass
class Fact:
    """One thing the final answer must state."""

    kind: str
    value: Any
    tolerance: float = 0.0
    unit: str | None = None
    label: str = ""


@dataclass
class FactCheck:
    hits: int
    total: int
    missing: list[Fact] = field(default_factory=list)

    @property
    def score(self) -> float:
        return 1.0 if self.total == 0 else self.hits / self.total


_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


def normalise_name(s: str) -> str:
    """Lower-case NFC text without spaces or punctuation, with 특별시/광역시/도 names in their short form."""
    text = unicodedata.normalize("NFKC", str(s)).lower()
    for long, short in SIDO_LONG.items():
        text = text.replace(long, short)
    text = text.replace("주식회사", "").replace("(주)", "").replace("㈜", "")
    return _PUNCT.sub("", text)


def _normalise_text(s: str) -> str:
    return _PUNCT.sub("", unicodedata.normalize("NFKC", str(s)).lower())


_NUMBER = re.compile(r"(?<![0-9.])-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")
_KOREAN_MONEY = re.compile(r"([0-9][0-9,]*)\s*억(?:\s*([0-9][0-9,]*)\s*만)?")


def _spans(text: str) -> list[tuple[float, int]]:
    """(value, end offset) of every number written in the text."""
    out: list[tuple[float, int]] = []
    for m in _NUMBER.finditer(text):
        try:
            out.append((float(m.group().replace(",", "")), m.end()))
        except ValueError:  # pragma: no cover - the pattern only matches numbers
            continue
    for m in _KOREAN_MONEY.finditer(text):
        eok = float(m.group(1).replace(",", ""))
        man = float(m.group(2).replace(",", "")) if m.group(2) else 0.0
        out.append((eok * 10000 + man, m.end()))  # in 만원, the unit of Korean price fields
    return out


def numbers_in(text: str) -> list[float]:
    """Every number in the text: 1,234.5, -3, and Korean 억/만 amounts (as 만원)."""
    return [v for v, _ in _spans(unicodedata.normalize("NFKC", text))]


_ISO = re.compile(r"(?<![0-9])(\d{4})\s*[-./]\s*(\d{1,2})\s*[-./]\s*(\d{1,2})(?![0-9])")
_COMPACT = re.compile(r"(?<![0-9])(\d{4})(\d{2})(\d{2})(?![0-9])")
_KOREAN = re.compile(r"(?:(\d{4})\s*년\s*)?(\d{1,2})\s*월\s*(\d{1,2})\s*일")


def _mkdate(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def dates_in(text: str, default_year: int | None = None) -> set[date]:
    """Dates written as 2026-10-15, 2026.10.15, 2026/10/15, 20261015, 2026년 10월 15일 or (with a default year)
    10월 15일."""
    text = unicodedata.normalize("NFKC", text)
    found: set[date] = set()
    for rx in (_ISO, _COMPACT):
        for m in rx.finditer(text):
            d = _mkdate(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            if d:
                found.add(d)
    for m in _KOREAN.finditer(text):
        year = int(m.group(1)) if m.group(1) else default_year
        if year is not None:
            d = _mkdate(year, int(m.group(2)), int(m.group(3)))
            if d:
                found.add(d)
    return found


def as_date(value: Any) -> date | None:
    """A date from a fact value: a date, or text in any form `dates_in` reads (the first one)."""
    if isinstance(value, date):
        return value
    found = sorted(dates_in(str(value)))
    return found[0] if found else None


def _unit_follows(text: str, end: int, unit: str) -> bool:
    rest = text[end:end + 12].lstrip().lower()
    aliases = UNIT_ALIASES.get(unit, ())
    return any(rest.startswith(unicodedata.normalize("NFKC", a).lower()) for a in (unit, *aliases))


def _number_hit(text: str, value: float, tolerance: float, unit: str | None) -> bool:
    tol = max(tolerance, 1e-9)
    for v, end in _spans(text):
        if abs(v - value) <= tol and (unit is None or _unit_follows(text, end, unit)):
            return True
    return False


def fact_hit(answer: str, fact: Fact) -> bool:
    text = unicodedata.normalize("NFKC", answer)
    if fact.kind in ("number", "count"):
        try:
            value = float(str(fact.value).replace(",", ""))
        except ValueError:
            return False
        unit = None if fact.kind == "count" else fact.unit
        return _number_hit(text, value, fact.tolerance, unit)
    if fact.kind == "date":
        wanted = as_date(fact.value)
        return wanted is not None and wanted in dates_in(text, default_year=wanted.year)
    if fact.kind == "name":
        needle = normalise_name(str(fact.value))
        return bool(needle) and needle in normalise_name(text)
    if fact.kind == "text":
        needle = _normalise_text(str(fact.value))
        return bool(needle) and needle in _normalise_text(text)
    return False


def check_answer(answer: str, facts: list[Fact]) -> FactCheck:
    """How many of `facts` the answer states."""
    missing = [f for f in facts if not fact_hit(answer or "", f)]
    return FactCheck(hits=len(facts) - len(missing), total=len(facts), missing=missing)


def render_fact(fact: Fact) -> str:
    """A plain Korean rendering of one fact (the oracle's answer, and readable reports)."""
    if fact.kind in ("number", "count"):
        try:
            v = float(str(fact.value).replace(",", ""))
            text = f"{int(v)}" if v.is_integer() else f"{v:g}"
        except ValueError:
            text = str(fact.value)
        unit = fact.unit or ("건" if fact.kind == "count" else "")
        return f"{fact.label + ': ' if fact.label else ''}{text}{unit}"
    if fact.kind == "date":
        d = as_date(fact.value)
        return f"{fact.label + ': ' if fact.label else ''}{d.isoformat() if d else fact.value}"
    return f"{fact.label + ': ' if fact.label else ''}{fact.value}"
