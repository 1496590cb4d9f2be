"""What an answer claims beyond the asked facts, judged against what the model saw: pure functions of the judge
(`synthesis.facts.check_answer`).

* `Seen`: the grounds an answer may draw on — the tool results the model read, the user's turns and the clock.
* `doubt`: a claim not committed to, in any wording (uncertainty, a question or condition about the answer, a
  retraction, in Korean or English).
* `pasted`: rows pasted instead of an answer (`field: value` lines, a dict or JSON, a table of the raw fields).
* `unsupported`: a figure, date, time or place that nothing seen supports (a difference or sum of two seen values,
  a rounding at the precision written, a count of listed things are supported).
* qualifiers: what a clause says a value is *of* (an entity's name or identifier, an hour, a date), so that a value is
  credited only when said of the right row and a value of another row said of the asked one fails.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cached_property, lru_cache
from itertools import combinations
from typing import Any

from graph.regions import place_names
from synthesis.answer_dates import as_date, date_spans, time_spans, time_values
from synthesis.answer_values import (
    EN_MAGNITUDES,
    Mention,
    clauses,
    mentions,
    nfkc,
    normalise_name,
    prepare_text,
    squeeze,
    unit_at,
    unit_family,
)

# ---------------------------------------------------------------------------------------------- what was seen

_DIGITS = re.compile(r"\d+(?:\.\d+)?")
#: Factors between a figure as an answer writes it and as a result holds it, per unit family (km and m, 만원 and
#: 원, 분 and 초); a figure of another family is compared as written.
_SCALES_BY_FAMILY: dict[str, tuple[float, ...]] = {
    "money": (1.0, 1e-4, 1e-3, 1e-8, 1e4),
    "length": (1.0, 1e3, 1e-3, 1e2, 1e-2),
    "duration": (1.0, 60.0, 1 / 60, 3600.0, 1 / 3600),
    "area": (1.0,),
}
#: Integers up to this many an answer may state as a count of the things it lists without a result saying it.
SMALL_COUNT = 10


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
_NOT_MEASURES = re.compile(
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


def _figure(value: Any) -> float | None:
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
            named = Counter(n for n in (_row_name(v) for r in rows for v in r.values()) if n)
            out |= {float(n) for n in named.values()}
        for key, text in self._parsed[3]:
            if _COUNT_FIELD.search(key) and (x := _figure(text)) is not None:
                out.add(x)
        return frozenset(out)

    @cached_property
    def row_names(self) -> frozenset[str]:
        return frozenset(n for rows in self.listings for r in rows for v in r.values() if (n := _row_name(v)))

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
            if (x := _figure(v)) is not None
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
            if _NOT_MEASURES.search(key) or (not counts and (_COUNT_FIELD.search(key) or _COORDINATE.search(key))):
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
            values = [x for v in row.values() if isinstance(v, int | float | str) and (x := _figure(v)) is not None]
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
        out = set(self.clock_dates) | {x for y, m, d in self._parts if y and m and d and (x := _mkdate(y, m, d))}
        for text in self.texts:
            out |= {d for d, _, _ in date_spans(text, year)}
            compact = re.fullmatch(r"((?:19|20)\d{2})(\d{2})(\d{2})\d{0,6}", text.strip())
            if compact and (d := _mkdate(*(int(g) for g in compact.groups()))):
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
                kind = _PART.search(str(k))
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
            for mins, _, _ in _spans(prepare_text(text)):
                out |= mins
        if self.now is not None:
            out |= {self.now.hour * 60 + self.now.minute, self.now.hour * 60}
        return out

    @cached_property
    def text(self) -> str:
        return normalise_name(" ".join(self.texts))


_PART = re.compile(r"(year|month|day)$", re.I)


def _mkdate(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _near(values: list[float], x: float, tol: float) -> bool:
    i = bisect_left(values, x - tol)
    return i < len(values) and values[i] <= x + tol


# ---------------------------------------------------------------------------------------------- doubt

#: Wording that does not commit to what it says (any language the answers use).
_DOUBT = re.compile(
    r"모르겠|모릅니다|몰라요|잘 모르|확실하지 않|확실하지는 않|확실치 않|확실하진|확실치는|확신할 수 없|확신이 없"
    r"|불확실"
    r"|정확하지 않을"
    r"|정확하지 않습니다|정확하지는 않|틀릴 수|틀렸을|틀린 것일|잘못되었을|잘못됐을|오류가 있을|다를 수도 있"
    r"|추정치|추정됩니다|추정돼요|추측|짐작|(?<![가-힣])아마(?:도)?(?:\s|요|[,.!]|$)|어쩌면"
    r"|일 거(?:예요|에요|야|라|다|고)|혹시 모르|것 같기도"
    r"|일 수도|수도 있(?:습니다|어요|어|음|고|으니|지만|겠|을)|일지도|일걸|보장할 수 없|장담할 수 없|장담은 못"
    r"|참고(?:만|용으로만)"
    r"|(?:맞|정확하|옳|틀리지 않)(?:다면|으면|는다면)|(?:맞는|정확한)지 (?:모르|확인해 보|다시)|(?:인|일)까요|(?:인"
    r"|일)지요|아닐까"
    r"|\bnot (?:sure|certain|confident)\b|\bdon'?t know\b|\bdo not know\b|\buncertain\b|\bmight\b|\bmaybe\b"
    r"|\bprobably\b"
    r"|\bperhaps\b|\bpossibly\b|\bi think\b|\bi believe\b|\bi guess\b|\bcould be\b|\bmay be\b|\bseems?\b|\blikely\b"
    r"|\bif (?:this|that|the \w+) (?:is|was) (?:right|correct|accurate)\b",
    re.I,
)
#: A turn back on what was said (a retraction or a contradiction after it).
_RETRACT = re.compile(
    r"(?:(?<!죄송)(?<!아쉽)(?<!미안)하지만|그러나|다만|그런데|근데|아,|앗|아니(?![라요오고])|(?<![가-힣])정정|however|but|actually|wait|oops)\s*,?[^.!?\n]{0,50}?"
    r"(?:수\s*(?:가|는|도)?\s*없|없습니다|없어요|없네요|없었|못\s*했|못합니다|않습니다|않아요|않았|아닙니다|아니에요"
    r"|아니라|아닐 "
    r"|잘못|틀렸|틀린|정정|취소|무시|다시 확인|cannot|can't|unable|wrong|incorrect|ignore|disregard|not (?:correct"
    r"|right|"
    r"accurate|true|verified)|couldn'?t)"
    r"|\bignore (?:that|this|the above|my)\b|\bscratch that\b|\bdisregard\b|\bthat was wrong\b|\bi was wrong\b"
    r"|(?:무시해|잊어) 주세요|앞의 (?:답|내용|말)은|정정(?:합니다|할게요|하겠습니다|해 드릴게요)|다시 (?:보니"
    r"|확인해 ?보니|살펴보니)"
    r"|(?:sorry|죄송)[^!?\n]{0,30}(?:wrong|incorrect|mistake|잘못|틀렸|바뀌|바뀐|뒤바뀌|헷갈)"
    r"|아니[,…\s]*(?:죄송|미안|sorry)|\bno,? sorry\b"
    r"|(?:아|앗|어),?\s*아니(?:네요|에요|다|야|군요|었)|잘못 (?:말씀|봤|읽|안내)|\bcorrection\b|\bi misread\b"
    r"|\bmy mistake\b",
    re.I,
)
#: Statements that the asked information could not be had (a doubt unless the facts are about missing data).
INABLE = re.compile(
    r"(?:확인|조회|찾|검색|알|제공|답변|파악|안내|말씀|드리|얻|가져오|가져올|볼|드릴)[가-힣]{0,4}\s*수\s*(?:가|는"
    r"|도)?\s*없"
    r"|(?:찾|확인|조회|검색|가져오|얻|파악하)지\s*못|못\s*(?:찾|했|합니다|해요)"
    r"|(?:정보|자료|데이터|결과|내용|답)(?:가|이|은|는|을|를|도)?\s*(?:없|존재하지 "
    r"않|확인되지 않|조회되지 않|제공되지 않|나오지 않)"
    r"|제공하지 않|지원하지 않|제공되지 않|불가능|어렵습니다|cannot|can't|unable|not found|no data|not available",
    re.I,
)


#: Softening that hedges only the sentence it closes (`것 같아요`, `~인 듯해요`, `다를 수 있어요`): Korean adds it to
#: advice and to reasons as often as to claims (`산책하셔도 괜찮을 것 같아요`, `약국이라 목록에 없는 것 같아요`).
_SOFT = re.compile(r"[가-힣] 것 같|(?:인|일|한|는)듯(?:해|합|하)|다를 수 있")


#: What a turn says when it corrects what came before (not when it reports that nothing was found).
_CORRECTING = re.compile(
    r"잘못|틀|정정|취소|무시|다시|잊어|바뀌|헷갈|죄송|미안|아니(?:네요|에요|다|야|군요|었)|wrong|incorrect|ignore"
    r"|disregard|mistake|misread|scratch|correction|sorry|not (?:correct|right|accurate|true)",
    re.I,
)


def doubt(answer: str, claims: Callable[[str, str], bool] | None = None, *, missing: bool = False) -> str:
    """The wording that makes the answer non-committal or takes it back, or ''. `claims(sentence, rest)`: whether
    a sentence that ends softened (`것 같아요`) claims something the answer needs (without it, every softening
    is a doubt); `rest` is the answer without that sentence. `missing`: the answer reports missing data, so a
    turn to a negative within a sentence (`searched, but got no results`) is the report itself unless it corrects
    something; one that opens a sentence turns back on the one before."""
    text = nfkc(answer)
    m = _DOUBT.search(text)
    if m:
        return m.group().strip()
    for m in _RETRACT.finditer(text):
        opens = not text[: m.start()].strip() or text[: m.start()].rstrip()[-1] in ".!?\n…"
        if missing and not opens and not _CORRECTING.search(m.group()):
            continue  # `searched, but got no results`: within the sentence that reports it
        return m.group().strip()
    for m in _SOFT.finditer(text):
        start = max(text.rfind(c, 0, m.start()) for c in ".!?\n") + 1
        ends = [i for c in ".!?\n" if (i := text.find(c, m.end())) >= 0]
        end = min(ends) if ends else len(text)
        if claims is None or claims(text[start : m.start() + 1], text[:start] + text[end:]):
            return m.group().strip()
    for sentence in re.split(r"(?<=[?？])|[.!\n]", text):
        s = sentence.strip()
        if s.endswith(("?", "？")) and re.search(r"\d", s) and not re.search(r"(궁금|도움|필요|원하|알려 ?드릴)", s):
            return s  # a figure put as a question
    return ""


# ---------------------------------------------------------------------------------------------- pastes

_KV_LINE = re.compile(r"^\s*[-*•]?\s*[\"']?[A-Za-z_][A-Za-z0-9_]{2,}[\"']?\s*[:=]\s*\S", re.M)
_REPR = re.compile(r"[{\[]\s*[\"'][^\"']{1,80}[\"']\s*:|[\"'][A-Za-z_]\w*[\"']\s*:\s*[\"'\d\[{]")
_INLINE_KV = re.compile(r"(?<![A-Za-z])[a-z]+[A-Z_][A-Za-z0-9_]*\s*:\s*\S")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M)


def pasted(answer: str, seen: Seen | None) -> str:
    """Why the answer pastes rows instead of answering, or ''."""
    text = nfkc(answer)
    if _REPR.search(text):
        return "a dict or JSON of the rows"
    if len(_KV_LINE.findall(text)) >= 2:
        return "field: value lines"
    keys = {k for k in (seen.keys if seen else set()) if len(k) >= 4 and re.search(r"[A-Za-z]", k)}
    named = {k for k in keys if re.search(rf"(?<![A-Za-z]){re.escape(k)}(?![A-Za-z])", text)}
    if len(named) >= 3:
        return f"the results' field names ({', '.join(sorted(named)[:3])})"
    keyed = {k for k in keys if re.search(rf"(?<![A-Za-z]){re.escape(k)}\s*[:=]", text)}
    if len(keyed) >= 2 or len(_INLINE_KV.findall(text)) >= 3:
        return "field: value pairs"
    sprayed = [m for m in mentions(prepare_text(text)) if m.unit]
    for m in sprayed:
        families = {unit_family(o.unit) for o in sprayed if abs(o.value - m.value) < 1e-9}
        if len(families) >= 3:
            return f"{m.value:g} written with {len(families)} kinds of unit"
    if _TABLE_SEP.search(text) and len(named) >= 1:
        return "a table of the raw fields"
    return ""


# ---------------------------------------------------------------------------------------------- support


def _spans(text: str) -> list[tuple[set[int], int, int]]:
    """Clock times written as times (HH:MM, 오후 3시, 정오), not bare four-digit numbers."""
    return time_spans(text, raw=False)


def _korean_step(text: str, m: Mention) -> float:
    """The rounding step of a figure written with Korean magnitudes: its trailing magnitudes (`5억 2천만`: 천만)."""
    written = text[m.start : m.end]
    english = re.search(r"(\d+(?:\.(\d+))?)\s?(thousand|million|billion)$", written)
    if english:  # `256.9 million`: a step of 0.1 million
        scale = EN_MAGNITUDES[english.group(3)]
        return scale * 10.0 ** -len(english.group(2) or "")
    tail = re.search(r"([억만천백]+)\s*$", written.replace(" ", ""))
    step = 1.0
    for ch in tail.group(1) if tail else "":
        step *= {"억": 1e8, "만": 1e4, "천": 1e3, "백": 1e2}[ch]
    return step


#: A clause that compares or takes a difference (`어제보다 2도 높아요`, `일교차 7.1도`, `35 higher than`).
_COMPARING = re.compile(
    r"보다|차이|일교차|높(?!이)|낮(?![에엔 ])|많|적어|적었|적고|적은|올라|올랐|내려|내렸|늘었|늘어|늘고|줄었|줄어|줄고"
    r"|상승|하락|오른|떨어"
    r"|\bthan\b|difference|higher|lower|\bmore\b|\bless\b|increase|decrease|\bdrop|\brise|\bup\b|\bdown\b",
    re.I,
)


_TOTALLING = re.compile(
    r"합치|합하|합계|합산|더하|모두 합|총합|\bin total\b|\btotal\b|altogether|combined|\bsum\b", re.I
)
_ABOUT_BEFORE = re.compile(r"(?:약|대략|거의|about|around|approximately|roughly|almost|nearly|some)\s*$", re.I)
_ABOUT_AFTER = re.compile(r"\s*(?:정도|쯤|가량|남짓|여\b|안팎)")


def approximate(text: str, m: Mention) -> bool:
    return bool(
        _ABOUT_BEFORE.search(text[max(0, m.start - 14) : m.start]) or _ABOUT_AFTER.match(text, unit_end(text, m))
    )


def approx_step(text: str, m: Mention) -> float:
    """The rounding step of a figure the text says is approximate (`약 620m`: 10, `about 1.5 km`: 0.1), else its
    written precision."""
    if m.decimals or m.korean or not approximate(text, m):
        return 10.0**-m.decimals
    raw = str(int(abs(m.value)))
    zeros = len(raw) - len(raw.rstrip("0")) if raw != "0" else 0
    return 10.0 ** min(zeros, 3)


def _sum_of(value: float, parts: list[float], step: float) -> bool:
    """The value is the sum of two to four of the parts (at the precision written)."""
    parts = [abs(x) for x in parts[:12]]
    return any(abs(sum(c) - value) <= 0.5 * step + 1e-9 for k in (2, 3, 4) for c in combinations(parts, k))


def sentence_at(text: str, pos: int) -> str:
    a = max(text.rfind(c, 0, pos) for c in ".!?\n") + 1
    ends = [i for c in ".!?\n" if (i := text.find(c, pos)) >= 0 and not text[i - 1 : i].isdigit()]
    return text[a : min(ends) if ends else len(text)]


#: Unit families of counts (`3곳`, `1,007세대`, `5개 동`, `12정거장`).
_COUNTED = ("counter", "household", "building", "stops")
#: Fields that count something (`dongCnt`, `hhldCnt`, `arrprevstationcnt`, `totalCount`).
_COUNT_FIELD = re.compile(r"cnt|count|total|^rows$|^shown$|수$", re.I)


def _supported_number(text: str, m: Mention, seen: Seen, found: list[Mention]) -> bool:
    value = abs(m.value)
    # what the answer states of the same kind (a difference of a count and a percentage means nothing)
    stated = [o.value for o in found if unit_family(o.unit) == unit_family(m.unit)]
    if value <= 1 and not (m.unit and m.decimals):
        return True
    step = _korean_step(text, m) if m.korean else 10.0**-m.decimals
    counted = unit_family(m.unit) in _COUNTED
    if counted and value.is_integer():
        # a count: of rows a result holds or reports (of one name among them), a count field, the user's, of the
        # things the answer names; a larger one may be any figure seen (`주차 14대`)
        if value in seen.counts or value <= seen.names_in(text) or (value > SMALL_COUNT and value in seen.figures):
            return True
    elif value.is_integer() and value <= SMALL_COUNT and not _measured(m.unit):
        return True  # an ordinal, a number of hours, a count of things listed
    else:
        nums = seen.figures if counted else seen.measures if _measured(m.unit) else seen.numbers
        # `약 17분` for 1051초: an approximate figure may be cut at its precision rather than rounded, and a round
        # one is rounded to its zeros (`약 620m` for 622.97 m)
        slack = 1.0 if not m.korean and approximate(text, m) else 0.5
        step = approx_step(text, m) if slack == 1.0 else step
        for scale in _SCALES_BY_FAMILY.get(unit_family(m.unit), (1.0,)):
            x, tol = value * scale, slack * step * scale + 1e-9
            if _near(nums, x, tol):
                return True
        # a product's strength written after (the end of) its name or before a word for the product (`심바스타틴정
        # 20mg`, `20mg 제품`), not as any dose
        names = seen.named_figures.get(round(value, 9), set())
        word = re.search(r"([가-힣A-Za-z]{2,})\s?$", text[max(0, m.start - 20) : m.start])
        if names and (
            (word and any(n.endswith(normalise_name(word.group(1))) for n in names))
            or re.match(r"\s?(?:짜리|제품|정제|정|캡슐|용량|함량)", text[unit_end(text, m) :])
        ):
            return True
    sentence = sentence_at(text, m.start)
    if _TOTALLING.search(sentence) and _sum_of(value, [x for x in stated if abs(x - value) > 1e-9], step):
        return True  # a total of figures the answer states (`27곳, 11곳, 6곳, 합치면 44곳`)
    # a difference or sum of a supported figure the answer states and a seen one (`어제보다 2도 높아요`), or of two
    # figures of one row (`일교차 7.1도`), where the sentence compares
    if not _COMPARING.search(sentence):
        return False
    tol = 0.5 * step + 1e-9
    if _near(seen.row_differences, value, tol):
        return True
    if any(abs(abs(a - b) - value) <= tol for i, a in enumerate(stated) for b in stated[i + 1 :]):
        return True  # the difference of two figures the answer states (`9건, 14건으로 5건 더 많아요`)
    real = seen.measured
    return any(
        _near(real, a + value, tol) or _near(real, a - value, tol) or _near(real, value - a, tol)
        for a in stated
        if abs(a) > 1 and abs(a - value) > 1e-9 and _near(real, a, 0.5 * 10.0 ** -_decimals(a) + 1e-9)
    )


def _decimals(x: float) -> int:
    text = f"{x:.6f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def _measured(unit: str) -> bool:
    return bool(unit) and unit not in ("건", "곳", "개", "명", "대", "세대", "동", "층", "정거장")


def _date_or_time_at(text: str, m: Mention, covered: list[tuple[int, int]]) -> bool:
    """A number inside a date or clock time already judged as one (a lone `2020년` or `3월` is judged as a number)."""
    return any(a <= m.start < b for a, b in covered)


def unsupported(answer: str, seen: Seen) -> str:
    """The first figure, date, time or place of the answer that nothing seen supports, or ''."""
    text = prepare_text(answer)
    year = seen.now.year if seen.now else None
    dates = date_spans(text, year)
    times = _spans(text)
    covered = [(a, b) for _, a, b in dates] + [(a, b) for _, a, b in times]
    for d, a, b in dates:
        if d not in seen.dates:
            return f"date {text[a:b]}"
        weekday = re.match(r"\s*(?:\(([월화수목금토일])\)|([월화수목금토일])요일)", text[b : b + 8])
        if weekday and "월화수목금토일".index(weekday.group(1) or weekday.group(2)) != d.weekday():
            return f"date {text[a : b + weekday.end()]} (that day is a {_WEEKDAYS[d.weekday()]})"
    for mo in re.finditer(r"(?<!\d)(\d{1,2})\s*월(?!\s*\d{1,2}\s*일)", text):
        if any(a <= mo.start() < b for _, a, b in dates):
            continue
        if int(mo.group(1)) not in seen.months:
            return f"month {mo.group()}"
    for mins, a, b in times:
        if not (mins & seen.minutes) and not any(x // 60 * 60 in seen.minutes for x in mins if x % 60 == 0):
            return f"time {text[a:b]}"
    found = mentions(text)
    covered += _identifiers(text, seen)
    for m in found:
        if _date_or_time_at(text, m, covered) or (m.start > 0 and re.match(r"[가-힣a-z]", text[m.start - 1])):
            continue  # a date or time judged as one, or a figure glued to a name (`정부24`, `pm2.5`, `관수1차`)
        if not _supported_number(text, m, seen, found):
            return f"figure {text[m.start : unit_end(text, m)]}"
    for place in places_in(text):
        if place not in seen.text:
            return f"place {place}"
    for name, own in facilities_in(text):
        if own not in seen.text:
            return f"facility {name}"
    return ""


#: Nouns that end the proper name of a place one can visit or call (`경복궁`, `가수원공원`, `관훈보람약국`,
#: `둔산동 측정소`): a name so ended that nothing seen holds is an entity made up.
_FACILITY = (
    "궁|공원|박물관|미술관|도서관|기념관|전시관|과학관|체육관|문화관|회관|아쿠아리움|수족관|전망대|해수욕장|병원|의원"
    "|약국|측정소|정류소|시장|호텔|타워"
)
#: Words before such a noun that say what kind it is, not which one (`근처 약국`, `종합병원`, `전통시장`).
_KIND_WORDS = frozenset(
    [
        "근처",
        "주변",
        "인근",
        "해당",
        "다른",
        "실내",
        "야외",
        "동네",
        "대형",
        "종합",
        "대학",
        "동물",
        "한방",
        "지역",
        "국립",
        "공공",
        "일반",
        "주요",
        "전통",
        "재래",
        "근린",
        "어린이",
        "시립",
        "구립",
        "도립",
        "공립",
        "국공립",
        "치과",
        "한의",
        "내과",
        "외과",
        "소아과",
        "이비인후과",
        "안과",
        "피부과",
        "시내",
        "실내문화",
    ]
)
_PARTICLE = re.compile(
    r"(?:이에요|예요|입니다|이고|이며|에서|으로|이나|부터|까지|에는|이랑|하고|은|는|이|가|을|를|에|의|과|와|도|로|나|랑|만)$"
)
_FACILITY_WORD = re.compile(rf"([가-힣]*?)(?:{_FACILITY})")


def facilities_in(text: str) -> list[tuple[str, str]]:
    """The proper names of places the (prepared) text states: a facility noun after a name (`창덕궁`, `강남구민회관`)
    or after the area it is named by (`둔산동 측정소`), each as written and as the part that names which one
    (normalised)."""
    out: list[tuple[str, str]] = []
    words = re.findall(r"[^\s]+", text)
    for i, word in enumerate(words):
        core = re.sub(r"^[^가-힣A-Za-z0-9]+|[^가-힣A-Za-z0-9]+$", "", word)
        hangul = re.match(r"[가-힣]+", core)
        if not hangul:
            continue
        whole = hangul.group()
        m = _FACILITY_WORD.fullmatch(whole) or _FACILITY_WORD.fullmatch(_PARTICLE.sub("", whole))
        if not m:
            continue
        own, shown = m.group(1), m.group()
        if not own and i > 0 and re.fullmatch(r"[가-힣]{1,6}[동읍면리]", words[i - 1]):  # named by its area
            own, shown = words[i - 1], f"{words[i - 1]} {m.group()}"
        if len(own) < 2 or own in _KIND_WORDS:
            continue
        out.append((shown, normalise_name(own)))
    return out


_GROUPED = re.compile(r"(?<![\d.,-])\d{2,}(?:[- ]\d{2,}){1,3}(?![\d.,])")


def _identifiers(text: str, seen: Seen) -> list[tuple[int, int]]:
    """Spans of identifiers written in digit groups (`693-87-40955`, `28185 10600`) whose digits, joined, a result
    or the user states as one code (`6938740955`): one identifier, not several figures."""
    codes = {c for t in seen.texts for c in re.findall(r"\d{6,}", re.sub(r"(?<=\d)[- ](?=\d)", "", nfkc(t)))}
    return [(m.start(), m.end()) for m in _GROUPED.finditer(text) if re.sub(r"[- ]", "", m.group()) in codes]


def unit_end(text: str, m: Mention) -> int:
    return unit_at(text, m.end)[1]


@lru_cache(maxsize=1)
def _place_rx() -> re.Pattern[str]:
    names = sorted((n for n in place_names() if len(n) >= 2), key=len, reverse=True)
    return re.compile("(?<![가-힣])(?:" + "|".join(re.escape(n) for n in names) + ")")


def places_in(text: str) -> list[str]:
    """Region names written in the (prepared) text, normalised (the long forms of 시도 already shortened)."""
    return list(dict.fromkeys(normalise_name(m.group()) for m in _place_rx().finditer(text)))


def _row_name(value: Any) -> str:
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


def misattributed(answer: str, seen: Seen) -> str:
    """A measured figure said of one row of a listing (the only row of that result its clause names) that only
    other rows of the same listing hold, and nothing else seen: the value of another entity said of the named one
    (`구도 측정소 미세먼지는 94` where 94 is another station's)."""
    listings = [rows[:60] for rows in seen.listings if len(rows) >= 2]
    if not listings:
        return ""
    tables = [_listing_table(rows) for rows in listings]
    every = [_codes(rows) for rows in listings]
    # a name the user wrote, or another result holds, is what was asked about, not what tells these rows apart
    asked = normalise_name(" ".join(seen.user))
    for t, (unique, _) in enumerate(tables):
        elsewhere = {
            n for u, rows in enumerate(listings) if u != t for r in rows for v in r.values() if (n := _row_name(v))
        }
        elsewhere |= {
            n for rows in seen.listings if len(rows) < 2 for r in rows for v in r.values() if (n := _row_name(v))
        }
        for ns in unique:
            ns -= {n for n in ns if n in asked or n in elsewhere}
    text = prepare_text(answer)
    for a, b in clauses(text):
        clause = text[a:b]
        if re.search(r"각각|respectively", clause):
            continue  # values given in the order of the names, not beside each
        squeezed, pos = squeeze(clause)
        for t, ((unique, held), codes) in enumerate(zip(tables, every, strict=True)):
            # each row named in the clause, where: a value belongs to the name written last before it
            where = sorted(
                (pos[m.start()], i)
                for i, ns in enumerate(unique)
                for n in ns
                for m in re.finditer(re.escape(n), squeezed)
                if squeezed[m.end() : m.end() + 1] not in _PLACE_TAILS
            )
            if not where:
                continue
            phones = [_phones(row) for row in listings[t]]
            claimed = _claimed_values(clause)
            for at, number, kind in claimed:
                before = [(p, i) for p, i in where if p < at]
                if not before or any(before[-1][0] < other < at for other, _, _ in claimed):
                    continue  # no name before it, or another value stands between (`구도 27, 호 47`: 호 is no name)
                row = before[-1][1]
                if kind == "phone":
                    mine, theirs = phones[row], [j for j, ps in enumerate(phones) if number in ps]
                elif kind == "code":
                    mine, theirs = codes[row], [j for j, fs in enumerate(codes) if number in fs]
                else:
                    mine, theirs = held[row], [j for j, fs in enumerate(held) if number in fs]
                if not (held[row] or codes[row] or phones[row]) or number in mine or not theirs:
                    continue
                in_other = any(number in fs for u, (_, h) in enumerate(tables) if u != t for fs in h)
                if kind != "measure" or (not in_other and number not in seen.outside_listings):
                    name = sorted(unique[row])[0]
                    return f"{number:g} is another row's, not {name}'s" if kind != "phone" else f"{name}'s phone"
    return ""


_CODE_FIELD = re.compile(r"(?:cd|code|id|seq|no|num|key)$", re.I)
_PHONE = re.compile(r"(?<!\d)(0\d{1,2})[-) .]?(\d{3,4})[- .]?(\d{4})(?!\d)")


def _phones(row: dict[str, Any]) -> set[float]:
    """The telephone numbers a row holds, as digits (`02-739-8760` -> 27398760)."""
    return {float("".join(m.groups())) for v in row.values() if isinstance(v, str) for m in _PHONE.finditer(v)}


def _claimed_values(clause: str) -> list[tuple[int, float, str]]:
    """(where, value, kind) of what a clause states that a row could hold: telephone numbers, measurements, and
    two-digit-or-more codes written without a unit."""
    out: list[tuple[int, float, str]] = []
    spans = [(m.start(), m.end()) for m in _PHONE.finditer(clause)]
    out += [(m.start(), float("".join(m.groups())), "phone") for m in _PHONE.finditer(clause)]
    for m in mentions(clause):
        if any(a <= m.start < b for a, b in spans):
            continue
        if _measured(m.unit):
            out.append((m.start, round(m.value, 9), "measure"))
        elif not m.unit and m.value >= 10 and m.value.is_integer():
            out.append((m.start, m.value, "code"))
    return out


_PLACE_TAILS = set("구동시군로길역읍면리가") - {""}


def _codes(rows: list[dict[str, Any]]) -> list[set[float]]:
    """Per row: the integers its code fields hold (`sidoCd: 30`)."""
    return [
        {x for k, v in row.items() if _CODE_FIELD.search(str(k)) and (x := _figure(v)) is not None and x.is_integer()}
        for row in rows
    ]


def _listing_table(rows: list[dict[str, Any]]) -> tuple[list[set[str]], list[set[float]]]:
    """Per row of a listing: the names only it holds, and its measured figures."""
    names = [{n for v in row.values() if (n := _row_name(v))} for row in rows]
    shared = Counter(n for ns in names for n in ns)
    unique = [{n for n in ns if shared[n] == 1} for ns in names]
    held = [
        {round(x, 9) for k, v in row.items() if not _NOT_MEASURES.search(str(k)) and (x := _figure(v)) is not None}
        for row in rows
    ]
    return unique, held


# ---------------------------------------------------------------------------------------------- qualifiers


@dataclass(frozen=True)
class Qualifier:
    """What a value can be said of: an hour, a date, or a name or identifier (normalised)."""

    kind: str  # time | date | name
    minutes: frozenset[int] = frozenset()
    day: date | None = None
    name: str = ""


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
        return Qualifier("name", name=name)
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
        return q.name in text or (road is not None and road in text)
    hit = False
    if q.minutes:
        hit = any(mins & q.minutes for mins, _, _ in _spans(clause))
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
        kind = _PART.search(str(k))
        if kind and re.fullmatch(r"\d{1,4}", str(v).strip()):
            parts.setdefault(kind.group(1).lower()[0], int(str(v)))
    day = _mkdate(parts.get("y", 0), parts.get("m", 0), parts.get("d", 0)) if len(parts) == 3 else None
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
    for m in re.finditer(r"(?:((?:19|20)\d{2})\s*년\s*)?(?<!\d)(\d{1,2})\s*월(?!\s*\d{1,2}\s*일)", clause):
        said.add((int(m.group(1)) if m.group(1) else year, int(m.group(2))))
    return bool(said) and (year, month) not in said


def names_other_hour(clause: str, own: list[Qualifier]) -> bool:
    """The clause states clock times and none is the hour of the row (a timestamp it is about, such as a reading's
    `2026-10-15 14:00`; a bare opening or closing time of the row tells nothing of the hour it is said of)."""
    mine = {x for q in own if q.kind == "time" and q.day is not None for x in q.minutes}
    if not mine:
        return False
    said = [mins for mins, _, _ in _spans(clause)]
    return bool(said) and not any(mins & mine or {x // 60 for x in mins} & {x // 60 for x in mine} for mins in said)


_WEEKDAYS = ("월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일")


def names_other_weekday(clause: str, day: date | None, now: datetime | None) -> bool:
    """The clause names a weekday and not the weekday of the row's day, where that day is within a week of the
    clock (a forecast's day, not an opening date)."""
    if day is None or now is None or abs((day - now.date()).days) > 7 or "매주" in clause:
        return False
    said = {i for i, w in enumerate(_WEEKDAYS) if w in clause or f"{w[0]}요일" in clause}
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
