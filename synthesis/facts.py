"""Checking a final answer against the facts it must state: pure functions shared by KOPA-Bench scoring and the
training rewards. One strict judge: an answer passes only when it *commits* to the right facts.

Reading (what counts as stating a value):

* numbers in every common Korean form: `1,234.5`, `-3`, `5억 2,340만 원`, `1억 5천만원`, `3천 원`, `세 곳`, each with
  the unit written after it (an alias: `15.2도`, `°C`, `퍼센트`, `㎍/㎥` / `ug/m3`; amounts compared in 원, lengths in
  m, durations in 분). A fact with a unit needs that unit (or one of its family: `1.2km` for 1200 m, `8억 2,500만 원`
  for 82,500 만원); another unit fails (`15.9cm` is not 15.9 ℃). A value may be rounded to the precision the answer
  writes, within the fact's tolerance (`15도` for 15.2 ℃ with tolerance 0.5), never replaced by a different value
  at the same precision (`15.4도` for 15.2 ℃ fails: that is the neighbouring hour);
* dates: `2026-10-15`, `2026.10.15`, `2026/10/15`, `20261015`, `2026년 10월 15일(목)`, `26.10.15`, and
  `10월 15일` in the fact's year;
* times (a fact value `1300`, `13:00`, `09:00~18:00`): `13:00`, `13시`, `오후 1시`, `오후 1시 30분`, `1시 반`, `정오`,
  `자정`, `1300`; a range needs both ends in order;
* names normalised (spaces, punctuation, 특별시/광역시 short forms, 주식회사), literal text as a normalised substring,
  never inside a longer number (`1일` is not in `11일`).

Commitment (what makes a stated value not count):

* a hedge anywhere fails every fact: uncertainty (`모르겠`, `확실하지 않`, `아마`, `것 같`), a retraction
  (`하지만 … 확인할 수 없습니다`), or, where the facts are not themselves about missing data, a statement that the
  information could not be found (`찾을 수 없`, `정보가 없습니다`, `제공하지 않`);
* a negated value (`계속사업자가 아닙니다`, `15도는 아니고`) does not count;
* several candidate values for one fact fail it: another value of the same unit family (or, for a date, another date)
  in the same clause, a range (`14~16도`), an enumeration of bare values (`10월 3일, 10월 9일, 12월 25일`);
* a dump fails everything: raw JSON pasted from a result, more numbers than `max(DUMP_MIN, DUMP_FACTOR × facts)`,
  or more values of a fact's unit than the facts with that unit plus `UNIT_SLACK`;
* context: a value that a guess could hit (a unit-less number, a single digit or syllable, a negative phrase such
  as `없`) counts only in a clause that names its label (`Fact.label`, else the field's Korean label or its KMA
  category); a number fact with an explicit label always needs it. Facts about missing data (`없`, `등록되지 않`)
  need a committed statement (`자료가 없습니다`), never the modal `수 없` of a refusal.

This module matches and judges; the reading lives in synthesis.answer_values (names, numbers, clauses) and
synthesis.answer_dates (dates, times), the fact with its labels and hedges in synthesis.fact_terms.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache

from synthesis.answer_dates import as_date as as_date
from synthesis.answer_dates import date_spans
from synthesis.answer_dates import dates_in as dates_in
from synthesis.answer_dates import time_spans as time_spans
from synthesis.answer_dates import time_values as time_values
from synthesis.answer_values import UNITS as UNITS
from synthesis.answer_values import (
    Mention,
    clause_of,
    clauses,
    in_base_unit,
    mentions,
    negated_at,
    normalise_text,
    prepare_text,
    squeeze,
    unit_family,
)
from synthesis.answer_values import normalise_name as normalise_name
from synthesis.answer_values import numbers_in as numbers_in
from synthesis.answer_values import unit_at as unit_at
from synthesis.fact_terms import DATA_NOUNS, MODAL, guessable, in_context, label_terms, negative
from synthesis.fact_terms import Fact as Fact
from synthesis.fact_terms import FactCheck as FactCheck
from synthesis.fact_terms import hedge as hedge
from synthesis.fact_terms import labels_of as labels_of

#: An answer with more numbers than max(DUMP_MIN, DUMP_FACTOR × facts) is a dump, not an answer.
DUMP_MIN = 12
DUMP_FACTOR = 3
#: Values of a fact's unit family beyond the facts of that family that an answer may add (other hours, a daily
#: maximum) before it is a dump of candidates.
UNIT_SLACK = 3


# ---------------------------------------------------------------------------------------------- matching


def _fact_number(fact: Fact) -> float | None:
    try:
        return float(str(fact.value).replace(",", ""))
    except ValueError:
        return None


def _number_matches(m: Mention, value: float, fact: Fact) -> bool:
    unit = fact.unit if fact.kind == "number" else None
    if unit:
        if not m.unit or unit_family(m.unit) != unit_family(unit):
            return False
        _, got = in_base_unit(m.value, m.unit)
        _, want = in_base_unit(value, unit)
        scale = UNITS.get(m.unit, ("", 1.0, ()))[1]
    elif fact.kind == "count":
        if m.unit and unit_family(m.unit) not in (
            "counter",
            "household",
            "building",
            "floor",
            "stops",
            fact.unit or "",
        ):
            return False
        got, want, scale = m.value, value, 1.0
    else:
        if m.unit and unit_family(m.unit) in ("money", "length", "duration") and m.korean:
            return False
        got, want, scale = m.value, value, 1.0
    if abs(got - want) <= 1e-9 + 1e-12 * abs(want):
        return True
    if fact.tolerance <= 0 or m.korean:
        return False
    # rounding to the precision written, within the tolerance (in the fact's unit)
    step = 0.5 * 10.0**-m.decimals * scale
    tol = fact.tolerance * UNITS.get(unit or "", ("", 1.0, ()))[1]
    return bool(abs(got - want) <= min(step, tol) + 1e-9)


def _number_hit(text: str, fact: Fact, facts: list[Fact], ms: list[Mention], bounds: list[tuple[int, int]]) -> bool:
    value = _fact_number(fact)
    if value is None:
        return False
    terms = label_terms(fact)
    need_label = bool(fact.label) or guessable(fact)
    if need_label and not terms:
        return False
    others = [f for f in facts if f is not fact and f.kind in ("number", "count")]
    literal = {v for f in facts if f is not fact and f.kind in ("name", "text") and (v := _fact_number(f)) is not None}
    for m in ms:
        if not _number_matches(m, value, fact) or negated_at(text, unit_at(text, m.end)[1]):
            continue
        if not m.unit and re.match(r"\s?(번째|번\s?째|위|등)", text[m.end : m.end + 4]):
            continue  # an ordinal or a rank, not a quantity
        if _inside_date_or_time(text, m):
            continue
        if need_label and not in_context(text, bounds, m.start, terms):
            continue
        a, b = clause_of(bounds, m.start)
        rivals = [
            o
            for o in ms
            if o is not m
            and a <= o.start <= b
            and _same_kind(o, fact)
            and not _inside_date_or_time(text, o)
            and not _in_name(text, o)
            and not _number_matches(o, value, fact)
            and not any(_fact_number(f) is not None and _number_matches(o, _fact_number(f) or 0.0, f) for f in others)
            and o.value not in literal
        ]
        # the same figure offered with several units (`15.2℃ 15.2% 15.2mm`) commits to none
        rivals += [
            o
            for o in ms
            if o is not m
            and a <= o.start <= b
            and o.unit
            and m.unit
            and unit_family(o.unit) != unit_family(m.unit)
            and abs(o.value - m.value) < 1e-9
        ]
        if rivals or _ranged(text, m):
            continue
        return True
    return False


def _same_kind(m: Mention, fact: Fact) -> bool:
    if fact.kind == "number" and fact.unit:
        return bool(m.unit) and unit_family(m.unit) == unit_family(fact.unit)
    if fact.kind == "count":
        return unit_family(m.unit) in ("counter", "household", "building", "floor", "stops") or not m.unit
    return not m.unit


def _in_name(text: str, m: Mention) -> bool:
    """A number glued to the word before it is part of a name (`관수1차`, `관동1`), not a quantity."""
    return m.start > 0 and bool(re.match(r"[가-힣a-z]", text[m.start - 1])) and not m.unit


def _ranged(text: str, m: Mention) -> bool:
    after = text[unit_at(text, m.end)[1] : unit_at(text, m.end)[1] + 3]
    before = text[max(0, m.start - 2) : m.start]
    return bool(re.match(r"\s*[~∼〜]\s*\d", after) or re.search(r"\d[~∼〜]\s*$", before))


def _inside_date_or_time(text: str, m: Mention) -> bool:
    """A number that is part of a date or a time (`2026-10-15`, `10월`, `14시`, `13:00`)."""
    after = text[m.end : m.end + 2]
    if re.match(r"\s?(년|월|일|시(?!간)|:)", after) and not m.unit:
        return True
    starts, ends = _covered(text)
    i = bisect_right(starts, m.start) - 1
    return i >= 0 and m.start < ends[i]


@lru_cache(maxsize=512)
def _covered(text: str) -> tuple[list[int], list[int]]:
    """Sorted (starts, ends) of the dates and clock times written in the text (disjoint after merging)."""
    spans = sorted(
        [(a, b) for _, a, b in date_spans(text, None)] + [(a, b) for _, a, b in time_spans(text) if ":" in text[a:b]]
    )
    starts: list[int] = []
    ends: list[int] = []
    for a, b in spans:
        if starts and a <= ends[-1]:
            ends[-1] = max(ends[-1], b)
        else:
            starts.append(a)
            ends.append(b)
    return starts, ends


def _span_hits(text: str, needle: str, prepared: str) -> list[tuple[int, int]]:
    """Offsets in `prepared` of the normalised needle, never inside a longer number or word of digits."""
    squeezed, pos = squeeze(prepared)
    out = []
    start = 0
    while needle:
        i = squeezed.find(needle, start)
        if i < 0:
            break
        a, b = pos[i], pos[i + len(needle) - 1] + 1
        start = i + 1
        if needle[0].isdigit() and a > 0 and prepared[a - 1].isdigit():
            continue
        if (
            needle[-1].isdigit()
            and b < len(prepared)
            and (prepared[b].isdigit() or (prepared[b] in ".," and prepared[b + 1 : b + 2].isdigit()))
        ):
            continue
        if (
            needle.isascii()
            and needle[0].isalpha()
            and a > 0
            and prepared[a - 1].isascii()
            and prepared[a - 1].isalpha()
        ):
            continue
        out.append((a, b))
    return out


def _absence_hit(prepared: str, bounds: list[tuple[int, int]], terms: list[str]) -> list[tuple[int, int]]:
    """Committed statements of missing data (`자료가 없습니다`, `검색 결과 없음`), never the modal `수 없`."""
    out = []
    for m in re.finditer(r"없|않", prepared):
        if MODAL.search(prepared[max(0, m.start() - 6) : m.start()]):
            continue
        a, _ = clause_of(bounds, m.start())
        clause = normalise_name(prepared[a : m.start()])
        if any(t in clause for t in (*terms, *DATA_NOUNS)):
            out.append((m.start(), m.end()))
    return out


def _text_hit(prepared: str, fact: Fact, bounds: list[tuple[int, int]]) -> bool:
    raw = str(fact.value)
    times = time_values(raw)
    if times is not None:
        spans = time_spans(prepared)
        for first, (mins0, a0, _) in enumerate(spans):
            if times[0] not in mins0:
                continue
            at, end, ok = a0, spans[first][2], True
            for want in times[1:]:
                nxt = next(((a, b) for mins, a, b in spans if want in mins and a > at), None)
                if nxt is None:
                    ok = False
                    break
                at, end = nxt
            if not ok or negated_at(prepared, end):
                continue
            lo, hi = clause_of(bounds, a0)
            if any(lo <= a <= hi and not mins & set(times) for mins, a, _ in spans):
                continue  # another time offered for the same thing
            return True
        return False
    needle = normalise_name(raw) if fact.kind == "name" else normalise_text(raw)
    if not needle:
        return False
    terms = label_terms(fact)
    weak = guessable(fact)
    if weak and not terms:
        return False
    if needle in ("없", "않") or (negative(fact) and len(needle) <= 2):
        return bool(_absence_hit(prepared, bounds, terms))
    hits = _span_hits(prepared, needle, prepared)
    if not negative(fact) and any(negated_at(prepared, b) for _, b in hits):
        return False  # the answer says it is not so (somewhere)
    for a, _ in hits:
        if weak and not in_context(prepared, bounds, a, terms):
            continue
        if (
            negative(fact)
            and MODAL.search(prepared[max(0, a - 6) : a]) is None
            and "수" in needle
            and not in_context(prepared, bounds, a, terms)
        ):
            continue
        return True
    return False


def _date_hit(prepared: str, fact: Fact, bounds: list[tuple[int, int]]) -> bool:
    wanted = as_date(fact.value)
    if wanted is None:
        return False
    spans = date_spans(prepared, default_year=wanted.year)
    for d, a, b in spans:
        if d != wanted or negated_at(prepared, b):
            continue
        lo, hi = clause_of(bounds, a)
        if any(o != wanted and lo <= s <= hi for o, s, _ in spans):
            continue
        return True
    return False


def fact_hit(answer: str, fact: Fact, facts: list[Fact] | None = None) -> bool:
    """Whether the answer commits to this fact (`facts`: the whole set, whose other values are not rivals)."""
    prepared = prepare_text(answer)
    bounds = clauses(prepared)
    if fact.kind in ("number", "count"):
        return _number_hit(prepared, fact, facts or [fact], mentions(prepared), bounds)
    if fact.kind == "date":
        return _date_hit(prepared, fact, bounds)
    if fact.kind in ("name", "text"):
        return _text_hit(prepared, fact, bounds)
    return False


_JSON = re.compile(r"[{\[]\s*\"[^\"]{1,80}\"\s*:|\"[a-z_]\w*\"\s*:\s*[\"\d\[{]")


def dump(answer: str, facts: list[Fact]) -> str:
    """Why the answer is a dump of candidates rather than an answer, or ''."""
    prepared = prepare_text(answer)
    if _JSON.search(prepared):
        return "raw JSON pasted from a result"
    limit = max(DUMP_MIN, DUMP_FACTOR * len(facts))
    every = mentions(prepared)
    if len(every) > 4 * limit + 40:  # far past any date or time it could hold
        return f"{len(every)} numbers for {len(facts)} facts"
    ms = [m for m in every if not _inside_date_or_time(prepared, m)]
    if len(ms) > limit:
        return f"{len(ms)} numbers for {len(facts)} facts"
    for fam in {unit_family(f.unit) for f in facts if f.kind == "number" and f.unit}:
        own = [f for f in facts if f.kind == "number" and unit_family(f.unit) == fam]
        values = {round(in_base_unit(m.value, m.unit)[1], 6) for m in ms if m.unit and unit_family(m.unit) == fam}
        if len(values) > len(own) + UNIT_SLACK:
            return f"{len(values)} values in {fam} for {len(own)} facts"
    return ""


def check_answer(answer: str, facts: list[Fact]) -> FactCheck:
    """How many of `facts` the answer commits to (a hedge or a dump fails all of them)."""
    answer = answer or ""
    why = ""
    if facts:
        h = hedge(answer, facts)
        why = f"hedge: {h}" if h else (f"dump: {d}" if (d := dump(answer, facts)) else "")
    if why:
        return FactCheck(hits=0, total=len(facts), missing=list(facts), rejected=why)
    missing = [f for f in facts if not fact_hit(answer, f, facts)]
    return FactCheck(hits=len(facts) - len(missing), total=len(facts), missing=missing)


def render_fact(fact: Fact) -> str:
    """A plain Korean rendering of one fact (the oracle's answer, and readable reports): its label (the field's
    label when the fact has none and needs one), the value and its unit."""
    label = fact.label or (labels_of(fact)[0] if labels_of(fact) and (guessable(fact) or not fact.unit) else "")
    head = f"{label}: " if label else ""
    if fact.kind in ("number", "count"):
        try:
            v = float(str(fact.value).replace(",", ""))
            text = f"{int(v)}" if v.is_integer() else f"{v:g}"
        except ValueError:
            text = str(fact.value)
        unit = fact.unit or ("건" if fact.kind == "count" else "")
        return f"{head}{text}{unit}"
    if fact.kind == "date":
        d = as_date(fact.value)
        return f"{head}{d.isoformat() if d else fact.value}"
    return f"{head}{fact.value}"
