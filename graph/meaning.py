"""What a field or parameter means beyond its name: the noun phrase its Korean description starts with
("행정동코드 10자리 (시군구 또는 읍면동)" → 행정동코드), the field an odcloud condition names
(`cond[사업자등록번호::EQ]` → 사업자등록번호), the date format it documents or shows, the example a description gives,
and the constant prefix of observed codes ("DT_0012" → "DT_" + 4 digits).

Korean public API documents name parameters tersely or opaquely (`p1`, `stnCd`, `ObsCode`) but describe them in
Korean; odcloud (api.odcloud.kr) exposes filters as `cond[<Korean column>::<OP>]`. These signals propose links;
only execution decides them.
"""

from __future__ import annotations

import re
from typing import Any

from graph.regions import place_names

_COND = re.compile(r"^cond\[(.+?)::[A-Z]+\]$")
_CLAUSE = re.compile(r"[(（,.;:·\[]")
_DIGITS_WORD = re.compile(r"\d+\s*자리|\d+")
#: Words too generic to mean anything alone.
GENERIC = {
    "코드",
    "번호",
    "이름",
    "명칭",
    "구분",
    "여부",
    "값",
    "정보",
    "목록",
    "검색",
    "조회",
    "기준",
    "입력",
    "필수",
    "선택",
    "페이지",
    "결과",
    "건수",
    "수",
    "예",
    "자리",
    "문자열",
    "항목",
}
DATE_WORDS = ("일자", "날짜", "일시", "date", "dt", "ymd", "연월일", "연월", "년월", "연도", "년도")
#: Short date words that count only as a whole word of a name (stdrYm, opnDe, solYear), never inside another word.
DATE_TOKENS = {"dt", "de", "ymd", "ym", "yyyymm", "yyyymmdd", "year", "month", "day", "date", "tm", "dtm", "locdate"}
_MONTH = r"(0[1-9]|1[0-2])"
_DAY = r"(0[1-9]|[12]\d|3[01])"
#: Shapes of observed date values, finest first; digit-only shapes count only for a field named or described as a
#: date (a six-digit code is no month).
_FORMATS = (
    ("YYYY-MM-DD HH:MM", re.compile(rf"^(19|20)\d\d-{_MONTH}-{_DAY}[ T]\d\d:\d\d(:\d\d)?$"), False),
    ("YYYY-MM-DD", re.compile(rf"^(19|20)\d\d-{_MONTH}-{_DAY}$"), False),
    ("YYYYMMDDHHMM", re.compile(rf"^(19|20)\d\d{_MONTH}{_DAY}([01]\d|2[0-3])[0-5]\d$"), True),
    ("YYYYMMDDHH", re.compile(rf"^(19|20)\d\d{_MONTH}{_DAY}([01]\d|2[0-3])$"), True),
    ("YYYYMMDD", re.compile(rf"^(19|20)\d\d{_MONTH}{_DAY}$"), True),
    ("YYYYMM", re.compile(rf"^(19|20)\d\d{_MONTH}$"), True),
)
#: Format words a description states, longest first (YYYYMMDD before YYYYMM before YYYY; MM and DD alone).
_STATED = (
    ("YYYYMMDDHHMM", "YYYYMMDDHHMM"),
    ("YYYYMMDDHH", "YYYYMMDDHH"),
    ("YYYY-MM-DD HH:MM", "YYYY-MM-DD HH:MM"),
    ("YYYY-MM-DD", "YYYY-MM-DD"),
    ("YYYYMMDD", "YYYYMMDD"),
    ("YYYY-MM", "YYYY-MM"),
    ("YYYYMM", "YYYYMM"),
    ("YYYY", "YYYY"),
    ("MM", "MM"),
    ("DD", "DD"),
)
#: A part of a date by the words of a name or description (KASI solYear/solMonth, 연도/월/일).
_PART_WORDS = (("YYYY", ("year", "연도", "년도")), ("MM", ("month", "월 (", "월(")), ("DD", ("day", "일 (", "일(")))
_PREFIXED = re.compile(r"^([A-Za-z]+[_-])(\d+)$")
_LETTERED = re.compile(r"^([A-Z]{1,2})(\d{4,})$")
_EXAMPLE = re.compile(r"(?:예\s*[:)]|예시\s*[:)]|e\.g\.|ex\)|ex:)\s*([^\s,)]+)", re.IGNORECASE)


def condition_column(name: str) -> str | None:
    """The column an odcloud condition parameter filters on: cond[사업자등록번호::EQ] → 사업자등록번호."""
    m = _COND.match(name)
    return m.group(1) if m else None


def phrases(name: str, description: str) -> set[str]:
    """Meaning keys: the leading noun phrase of the description (spaces removed), its last word when specific,
    a Korean name itself, and the column of an odcloud condition."""
    out: set[str] = set()
    column = condition_column(name)
    for text in (column, name if re.search(r"[가-힣]", name) and column is None else None):
        if text and len(text) >= 3:
            out.add(re.sub(r"\s+", "", text))
    first = _CLAUSE.split(description or "", maxsplit=1)[0]
    first = _DIGITS_WORD.sub(" ", first).strip()
    if re.search(r"[가-힣]", first):
        words = [w for w in first.split() if re.search(r"[가-힣]", w)]
        joined = "".join(words)
        if len(joined) >= 3 and joined not in GENERIC:
            out.add(joined)
        if words and len(words[-1]) >= 4 and words[-1] not in GENERIC:
            out.add(words[-1])
    return out


def korean_words(description: str) -> set[str]:
    """Specific Korean words of a description's first clause (관측소, 법인등록번호, …)."""
    first = _CLAUSE.split(description or "", maxsplit=1)[0]
    return {w for w in re.findall(r"[가-힣]{2,}", first) if w not in GENERIC}


def described_example(description: str) -> str | None:
    m = _EXAMPLE.search(description or "")
    return m.group(1).strip(".;:'\"") if m else None


def _name_words(name: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return {w for w in re.split(r"[^0-9a-zA-Z]+", spaced.lower()) if w}


def is_date(name: str, description: str, fmt: str | None = None) -> bool:
    """A field or parameter that holds a date or a part of one, by its description, format or a whole word of its
    name (stdrYm, opnDe, solYear; not `symbol`)."""
    text = f"{description} {fmt or ''}".lower()
    if any(w in text for w in DATE_WORDS) or any(w in f"{description} {fmt or ''}".upper() for w, _ in _STATED[:7]):
        return True
    return bool(_name_words(name) & DATE_TOKENS) or "date" in name.lower()


def stated_format(text: str) -> str | None:
    """The date format words a text states (YYYYMMDD, YYYY-MM-DD, YYYYMMDDHH, YYYYMM, YYYY, MM, DD), if any."""
    upper = (text or "").upper()
    for word, fmt in _STATED:
        if len(word) <= 2:
            if re.search(rf"(?<![A-Z]){word}(?![A-Z])", upper):
                return fmt
        elif word in upper:
            return fmt
    return None


def date_format(
    description: str, fmt: str | None, pattern: str | None, samples: list[str], name: str = ""
) -> str | None:
    """The date format a field or parameter documents (its description or schema format), its pattern implies or
    its values show; for a parameter that states none, the date part its name or description names (solYear:
    YYYY, solMonth: MM)."""
    stated = stated_format(f"{description} {fmt or ''}")
    if stated:
        return stated
    if pattern and pattern.strip("^$") in (r"[0-9]{8}", r"\d{8}"):
        return "YYYYMMDD"
    if pattern and pattern.strip("^$") in (r"[0-9]{6}", r"\d{6}"):
        return "YYYYMM"
    values = [str(s).strip() for s in samples if str(s).strip()][:6]
    dated = is_date(name, description, fmt) if name else True
    for fmt_name, rx, digits_only in _FORMATS:
        if values and all(rx.match(v) for v in values) and (dated or not digits_only):
            return fmt_name
    if name and not values:
        # the part a name names comes first: reqMonth "월 (2자리, 생략 시 그 연도 전체)" is a month, whatever
        # else its description mentions
        named = _name_words(name)
        for part, words in _PART_WORDS:
            if words[0] in named:
                return part
        text = f"{name} {description}".lower()
        for part, words in _PART_WORDS:
            if any(w in text for w in words) and any(w in description for w in words):
                return part
    return None


#: Observed values of a part of a date: a year (1900-2099), a month (1-12), a day (1-31), written with or without
#: the leading zero (RTMS dealMonth "9", dealDay "5").
_PART_VALUES = (
    ("YYYY", re.compile(r"^(19|20)\d\d$")),
    ("MM", re.compile(r"^(0?[1-9]|1[0-2])$")),
    ("DD", re.compile(r"^(0?[1-9]|[12]\d|3[01])$")),
)


def date_part(name: str, description: str, samples: list[str]) -> str | None:
    """The part of a date a field holds (YYYY, MM, DD): its name names the part (dealYear, fiscalYear, dealMonth; a
    year also by 연도/년도 in its description) and every observed value is one (2026; 9 or 09). None for a whole
    date or anything else."""
    values = [str(s).strip() for s in samples if str(s).strip()][:12]
    if not values:
        return None
    named = _name_words(name)
    for part, rx in _PART_VALUES:
        word, *korean = dict(_PART_WORDS)[part]
        said = word in named or (part == "YYYY" and any(w in description for w in korean))
        if said and all(rx.match(v) for v in values):
            return part
    return None


def common_prefix(samples: list[str]) -> str | None:
    """The constant letters-and-separator prefix of observed codes ("DT_0012", "DT_0001" → "DT_"), or the constant
    letters before digits of one width ("K123456", "K234567" → "K": a listed security's short code, written
    "123456" where its prices are listed)."""
    values = [s for s in samples if s][:12]
    if len(values) < 2:
        return None
    prefixes = {m.group(1) for m in (_PREFIXED.match(v) for v in values) if m}
    if len(prefixes) == 1 and all(_PREFIXED.match(v) for v in values):
        return prefixes.pop()
    lettered = [_LETTERED.match(v) for v in values]
    if all(lettered) and len({(m.group(1), len(m.group(2))) for m in lettered if m}) == 1:
        return next(m.group(1) for m in lettered if m)
    return None


_PAREN = re.compile(r"[(（]([^()（）]*)[)）]")
_PAIR = re.compile(r"^\s*([0-9A-Za-z]{1,6})\s*[:=]\s*([^:=]+?)\s*$")
_OPEN_LIST = re.compile(r"\.\.\.|…|참고|별첨|etc|(?<![가-힣])(등|외)(?![가-힣])", re.IGNORECASE)


def code_table(description: str) -> dict[str, str] | None:
    """The codes a description lists as a whole table in parentheses, each with its label ("권역코드 (31: 수도권,
    32: 강원권, 33: 충청권)" → {"31": "수도권", ...}): at least two entries, every comma-separated item a `code:
    label` pair, nothing saying the list goes on ("...", "등", "별첨 참고"). None when there is no such table."""
    for m in _PAREN.finditer(description or ""):
        inner = m.group(1)
        if _OPEN_LIST.search(inner):
            continue
        items = [i for i in re.split(r"[,，]", inner) if i.strip()]
        pairs = [_PAIR.match(i) for i in items]
        if len(items) >= 2 and all(pairs):
            return {pm.group(1): pm.group(2) for pm in pairs if pm}
    return None


_PLACE_CODE = re.compile(r"(?<![0-9A-Za-z])([0-9]{2,10})\s*[:=]?\s*([가-힣]+)")


def place_codes(description: str) -> dict[str, str]:
    """The codes a description gives with the place each one codes ("시도코드 (예: 110000 서울, 220000 인천, 250000
    대전)" → {"110000": "서울", ...}): digits followed by a 시도 or 시군구 name, at least two of them, else empty. An
    agency that numbers places its own way documents its codes so, and those are codes of places where its data
    lies."""
    pairs = {m.group(1): m.group(2) for m in _PLACE_CODE.finditer(description or "") if m.group(2) in place_names()}
    return pairs if len(pairs) >= 2 else {}


def example_of(example: Any, description: str) -> str | None:
    if example not in (None, "") and not isinstance(example, list | dict):
        return str(example)
    return described_example(description)


#: A provider's way of saying that some optional filter must be given (code 11 in words).
NEEDS_FILTER = ("하나 이상", "하나는 필수", "중 하나", "필수입니다", "필수값", "at least one", "one of", "mandatory")
#: Words by which a description says what the call returns without this filter ("없으면 시도 목록").
NARROWS = ("없으면", "미입력", "생략 시", "생략시", "if absent", "if omitted")


def narrows(description: str) -> bool:
    """A filter documented as narrowing the result (without it the provider returns another level)."""
    text = (description or "").lower()
    return any(w in text for w in NARROWS)


def needs_filter(summary: str, description: str) -> bool:
    text = f"{summary} {description}".lower()
    return any(w in text for w in NEEDS_FILTER)
