"""A fact an answer must state, and the terms it is stated in: the labels that name what it answers (and
their synonyms), whether a clause names them, whether a guess could hit its value, and the hedges that make an
answer non-committal."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from dataclasses import field as _field
from typing import Any

from graph.concepts import ANSWER_FIELDS, KMA_CATEGORIES, norm
from synthesis.answer_values import (
    PUNCT,
    clause_of,
    in_base_unit,
    mentions,
    nfkc,
    normalise_name,
    prepare_text,
    unit_family,
)
from synthesis.claims import INABLE, approximate, doubt

KINDS = ("number", "text", "date", "count", "name")

#: Words that name a label in other words (how Korean answers say these things).
LABEL_SYNONYMS: dict[str, tuple[str, ...]] = {
    "기온": ("온도", "최고", "최저", "낮", "아침"),
    "노선": ("버스", "번", "bus", "route"),
    "정류소": ("정류장", "정거장"),
    "정거장": ("정류장", "정류소", "전"),
    "정류장": ("정류소", "정거장"),
    "측정소": ("관측소",),
    "전화": ("연락처", "번호", "☎"),
    "전화번호": ("연락처", "전화"),
    "주소": ("위치", "소재지"),
    "병원": ("의원", "기관", "병원명"),
    "약국": ("약국명",),
    "상태": ("영업", "사업자", "휴업", "폐업"),
    "거리": ("떨어", "m", "km"),
    "세대수": ("세대", "가구"),
    "미세먼지": ("pm10",),
    "초미세먼지": ("pm2.5", "pm25"),
    "배차간격": ("배차", "간격", "마다"),
    "강수확률": ("비", "강수"),
    "습도": ("습도",),
    "이용시간": ("운영", "시간", "영업", "부터"),
    "휴무": ("쉬는", "휴관", "휴일"),
    "쉬는": ("휴무", "휴관", "휴일"),
    # AirKorea's khaiValue is documented as 통합대기환경수치; its public name is 통합대기환경지수 (CAI)
    "통합대기환경": ("통합대기환경지수", "대기환경지수", "통합대기지수", "통합지수", "cai", "khai"),
    # a service's limit said in English (`only keeps the last 3 days`, `provides data up to ...`)
    "최근": ("last", "recent", "past"),
    "제공": ("provide", "available", "keep", "offer"),
    "cai": ("통합대기환경지수", "대기환경지수", "통합대기지수", "통합지수", "khai"),
}
#: Words that name the same quantity (either way round): what an answer may call a fact labelled by the other.
LABEL_EQUIVALENTS: tuple[frozenset[str], ...] = (
    frozenset({"미세먼지", "pm10"}),
    frozenset({"초미세먼지", "pm2.5", "pm25"}),
    frozenset({"기온", "온도"}),
    frozenset({"오존", "o3"}),
)
_STOP_WORDS = {"수", "값", "및", "의", "는", "은", "이", "가", "예보", "실황", "결과", "정보", "기준", "없음", "아님"}
#: Nouns a committed statement of missing data is about (`자료가 없습니다`).
DATA_NOUNS = (
    "자료",
    "결과",
    "데이터",
    "정보",
    "내역",
    "기록",
    "목록",
    "검색",
    "조회",
    "해당",
    "값",
    "건",
    "응답",
    "측정소",
    "관측",
    "등록",
)


@dataclass
class Fact:
    """One thing the final answer must state: its value, with the label it answers (the field's meaning), the
    response field and category it came from, and its unit."""

    kind: str
    value: Any
    tolerance: float = 0.0
    unit: str | None = None
    label: str = ""
    field: str = ""
    category: str = ""
    #: what tells the fact's row apart (names, identifiers, hours, dates): the answer must say it of that
    about: list[str] = _field(default_factory=list, compare=False)
    #: the other rows' values of the same field, each with what tells it apart (`{"value", "about"}`)
    rivals: list[dict[str, Any]] = _field(default_factory=list, compare=False)


@dataclass
class FactCheck:
    hits: int
    total: int
    missing: list[Fact] = field(default_factory=list)
    #: why the whole answer failed (a hedge, a dump), if it did
    rejected: str = ""

    @property
    def score(self) -> float:
        return 1.0 if self.total == 0 else self.hits / self.total


# ---------------------------------------------------------------------------------------------- hedges

_NEGATIVE_VALUE = re.compile(r"없|않|아니|아님|못|불일치")
MODAL = re.compile(r"수\s*(?:가|는|도)?\s*$")


_LIMIT_LABEL = re.compile(r"없|않|아니|아님|못|불일치|미등록|만 제공|까지")


#: A statement that something is not there (`없어요`, `조회되지 않아요`, `나오지 않았어요`).
_ABSENT = re.compile(r"없|않|못|비어|0건|\bno\b|\bnot\b|n't\b|empty", re.I)


def negative_value(value: str) -> bool:
    """A (normalised) value that says something is missing."""
    return bool(_NEGATIVE_VALUE.search(value))


def negative(fact: Fact) -> bool:
    """A fact whose value says something is missing (`없`, `등록되지 않`)."""
    return fact.kind == "text" and bool(_NEGATIVE_VALUE.search(str(fact.value)))


def about_missing(fact: Fact) -> bool:
    """A fact about missing data or a provider's limit (`자료 없음`, `최근 3일만 제공`): its answer may say what
    cannot be looked up."""
    return negative(fact) or (fact.kind == "text" and bool(_LIMIT_LABEL.search(fact.label)))


#: The asked information named in general (`요청하신 정보`, `최신 자료`): not finding it takes the answer back.
_GENERIC = re.compile(
    r"(?:요청하신|해당|관련|최신|정확한|이)\s*(?:정보|자료|데이터|내용)|the (?:requested )?(?:information|data)", re.I
)


def _estimate(sentence: str, facts: list[Fact]) -> bool:
    """Every figure of the sentence is said approximately (`약`, `쯤`, `정도`) and none is near an asked number's value
    in its unit family: an estimate the answer adds (an arrival time from a count of stops), not an asked fact."""
    text = prepare_text(sentence)
    ms = mentions(text)
    if not ms or not all(approximate(text, m) for m in ms):
        return False
    for f in facts:
        try:
            value = float(str(f.value).replace(",", ""))
        except ValueError:
            continue
        for m in ms:
            if m.unit and f.unit and unit_family(m.unit) != unit_family(f.unit):
                continue
            got, want = in_base_unit(m.value, m.unit)[1], in_base_unit(value, f.unit or "")[1]
            if abs(got - want) <= max(1.0, 0.1 * abs(want)):
                return False
    return True


#: What says the values before it are all the tools cover (`인천과 대전뿐이라`, `인천·대전만 지원해서`).
_ONLY = re.compile(r"뿐|[가-힣]만\s*(?:다루|다룹|다뤄|지원|제공|조회|검색|가능)|\bonly\b", re.I)


def hedge(answer: str, facts: list[Fact], given: frozenset[float] = frozenset()) -> str:
    """The wording that makes the answer non-committal (`synthesis.claims.doubt`), or a statement that the asked
    information could not be had where the facts are not about missing data; '' for a committed answer. `given`:
    the user's own figures (a threshold they set), which a softened sentence repeats without claiming them."""
    values = [normalise_name(str(f.value)) for f in facts if len(normalise_name(str(f.value))) >= 2]
    missing = any(about_missing(f) for f in facts)

    def claims(sentence: str, rest: str) -> bool:
        # a softened sentence takes back a figure or an asked value it states, or an absence nothing else reports;
        # an estimate the answer adds (`9분쯤 걸릴 것 같아요`: every figure approximate, none an asked one) is no claim
        if any(v in normalise_name(sentence) for v in values if not negative_value(v)):
            return True
        if re.search(r"\d", sentence) and not _estimate(sentence, facts):
            figures = [m.value for m in mentions(prepare_text(sentence))]
            return not figures or any(x not in given for x in figures)  # `10도 넘으니까 … 될 것 같아`: theirs
        return missing and bool(_ABSENT.search(sentence)) and not _ABSENT.search(rest)

    d = doubt(answer, claims, missing=missing)
    if d or missing:
        return d
    text = nfkc(answer)
    for m in INABLE.finditer(text):
        # a sentence that says it could not find something while stating a figure or an asked value takes it back
        start = max(text.rfind(c, 0, m.start()) for c in ".!?\n") + 1
        ends = [i for c in ".!?\n" if (i := text.find(c, m.end())) >= 0]
        sentence = text[start : min(ends) if ends else len(text)]
        scope = _ONLY.search(sentence)
        if (
            scope
            and not re.search(r"\d", after := sentence[scope.end() :])
            and not any(v in normalise_name(after) for v in values)
        ):
            continue  # `인천·대전뿐이라 서울은 조회할 수 없습니다`: the values are what the tools cover
        if (
            re.search(r"\d", sentence)
            or any(v in normalise_name(sentence) for v in values)
            or _GENERIC.search(sentence)
        ):
            return m.group().strip()
    return ""


# ---------------------------------------------------------------------------------------------- labels


def labels_of(fact: Fact) -> list[str]:
    """The words that name what the fact answers: its label, else its KMA category's and its field's labels."""
    out: list[str] = []
    if fact.label:
        out.append(fact.label)
    if fact.category and fact.category in KMA_CATEGORIES:
        out.append(KMA_CATEGORIES[fact.category][0])
    if fact.field:
        label = ANSWER_FIELDS.get(norm(fact.field))
        if label:
            out.append(label)
    return out


def label_terms(fact: Fact) -> list[str]:
    value = normalise_name(str(fact.value))
    terms: list[str] = []
    for label in labels_of(fact):
        whole = normalise_name(label)
        if whole and whole != value:
            terms.append(whole)
        for word in re.split(r"[\s()\[\],:/·]+", prepare_text(label)):
            w = PUNCT.sub("", word)
            if (
                len(w) >= 2
                and w not in _STOP_WORDS
                and w != value
                and not (value and value in w and len(w) <= len(value) + 1)
            ):
                terms.append(w)
                if re.fullmatch(r"[가-힣]{2,4}[구군]", w):
                    terms.append(w[:-1])  # a district by its short name (`강남` for 강남구)
                for key, syns in LABEL_SYNONYMS.items():
                    if key in w:
                        terms.extend(normalise_name(s) for s in syns)
            elif w and re.fullmatch(r"[a-z]{2,}\d*(\.\d)?", w):
                terms.append(w)
    return list(dict.fromkeys(t for t in terms if t))


def in_context(text: str, bounds: list[tuple[int, int]], pos: int, terms: list[str]) -> bool:
    a, b = clause_of(bounds, pos)
    squeezed = normalise_name(text[a:b])
    return any(t in squeezed for t in terms)


def guessable(fact: Fact) -> bool:
    """A value a guess could hit: a single digit or syllable, a bare small number, a negative phrase."""
    raw = normalise_name(str(fact.value))
    if negative(fact):
        return True
    if fact.kind in ("number", "count"):
        try:
            v = float(str(fact.value).replace(",", ""))
        except ValueError:
            return True
        return fact.unit is None or (v.is_integer() and abs(v) < 10)
    hangul = re.findall(r"[가-힣]", raw)
    digit = bool(re.search(r"\d", raw))
    return len(raw) <= 1 or (digit and len(hangul) <= 1 and len(raw) <= 3) or bool(re.fullmatch(r"\d{1,2}", raw))
