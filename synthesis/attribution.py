"""What a stated value is said *of*, for the judge (`synthesis.facts.check_answer`): `said_of_other`, a clause that says
its value of another row, entity, hour, date or area than the fact's (it names what tells a rival row or another
asked fact's row apart and nothing of the fact's own, or another fact's label and not this one's); `bound_to_other`,
a value written right beside another asked fact's telling label (`X = 453990` for the TM Y, `이화역에서 출발` for the
other end of a route).
"""

from __future__ import annotations

import re
from datetime import datetime

from graph.concepts import ANSWER_FIELDS, norm
from synthesis.answer_dates import as_date, time_spans, time_values
from synthesis.answer_values import (
    clause_of,
    normalise_name,
    prepare_text,
    unit_family,
)
from synthesis.fact_terms import (
    LABEL_EQUIVALENTS,
    Fact,
    label_terms,
    labels_of,
)
from synthesis.qualifiers import (
    Qualifier,
    clock_spans,
    named,
    names_other_day,
    names_other_hour,
    names_other_month,
    names_other_weekday,
    other_area,
    qualifier,
)
from synthesis.seen import Seen, one_figure


def quals(raws: list[str]) -> list[Qualifier]:
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


def times_of(fact: Fact) -> set[int]:
    raw = str(fact.value)
    return set(time_values(raw.zfill(4) if re.fullmatch(r"\d{3}", raw.strip()) else raw) or ())


def _overlap(a: Fact, b: Fact) -> bool:
    """One fact's value holds the other's (the same clock time, or one text inside the other)."""
    if times_of(a) & times_of(b):
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
    own = [q for q in quals(fact.about) if not _is_value(q, facts)]
    days = [q.day for q in own if q.day is not None]
    if dated and days and names_other_day(clause, max(days), now, frozenset(days)):
        return True  # said of another day, whatever else the clause names
    if other_area(_without_near(clause, asked), fact.about, frozenset(normalise_name(str(f.value)) for f in facts)):
        return True  # said of another 동 or 구 than the row's, whatever else the clause names
    if dated and names_other_month(clause, fact.about, now):
        return True
    if dated and names_other_hour(clause, own):
        return True  # said of another hour than the row's (`오전 10시` for the 14:00 reading)
    if dated and days and names_other_weekday(clause, max(days), now):
        return True
    if dated and _at_rival_hour(clause, own, fact, now):
        return True  # said at another row's hour (`오후 6시` for the 17:00 forecast), whatever day it names
    if any(named(clause, q, now) for q in own):
        return False
    others = [q for r in fact.rivals for q in quals(list(r.get("about") or []))]
    others += [q for f in facts if f is not fact and _comparable(f, fact) for q in quals(f.about)]
    others = [q for q in others if q not in own and not _is_value(q, facts)]
    if asked:
        abouts = {q.name for f in facts for q in quals(f.about) if q.kind == "name"}
        others = [q for q in others if not (q.kind == "name" and q.name in asked and q.name not in abouts)]
    if any(named(clause, q, now) for q in others):
        return True
    return _labelled_other(clause, fact, facts)


def _at_rival_hour(clause: str, own: list[Qualifier], fact: Fact, now: datetime | None) -> bool:
    """The clause names the hour of another row of the fact's (a rival forecast hour) and none of the fact's own
    hours (its row's forecast or issue time)."""
    mine = [q for q in own if q.kind == "time"]
    if not mine or not fact.rivals:
        return False
    said = {x for mins, _, _ in clock_spans(clause) for x in mins}
    if not said or any(named(clause, q, now) for q in mine):
        return False
    theirs = {x for r in fact.rivals for q in quals(list(r.get("about") or [])) if q.kind == "time" for x in q.minutes}
    return bool(said & (theirs - {x for q in mine for x in q.minutes}))


#: An area written as the point a distance is measured from (`혜화동에서 가장 가까운`, `혜화동 근처`).
_NEAR = re.compile(r"([가-힣]+[동구])(?:에서|으?로부터)?\s*(?:(?:가장|제일)\s*)?(?:가까운|가깝|근처|주변|인근)")


def _without_near(clause: str, asked: str) -> str:
    """The clause without the user's own area written as where they are (`혜화동에서 가장 가까운 측정소`): the
    place the user asked from, not the one the row is in."""
    return _NEAR.sub(lambda m: "" if asked and normalise_name(m.group(1)) in asked else m.group(0), clause)


#: Other words for the labels of a row's two ends (a route's first and last stop).
_END_WORDS = {"기점": ("출발", "기점", "from"), "종점": ("종점", "종착", "도착", "to")}


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
    return binding(text, start, end, fact, facts) == "other"


def binding(text: str, start: int, end: int, fact: Fact, facts: list[Fact]) -> str:
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
            alternatives = "|".join(
                rf"(?<![a-z가-힣]){re.escape(w)}" if len(w) == 1 or w.isascii() else re.escape(w) for w in words
            )
            if re.search(rf"(?:{alternatives})\s*(?:은|는|이|가|:|=)?\s*$", before):
                return True  # `종점은 이화역`, `X = 197946.07`
            return bool(re.match(rf"\s*(?:이|가|은|는|에서)\s*(?:{alternatives})", after))  # `이화역에서 출발`

        if said(theirs) and not said(own):
            return "other"
        if said(own):
            found = "own"
    return found


def other_field_labels(fact: Fact, seen: Seen) -> frozenset[str]:
    """The documented labels (normalised) of the seen results' other fields (`월세` beside the deposit, `막차` beside
    the first bus), less those that share a word with the fact's own labels (`초미세먼지` for a `미세먼지` fact) and
    those of a field that holds the fact's value too (`kaptdaCnt` 세대수 beside `hoCnt`: the same meaning)."""
    own = set(label_terms(fact)) | {normalise_name(label) for label in labels_of(fact)}
    value = {normalise_name(str(fact.value))}
    if (x := one_figure(str(fact.value))) is not None:
        value.add(f"{x:g}")
    out: set[str] = set()
    for key, held in seen.by_field.items():
        label = ANSWER_FIELDS.get(norm(key))
        if not label or norm(key) == norm(fact.field) or held & value:
            continue
        word = normalise_name(re.sub(r"\s*\(.*$", "", label))
        if len(word) >= 2 and not any(word in o or o in word for o in own if o):
            out.add(word)
    return frozenset(out)


def labelled_as_other(text: str, start: int, labels: frozenset[str]) -> bool:
    """The value at `start` is written right after another field's label, as a word of its own (`월세 5,026만 원`
    where 5,026 is the deposit, `막차는 05:20` for the first bus, not `전월세 9건`): it is said to be that field's
    value."""
    if not labels:
        return False
    before = text[max(0, start - 20) : start]
    for label in labels:
        spaced = r"\s?".join(re.escape(ch) for ch in label)
        if re.search(rf"(?<![가-힣a-z0-9]){spaced}\s*(?:은|는|이|가|도|:|=)?\s*$", before):
            return True
    return False
