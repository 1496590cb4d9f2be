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
from datetime import datetime
from functools import lru_cache
from typing import Any

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
    nfkc,
    normalise_text,
    prepare_text,
    squeeze,
    unit_family,
)
from synthesis.answer_values import normalise_name as normalise_name
from synthesis.answer_values import numbers_in as numbers_in
from synthesis.answer_values import unit_at as unit_at
from synthesis.claims import (
    INABLE,
    Qualifier,
    Seen,
    approx_step,
    approximate,
    misattributed,
    named,
    names_other_day,
    names_other_hour,
    names_other_month,
    names_other_weekday,
    other_area,
    pasted,
    qualifier,
    sentence_at,
    unsupported,
)
from synthesis.fact_terms import (
    DATA_NOUNS,
    LABEL_EQUIVALENTS,
    MODAL,
    about_missing,
    guessable,
    in_context,
    label_terms,
    negative,
)
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


def _as_number(value: Any) -> float | None:
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def _fact_number(fact: Fact) -> float | None:
    return _as_number(fact.value)


def _number_matches(m: Mention, value: float, fact: Fact) -> bool:
    unit = fact.unit if fact.kind == "number" else None
    if unit and unit_family(unit) in _COUNTERS and unit_family(m.unit) == "counter":
        unit = None  # a count of buildings or stops written with the generic counter (`다섯 개`, `5곳`)
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


def _roughly(m: Mention, value: float, fact: Fact, step: float) -> bool:
    """An approximate figure (`약 620m`, `about 190 meters`) that rounds the value at the step it is written to."""
    if fact.kind != "number":
        return False
    if fact.unit:
        if not m.unit or unit_family(m.unit) != unit_family(fact.unit):
            return False
        _, got = in_base_unit(m.value, m.unit)
        _, want = in_base_unit(value, fact.unit)
        scale = UNITS.get(m.unit, ("", 1.0, ()))[1]
    else:
        got, want, scale = m.value, value, 1.0
    return abs(got - want) <= 0.5 * step * scale + 1e-9


def _number_hit(
    text: str,
    fact: Fact,
    facts: list[Fact],
    ms: list[Mention],
    bounds: list[tuple[int, int]],
    now: datetime | None = None,
    given: frozenset[float] = frozenset(),
    *,
    strict: bool = True,
    asked: str = "",
) -> bool:
    value = _fact_number(fact)
    if value is None:
        return False
    terms = label_terms(fact)
    weak = guessable(fact)
    ms = _lent(text, ms, fact)
    others = [f for f in facts if f is not fact and f.kind in ("number", "count")]
    literal = {v for f in facts if f is not fact and f.kind in ("name", "text") and (v := _fact_number(f)) is not None}
    exact_rivals = [v for r in fact.rivals if (v := _as_number(r.get("value"))) is not None]
    for m in ms:
        approx = approximate(text, m)
        if not (_number_matches(m, value, fact) or (approx and _roughly(m, value, fact, approx_step(text, m)))):
            continue
        if negated_at(text, unit_at(text, m.end)[1]):
            continue
        if (
            not approx
            and not _number_matches(m, value, _exact(fact))
            and any(_number_matches(m, v, _exact(fact)) for v in exact_rivals)
        ):
            continue  # written as another row's exact value, not this one rounded (`17도` for 17.4 beside a 17)
        if not m.unit and re.match(r"\s?(번째|번\s?째|위|등)", text[m.end : m.end + 4]):
            continue  # an ordinal or a rank, not a quantity
        if _threshold(text, m):
            continue  # a figure compared with (`3m/s 이하가 아니라서`), not the value stated
        if _inside_date_or_time(text, m):
            continue
        # a value a guess could hit counts where its clause names what it is, or it is written as a count of things
        counted = fact.kind == "count" and unit_family(m.unit) in _COUNTERS
        need_label = not m.unit and (weak or bool(fact.label)) and not counted
        if (
            need_label
            and not (terms and in_context(text, bounds, m.start, terms))
            and _binding(text, m.start, unit_at(text, m.end)[1], fact, facts) != "own"  # `TM 좌표 … Y = 453,990`
        ):
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
            and o.value not in given
            and not re.match(r"\s?번(?!\s?째)", text[o.end : o.end + 3])
            and (strict or _disjoined(text, m, o))
            and not _restates(o, value)
            and not _compared(text, o)
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
        if rivals or _ranged(text, m) or said_of_other(text, bounds, m.start, fact, facts, now, asked=asked):
            continue
        if bound_to_other(text, m.start, unit_at(text, m.end)[1], fact, facts):
            continue
        return True
    return False


_COUNTERS = ("counter", "household", "building", "floor", "stops")


def _lent(text: str, ms: list[Mention], fact: Fact) -> list[Mention]:
    """Unit-less figures of a list whose unit is written once for all (`서초 4, 관악 7, 동작 42㎍/㎥`,
    `61, 16 (단위 ㎍/㎥)`): each takes the fact's unit when its sentence writes a unit of that family."""
    if fact.kind != "number" or not fact.unit:
        return ms
    fam = unit_family(fact.unit)
    out: list[Mention] = []
    for m in ms:
        listed = re.match(r"\s*(?:[,/·)]|\(단위|$|(?:이|으)?(?:고|며)\s|(?:in|at|for)\s)", text[m.end : m.end + 5])
        address = (
            re.search(r"(?:[동로길리가읍면]|번지)\s$|\d-$", text[max(0, m.start - 3) : m.start])
            or text[m.end : m.end + 1] == "-"
        )
        if not m.unit and listed and not address and not _inside_date_or_time(text, m):
            a = max(text.rfind(c, 0, m.start) for c in ".!?\n") + 1
            ends = [i for c in "!?\n" if (i := text.find(c, m.end)) >= 0]
            sentence = text[a : min(ends) if ends else len(text)]
            if any(o.unit and unit_family(o.unit) == fam for o in mentions(sentence)) or any(
                nfkc(sp).lower() in sentence for sp in UNITS.get(fact.unit, ("", 1.0, ()))[2] if len(sp) >= 2
            ):
                m = Mention(m.value, m.start, m.end, fact.unit, m.decimals, m.korean)
        if not m.unit and not address and _after_label(text, m, fact):
            m = Mention(m.value, m.start, m.end, fact.unit, m.decimals, m.korean)
        out.append(m)
    return out


def _after_label(text: str, m: Mention, fact: Fact) -> bool:
    """A bare figure written right after the fact's own label, as a listing writes it (`미세먼지 12`, `PM10 85`,
    `기온: 15.9`): the unit of what that label measures goes without saying (a sentence says it: `기온은 15.2도`)."""
    terms = [t for t in label_terms(fact) if len(t) >= 2]
    if not terms or _inside_date_or_time(text, m):
        return False
    before = text[max(0, m.start - 24) : m.start]
    rx = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
    hit = re.search(rf"(?<![가-힣a-z0-9])(?:{rx})\s*[:=]?\s*$", before)
    return bool(hit) and not re.match(r"\s?(?:번|위|등|번째|차)", text[m.end : m.end + 3])


_OR = re.compile(r"또는|혹은|이나|아니면|거나|\bor\b|[~∼〜]|에서|(?<![㎍µμa-z])/(?![㎥³a-z])|\s-\s|^-$|사이")


def _disjoined(text: str, m: Mention, o: Mention) -> bool:
    """Two figures offered as alternatives or a range (`15도 또는 16도`, `14~16도`, `14에서 16도 사이`)."""
    a, b = (m, o) if m.start < o.start else (o, m)
    between = text[unit_at(text, a.end)[1] : b.start]
    return len(between) <= 12 and bool(_OR.search(between.strip()) or _OR.search(text[b.end : b.end + 6]))


def _restates(m: Mention, value: float) -> bool:
    """The fact's value again at another precision or in other units (`52,340만원(약 5.2억 원)`)."""
    _, got = in_base_unit(m.value, m.unit)
    for scale in (1.0, 1e4, 1e3, 1e8, 1e-3):
        want = value * scale
        if want and abs(got - want) <= 0.5 * 10.0**-m.decimals * (1e8 if m.korean else 1.0) + 1e-9:
            return True
        if m.korean and want and abs(got - want) / abs(want) < 0.05:
            return True
    return False


def _threshold(text: str, m: Mention) -> bool:
    """A figure the sentence measures the value against (`2m/s 이하`, `10도보다`, `50을 넘`), not a value stated."""
    end = unit_at(text, m.end)[1]
    return bool(re.match(r"\s*(?:을|를|이|가|은|는)?\s*(?:보다|이상|이하|초과|미만|넘|에 못)", text[end : end + 8]))


def _compared(text: str, m: Mention) -> bool:
    """A figure the answer compares with (`60% 기준`, `10도보다`, `기준치 50 이상`): not a second value."""
    end = unit_at(text, m.end)[1]
    return bool(
        re.match(
            r"\s*(?:을|를|이|가|은|는)?\s*(?:보다|기준|이상|이하|넘|초과|미만|를 넘|을 넘|에 못)", text[end : end + 8]
        )
    )


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
        [(a, b) for _, a, b in date_spans(text, 2000)] + [(a, b) for _, a, b in time_spans(text) if ":" in text[a:b]]
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


def _text_hit(
    prepared: str,
    fact: Fact,
    bounds: list[tuple[int, int]],
    facts: list[Fact],
    now: datetime | None = None,
    *,
    strict: bool = True,
    asked: str = "",
) -> bool:
    raw = str(fact.value)
    times = time_values(raw.zfill(4) if re.fullmatch(r"\d{3}", raw.strip()) else raw)
    if times is not None and (
        not raw.strip().isdigit()
        or not (written := _span_hits(prepared, normalise_text(raw), prepared))
        # written as a clock time (`5:20 a.m.` for 520): judged as one
        or any(a <= h < b for _, a, b in time_spans(prepared, raw=False) for h, _ in written)
    ):
        spans = time_spans(prepared)
        # another asked time, or another time of the fact's own row (the last bus beside the first), is no
        # alternative
        beside = {t for f in facts if f is not fact for t in _times_of(f)}
        beside |= {t for x in fact.about for t in (time_values(x) or [])}
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
            if (
                len(times) == 1
                and re.search(r"사이|\bbetween\b", prepared[lo:hi])
                and _paired_with_any(prepared, a0, spans)
            ):
                continue  # a range where one time is asked (`오후 1시~2시 사이에 마쳐요`)
            if len(times) == 1 and any(
                lo <= a <= hi
                and not mins & set(times)
                and not mins & beside
                and not _range_end(prepared, a)
                and not _paired(prepared, a, spans, times)
                and not _time_compared(prepared, b)
                for mins, a, b in spans
            ):
                continue  # another time offered for the same thing
            if said_of_other(prepared, bounds, a0, fact, facts, now, asked=asked):
                continue
            return True
        return False
    needle = normalise_name(raw) if fact.kind == "name" else normalise_text(raw)
    if not needle:
        return False
    terms = label_terms(fact)
    weak = guessable(fact)
    if negative(fact):
        # an honest report of missing data in any wording (`자료가 없어요`, `등록된 정보가 없습니다`,
        # `찾을 수 없었어요`, `no data came back`), or the words
        if _DECLINING.search(prepared):
            return False  # a refusal to look (`도구로는 확인할 수 없습니다`) reports nothing about the data
        return bool(
            _absence_hit(prepared, bounds, terms)
            or _span_hits(prepared, needle, prepared)
            or _NOT_FOUND.search(prepared)
            or _NONE_EN.search(prepared)
        )
    if weak and not terms:
        return False
    hits = (
        _span_hits(prepared, needle, prepared)
        + _days_hits(prepared, raw)
        + _synonym_hits(prepared, raw)
        + _stem_hits(prepared, raw)
        + _frequency_hits(prepared, raw)
    )
    if not hits and fact.kind == "text":
        hits = _loose_hits(prepared, raw, bounds)
    if any(negated_at(prepared, b) or _negating_prefix(prepared, a, raw) for a, b in hits):
        return False  # the answer says it is not so (somewhere): `아닙니다` after it, `불일치` for `일치`
    short = fact.kind == "name" and bool(re.fullmatch(r"[가-힣]{2}", normalise_name(raw)))
    for a, b in hits:
        if weak and not in_context(prepared, bounds, a, terms):
            continue
        if short and a > 0 and re.match(r"[가-힣]", prepared[a - 1]):
            continue  # the end of a longer word (`원형` in `타원형`, `내과` in `한방내과`), another thing
        if bound_to_other(prepared, a, b, fact, facts):
            continue
        if _candidates(prepared, bounds, a, fact, facts, strict=strict) or said_of_other(
            prepared, bounds, a, fact, facts, now, asked=asked
        ):
            continue
        return True
    return False


def _negating_prefix(prepared: str, at: int, raw: str) -> bool:
    """A word found behind a negation that makes it its opposite: a Korean prefix (`불일치` for `일치`, `미등록` for
    `등록`, `비대상` for `대상`, where the value itself does not begin so) or an English `not` (`do not match`)."""
    value = normalise_name(raw)
    if re.search(r"\b(?:not|no|never)\s+$|n't\s+$", prepared[max(0, at - 8) : at]):
        return True  # `do not match`, `isn't white`
    return (
        bool(re.fullmatch(r"[가-힣]{2,}", value))
        and at > 0
        and prepared[at - 1] in "불미비무"
        and not (at > 1 and re.match(r"[가-힣]", prepared[at - 2]))
    )


#: What the call found: nothing (`찾을 수 없었어요`, `조회되지 않아요`), as opposed to a refusal to look.
_NOT_FOUND = re.compile(
    r"(?:찾|조회|검색|확인)[가-힣]{0,3}\s*수\s*(?:가|는)?\s*없었|(?:조회|검색|확인|등록)되지 않|나오지 않"
    r"|(?:찾|조회하|검색하|확인하)지\s*못했|비어\s*있|(?<![\d.,])0\s*건|한\s*건도|확인\s*불가"
)
#: A refusal to look rather than a report of what was found.
_DECLINING = re.compile(r"도구(?:로는|로|가|를)|요청하신 (?:정보|내용)|\btools?\b", re.I)
_NONE_EN = re.compile(
    r"\bno (?:\w+ ){0,3}(?:data|record|records|result|results|rows|information|match|matched|matches)\b"
    r"|\bnot found\b"
    r"|\bnothing (?:came|was)"
    r"|\bzero rows\b|\breturned (?:no|nothing|zero)\b|\bnot registered\b|\bisn'?t registered\b|\bno such\b"
    r"|\b(?:came back|returned|was|were|is) empty\b|\b(?:does not|doesn'?t|did not|didn'?t) (?:appear|show up|exist)\b"
)
#: Words that say the same colour (MFDS 낱알식별 writes 하양, 노랑, 분홍 ...; answers write 흰색, 하얀색 ...).
COLOURS: tuple[tuple[str, ...], ...] = (
    ("하양", "흰색", "하얀색", "하얀", "흰", "백색", "white"),
    ("노랑", "노란색", "노란", "황색", "yellow"),
    ("빨강", "빨간색", "빨간", "적색", "red"),
    ("주황", "주황색", "orange"),
    ("분홍", "분홍색", "핑크", "핑크색", "pink"),
    ("파랑", "파란색", "파란", "청색", "blue"),
    ("초록", "초록색", "녹색", "green"),
    ("연두", "연두색", "light green"),
    ("갈색", "밤색", "brown"),
    ("검정", "검은색", "검정색", "흑색", "black"),
    ("보라", "보라색", "자주", "자주색", "purple"),
    ("회색", "gray", "grey"),
)


#: Words that give the same verdict (a validation's 일치, in English `match`).
VERDICTS: tuple[tuple[str, ...], ...] = (
    ("일치", "match", "matches", "matched", "matching"),
    ("불일치", "mismatch", "mismatched"),
)


def _synonym_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """Another word for the same colour or verdict (`흰색` for `하양`, `match` for `일치`)."""
    value = normalise_name(raw)
    for words in (*COLOURS, *VERDICTS):
        if value in (normalise_name(w) for w in words):
            rx = "|".join(
                rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w) for w in sorted(words, key=len, reverse=True)
            )
            return [(m.start(), m.end()) for m in re.finditer(rx, prepared)]
    return []


def _loose_hits(prepared: str, raw: str, bounds: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A phrase of several words said in other words (`횡문근융해증 위험이 커져요` for `… 위험 증가`): a clause
    holding its longest word and words covering at least 60 % of its letters (a word's stem counts)."""
    words = [normalise_name(w) for w in re.split(r"\s+", prepare_text(raw)) if len(normalise_name(w)) >= 2]
    if len(words) < 2:
        return []
    longest = max(words, key=len)
    total = sum(len(w) for w in words)
    out = []
    for a, b in bounds:
        clause = normalise_name(prepared[a:b])
        if longest not in clause:
            continue
        covered = sum(len(w) for w in words if w in clause or (len(w) >= 3 and w[:-1] in clause))
        if covered >= 0.6 * total:
            out.append((a + max(0, prepared[a:b].find(longest[:2])), b))
    return out


def _stem_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """A status noun in `…자` said as its state (`폐업한 상태`, `휴업 중` for `폐업자`, `휴업자`)."""
    value = normalise_name(raw)
    if len(value) < 3 or not value.endswith("자") or not re.fullmatch(r"[가-힣]+", value):
        return []
    rx = rf"{re.escape(value[:-1])}(?=\s?(?:한|된|했|중|상태|하였|되었|이에요|입니다|이고|으로|로|[(),.:—–\n-]|$))"
    return [(m.start(), m.end()) for m in re.finditer(rx, prepared)]


_TIMES_WORD = {1: "한", 2: "두", 3: "세", 4: "네", 5: "다섯"}


def _frequency_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """A dosing frequency in other words (`하루 세 번`, `1일 3번` for `1일 3회`)."""
    m = re.fullmatch(r"\s*1\s*일\s*(\d)\s*회\s*", nfkc(raw))
    if not m:
        return []
    n = int(m.group(1))
    times = rf"(?:{n}\s*(?:회|번)" + (rf"|{_TIMES_WORD[n]}\s*(?:번|차례)" if n in _TIMES_WORD else "") + ")"
    return [(x.start(), x.end()) for x in re.finditer(rf"(?:1\s*일|하루(?:에)?)\s*{times}", prepared)]


def _days_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """A number of days written in English or as a Korean word (`3 days`, `사흘`) for a value such as `3일`."""
    m = re.fullmatch(r"\s*(\d{1,2})\s*일\s*", nfkc(raw))
    if not m:
        return []
    n = int(m.group(1))
    words = {1: "하루", 2: "이틀", 3: "사흘", 4: "나흘"}
    rx = rf"(?<![\d.])\b{n}\s*days?\b" + (f"|{words[n]}" if n in words else "")
    return [(x.start(), x.end()) for x in re.finditer(rx, prepared)]


def _paired(text: str, at: int, spans: list[tuple[set[int], int, int]], times: list[int]) -> bool:
    """A time that opens a range whose other end is the asked time (`09:00~13:00` for a closing time 13:00)."""
    end = next((b for _, a, b in spans if a == at), at)
    nxt = next(((mins, a) for mins, a, _ in spans if a > at), None)
    return bool(
        nxt
        and nxt[0] & set(times)
        and re.fullmatch(r"\s*(?:부터|~|∼|〜|-|–|에서)?\s*(?:~|∼|-)?\s*", text[end : nxt[1]])
    )


def _time_compared(text: str, end: int) -> bool:
    """A time the answer measures against (`정오를 넘겨`, `6시 이후`, `9시 전에`): not a second value."""
    return bool(
        re.match(r"\s*(?:을|를|이|가|은|는)?\s*(?:넘|지나|보다|이후|이전|전에|후에|전까지|이전에)", text[end : end + 8])
    )


def _paired_with_any(text: str, at: int, spans: list[tuple[set[int], int, int]]) -> bool:
    """The time at `at` opens or closes a range with another time (`1시~2시`, `1시부터 2시`)."""
    end = next((b for _, a, b in spans if a == at), at)
    nxt = next((a for _, a, _ in spans if a > at), None)
    opens = nxt is not None and re.fullmatch(r"\s*(?:부터|~|∼|〜|-|–|에서|and)?\s*(?:~|∼|-)?\s*", text[end:nxt])
    return bool(opens or _range_end(text, at))


def _range_end(text: str, at: int) -> bool:
    """A time that closes a range opened before it (`10시부터 19시까지`, `10:00~19:00`)."""
    return bool(re.search(r"(부터|~|∼|〜|-|–|에서)\s*$", text[max(0, at - 6) : at]))


def _candidates(
    text: str, bounds: list[tuple[int, int]], at: int, fact: Fact, facts: list[Fact], *, strict: bool = True
) -> bool:
    """Another row's value of a name fact offered in the same clause (`A 또는 B`); with `strict` off (the judge
    checks the rest against what was seen), only when offered as an alternative, not listed beside it."""
    if fact.kind != "name":
        return False
    a, b = clause_of(bounds, at)
    clause = normalise_name(text[a:b])
    own = normalise_name(str(fact.value))
    # another asked value of the same field offered as an alternative (`용두사거리에는 103번 또는 911번`)
    for f in facts:
        other = normalise_name(str(f.value))
        if f is fact or not f.field or f.field != fact.field or other == own or not other:
            continue
        for m in re.finditer(re.escape(other), clause):
            if re.match(r"\S{0,2}\s*(또는|혹은|아니면|\bor\b)", clause[m.end() :]) or re.search(
                r"(또는|혹은|아니면|\bor\b)\s*$", clause[max(0, m.start() - 8) : m.start()]
            ):
                return True

    asked = {normalise_name(str(f.value)) for f in facts}
    for r in fact.rivals:
        other = normalise_name(str(r.get("value", "")))
        if other in asked or len(other) < 2 or other in own or own in other or other not in clause:
            continue
        if strict or _OR.search(text[a:b]):
            return True
    return False


def _date_hit(
    prepared: str,
    fact: Fact,
    bounds: list[tuple[int, int]],
    facts: list[Fact],
    now: datetime | None = None,
) -> bool:
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
        if said_of_other(prepared, bounds, a, fact, facts, now, dated=False):
            continue
        return True
    return False


# ---------------------------------------------------------------------------------------------- attribution


def _quals(raws: list[str]) -> list[Qualifier]:
    return [q for q in (qualifier(str(r)) for r in raws) if q is not None]


def _is_value(q: Qualifier, facts: list[Fact]) -> bool:
    """A qualifier that is itself an asked value or names what a fact is (its label): not what tells rows apart."""
    for f in facts:
        v = f.value
        if q.kind == "name":
            forms = {normalise_name(str(v))}
            if isinstance(v, float) and v.is_integer():
                forms.add(str(int(v)))
            if q.name in forms or any(q.name in t for t in label_terms(f)) or q.name in normalise_name(f.label):
                return True
        elif (q.kind == "time" and q.day is None and (t := time_values(v)) and q.minutes & set(t)) or (
            q.kind == "date" and f.kind == "date" and as_date(v) == q.day
        ):
            return True
    return False


def _comparable(a: Fact, b: Fact) -> bool:
    """Facts whose values could be swapped between their rows: the same field (or label) of two rows, each told
    apart by what it is about."""
    if not a.about or not b.about or set(a.about) == set(b.about):
        return False
    same = (a.field and a.field == b.field) or (a.label and a.label == b.label)
    if a.kind in ("name", "text") and b.kind in ("name", "text"):
        return bool(same)
    return bool(same) and a.kind == b.kind == "number" and unit_family(a.unit) == unit_family(b.unit)


def _label_words(fact: Fact) -> set[str]:
    """The words of a fact's own label (or its field's), without synonyms: what the answer calls it."""
    labels = [fact.label] if fact.label else labels_of(fact)[:1]
    # an enumerated label (`도시1`, `도시2`) names the same thing as its siblings
    labels = [re.sub(r"(?<=[가-힣A-Za-z])\s*\d+$", "", label) for label in labels]
    out: set[str] = set()
    for label in labels:
        out |= {
            normalise_name(w) for w in re.split(r"[\s()\[\],:/·]+", prepare_text(label)) if len(normalise_name(w)) >= 2
        }
        whole = normalise_name(label)
        if whole:
            out.add(whole)
    for group in LABEL_EQUIVALENTS:
        if out & group:
            out |= group
    return out


def _labelled_other(clause: str, fact: Fact, facts: list[Fact]) -> bool:
    """The clause names another asked fact's label and not this one's (`미세먼지 52` where 52 is the 초미세먼지):
    a word inside a longer label word named there does not count (`미세먼지` in `초미세먼지`)."""
    own = _label_words(fact)
    if not own:
        return False
    theirs = set()
    for f in facts:
        if (
            f is not fact
            and f.kind == fact.kind
            and (f.kind != "number" or unit_family(f.unit) == unit_family(fact.unit))
            and not (_value_named(clause, f) and not _overlap(f, fact))  # its label is said of its own value there
            # (`A 정류소에 911번 버스`), unless that value holds this one (a lunch break 13:00~14:00 for a closing time)
        ):
            theirs |= _label_words(f) - own
    if not theirs:
        return False
    text = normalise_name(clause)
    spans = sorted(
        ((m.start(), m.end(), w) for w in own | theirs for m in re.finditer(re.escape(w), text)),
        key=lambda x: (x[0], -x[1]),
    )
    kept = [x for x in spans if not any(o[0] <= x[0] and x[1] <= o[1] and (o[1] - o[0]) > (x[1] - x[0]) for o in spans)]
    words = {w for _, _, w in kept}
    return bool(words & theirs) and not (words & own)


def _times_of(fact: Fact) -> set[int]:
    raw = str(fact.value)
    return set(time_values(raw.zfill(4) if re.fullmatch(r"\d{3}", raw.strip()) else raw) or ())


def _overlap(a: Fact, b: Fact) -> bool:
    """One fact's value holds the other's (the same clock time, or one text inside the other)."""
    if _times_of(a) & _times_of(b):
        return True
    x, y = normalise_name(str(a.value)), normalise_name(str(b.value))
    return bool(x and y and (x in y or y in x))


def _value_named(clause: str, fact: Fact) -> bool:
    """The clause states the fact's own value (a name as written, a clock time in any form)."""
    raw = str(fact.value)
    if (
        fact.kind in ("name", "text")
        and len(normalise_name(raw)) >= 2
        and normalise_name(raw) in normalise_name(clause)
    ):
        return True
    times = set(time_values(raw.zfill(4) if re.fullmatch(r"\d{3}", raw.strip()) else raw) or ())
    return bool(times) and any(mins & times for mins, _, _ in time_spans(clause))


def said_of_other(
    text: str,
    bounds: list[tuple[int, int]],
    pos: int,
    fact: Fact,
    facts: list[Fact],
    now: datetime | None,
    *,
    dated: bool = True,
    asked: str = "",
) -> bool:
    """The clause at `pos` says its value of another row, entity, hour or date than the fact's: it names what tells
    another row (a rival's or another fact's) apart and nothing of the fact's own, or a day other than the fact's.
    `asked`: the user's words (normalised); a name they hold that no asked fact's row is about is the thing asked
    about (the stop whose routes are listed), which tells no rival row apart."""
    a, b = clause_of(bounds, pos)
    clause = text[a:b]
    own = [q for q in _quals(fact.about) if not _is_value(q, facts)]
    days = [q.day for q in own if q.day is not None]
    if dated and days and names_other_day(clause, max(days), now, frozenset(days)):
        return True  # said of another day, whatever else the clause names
    if other_area(clause, fact.about, frozenset(normalise_name(str(f.value)) for f in facts)):
        return True  # said of another 동 or 구 than the row's, whatever else the clause names
    if dated and names_other_month(clause, fact.about, now):
        return True
    if dated and names_other_hour(clause, own):
        return True  # said of another hour than the row's (`오전 10시` for the 14:00 reading)
    if dated and days and names_other_weekday(clause, max(days), now):
        return True
    if any(named(clause, q, now) for q in own):
        return False
    others = [q for r in fact.rivals for q in _quals(list(r.get("about") or []))]
    others += [q for f in facts if f is not fact and _comparable(f, fact) for q in _quals(f.about)]
    others = [q for q in others if q not in own and not _is_value(q, facts)]
    if asked:
        abouts = {q.name for f in facts for q in _quals(f.about) if q.kind == "name"}
        others = [q for q in others if not (q.kind == "name" and q.name in asked and q.name not in abouts)]
    if any(named(clause, q, now) for q in others):
        return True
    return _labelled_other(clause, fact, facts)


#: Other words for the labels of a row's two ends (a route's first and last stop).
_END_WORDS = {"기점": ("출발", "기점"), "종점": ("종점", "종착", "도착")}


def _binding_words(fact: Fact, other: Fact) -> set[str]:
    """The words of the fact's label that the other fact's label lacks (`x` of `TM X` against `TM Y`, `기점`
    against `종점`), with their usual other words: what an answer writes right beside a value to say which it is."""
    mine = {normalise_name(w) for w in re.split(r"[\s()\[\],:/·]+", prepare_text(fact.label)) if normalise_name(w)}
    theirs = {normalise_name(w) for w in re.split(r"[\s()\[\],:/·]+", prepare_text(other.label)) if normalise_name(w)}
    out = mine - theirs
    for word in list(out):
        out |= set(_END_WORDS.get(word, ()))
    return out


def bound_to_other(text: str, start: int, end: int, fact: Fact, facts: list[Fact]) -> bool:
    """The value at text[start:end] is written right beside another asked fact's label and not its own: `X =
    453990` for the TM Y, `이화역에서 출발해` or `다남입구가 종점` for the other end of the route (a label written
    just before the value, or just after it with a particle). Only labels that tell two asked facts of one kind
    apart count."""
    return _binding(text, start, end, fact, facts) == "other"


def _binding(text: str, start: int, end: int, fact: Fact, facts: list[Fact]) -> str:
    """Which asked fact's telling label is written right beside the value: "other" (another's, not its own),
    "own" (its own), or ""."""
    if not fact.label:
        return ""
    before = text[max(0, start - 16) : start]
    after = text[end : end + 12]
    found = ""
    for other in facts:
        if other is fact or other.kind != fact.kind or not other.label or other.label == fact.label:
            continue
        own, theirs = _binding_words(fact, other), _binding_words(other, fact)
        if not own or not theirs:
            continue

        def said(words: set[str]) -> bool:
            alternatives = "|".join(rf"(?<![a-z가-힣]){re.escape(w)}" if len(w) == 1 else re.escape(w) for w in words)
            if re.search(rf"(?:{alternatives})\s*(?:은|는|이|가|:|=)?\s*$", before):
                return True  # `종점은 이화역`, `X = 197946.07`
            return bool(re.match(rf"\s*(?:이|가|은|는|에서)\s*(?:{alternatives})", after))  # `이화역에서 출발`

        if said(theirs) and not said(own):
            return "other"
        if said(own):
            found = "own"
    return found


def rival_claim(answer: str, facts: list[Fact], now: datetime | None = None) -> str:
    """A value of another row (a rival of a number fact) said without what tells that row apart: it reads as a
    second value for the asked one. '' when every such value is said of its own row."""
    text = prepare_text(answer)
    bounds = clauses(text)
    ms = [m for m in mentions(text) if not _inside_date_or_time(text, m)]
    numbered = [(f, v) for f in facts if f.kind == "number" and (v := _fact_number(f)) is not None]
    for fact, value in numbered:
        for r in fact.rivals:
            rv = _as_number(r.get("value"))
            if rv is None:
                continue
            theirs = [q for q in _quals(list(r.get("about") or [])) if q not in _quals(fact.about)]
            for m in ms:
                if not _same_kind(m, fact) or not _number_matches(m, rv, _exact(fact)):
                    continue
                if any(_number_matches(m, v, f) for f, v in numbered):
                    continue  # the value of an asked fact (this one rounded, or another)
                lo, hi = clause_of(bounds, m.start)
                if _extreme_ok(text[lo:hi], rv, [value, *(_as_number(x.get("value")) for x in fact.rivals)]):
                    continue  # said as the highest or lowest of the rows, and it is
                before = clause_of(bounds, max(0, lo - 2))
                if any(named(text[lo:hi], q, now) for q in theirs):
                    continue
                if before != (lo, hi) and any(named(text[before[0] : before[1]], q, now) for q in theirs):
                    continue
                return f"{text[m.start : unit_at(text, m.end)[1]]} is another row's {fact.label or fact.field}"
    return ""


_HIGH = re.compile(r"최고|최대|가장 (?:높|많|비싸|크|길|멀)|제일 (?:높|많|비싸|크|길|멀)|highest|most|maximum|max")
_LOW = re.compile(r"최저|최소|가장 (?:낮|적|싸|작|짧|가까)|제일 (?:낮|적|싸|작|짧|가까)|lowest|least|minimum|min")


def _extreme_ok(clause: str, value: float, values: list[float | None]) -> bool:
    known = [v for v in values if v is not None]
    if not known:
        return False
    if _HIGH.search(clause):
        return abs(value - max(known)) < 1e-9
    if _LOW.search(clause):
        return abs(value - min(known)) < 1e-9
    return False


def _exact(fact: Fact) -> Fact:
    return Fact(fact.kind, fact.value, 0.0, fact.unit, fact.label, fact.field, fact.category)


def fact_hit(
    answer: str,
    fact: Fact,
    facts: list[Fact] | None = None,
    now: datetime | None = None,
    *,
    seen: Seen | None = None,
) -> bool:
    """Whether the answer commits to this fact (`facts`: the whole set, whose other values are not rivals), said of
    the fact's own row. With `seen`, other figures of its clause are rivals only when offered as alternatives
    (`15도 또는 16도`, a range): the judge checks the rest against what the model saw."""
    prepared = prepare_text(answer)
    bounds = clauses(prepared)
    every = facts or [fact]
    now = now or (seen.now if seen else None)
    asked = normalise_name(" ".join(seen.user)) if seen else ""
    if fact.kind in ("number", "count"):
        given = seen.user_numbers if seen else frozenset()
        return _number_hit(
            prepared, fact, every, mentions(prepared), bounds, now, given, strict=seen is None, asked=asked
        )
    if fact.kind == "date":
        return _date_hit(prepared, fact, bounds, every, now)
    if fact.kind in ("name", "text"):
        return _text_hit(prepared, fact, bounds, every, now, strict=seen is None, asked=asked)
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


_MONTH_ARG = re.compile(r"(?:19|20)\d{2}(?:0[1-9]|1[0-2])")
_SAYS_ABSENT = re.compile(r"없|않|못|\bno\b|n't\b|\bnot\b")


def absent_of_other_month(answer: str, facts: list[Fact], seen: Seen) -> str:
    """A report of missing data said of a month other than the one the calls asked for (a `YYYYMM` argument, the
    only one sent): `이번 달(10월) 자료는 없습니다` after asking for November. The clause, or ''."""
    months = {v.strip() for v in seen.sent if _MONTH_ARG.fullmatch(v.strip())}
    if len(months) != 1 or seen.now is None or not any(about_missing(f) for f in facts):
        return ""
    text = prepare_text(answer)
    for a, b in clauses(text):
        clause = text[a:b]
        if _SAYS_ABSENT.search(clause) and names_other_month(clause, list(months), seen.now):
            return clause.strip()
    return ""


def _siblings(fact: Fact, seen: Seen) -> set[str]:
    """The names that stand beside the fact's own entity in another listing it saw (the other stops of the stops
    listing its row's stop is in), normalised."""
    own = {q.name for q in _quals(fact.about) if q.kind == "name"}
    value = normalise_name(str(fact.value))
    out: set[str] = set()
    for rows in seen.listings:
        if any(normalise_name(str(v)) == value for r in rows[:60] for v in r.values()):
            continue  # the fact's own listing: its other rows are rivals, judged as such
        for key in {k for r in rows[:60] for k in r}:
            names = {normalise_name(v) for r in rows[:60] if isinstance(v := r.get(key), str)}
            if own & names:
                out |= {n for n in names if len(n) >= 2 and not re.fullmatch(r"[\d.]+", n)}
    return {n for n in out if not any(n in o or o in n for o in own)}


def said_of_sibling(answer: str, facts: list[Fact], seen: Seen) -> str:
    """An asked value said in a clause that names another entity of the listing its row's entity is in, and not
    that entity (`대흥역 정류소에 606번이 11정거장` where the arrivals are 대흥주민센터's, a stop listed beside
    대흥역). The sibling named, or ''."""
    text = prepare_text(answer)
    values = {normalise_name(str(f.value)) for f in facts}
    for fact in facts:
        if fact.kind not in ("name", "number", "count"):
            continue
        siblings = _siblings(fact, seen) - values
        if not siblings:
            continue
        own = {q.name for q in _quals(fact.about) if q.kind == "name"}
        value = normalise_name(str(fact.value))
        for a, b in clauses(text):
            clause = normalise_name(text[a:b])
            said = [n for n in siblings if n in clause]
            if said and not any(o in clause for o in own) and len(value) >= 2 and value in clause:
                return said[0]
    return ""


_ADDRESS_SAID = re.compile(
    r"(?:주소|소재지)(?:는|은|가|이|:)?\s*(?:[가-힣]+\s+){0,3}?([가-힣\d]+(?:로|길)\s?\d+(?:-\d+)?)"
)


def address_of_nothing(answer: str, facts: list[Fact]) -> str:
    """An address given as the found entity's (`주소는 … 교촌로 318-5`) that is none of the asked rows' addresses
    (the user's own, or one made up), where those rows state one. The road and number, or ''."""
    own = [normalise_name(x) for f in facts for x in f.about if re.search(r"(?:로|길)\s?\d", str(x))]
    if not own:
        return ""
    for m in _ADDRESS_SAID.finditer(prepare_text(answer)):
        said = normalise_name(m.group(1))
        if not any(said in o for o in own):
            return m.group(1)
    return ""


_ITEM_TAIL = re.compile(r"(?:이|가|은|는|을|를|도|와|과|만|까지|이에요|예요|입니다|이고|이며)(?:\s.*)?$")


def invented_item(answer: str, facts: list[Fact], seen: Seen) -> str:
    """An item of a list of one field's values (`내과, 안과, 피부과`: asked values and their rows' rivals) that
    nothing seen names, though it is a name of the same kind (it ends as two listed values do, or in the last two
    letters of a longer one: `에리트로마이신` beside `클라리스로마이신`): a value made up among real ones (`정형외과`
    where the sixth department is `치과`). The item, or ''."""
    for fact in facts:
        if fact.kind != "name":
            continue
        values = {normalise_name(str(fact.value))} | {normalise_name(str(r.get("value", ""))) for r in fact.rivals}
        for sentence in re.split(r"[.!?\n]", nfkc(answer)):
            parts = [p.strip() for p in re.split(r"[,·、/]|\s(?:및|그리고)\s", sentence)]
            if len(parts) < 3:
                continue
            items = [parts[0].split()[-1] if parts[0].split() else ""]
            items += [p if len(p.split()) == 1 else "" for p in parts[1:-1]]  # an item is one word
            items.append(_ITEM_TAIL.sub("", parts[-1].split()[0]) if parts[-1].split() else "")
            names = [normalise_name(i) for i in items]
            listed = [n for n in names if n in values]
            for n in names if listed else ():
                if (
                    re.fullmatch(r"[가-힣]{2,10}", n)
                    and n not in values
                    and (
                        sum(v.endswith(n[-1]) for v in listed) >= 2
                        or any(len(v) >= 4 and v.endswith(n[-2:]) for v in listed)
                    )
                    and n not in seen.text
                ):
                    return n
    return ""


_REFERENCE = re.compile(r"기준|\bas of\b|\bmeasured (?:at|on)\b")


def referred_to_other_day(answer: str, facts: list[Fact], now: datetime | None) -> str:
    """A clause that says when the figures of its sentence are of (`어제 오후 2시 기준 값이에요`, `as of
    yesterday`) naming a day none of the asked facts' rows is of. The clause, or ''."""
    days = {q.day for f in facts for q in _quals(f.about) if q.day is not None}
    if not days or now is None:
        return ""
    text = prepare_text(answer)
    for a, b in clauses(text):
        clause = text[a:b]
        if (
            _REFERENCE.search(clause)
            and re.search(r"\d", sentence_at(text, a))
            and names_other_day(clause, max(days), now, frozenset(days))
        ):
            return clause.strip()
    return ""


def rejected(answer: str, facts: list[Fact], seen: Seen | None = None) -> str:
    """Why the whole answer fails whatever it states, or '': doubt, a paste, a dump, a figure, date, time or place
    nothing seen supports, or another row's value said as the asked one's."""
    if not facts:
        return ""
    if h := hedge(answer, facts):
        return f"hedge: {h}"
    if p := pasted(answer, seen):
        return f"paste: {p}"
    if seen is not None and _JSON.search(prepare_text(answer)):
        return "dump: raw JSON pasted from a result"
    if seen is None and (d := dump(answer, facts)):
        return f"dump: {d}"
    if seen is not None and (u := unsupported(answer, seen)):
        return f"unsupported: {u}"
    if seen is not None and (w := misattributed(answer, seen)):
        return f"said of another row: {w}"
    if seen is not None and (w := absent_of_other_month(answer, facts, seen)):
        return f"said of another month: {w}"
    if w := referred_to_other_day(answer, facts, seen.now if seen else None):
        return f"said of another day: {w}"
    if seen is not None and (w := invented_item(answer, facts, seen)):
        return f"unsupported: {w} listed among the rows' values"
    if seen is not None and (w := said_of_sibling(answer, facts, seen)):
        return f"said of another row: {w}"
    if w := address_of_nothing(answer, facts):
        return f"said of another row: the address {w} is no asked row's"
    if r := rival_claim(answer, facts, seen.now if seen else None):
        return f"another row: {r}"
    return ""


def check_answer(answer: str, facts: list[Fact], seen: Seen | None = None) -> FactCheck:
    """How many of `facts` the answer commits to, each said of its own row; a doubt, a paste, a dump, an unsupported
    claim (with `seen`, what the model saw) or another row's value fails all of them."""
    answer = answer or ""
    why = rejected(answer, facts, seen)
    if why:
        return FactCheck(hits=0, total=len(facts), missing=list(facts), rejected=why)
    now = seen.now if seen else None
    missing = [f for f in facts if not fact_hit(answer, f, facts, now, seen=seen)]
    return FactCheck(hits=len(facts) - len(missing), total=len(facts), missing=missing)


#: Ways of saying a request is beyond what the assistant can do (beside `synthesis.claims.INABLE`).
_DECLINE = re.compile(
    r"할\s*수\s*(?:가|는)?\s*없|수\s*없(?:습니다|어요|네요|는)|도구가 없|기능이 없|권한이 없|불가|어려워요"
    r"|어렵(?:습니다|네요|겠)"
    r"|안\s*돼|못\s*해|지원되지 않|범위(?:를|가|에서)? 벗어|밖의 (?:요청|일|내용)|(?:제공|지원|조회)하지 (?:않|못)"
    r"|도와드리기 어렵|(?:정보|기능|범위|서비스|요청|일|데이터|자료|대상)(?:가|이)? 아니|방법이 없|범위 밖|밖이에요"
    r"|밖의 정보"
    r"|\boutside (?:what|the|my)\b|\bbeyond (?:what|my)\b|\bnot something i\b|n'?t something (?:i|we)\b"
    r"|\bcan'?t\b|\bcannot\b"
    r"|\bunable\b|\bnot able\b|\bno (?:tool|access)\b|don'?t have (?:a |the |any )?(?:tool|access)",
    re.I,
)


def refusal(answer: str, facts: list[Fact], seen: Seen | None = None) -> bool:
    """An honest refusal of a request the tools cannot serve: it says so (a literal fact of the task, or any way of
    declining) and does not fulfil the request anyway (with `seen`: no figure, date, time or place that nothing the
    user said or the clock supports, which would be an answer made up)."""
    text = answer or ""
    says = any(f.kind == "text" and fact_hit(text, f) for f in facts) or bool(
        _DECLINE.search(nfkc(text)) or INABLE.search(nfkc(text))
    )
    if not says:
        return False
    return seen is None or not unsupported(text, seen)


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
