"""Whether an answer commits to a number or count fact (`number_hit`): the figure with its unit (or a unit of its
family, rounded within the tolerance at the precision written, or approximately), in a clause that names its label where
a guess could hit it, with no rival figure offered beside it, no range, no negation, said of the fact's own row;
and `rival_claim`, another row's value said without what tells that row apart. For the judge
(`synthesis.facts.check_answer`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from datetime import datetime
from functools import lru_cache
from typing import Any

from synthesis.answer_dates import date_spans, time_spans
from synthesis.answer_values import (
    UNITS,
    Mention,
    clause_of,
    clauses,
    in_base_unit,
    mentions,
    negated_at,
    nfkc,
    prepare_text,
    unit_at,
    unit_family,
)
from synthesis.attribution import binding, bound_to_other, labelled_as_other, quals, said_of_other
from synthesis.claims import approx_step, approximate
from synthesis.fact_terms import (
    Fact,
    guessable,
    in_context,
    label_terms,
)
from synthesis.qualifiers import (
    named,
)


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


def number_hit(
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
    field_labels: frozenset[str] = frozenset(),
) -> bool:
    """Whether the text commits to the number or count fact; `field_labels`: the labels of the seen results' other
    fields (`attribution.other_field_labels`), a value written right after one of which is said to be that field's."""
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
        if inside_date_or_time(text, m):
            continue
        # a value a guess could hit counts where its clause names what it is, or it is written as a count of things
        counted = fact.kind == "count" and unit_family(m.unit) in _COUNTERS
        need_label = not m.unit and (weak or bool(fact.label)) and not counted
        if (
            need_label
            and not (terms and in_context(text, bounds, m.start, terms))
            and binding(text, m.start, unit_at(text, m.end)[1], fact, facts) != "own"  # `TM 좌표 … Y = 453,990`
        ):
            continue
        a, b = clause_of(bounds, m.start)
        rivals = [
            o
            for o in ms
            if o is not m
            and a <= o.start <= b
            and _same_kind(o, fact)
            and not inside_date_or_time(text, o)
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
        # a figure in the fact's counter (`경유 정류소는 29건`) counts the things a label names: no value of theirs
        counts_them = bool(m.unit and fact.unit) and unit_family(m.unit) == unit_family(fact.unit or "") in _COUNTERS
        if bound_to_other(text, m.start, unit_at(text, m.end)[1], fact, facts) or (
            not counts_them and labelled_as_other(text, m.start, field_labels)
        ):
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
        listed = re.match(r"\s*(?:[,/·)]|\(단위|$|(?:이|으)?(?:고|며)\s|(?:in|at|for)\s)", text[m.end : m.end + 5]) or (
            _paren_unit(text[m.end : m.end + 12], fam)  # `52 (㎍/㎥)`, `42 (㎍/㎥, 14시 기준)`
        )
        address = (
            re.search(r"(?:[동로길리가읍면]|번지)\s$|\d-$", text[max(0, m.start - 3) : m.start])
            or text[m.end : m.end + 1] == "-"
        )
        if not m.unit and listed and not address and not inside_date_or_time(text, m):
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


def _paren_unit(rest: str, family: str) -> bool:
    """Whether a parenthesis right after a figure opens with a unit of `family` (`52 (㎍/㎥)`): the figure's unit."""
    p = re.match(r"\s?\(\s?([^\s,)]+)", rest)
    return bool(p) and unit_family(unit_at(f"0{p.group(1) if p else ''}", 1)[0]) == family


def _after_label(text: str, m: Mention, fact: Fact) -> bool:
    """A bare figure written right after the fact's own label, as a listing writes it (`미세먼지 12`, `PM10 85`,
    `기온: 15.9`): the unit of what that label measures goes without saying (a sentence says it: `기온은 15.2도`)."""
    terms = [t for t in label_terms(fact) if len(t) >= 2]
    if not terms or inside_date_or_time(text, m):
        return False
    before = re.sub(r"(?<=[a-z]\d)\.(?=\d)", "", text[max(0, m.start - 24) : m.start])  # `pm2.5` is `pm25`
    rx = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
    hit = re.search(rf"(?<![가-힣a-z0-9])(?:{rx})\s*[:=]?\s*$", before)
    return bool(hit) and not re.match(r"\s?(?:번|위|등|번째|차)", text[m.end : m.end + 3])


ALTERNATIVE = re.compile(r"또는|혹은|이나|아니면|거나|\bor\b|[~∼〜]|에서|(?<![㎍µμa-z])/(?![㎥³a-z])|\s-\s|^-$|사이")


def _disjoined(text: str, m: Mention, o: Mention) -> bool:
    """Two figures offered as alternatives or a range (`15도 또는 16도`, `14~16도`, `14에서 16도 사이`)."""
    a, b = (m, o) if m.start < o.start else (o, m)
    between = text[unit_at(text, a.end)[1] : b.start]
    after = text[b.end : b.end + 6]
    if re.match(r"\s*[~∼〜-]\s*\d", after):
        after = ""  # the later figure opens a range of its own (`11 stops, 약 17~18분`), no alternative to the first
    return len(between) <= 12 and bool(ALTERNATIVE.search(between.strip()) or ALTERNATIVE.search(after))


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


def inside_date_or_time(text: str, m: Mention) -> bool:
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


def rival_claim(answer: str, facts: list[Fact], now: datetime | None = None) -> str:
    """A value of another row (a rival of a number fact) said without what tells that row apart: it reads as a
    second value for the asked one. '' when every such value is said of its own row."""
    text = prepare_text(answer)
    bounds = clauses(text)
    ms = [m for m in mentions(text) if not inside_date_or_time(text, m)]
    numbered = [(f, v) for f in facts if f.kind == "number" and (v := _fact_number(f)) is not None]
    for fact, value in numbered:
        for r in fact.rivals:
            rv = _as_number(r.get("value"))
            if rv is None:
                continue
            theirs = [q for q in quals(list(r.get("about") or [])) if q not in quals(fact.about)]
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
