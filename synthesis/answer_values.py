"""Reading values out of an answer's text, before any fact is compared: normalised names (특별시/광역시 short
forms, no company suffixes), numbers in every common Korean form with the unit written after them, clauses, and
negations after a value."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from graph.transforms import SIDO_SHORT

#: Units: canonical name -> (family, scale to the family's base unit, spellings after a number).
UNITS: dict[str, tuple[str, float, tuple[str, ...]]] = {
    "℃": ("temp", 1.0, ("℃", "°c", "° c", "°", "도", "c")),
    "%": ("pct", 1.0, ("%", "퍼센트", "프로", "percent")),
    "원": ("money", 1.0, ("원", "won", "krw")),
    "만원": ("money", 1e4, ("만원", "만 원")),
    "천원": ("money", 1e3, ("천원", "천 원")),
    "억원": ("money", 1e8, ("억원", "억 원")),
    "㎍/㎥": ("conc", 1.0, ("㎍/㎥", "µg/m³", "μg/m³", "ug/m3", "ug/㎥", "㎍/m³", "㎍/m3", "마이크로그램")),
    "ppm": ("ppm", 1.0, ("ppm",)),
    "km": ("length", 1000.0, ("km", "㎞", "킬로미터", "킬로", "kilometers", "kilometres", "kilometer")),
    "m": ("length", 1.0, ("m", "미터", "meters", "metres", "meter", "metre")),
    "cm": ("length", 0.01, ("cm", "㎝", "센티미터", "센티")),
    "mm": ("length", 0.001, ("mm", "㎜", "밀리미터", "밀리")),
    "m/s": ("speed", 1.0, ("m/s", "㎧", "미터/초")),
    "kg": ("mass", 1000.0, ("kg", "㎏", "킬로그램")),
    "g": ("mass", 1.0, ("g", "그램")),
    "mg": ("mass", 1e-3, ("mg", "㎎", "밀리그램")),
    "㎡": ("area", 1.0, ("㎡", "m²", "m2", "제곱미터")),
    "시간": ("duration", 60.0, ("시간", "hours", "hour", "hrs")),
    "분": ("duration", 1.0, ("분", "minutes", "minute", "mins", "min")),
    "초": ("duration", 1 / 60, ("초", "seconds", "second", "secs", "sec")),
    "kA": ("current", 1.0, ("ka",)),
    "deg": ("angle", 1.0, ("deg",)),
    "건": (
        "counter",
        1.0,
        (
            "건",
            "개",
            "곳",
            "명",
            "대",
            "군데",
            "가지",
            "종류",
            "종",
            "과목",
            "개소",
            "도시",
            "단지",
            "캡슐",
            "알",
            "정",
            "departments",
            "listings",
            "stations",
            "spots",
            "sales",
        ),
    ),
    "세대": ("household", 1.0, ("세대", "가구", "호")),
    "동": ("building", 1.0, ("동", "개동", "개 동")),
    "층": ("floor", 1.0, ("층", "개 층", "개층")),
    "정거장": ("stops", 1.0, ("정거장", "정류장", "정류소", "개 정류장", "개 정류소", "역", "stops", "stop")),
}
for _name in ("곳", "개", "명", "대"):
    UNITS[_name] = UNITS["건"]
#: Kept for readers of the old table: every spelling per canonical unit.
UNIT_ALIASES: dict[str, tuple[str, ...]] = {k: v[2] for k, v in UNITS.items()}
_SPELLINGS = sorted(
    ((unicodedata.normalize("NFKC", s).lower(), k) for k, v in UNITS.items() for s in v[2]), key=lambda x: -len(x[0])
)

#: An answer with more numbers than max(DUMP_MIN, DUMP_FACTOR × facts) is a dump, not an answer.

# ---------------------------------------------------------------------------------------------- normalising

PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


def nfkc(s: Any) -> str:
    return unicodedata.normalize("NFKC", str(s))


#: Common shortenings written for the official word (부가세 for 부가가치세).
_ABBREVIATIONS = {"부가세": "부가가치세"}
#: Counts written as words: native Korean standing alone (하나, 둘) and English (one ... twelve).
_WORD_COUNTS = {
    "하나": 1,
    "둘": 2,
    "셋": 3,
    "넷": 4,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_WORD_COUNT_RX = re.compile(
    r"(?<![가-힣a-z])(하나|둘|셋|넷)(?=[뿐만이가도요예입\s.,!]|$)|\b("
    + "|".join(k for k in _WORD_COUNTS if k.isascii())
    + r")\b"
)


#: The 시도 as English answers write them (Revised Romanization), read as their Korean short forms.
_SIDO_ENGLISH = {
    "seoul": "서울",
    "busan": "부산",
    "daegu": "대구",
    "incheon": "인천",
    "gwangju": "광주",
    "daejeon": "대전",
    "ulsan": "울산",
    "sejong": "세종",
    "gyeonggi": "경기",
    "gangwon": "강원",
    "chungbuk": "충북",
    "chungnam": "충남",
    "jeonbuk": "전북",
    "jeonnam": "전남",
    "gyeongbuk": "경북",
    "gyeongnam": "경남",
    "jeju": "제주",
}
_SIDO_ENGLISH_RX = re.compile(r"\b(" + "|".join(_SIDO_ENGLISH) + r")\b(?:\s(?:city|metropolitan city|province))?")


def prepare_text(text: str) -> str:
    """NFKC, lower case, 특별시/광역시/도 names in their short form (English ones too: `Incheon`), no company
    suffixes, common shortenings spelt out."""
    out = nfkc(text).lower()
    out = _SIDO_ENGLISH_RX.sub(lambda m: _SIDO_ENGLISH[m.group(1)], out)
    for long, short in SIDO_SHORT.items():
        out = out.replace(long, short)
    for short, long in _ABBREVIATIONS.items():
        out = out.replace(short, long)
    return out.replace("주식회사", "").replace("(주)", "").replace("㈜", "")


def normalise_name(s: str) -> str:
    """Lower-case NFC text without spaces or punctuation, with 특별시/광역시/도 names in their short form."""
    return PUNCT.sub("", prepare_text(s))


def normalise_text(s: str) -> str:
    return PUNCT.sub("", nfkc(s).lower())


def squeeze(text: str) -> tuple[str, list[int]]:
    """The text without spaces and punctuation, and the offset in `text` of each kept character."""
    chars: list[str] = []
    pos: list[int] = []
    for i, ch in enumerate(text):
        if not PUNCT.fullmatch(ch):
            chars.append(ch)
            pos.append(i)
    return "".join(chars), pos


# ---------------------------------------------------------------------------------------------- numbers

_MAG = {"억": 1e8, "만": 1e4, "천": 1e3, "백": 1e2}
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
#: a number, optionally followed by Korean magnitudes (`5억 2,340만`, `1억 5천만`, `3천`) and the ones written right
#: after the last of them (`1천144`, `1만2,000`)
_AMOUNT = re.compile(
    rf"(?<![\d.,a-z])-?(?:{_NUM})(?:\s?[억만천백]+(?:\s?(?:{_NUM})\s?[억만천백]+)*(?:(?<=[억만천백])(?:{_NUM}))?)?"
)
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
_TENS = {
    "열": 10,
    "스물": 20,
    "스무": 20,
    "서른": 30,
    "마흔": 40,
    "쉰": 50,
    "예순": 60,
    "일흔": 70,
    "여든": 80,
    "아흔": 90,
}
_NATIVE_RX = re.compile(
    r"(?<![가-힣])((?:열|스물|서른|마흔|쉰|예순|일흔|여든|아흔)\s?(?:하나|한|둘|두|셋|세|넷|네|다섯|여섯|일곱|여덟|아홉)"
    r"|다섯|여섯|일곱|여덟|아홉|스무|서른|마흔|쉰|예순|일흔|여든|아흔|한|두|세(?!대|가구)|네|열)"
    r"\s?(?=곳|개|건|명|대|군데|가지|정거장|정류장|정류소|번째|세대|가구|층|동|과목|노선|종류|개소|채|단지|도시|즉|,|\.|$)"
)
#: Sino-Korean numerals with a place (`천칠`, `천백사십사`, `십`, `삼십`) before a unit or counter: `천칠 세대`,
#: `십 분`, `삼십 퍼센트` (a bare digit word such as 이 or 사 is too often a particle or a syllable to count).
_SINO = re.compile(
    r"(?<![가-힣\d,.])((?:[이삼사오육칠팔구]?만\s?)?(?:[이삼사오육칠팔구]?천)?(?:[이삼사오육칠팔구]?백)?(?:[이삼사오육칠팔구]?십)?"
    r"[일이삼사오육칠팔구]?)(?<=[십백천만일이삼사오육칠팔구])"
    r"\s?(?=\S)"
)
_SINO_DIGIT = {"일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9}
_SINO_PLACE = {"십": 10, "백": 100, "천": 1000}


def _sino_value(word: str) -> float:
    total = section = 0
    digit = 0
    for ch in word.replace(" ", ""):
        if ch in _SINO_DIGIT:
            digit = _SINO_DIGIT[ch]
        elif ch in _SINO_PLACE:
            section += (digit or 1) * _SINO_PLACE[ch]
            digit = 0
        elif ch == "만":
            total += (section + digit or 1) * 10000
            section = digit = 0
    return float(total + section + digit)


def _native_value(word: str) -> float:
    """The value of a native Korean count word (`서른두` is 32)."""
    word = word.replace(" ", "")
    for tens, v in _TENS.items():
        if word.startswith(tens):
            rest = word[len(tens) :]
            unit = _WORD_COUNTS.get(rest, _NATIVE.get(rest, 0))
            return float(v + unit)
    return float(_NATIVE.get(word, 0))


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


#: An English count: a figure followed (within two words) by a plural noun (`2 monitoring stations`, `14 cars`),
#: other than the nouns of measures and of time.
_EN_COUNTED = re.compile(r"\s(?:[a-z][a-z-]*\s){0,2}?([a-z]{2,}s)\b")
_EN_NOT_COUNTERS = frozenset(
    {
        "days",
        "weeks",
        "months",
        "years",
        "times",
        "percent",
        "degrees",
        "meters",
        "metres",
        "kilometers",
        "kilometres",
        "km",
        "minutes",
        "hours",
        "seconds",
        "mins",
        "hrs",
        "secs",
        "points",
        "units",
        "its",
        "is",
        "was",
        "has",
        "this",
        "thus",
        "plus",
        "less",
        "yes",
    }
)


#: English magnitudes after a figure (`256.9 million`, `1.6 billion won`).
EN_MAGNITUDES = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_EN_MAGNITUDE = re.compile(r"\s?(thousand|million|billion)\b")


def _english_counter(text: str, end: int) -> str:
    m = _EN_COUNTED.match(text, end)
    if m and m.group(1) not in _EN_NOT_COUNTERS and text[m.start() + 1 : m.start() + 3] not in ("in", "of"):
        return "건"
    if re.match(r"\s?(?:in total|in all|altogether)\b", text[end : end + 12]):
        return "건"  # `(2 in total)`: a count of what the sentence lists
    return ""


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
        scale = _EN_MAGNITUDE.match(text, end) if not korean else None
        if scale:  # `₩256.9 million`, `1.624 billion won`: scaled, rounded at the magnitude written
            value, korean, end = value * EN_MAGNITUDES[scale.group(1)], True, scale.end()
        unit, _ = unit_at(text, end)
        if not unit and re.search(r"₩\s?$", text[max(0, m.start() - 2) : m.start()]):
            unit = "원"
        if unit == "m" and re.search(r"초속\s*$", text[max(0, m.start() - 4) : m.start()]):
            unit = "m/s"  # 초속 2.1m (미터) is a speed
        if not unit and not korean and float(value).is_integer():
            unit = _english_counter(text, end)
        out.append(Mention(-value if neg else value, m.start(), end, unit, decimals, korean))
    for m in _WORD_COUNT_RX.finditer(text):
        word = m.group(1) or m.group(2)
        unit, _ = unit_at(text, m.end())
        unit = unit or (_english_counter(text, m.end()) if m.group(2) else "")
        out.append(Mention(float(_WORD_COUNTS[word]), m.start(), m.end(), unit, 0, False))
    for m in _NATIVE_RX.finditer(text):
        value = _native_value(m.group(1))
        unit, _ = unit_at(text, m.end())
        out.append(Mention(value, m.start(), m.end(), unit, 0, False))
    for m in _SINO.finditer(text):
        word = m.group(1)
        if not word or not re.search(r"[십백천만]", word) or word.strip() == "만":
            continue
        unit, _ = unit_at(text, m.end())
        if unit:  # a numeral word counts only with a unit or counter after it (`십이 ㎍/㎥`, `삼십 분`)
            out.append(Mention(_sino_value(word), m.start(), m.end(), unit, 0, False))
    return _compound_durations(text, sorted(out, key=lambda x: x.start))


def _compound_durations(text: str, ms: list[Mention]) -> tuple[Mention, ...]:
    """A duration written in two units is one figure in the smaller (`5분 45초` is 345초, `1시간 20분` is 80분)."""
    out: list[Mention] = []
    for m in ms:
        last = out[-1] if out else None
        if (
            last is not None
            and (last.unit, m.unit) in (("시간", "분"), ("분", "초"))
            and last.value >= 0
            and last.value.is_integer()
            and 0 <= m.value < 60
            and re.fullmatch(r"\s?", text[unit_at(text, last.end)[1] : m.start])
        ):
            out[-1] = Mention(last.value * 60 + m.value, last.start, m.end, m.unit, m.decimals, False)
            continue
        out.append(m)
    return tuple(out)


def numbers_in(text: str) -> list[float]:
    """Every number in the text: 1,234.5, -3, Korean 억/만/천 amounts (in 원 when written so) and native counts."""
    return [m.value for m in mentions(nfkc(text).lower())]


def in_base_unit(value: float, unit: str) -> tuple[str, float]:
    family, scale, _ = UNITS.get(unit, (unit, 1.0, ()))
    return family, value * scale


def unit_family(unit: str | None) -> str:
    return UNITS[unit][0] if unit and unit in UNITS else (unit or "")


# ---------------------------------------------------------------------------------------------- clauses

_SPLIT = re.compile(
    r"(?<!\d)[.](?!\d)|(?<=\d)[.](?=\s|$)|[!?;\n|/·]|,(?!\d{3})|(?:이고|이며|이고요|하고|하며)(?=\s)|(?<=[있없높낮많적좋쁘])고(?=\s)|\s그리고\s|\s및\s"
)


def clauses(text: str) -> list[tuple[int, int]]:
    """(start, end) of the clauses of the text; a clause holding only a bare value joins the one before (an
    enumeration of candidates is one clause)."""
    bounds: list[tuple[int, int]] = []
    lines: list[bool] = [False]  # whether the clause starts a sentence or a line (a list item is its own clause)
    start = 0
    for m in _SPLIT.finditer(text):
        if m.group() == "/" and re.match(r"[a-z³㎥m]", text[m.end() : m.end() + 1] or " ", re.I):
            continue  # ㎍/㎥, m/s
        if (
            m.group() == "·"
            and re.search(r"[가-힣a-z]$", text[start : m.start()])
            and not re.search(r"\d", text[start : m.start()])
        ):
            continue  # `서울·인천 둘 다 12.6도`: names joined before the value they share
        bounds.append((start, m.start()))
        lines.append(m.group() in ("\n", ".", "!", "?"))
        start = m.end()
    bounds.append((start, len(text)))
    bare = [_bare(text[a:b]) for a, b in bounds]
    merged: list[tuple[int, int]] = []
    for i, (a, b) in enumerate(bounds):
        if merged and (bare[i] or bare[i - 1]) and not lines[i]:
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


def clause_of(bounds: list[tuple[int, int]], pos: int) -> tuple[int, int]:
    for a, b in bounds:
        if a <= pos <= b:
            return a, b
    return 0, 0


_NEGATED = re.compile(
    r"^\s*(?:[)\]]\s*)?(?:\(?(?:이|가|은|는|도|까지|만|이라|라)\)?)*\s*(?:(?:하|되)(?:지|진|지는)\s*)?"
    r"(?:아니|아닌|아님|아닙|않|없|not\b|안\s*(?:해|돼|되|함|됨))"
)


def negated_at(text: str, end: int) -> bool:
    return bool(_NEGATED.match(text[end : end + 12]))
