"""Checking a final answer against the facts it must state: pure functions shared by KOPA-Bench scoring and the
training rewards. One strict judge: an answer passes only when it *commits* to the right facts.

Reading (what counts as stating a value):

* numbers in every common Korean form: `1,234.5`, `-3`, `5억 2,340만 원`, `1억 5천만원`, `3천 원`, `세 곳`, each with
  the unit written after it (an alias: `15.2도`, `°C`, `퍼센트`, `㎍/㎥` / `ug/m3`; amounts compared in 원, lengths in
  m, durations in 분). A fact with a unit needs that unit (or one of its family: `1.2km` for 1200 m, `8억 2,500만 원`
  for 82,500 만원); another unit fails (`15.9cm` is not 15.9 ℃). A value may be rounded to the precision the answer
  writes, within the fact's tolerance (`15도` for 15.2 ℃ with tolerance 0.5), never replaced by a different value
  at the same precision (`15.4도` for 15.2 ℃ fails: that is the neighbouring hour);
* dates: `2026-10-15`, `2026.10.15`, `2026/10/15`, `20261015`, `2026년 10월 15일(목)`, `26.10.15`, English
  `March 26, 2003` and `2 Sep 2025`, and `10월 15일` or `Oct 15` in the fact's year;
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

This module judges the whole answer (`check_answer`, `rejected`, `refusal`); a fact's value is found by
synthesis.number_facts (numbers, counts) and synthesis.text_facts (names, texts, times, dates), said of its own row
by synthesis.attribution; the reading lives in synthesis.answer_values (names, numbers, clauses) and
synthesis.answer_dates (dates, times), the fact with its labels and hedges in synthesis.fact_terms, what an answer
claims beyond the facts in synthesis.claims against what was seen (synthesis.seen).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from datetime import datetime

from synthesis.answer_dates import as_date
from synthesis.answer_values import (
    clauses,
    in_base_unit,
    mentions,
    nfkc,
    normalise_name,
    prepare_text,
    unit_at,
    unit_family,
)
from synthesis.attribution import other_field_labels, quals
from synthesis.claims import INABLE, misgraded, pasted, sentence_at, unsupported
from synthesis.exclusive_claims import contradicted_value
from synthesis.fact_terms import (
    Fact,
    FactCheck,
    about_missing,
    guessable,
    hedge,
    labels_of,
)
from synthesis.listing_claims import invented_coded_name, misattributed, wrong_extreme
from synthesis.number_facts import inside_date_or_time, number_hit, rival_claim
from synthesis.qualifiers import (
    names_other_day,
    names_other_month,
)
from synthesis.reasons import unsupported_reason
from synthesis.seen import Seen
from synthesis.text_facts import date_hit, text_hit

#: An answer with more numbers than max(DUMP_MIN, DUMP_FACTOR × facts) is a dump, not an answer.
DUMP_MIN = 12
DUMP_FACTOR = 3
#: Values of a fact's unit family beyond the facts of that family that an answer may add (other hours, a daily
#: maximum) before it is a dump of candidates.
UNIT_SLACK = 3


# ---------------------------------------------------------------------------------------------- matching


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
    field_labels = other_field_labels(fact, seen) if seen else frozenset()
    if fact.kind == "count" and seen is not None and listed_count(prepared, fact, seen):
        return True
    if fact.kind in ("number", "count"):
        given = seen.user_numbers if seen else frozenset()
        return number_hit(
            prepared,
            fact,
            every,
            mentions(prepared),
            bounds,
            now,
            given,
            strict=seen is None,
            asked=asked,
            field_labels=field_labels,
        )
    if fact.kind == "date":
        return date_hit(prepared, fact, bounds, every, now)
    if fact.kind in ("name", "text"):
        return text_hit(prepared, fact, bounds, every, now, strict=seen is None, asked=asked, field_labels=field_labels)
    return False


def listed_count(text: str, fact: Fact, seen: Seen) -> bool:
    """A count said by listing as many of one result field's values (`진료과목: 내과, 안과, 치과` for 3), every
    one a value of that field, all different, in an answer that writes no figure at all (a written count that
    disagrees is judged as written)."""
    try:
        n = float(str(fact.value).replace(",", ""))
    except ValueError:
        return False
    if n < 2 or not n.is_integer() or re.search(r"\d", text):
        return False
    for sentence in re.split(r"[.!?\n]", text):
        parts = [
            re.sub(r"^.*[:：]\s*", "", p.strip()) for p in re.split(r"[,、·]", re.sub(r"\([^()]*\)", "", sentence))
        ]
        if len(parts) != int(n) or not parts[0].split():
            continue
        parts[0] = parts[0].split()[-1]  # the list opens with its first item's word (`진료과목은 내과`)
        for values in seen.by_field.values():
            # an item as written, else without the particle or ending that closes the list (`…, 안과예요`)
            items = {w if (w := normalise_name(p)) in values else normalise_name(_LIST_END.sub("", p)) for p in parts}
            if len(items) == int(n) and items <= values:
                return True
    return False


_LIST_END = re.compile(r"(?:이에요|예요|입니다|이고|가|이|과|와|등)$")


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
    ms = [m for m in every if not inside_date_or_time(prepared, m)]
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
    own = {q.name for q in quals(fact.about) if q.kind == "name"}
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
        own = {q.name for q in quals(fact.about) if q.kind == "name"}
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
        raws = [nfkc(str(fact.value)).strip()] + [nfkc(str(r.get("value", ""))).strip() for r in fact.rivals]
        values = {normalise_name(v) for v in raws}
        for sentence in re.split(r"[.!?\n]", nfkc(answer)):
            sentence = re.sub(r"\([^()]*\)", "", sentence)  # what an item's parenthesis says of it
            parts = [p.strip() for p in re.split(r"[,·、/]|\s(?:및|그리고)\s", sentence)]
            if len(parts) < 3:
                continue
            items = [parts[0].split()[-1] if parts[0].split() else ""]
            items += [p if len(p.split()) == 1 else "" for p in parts[1:-1]]  # an item is one word
            last = parts[-1].split()[0] if parts[-1].split() else ""
            items.append(_ITEM_TAIL.sub("", last))
            # the last item closes the list where it carries the list's particle or ending (`노은동이에요`,
            # `…마이신과 병용금기`) or is the sentence's last word, and the item before it carries none (after
            # `내과이고,` the list has closed); else its first word may follow the list
            closes = (items[-1] != last or len(parts[-1].split()) == 1) and _ITEM_TAIL.sub("", parts[-2]) == parts[-2]
            names = [normalise_name(i) for i in items]
            listed = [n for n in names if n in values]
            written = [r for r in raws if normalise_name(r) in listed]
            for k, (item, n) in enumerate(zip(items, names, strict=True)) if listed else ():
                if (
                    re.fullmatch(r"[가-힣]{2,10}", n)
                    and n not in values
                    and (
                        sum(v.endswith(n[-1]) for v in listed) >= 2
                        or any(len(v) >= 4 and v.endswith(n[-2:]) for v in listed)
                        or (item and sum(r.endswith(item[-1]) for r in written) >= 2)  # `서울특별시` by `인천광역시`
                        # inside a list of three or more of the rows' values, a word of its own (not a value with
                        # a tail, nor the first word after the list)
                        or (
                            len(listed) >= 2
                            and 0 < k < len(items) - (0 if closes else 1)
                            and re.fullmatch(r"[가-힣]{2,10}", item)
                            and not any(v in n or n in v for v in values if v)
                        )
                    )
                    and n not in seen.result_text  # the user's words name what was asked, not what came back
                ):
                    return n
    return ""


_REFERENCE = re.compile(r"기준|\bas of\b|\bmeasured (?:at|on)\b")


def referred_to_other_day(answer: str, facts: list[Fact], now: datetime | None) -> str:
    """A clause that says when the figures of its sentence are of (`어제 오후 2시 기준 값이에요`, `as of
    yesterday`) naming a day none of the asked facts' rows is of. The clause, or ''."""
    days = {q.day for f in facts for q in quals(f.about) if q.day is not None}
    if not days or now is None:
        return ""
    text = prepare_text(answer)
    for a, b in clauses(text):
        clause = text[a:b]
        sentence = sentence_at(text, a)
        # the sentence of the figures, or one that only says when they are of (`… 9.0℃. 오늘 기준입니다.`)
        of_figures = re.search(r"\d", sentence) or (
            re.search(r"\d", text[:a]) and len(_REFERENCE.sub("", normalise_name(sentence))) <= 8
        )
        if _REFERENCE.search(clause) and of_figures and names_other_day(clause, max(days), now, frozenset(days)):
            return clause.strip()
    return ""


_RANGE = re.compile(r"(?<![\d.])(-?\d+(?:\.\d+)?)\s*(?:℃|°c?|도)?\s*(?:~|∼|〜|–|에서)\s*(-?\d+(?:\.\d+)?)")


def range_around(answer: str, facts: list[Fact], seen: Seen) -> str:
    """A range of a number fact's unit drawn around its value, neither end of which anything seen holds (`16℃
    안팎, 대략 15~17도 사이`): the answer offers an interval where the results give one value. The range, or ''."""
    text = prepare_text(answer)
    for m in _RANGE.finditer(text):
        unit, _ = unit_at(text, m.end())
        lo, hi = float(m.group(1)), float(m.group(2))
        if not unit or lo >= hi or any(_near(seen.measures, x) for x in (lo, hi)):
            continue
        for f in facts:
            if f.kind != "number" or not f.unit or unit_family(f.unit) != unit_family(unit):
                continue
            try:
                value = float(str(f.value).replace(",", ""))
            except ValueError:
                continue
            if lo + f.tolerance < value < hi - f.tolerance:
                return m.group()
    return ""


def _near(values: list[float], x: float) -> bool:
    i = bisect_left(values, x - 1e-9)
    return i < len(values) and values[i] <= x + 1e-9


def rejected(answer: str, facts: list[Fact], seen: Seen | None = None) -> str:
    """Why the whole answer fails whatever it states, or '': doubt, a paste, a dump, a figure, date, time or place
    nothing seen supports, or another row's value said as the asked one's."""
    if not facts:
        return ""
    if h := hedge(answer, facts, seen.user_numbers if seen else frozenset()):
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
    if w := wrong_extreme(answer):
        return f"said of another row: {w} is not the extreme the answer's own figures show"
    if seen is not None and (w := range_around(answer, facts, seen)):
        return f"unsupported: a range {w} around an asked value"
    if seen is not None and (w := contradicted_value(answer, seen)):
        return f"unsupported: {w}, where the results give another value of its kind"
    if seen is not None and (w := misgraded(answer, seen)):
        return f"said of another grade: {w}"
    if seen is not None and (w := unsupported_reason(answer, seen, [str(f.value) for f in facts])):
        return f"unsupported: a reason no result gives ({w})"
    if seen is not None and (w := absent_of_other_month(answer, facts, seen)):
        return f"said of another month: {w}"
    if w := referred_to_other_day(answer, facts, seen.now if seen else None):
        return f"said of another day: {w}"
    if seen is not None and (w := invented_item(answer, facts, seen)):
        return f"unsupported: {w} listed among the rows' values"
    asked = {normalise_name(str(f.value)) for f in facts if f.kind == "name"}
    if seen is not None and (w := invented_coded_name(answer, asked, seen)):
        return f"unsupported: {w} listed beside an asked value"
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
    r"할\s*수\s*(?:가|는)?\s*없|수\s*없(?:습니다|어요|네요|는)|(?:도구|기능|권한)(?:이|가|은|는|도)? 없|불가|어려워요"
    r"|어렵(?:습니다|네요|겠)"
    r"|안\s*돼|못\s*해|지원되지 않|범위(?:를|가|에서)? 벗어|밖의 (?:요청|일|내용)|(?:제공|지원|조회)하지 (?:않|못)"
    r"|도와드리기 어렵|(?:정보|기능|범위|서비스|요청|일|데이터|자료|대상)(?:가|이)? 아니|방법이 없|범위 밖|밖이에요"
    r"|밖의 정보"
    r"|\boutside (?:what|the|my)\b|\bbeyond (?:what|my)\b|\bnot something i\b|n'?t something (?:i|we)\b"
    r"|\bcan'?t\b|\bcannot\b"
    r"|\bunable\b|\bnot able\b|\bno (?:tool|access)\b|don'?t have (?:a |the |any )?(?:tool|access)"
    # what the tools do not reach (`New York isn't covered`, `도구로 못 봐요`)
    r"|\b(?:isn'?t|is not|aren'?t|are not|not) (?:covered|supported)\b|못\s*(?:봐|봅|보여|찾아|찾습|알려|드려)",
    re.I,
)


#: A sentence that says what the tools cover (`인천·대전 버스만 다룹니다`, `only covers Incheon and Daejeon`).
_SCOPE = re.compile(
    r"[^.!?\n]*(?:[가-힣]만\s*(?:다루|다룹|다뤄|지원|제공|조회|검색)|\bonly (?:covers?|supports?|handles?|provides?)\b)"
    r"[^.!?\n]*",
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
    # a sentence that says what the assistant's tools cover (`TAGO는 인천·대전 버스만 다룹니다`) fulfils nothing
    return seen is None or not unsupported(_SCOPE.sub("", text), seen)


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
