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
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any

from graph.concepts import ANSWER_FIELDS, KMA_CATEGORIES, norm

KINDS = ("number", "text", "date", "count", "name")

SIDO_LONG = {
    "서울특별시": "서울",
    "부산광역시": "부산",
    "대구광역시": "대구",
    "인천광역시": "인천",
    "광주광역시": "광주",
    "대전광역시": "대전",
    "울산광역시": "울산",
    "세종특별자치시": "세종",
    "경기도": "경기",
    "강원특별자치도": "강원",
    "강원도": "강원",
    "충청북도": "충북",
    "충청남도": "충남",
    "전북특별자치도": "전북",
    "전라북도": "전북",
    "전라남도": "전남",
    "경상북도": "경북",
    "경상남도": "경남",
    "제주특별자치도": "제주",
}

#: Units: canonical name -> (family, scale to the family's base unit, spellings after a number).
UNITS: dict[str, tuple[str, float, tuple[str, ...]]] = {
    "℃": ("temp", 1.0, ("℃", "°c", "° c", "°", "도", "c")),
    "%": ("pct", 1.0, ("%", "퍼센트", "프로")),
    "원": ("money", 1.0, ("원",)),
    "만원": ("money", 1e4, ("만원", "만 원")),
    "천원": ("money", 1e3, ("천원", "천 원")),
    "억원": ("money", 1e8, ("억원", "억 원")),
    "㎍/㎥": ("conc", 1.0, ("㎍/㎥", "µg/m³", "μg/m³", "ug/m3", "ug/㎥", "㎍/m³", "㎍/m3", "마이크로그램")),
    "ppm": ("ppm", 1.0, ("ppm",)),
    "km": ("length", 1000.0, ("km", "㎞", "킬로미터", "킬로")),
    "m": ("length", 1.0, ("m", "미터")),
    "cm": ("length", 0.01, ("cm", "㎝", "센티미터", "센티")),
    "mm": ("length", 0.001, ("mm", "㎜", "밀리미터", "밀리")),
    "m/s": ("speed", 1.0, ("m/s", "㎧", "미터/초")),
    "㎡": ("area", 1.0, ("㎡", "m²", "m2", "제곱미터")),
    "시간": ("duration", 60.0, ("시간",)),
    "분": ("duration", 1.0, ("분",)),
    "초": ("duration", 1 / 60, ("초",)),
    "kA": ("current", 1.0, ("ka",)),
    "deg": ("angle", 1.0, ("deg",)),
    "건": ("counter", 1.0, ("건", "개", "곳", "명", "대", "군데", "가지", "종")),
    "세대": ("household", 1.0, ("세대", "가구", "호")),
    "동": ("building", 1.0, ("동", "개동", "개 동")),
    "층": ("floor", 1.0, ("층",)),
    "정거장": ("stops", 1.0, ("정거장", "정류장", "정류소", "개 정류장", "개 정류소", "역")),
}
for _name in ("곳", "개", "명", "대"):
    UNITS[_name] = UNITS["건"]
#: Kept for readers of the old table: every spelling per canonical unit.
UNIT_ALIASES: dict[str, tuple[str, ...]] = {k: v[2] for k, v in UNITS.items()}
_SPELLINGS = sorted(
    ((unicodedata.normalize("NFKC", s).lower(), k) for k, v in UNITS.items() for s in v[2]), key=lambda x: -len(x[0])
)

#: An answer with more numbers than max(DUMP_MIN, DUMP_FACTOR × facts) is a dump, not an answer.
DUMP_MIN = 12
DUMP_FACTOR = 3
#: Values of a fact's unit family beyond the facts of that family that an answer may add (other hours, a daily
#: maximum) before it is a dump of candidates.
UNIT_SLACK = 3

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


# ---------------------------------------------------------------------------------------------- normalising

_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


def _nfkc(s: Any) -> str:
    return unicodedata.normalize("NFKC", str(s))


def _prepare(text: str) -> str:
    """NFKC, lower case, 특별시/광역시/도 names in their short form, no company suffixes."""
    out = _nfkc(text).lower()
    for long, short in SIDO_LONG.items():
        out = out.replace(long, short)
    return out.replace("주식회사", "").replace("(주)", "").replace("㈜", "")


def normalise_name(s: str) -> str:
    """Lower-case NFC text without spaces or punctuation, with 특별시/광역시/도 names in their short form."""
    return _PUNCT.sub("", _prepare(s))


def _normalise_text(s: str) -> str:
    return _PUNCT.sub("", _nfkc(s).lower())


def _squeeze(text: str) -> tuple[str, list[int]]:
    """The text without spaces and punctuation, and the offset in `text` of each kept character."""
    chars: list[str] = []
    pos: list[int] = []
    for i, ch in enumerate(text):
        if not _PUNCT.fullmatch(ch):
            chars.append(ch)
            pos.append(i)
    return "".join(chars), pos


# ---------------------------------------------------------------------------------------------- numbers

_MAG = {"억": 1e8, "만": 1e4, "천": 1e3, "백": 1e2}
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
#: a number, optionally followed by Korean magnitudes (`5억 2,340만`, `1억 5천만`, `3천`)
_AMOUNT = re.compile(rf"(?<![\d.,a-z])-?(?:{_NUM})(?:\s?[억만천백]+(?:\s?(?:{_NUM})\s?[억만천백]+)*)?")
_NATIVE = {
    "한": 1,
    "두": 2,
    "세": 3,
    "네": 4,
    "다섯": 5,
    "여섯": 6,
    "일곱": 7,
    "여덟": 8,
    "아홉": 9,
    "열": 10,
    "스무": 20,
}
_NATIVE_RX = re.compile(
    r"(?<![가-힣])(열\s?[한두세네]|열다섯|열여섯|열일곱|열여덟|열아홉|다섯|여섯|일곱|여덟|아홉|스무|한|두|세|네|열)"
    r"\s?(?=곳|개|건|명|대|군데|가지|정거장|정류장|정류소|번째|세대|가구|층|동\b)"
)


@dataclass(frozen=True)
class Mention:
    """A number written in the answer: its value (in the unit written), where, the unit after it, its precision."""

    value: float
    start: int
    end: int
    unit: str = ""
    decimals: int = 0
    korean: bool = False  # written with 억/만/천 (already scaled)


def _korean_amount(text: str) -> tuple[float, int, bool] | None:
    """Value, decimals and whether Korean magnitudes were used, of `5억 2,340만`, `1억 5천만`, `82,500`."""
    tokens = re.findall(rf"{_NUM}|[억만천백]", text.replace(" ", ""))
    if not tokens:
        return None
    total = section = 0.0
    current: float | None = None
    korean = False
    decimals = 0
    for tok in tokens:
        if tok in _MAG:
            korean = True
            mag = _MAG[tok]
            if mag >= 1e4:
                section += current if current is not None else (0.0 if section else 1.0)
                total += section * mag
                section = 0.0
            else:
                section += (current if current is not None else 1.0) * mag
            current = None
        else:
            current = float(tok.replace(",", ""))
            decimals = len(tok.split(".")[1]) if "." in tok else 0
    value = total + section + (current or 0.0)
    return value, (decimals if not korean else 0), korean


def unit_at(text: str, end: int) -> tuple[str, int]:
    """The canonical unit written right after offset `end` (one space allowed), and where it ends."""
    rest = text[end : end + 16]
    skip = len(rest) - len(rest.lstrip(" "))
    if skip > 1:
        return "", end
    low = rest[skip:].lower()
    for spelling, unit in _SPELLINGS:
        if low.startswith(spelling):
            after = low[len(spelling) : len(spelling) + 1]
            if spelling.isascii() and spelling[-1].isalpha() and after.isascii() and after.isalpha():
                continue  # `cm` is not `c`, `ms` is not `m`
            if spelling in ("°", "c") and after.isalpha():
                continue
            return unit, end + skip + len(spelling)
    return "", end


def mentions(text: str) -> list[Mention]:
    """Every number written in the (NFKC) text with the unit after it."""
    return list(_mentions(text))


@lru_cache(maxsize=512)
def _mentions(text: str) -> tuple[Mention, ...]:
    out: list[Mention] = []
    for m in _AMOUNT.finditer(text):
        raw = m.group()
        neg = raw.startswith("-")
        parsed = _korean_amount(raw.lstrip("-"))
        if parsed is None:
            continue
        value, decimals, korean = parsed
        end = m.end()
        unit, _ = unit_at(text, end)
        out.append(Mention(-value if neg else value, m.start(), end, unit, decimals, korean))
    for m in _NATIVE_RX.finditer(text):
        word = m.group(1).replace(" ", "")
        value = float(_NATIVE.get(word, 0) or (10 + _NATIVE.get(word[1:], 0) if word.startswith("열") else 0))
        unit, _ = unit_at(text, m.end())
        out.append(Mention(value, m.start(), m.end(), unit, 0, False))
    return tuple(sorted(out, key=lambda x: x.start))


def numbers_in(text: str) -> list[float]:
    """Every number in the text: 1,234.5, -3, Korean 억/만/천 amounts (in 원 when written so) and native counts."""
    return [m.value for m in mentions(_nfkc(text).lower())]


def _in_base(value: float, unit: str) -> tuple[str, float]:
    family, scale, _ = UNITS.get(unit, (unit, 1.0, ()))
    return family, value * scale


def _family(unit: str | None) -> str:
    return UNITS[unit][0] if unit and unit in UNITS else (unit or "")


# ---------------------------------------------------------------------------------------------- dates and times

_ISO = re.compile(r"(?<![0-9])(\d{4})\s*[-./]\s*(\d{1,2})\s*[-./]\s*(\d{1,2})(?![0-9])")
_COMPACT = re.compile(r"(?<![0-9])((?:19|20)\d{2})(\d{2})(\d{2})(?![0-9])")
_SHORT_YEAR = re.compile(r"(?<![0-9.])(\d{2})\.(\d{1,2})\.(\d{1,2})(?![0-9])")
_KOREAN = re.compile(r"(?:(\d{4})\s*년\s*)?(\d{1,2})\s*월\s*(\d{1,2})\s*일")


def _mkdate(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except ValueError:
        return None


def date_spans(text: str, default_year: int | None = None) -> list[tuple[date, int, int]]:
    """(date, start, end) of every date written in the text."""
    return list(_date_spans(text, default_year))


@lru_cache(maxsize=512)
def _date_spans(text: str, default_year: int | None) -> tuple[tuple[date, int, int], ...]:
    text = _nfkc(text)
    found: list[tuple[date, int, int]] = []
    taken: list[tuple[int, int]] = []
    for rx in (_ISO, _COMPACT, _KOREAN, _SHORT_YEAR):
        for m in rx.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            if rx is _KOREAN:
                year = int(m.group(1)) if m.group(1) else default_year
                if year is None:
                    continue
            elif rx is _SHORT_YEAR:
                year = 2000 + int(m.group(1))
            else:
                year = int(m.group(1))
            d = _mkdate(year, int(m.group(2)), int(m.group(3)))
            if d:
                found.append((d, m.start(), m.end()))
                taken.append((m.start(), m.end()))
    return tuple(sorted(found, key=lambda x: x[1]))


def dates_in(text: str, default_year: int | None = None) -> set[date]:
    """Dates written as 2026-10-15, 2026.10.15, 2026/10/15, 20261015, 2026년 10월 15일, 26.10.15 or (with a default
    year) 10월 15일."""
    return {d for d, _, _ in date_spans(text, default_year)}


def as_date(value: Any) -> date | None:
    """A date from a fact value: a date, or text in any form `dates_in` reads (the first one)."""
    if isinstance(value, date):
        return value
    found = sorted(dates_in(str(value)))
    return found[0] if found else None


_TIME_VALUE = re.compile(r"^(?:([01]\d|2[0-4]):?([0-5]\d))$")
_CLOCK = re.compile(r"(?<![\d:])([01]?\d|2[0-4]):([0-5]\d)(?![\d:])")
_HOUR = re.compile(r"(오전|오후|아침|새벽|낮|저녁|밤|am|pm)?\s*(\d{1,2})\s*시(?!간)(?:\s*(반|(\d{1,2})\s*분))?")
_RAW_TIME = re.compile(r"(?<![\d.,:])([01]\d|2[0-3])([0-5]\d)(?![\d:]|[.,]\d)")


def time_values(value: Any) -> list[int] | None:
    """The minutes after midnight of a time fact value (`1300`, `13:00`, `09:00~18:00`), or None."""
    text = _nfkc(value).strip()
    parts = [p.strip() for p in re.split(r"\s*[~\-–]\s*", text) if p.strip()]
    if not parts or len(parts) > 2:
        return None
    out = []
    for p in parts:
        m = _TIME_VALUE.match(p)
        if not m:
            return None
        out.append(int(m.group(1)) * 60 + int(m.group(2)))
    return out


def time_spans(text: str) -> list[tuple[set[int], int, int]]:
    """(possible minutes after midnight, start, end) of every time written in the text: a bare 12-hour `1시` may be
    either half of the day."""
    return [(set(m), a, b) for m, a, b in _time_spans(text)]


@lru_cache(maxsize=512)
def _time_spans(text: str) -> tuple[tuple[frozenset[int], int, int], ...]:
    text = _nfkc(text).lower()
    out: list[tuple[set[int], int, int]] = []
    for m in _CLOCK.finditer(text):
        out.append(({int(m.group(1)) * 60 + int(m.group(2))}, m.start(), m.end()))
    for m in _HOUR.finditer(text):
        h = int(m.group(2))
        if h > 24:
            continue
        minute = 30 if m.group(3) == "반" else int(m.group(4) or 0)
        period = m.group(1)
        if period in ("오후", "저녁", "밤", "pm") and h < 12:
            hours = {h + 12}
        elif period in ("오전", "아침", "새벽", "am"):
            hours = {0 if h == 12 else h}
        elif period == "낮":
            hours = {h if h >= 11 else h + 12}
        else:
            hours = {h, h + 12} if h < 12 else {h}
        out.append(({x * 60 + minute for x in hours}, m.start(), m.end()))
    for word, minutes in (("정오", 12 * 60), ("자정", 0)):
        for m in re.finditer(word, text):
            out.append(({minutes, 24 * 60} if word == "자정" else {minutes}, m.start(), m.end()))
    for m in _RAW_TIME.finditer(text):
        if not any(a <= m.start() < b for _, a, b in out):
            out.append(({int(m.group(1)) * 60 + int(m.group(2))}, m.start(), m.end()))
    return tuple((frozenset(m), a, b) for m, a, b in sorted(out, key=lambda x: x[1]))


# ---------------------------------------------------------------------------------------------- clauses

_SPLIT = re.compile(
    r"(?<!\d)[.](?!\d)|[!?;\n|/·]|,(?!\d{3})|(?:이고|이며|이고요|하고|하며)(?=\s)|(?<=[있없높낮많적좋쁘])고(?=\s)|\s그리고\s|\s및\s"
)


def clauses(text: str) -> list[tuple[int, int]]:
    """(start, end) of the clauses of the text; a clause holding only a bare value joins the one before (an
    enumeration of candidates is one clause)."""
    bounds: list[tuple[int, int]] = []
    start = 0
    for m in _SPLIT.finditer(text):
        if m.group() == "/" and re.match(r"[a-z³㎥m]", text[m.end() : m.end() + 1] or " ", re.I):
            continue  # ㎍/㎥, m/s
        bounds.append((start, m.start()))
        start = m.end()
    bounds.append((start, len(text)))
    bare = [_bare(text[a:b]) for a, b in bounds]
    merged: list[tuple[int, int]] = []
    for i, (a, b) in enumerate(bounds):
        if merged and (bare[i] or bare[i - 1]):
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def _bare(segment: str) -> bool:
    """A clause holding a value and nothing that names it (`14도`, `10월 9일`, `또는 15도`)."""
    if not re.search(r"\d", segment):
        return False
    rest = segment
    for m in reversed(mentions(segment)):
        rest = rest[: m.start] + " " + rest[unit_at(segment, m.end)[1] :]
    rest = re.sub(r"(년|월|일|시|분|중|또는|혹은|아니면|이나|거나|쯤|정도|약|입니다|이에요|예요|요)", "", rest)
    return len(re.sub(r"[^\w]|\d|_", "", rest)) < 2


def _clause_of(bounds: list[tuple[int, int]], pos: int) -> tuple[int, int]:
    for a, b in bounds:
        if a <= pos <= b:
            return a, b
    return 0, 0


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
_MODAL = re.compile(r"수\s*(?:가|는|도)?\s*$")


_LIMIT_LABEL = re.compile(r"없|않|아니|아님|못|불일치|미등록|만 제공|까지")


def _negative(fact: Fact) -> bool:
    """A fact whose value says something is missing (`없`, `등록되지 않`)."""
    return fact.kind == "text" and bool(_NEGATIVE_VALUE.search(str(fact.value)))


def _about_missing(fact: Fact) -> bool:
    """A fact about missing data or a provider's limit (`자료 없음`, `최근 3일만 제공`): its answer may say what
    cannot be looked up."""
    return _negative(fact) or (fact.kind == "text" and bool(_LIMIT_LABEL.search(fact.label)))


def hedge(answer: str, facts: list[Fact]) -> str:
    """The hedge that makes the answer non-committal, or ''."""
    text = _nfkc(answer)
    for rx in (_UNCERTAIN, _RETRACT):
        m = rx.search(text)
        if m:
            return m.group().strip()
    if any(_about_missing(f) for f in facts):
        return ""  # an answer about missing data may say it could not be found
    m = _INABLE.search(text)
    return m.group().strip() if m else ""


_NEGATED = re.compile(
    r"^\s*(?:[)\]]\s*)?(?:\(?(?:이|가|은|는|도|까지|만|이라|라)\)?)*\s*(?:아니|아닌|아님|아닙|않|없|not\b)"
)


def _negated(text: str, end: int) -> bool:
    return bool(_NEGATED.match(text[end : end + 12]))


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


def _label_terms(fact: Fact) -> list[str]:
    value = normalise_name(str(fact.value))
    terms: list[str] = []
    for label in labels_of(fact):
        whole = normalise_name(label)
        if whole and whole != value:
            terms.append(whole)
        for word in re.split(r"[\s()\[\],:/·]+", _prepare(label)):
            w = _PUNCT.sub("", word)
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


def _in_context(text: str, bounds: list[tuple[int, int]], pos: int, terms: list[str]) -> bool:
    a, b = _clause_of(bounds, pos)
    squeezed = normalise_name(text[a:b])
    return any(t in squeezed for t in terms)


def _guessable(fact: Fact) -> bool:
    """A value a guess could hit: a single digit or syllable, a bare small number, a negative phrase."""
    raw = normalise_name(str(fact.value))
    if _negative(fact):
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


# ---------------------------------------------------------------------------------------------- matching


def _fact_number(fact: Fact) -> float | None:
    try:
        return float(str(fact.value).replace(",", ""))
    except ValueError:
        return None


def _number_matches(m: Mention, value: float, fact: Fact) -> bool:
    unit = fact.unit if fact.kind == "number" else None
    if unit:
        if not m.unit or _family(m.unit) != _family(unit):
            return False
        _, got = _in_base(m.value, m.unit)
        _, want = _in_base(value, unit)
        scale = UNITS.get(m.unit, ("", 1.0, ()))[1]
    elif fact.kind == "count":
        if m.unit and _family(m.unit) not in ("counter", "household", "building", "floor", "stops", fact.unit or ""):
            return False
        got, want, scale = m.value, value, 1.0
    else:
        if m.unit and _family(m.unit) in ("money", "length", "duration") and m.korean:
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
    terms = _label_terms(fact)
    need_label = bool(fact.label) or _guessable(fact)
    if need_label and not terms:
        return False
    others = [f for f in facts if f is not fact and f.kind in ("number", "count")]
    literal = {v for f in facts if f is not fact and f.kind in ("name", "text") and (v := _fact_number(f)) is not None}
    for m in ms:
        if not _number_matches(m, value, fact) or _negated(text, unit_at(text, m.end)[1]):
            continue
        if not m.unit and re.match(r"\s?(번째|번\s?째|위|등)", text[m.end : m.end + 4]):
            continue  # an ordinal or a rank, not a quantity
        if _inside_date_or_time(text, m):
            continue
        if need_label and not _in_context(text, bounds, m.start, terms):
            continue
        a, b = _clause_of(bounds, m.start)
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
            and _family(o.unit) != _family(m.unit)
            and abs(o.value - m.value) < 1e-9
        ]
        if rivals or _ranged(text, m):
            continue
        return True
    return False


def _same_kind(m: Mention, fact: Fact) -> bool:
    if fact.kind == "number" and fact.unit:
        return bool(m.unit) and _family(m.unit) == _family(fact.unit)
    if fact.kind == "count":
        return _family(m.unit) in ("counter", "household", "building", "floor", "stops") or not m.unit
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
        [(a, b) for _, a, b in _date_spans(text, None)] + [(a, b) for _, a, b in _time_spans(text) if ":" in text[a:b]]
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
    squeezed, pos = _squeeze(prepared)
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
        if _MODAL.search(prepared[max(0, m.start() - 6) : m.start()]):
            continue
        a, _ = _clause_of(bounds, m.start())
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
            if not ok or _negated(prepared, end):
                continue
            lo, hi = _clause_of(bounds, a0)
            if any(lo <= a <= hi and not mins & set(times) for mins, a, _ in spans):
                continue  # another time offered for the same thing
            return True
        return False
    needle = normalise_name(raw) if fact.kind == "name" else _normalise_text(raw)
    if not needle:
        return False
    terms = _label_terms(fact)
    guessable = _guessable(fact)
    if guessable and not terms:
        return False
    if needle in ("없", "않") or (_negative(fact) and len(needle) <= 2):
        return bool(_absence_hit(prepared, bounds, terms))
    hits = _span_hits(prepared, needle, prepared)
    if not _negative(fact) and any(_negated(prepared, b) for _, b in hits):
        return False  # the answer says it is not so (somewhere)
    for a, _ in hits:
        if guessable and not _in_context(prepared, bounds, a, terms):
            continue
        if (
            _negative(fact)
            and _MODAL.search(prepared[max(0, a - 6) : a]) is None
            and "수" in needle
            and not _in_context(prepared, bounds, a, terms)
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
        if d != wanted or _negated(prepared, b):
            continue
        lo, hi = _clause_of(bounds, a)
        if any(o != wanted and lo <= s <= hi for o, s, _ in spans):
            continue
        return True
    return False


def fact_hit(answer: str, fact: Fact, facts: list[Fact] | None = None) -> bool:
    """Whether the answer commits to this fact (`facts`: the whole set, whose other values are not rivals)."""
    prepared = _prepare(answer)
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
    prepared = _prepare(answer)
    if _JSON.search(prepared):
        return "raw JSON pasted from a result"
    limit = max(DUMP_MIN, DUMP_FACTOR * len(facts))
    every = mentions(prepared)
    if len(every) > 4 * limit + 40:  # far past any date or time it could hold
        return f"{len(every)} numbers for {len(facts)} facts"
    ms = [m for m in every if not _inside_date_or_time(prepared, m)]
    if len(ms) > limit:
        return f"{len(ms)} numbers for {len(facts)} facts"
    for fam in {_family(f.unit) for f in facts if f.kind == "number" and f.unit}:
        own = [f for f in facts if f.kind == "number" and _family(f.unit) == fam]
        values = {round(_in_base(m.value, m.unit)[1], 6) for m in ms if m.unit and _family(m.unit) == fam}
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
    label = fact.label or (labels_of(fact)[0] if labels_of(fact) and (_guessable(fact) or not fact.unit) else "")
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
