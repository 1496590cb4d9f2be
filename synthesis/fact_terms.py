"""A fact an answer must state, and the terms it is stated in: the labels that name what it answers (and
their synonyms), whether a clause names them, whether a guess could hit its value, and the hedges that make an
answer non-committal."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from graph.concepts import ANSWER_FIELDS, KMA_CATEGORIES, norm
from synthesis.answer_values import PUNCT, clause_of, nfkc, normalise_name, prepare_text

KINDS = ("number", "text", "date", "count", "name")

#: Words that name a label in other words (how Korean answers say these things).
LABEL_SYNONYMS: dict[str, tuple[str, ...]] = {
    "기온": ("온도", "최고", "최저", "낮", "아침"),
    "노선": ("버스", "번"),
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
}
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

#: Hedges that fail any answer: uncertainty about the answer, or a retraction after it.
_UNCERTAIN = re.compile(
    r"모르겠|모릅니다|몰라요|잘 모르|확실하지 않|확실치 않|불확실|정확하지 "
    r"않을 수|정확하지 않습니다|틀릴 수|추정치|추측|아마(?:도)?\s"
    r"|(?:인|일|한|는) 것 같|일 수도|수도 있습니다|일지도|보장할 수 없|장담할 수 없|참고(?:만|용으로만)"
    r"|not sure|don't know|do not know|uncertain|might be|maybe|probably",
    re.I,
)
_RETRACT = re.compile(
    r"(?:하지만|그러나|다만|그런데|however|but)\s*,?[^.!?\n]{0,40}?"
    r"(?:수\s*(?:가|는|도)?\s*없|없습니다|없어요|못\s*했|못합니다|않습니다|않아요|아닙니다|아닐 "
    r"수|cannot|can't|unable)",
    re.I,
)
#: Statements that the information could not be found: hedges unless the facts are about missing data.
_INABLE = re.compile(
    r"(?:확인|조회|찾|검색|알|제공|답변|파악|안내|말씀|드리|얻|가져오|가져올|볼|드릴)[가-힣]{0,4}\s*수\s*(?:가|는|도)?\s*없"
    r"|(?:찾|확인|조회|검색|가져오|얻|파악하)지\s*못|못\s*(?:찾|했|합니다|해요)"
    r"|(?:정보|자료|데이터|결과|내용|답)(?:가|이|은|는|을|를|도)?\s*(?:없|존재하지 "
    r"않|확인되지 않|조회되지 않|제공되지 않|나오지 않)"
    r"|제공하지 않|지원하지 않|제공되지 않|불가능|어렵습니다|cannot|can't|unable|not found|no data|not available",
    re.I,
)
_NEGATIVE_VALUE = re.compile(r"없|않|아니|아님|못|불일치")
MODAL = re.compile(r"수\s*(?:가|는|도)?\s*$")


_LIMIT_LABEL = re.compile(r"없|않|아니|아님|못|불일치|미등록|만 제공|까지")


def negative(fact: Fact) -> bool:
    """A fact whose value says something is missing (`없`, `등록되지 않`)."""
    return fact.kind == "text" and bool(_NEGATIVE_VALUE.search(str(fact.value)))


def about_missing(fact: Fact) -> bool:
    """A fact about missing data or a provider's limit (`자료 없음`, `최근 3일만 제공`): its answer may say what
    cannot be looked up."""
    return negative(fact) or (fact.kind == "text" and bool(_LIMIT_LABEL.search(fact.label)))


def hedge(answer: str, facts: list[Fact]) -> str:
    """The hedge that makes the answer non-committal, or ''."""
    text = nfkc(answer)
    for rx in (_UNCERTAIN, _RETRACT):
        m = rx.search(text)
        if m:
            return m.group().strip()
    if any(about_missing(f) for f in facts):
        return ""  # an answer about missing data may say it could not be found
    m = _INABLE.search(text)
    return m.group().strip() if m else ""


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
