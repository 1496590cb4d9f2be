"""The facts a final answer states about a response: per row the fields that answer a question (with their
labels, units and coded values in words), per table its lowest and highest values, each as the Fact it must state
and the phrase that states it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from graph.concepts import AIR_GRADES, KMA_CATEGORIES, KMA_CODES, answer_label, field_unit, norm, param_role
from graph.models import ToolRecord
from graph.transforms import SIDO_SHORT
from synthesis.answer_values import UNITS
from synthesis.fact_terms import Fact
from synthesis.korean import clean_value, short_description
from synthesis.routes import entity_name_fields, is_area_field

#: How many answering fields of one row an answer states (and the quality check expects).
ANSWER_MAX = 4
# ---------------------------------------------------------------------------------------------- questions and facts

_ADDRESS_LABEL = re.compile(r"(주소|위치|소재지|시도|시군구|읍면동)")
_HHMM = re.compile(r"^([01]\d|2[0-3])([0-5]\d)$")
NUMERIC = re.compile(r"^-?[\d,]+(\.\d+)?$")
CODE_NAME = re.compile(r"(cd|code|id|seq|sn|no|pk|yn|gb|tp|x|y|pos|lati|long|lat|lon)$")
#: Units of answering fields whose document writes none in parentheses.
_FIELD_UNITS = {
    "floor": "층",
    "grndflrcnt": "층",
    "kaptdacnt": "세대",
    "parkqty": "대",
    "drtotcnt": "명",
    "intervaltime": "분",
    "arrprevstationcnt": "정류장",
    "dealamount": "만원",
    "deposit": "만원",
    "monthlyrent": "만원",
    "totarea": "㎡",
    "excluusear": "㎡",
}


def label_of(key: str, desc: str) -> str:
    return answer_label(key, desc) or short_description(desc).split("(")[0].strip() or key


def _unit_of(key: str, desc: str) -> str | None:
    unit = (
        field_unit(desc)
        or _FIELD_UNITS.get(norm(key), "")
        or ("명" if re.search(r"(인구|인원|가입자\s*수|인구수)", desc) else "")
    )
    m = re.search(r"\(([^()]*)\)", desc)
    if not unit and m and m.group(1).strip() in ("cm", "m", "km", "명", "개", "원", "세대", "kg", "t"):
        unit = m.group(1).strip()
    return unit or None


def _judged_unit(unit: str | None) -> str | None:
    """A unit as the judge reads it (`synthesis.facts.UNITS`); another one is written but not required."""
    return unit if unit in UNITS else None


def number_of(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _fmt_num(v: float, unit: str | None = None) -> str:
    if v.is_integer():
        return f"{int(v):,}" if unit in ("원", "만원") else str(int(v))
    return f"{v:g}"


def _duration(seconds: float) -> str:
    """A count of seconds as a person says it: minutes and seconds from a minute on (769 → `12분 49초`, 780 →
    `13분`), the judge reading the two units as one figure."""
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}분 {rest}초" if rest else f"{minutes}분"


def field_fact(key: str, value: Any, desc: str) -> tuple[Fact, str] | None:
    """One answering field as (fact, phrase the answer writes): numbers with their unit, dates in Korean, codes
    decoded (grades into words), clock times as HH:MM."""
    text = clean_value(value)
    label = label_of(key, desc)
    n = norm(key)
    if not text or text in ("-", "N", "Y") or len(text) > 80:
        return None
    if n.endswith("grade") or n.endswith("grade1h"):
        word = AIR_GRADES.get(text)
        return (Fact("text", word, label=label), f"{label} {word}") if word else None
    if re.fullmatch(r"(19|20)\d{6}", text) and re.search(r"(일자|일$|date|dd$|de$|dt$)", f"{desc} {n}"):
        iso = f"{text[:4]}-{text[4:6]}-{text[6:]}"
        return Fact("date", iso, label=label), f"{label} {text[:4]}년 {int(text[4:6])}월 {int(text[6:])}일"
    if re.fullmatch(r"(19|20)\d{2}(0[1-9]|1[0-2])", text) and re.search(r"(연월|년월|ym$)", f"{desc} {n}"):
        month = f"{text[:4]}년 {int(text[4:])}월"
        return Fact("text", month, label=label), f"{label} {month}"
    if _HHMM.match(text) and re.search(r"(시각|시간|start|end|time)", f"{desc} {n}"):
        hhmm = f"{text[:2]}:{text[2:]}"
        return Fact("text", hhmm, label=label), f"{label} {hhmm}"
    if NUMERIC.match(text) and not CODE_NAME.search(n):
        v = number_of(text)
        if v is None or len(text.replace(",", "").split(".")[0].lstrip("-")) > 9:
            return None  # a timestamp or an identifier, not a quantity
        unit = _unit_of(key, desc)
        written = _fmt_num(v, unit) + (unit or "")
        if unit == "초" and v.is_integer() and v >= 60:  # a time documented in seconds is said in minutes
            written = _duration(v)
        return Fact("number", v, tolerance=0.0, unit=_judged_unit(unit), label=label), f"{label} {written}"
    if NUMERIC.match(text) or ("코드" in desc and "명" not in desc):
        return None  # a code is not an answer
    kind = (
        "name"
        if re.search(r"(nm|name|title|명)$", n)
        or label.endswith(("명", "이름"))
        or any(long in text for long in SIDO_SHORT)
        or _ADDRESS_LABEL.search(label)
        else "text"
    )
    return Fact(kind, text, label=label), f"{label} {text}"


def row_facts(row: dict[str, Any], tool: ToolRecord, skip: set[str]) -> list[tuple[Fact, str]]:
    """The facts one row answers: fields with an answering label first, then other described scalar fields; a
    code whose name field is also in the row gives way to the name; values the user gave are not facts."""
    desc = {f.name: f.description for f in tool.fields}
    keys = [k for k in row if answer_label(k) is not None] + [k for k in row if answer_label(k) is None]
    out: list[tuple[Fact, str]] = []
    for k in keys:
        v = row[k]
        if isinstance(v, bool) or not isinstance(v, str | int | float) or k in skip:
            continue
        if norm(k).endswith(("cd", "code")) and any(norm(o) in (norm(k) + "nm", norm(k)[:-2] + "nm") for o in row):
            continue
        if answer_label(k) is None and not desc.get(k) and tool.fields:
            continue
        got = field_fact(k, v, desc.get(k, ""))
        if got is None or any(got[0].label == f.label for f, _ in out):
            continue
        out.append(got)
        if len(out) == ANSWER_MAX:
            break
    return out


def row_subject(
    row: dict[str, Any], tool: ToolRecord, novel: Callable[[Any], bool], facts: list[tuple[Fact, str]]
) -> tuple[Fact, str] | None:
    """What a row answer is about when the user did not name it: the number a person knows the row by (a bus's
    노선번호; a field a person names things by that is not a name, an area, an address or a date), when the row
    gives one the user did not give and the facts do not already state; None otherwise."""
    desc = {f.name: f.description for f in tool.fields}
    names = set(entity_name_fields(tool))
    for k, v in row.items():
        text = clean_value(v) if isinstance(v, str | int) and not isinstance(v, bool) else ""
        if (
            not text
            or k in names
            or answer_label(k) is None
            or param_role(k, desc.get(k, "")) != "user"
            or is_area_field(k, desc.get(k, ""))
            or _ADDRESS_LABEL.search(label_of(k, desc.get(k, "")))
            or re.search(r"(일자|date|dt$|ymd$)", f"{desc.get(k, '')} {norm(k)}")
        ):
            continue
        if not novel(v) or any(clean_value(f.value) == text for f, _ in facts):
            return None
        label = label_of(k, desc.get(k, ""))
        return Fact("name", text, label=label), f"{label} {text}"
    return None


def _when(row: dict[str, Any]) -> tuple[str, str]:
    """A forecast or observation row's (date, HHMM)."""
    return str(row.get("fcstDate") or row.get("baseDate") or ""), str(row.get("fcstTime") or row.get("baseTime") or "")


def window(hours: list[tuple[str, str]], days: bool = False) -> str:
    """The hours of some rows as an answer states them: `15시`, `15시~17시`, and across days (or with `days`, when
    other rows of the answer run into another day) each end with its day of the month (`7일 21시~8일 2시`, never
    `0시~23시` for rows from 21시 to 2시)."""
    keys = sorted({h for h in hours if h[1][:2].isdigit()})
    if not keys:
        return ""
    (d0, t0), (d1, t1) = keys[0], keys[-1]
    dated = (days or d0 != d1) and d0[6:8].isdigit() and d1[6:8].isdigit()
    first = f"{int(d0[6:8])}일 {int(t0[:2])}시" if dated else f"{int(t0[:2])}시"
    if len(keys) == 1:
        return first
    return f"{first}~{int(d1[6:8])}일 {int(t1[:2])}시" if dated and d1 != d0 else f"{first}~{int(t1[:2])}시"


def windowed(items: list[dict[str, Any]], fs: list[tuple[Fact, str]]) -> tuple[str, str, list[str]]:
    """How an answer over a table states its hours, each category over exactly the hours whose rows the shown table
    holds for it (a trimmed table can show SKY at 9 and 10시 only and T1H to 14시): (the window all stated
    categories share, '' when they differ; the window over all of them, for the request; the phrases, each
    category's first one led by its own window when they differ)."""
    hours: dict[str, list[tuple[str, str]]] = {}
    for row in items:
        cat = str(row.get("category"))
        if cat in KMA_CATEGORIES and row.get("fcstValue", row.get("obsrValue")) not in (None, ""):
            hours.setdefault(KMA_CATEGORIES[cat][0], []).append(_when(row))

    def base(fact: Fact) -> str:
        return fact.label.replace("최저 ", "").replace("최고 ", "")

    labels = list(dict.fromkeys(base(f) for f, _ in fs))
    days = len({d for label in labels for d, _ in hours.get(label, [])}) > 1
    own = {label: window(hours.get(label, []), days) for label in labels}
    union = window([h for label in labels for h in hours.get(label, [])])
    if len(set(own.values())) <= 1:
        return union, union, [p for _, p in fs if p]
    phrases, led = [], set()
    for f, p in fs:
        if p and base(f) not in led and own[base(f)]:
            led.add(base(f))
            p = f"{own[base(f)]} {p}"
        if p:
            phrases.append(p)
    return "", union, phrases


def table_facts(items: list[dict[str, Any]]) -> tuple[list[tuple[Fact, str]], str]:
    """An observation or forecast over the shown rows: per category its value, or its range over the hours
    shown; coded categories in words. Returns the facts with phrases and the time span over all of them
    ("15시~17시"; `category_windows` gives each category's own)."""
    by_cat: dict[str, list[tuple[str, str]]] = {}
    hours: list[tuple[str, str]] = []
    for row in items:
        cat = str(row.get("category"))
        value = row.get("fcstValue", row.get("obsrValue"))
        if cat in KMA_CATEGORIES and value not in (None, ""):
            by_cat.setdefault(cat, []).append((_when(row)[1], str(value).strip()))
            hours.append(_when(row))
    span = window(hours)
    out: list[tuple[Fact, str]] = []
    for cat, values in by_cat.items():
        label, unit = KMA_CATEGORIES[cat]
        if cat in KMA_CODES:
            words = list(dict.fromkeys(KMA_CODES[cat].get(v, "") for _, v in values if KMA_CODES[cat].get(v)))
            if words:
                out.append((Fact("text", words[0], label=label), f"{label} {'·'.join(words)}"))
            continue
        nums = [x for x in (number_of(v) for _, v in values) if x is not None]
        if not nums:
            continue
        u = _judged_unit(unit or None)
        lo, hi = min(nums), max(nums)
        if lo == hi:
            out.append((Fact("number", lo, unit=u, label=label), f"{label} {_fmt_num(lo)}{unit}"))
        else:  # each end in its own clause with its label: a range in one clause offers two values for one fact
            out.append((Fact("number", lo, unit=u, label=f"최저 {label}"), f"최저 {label} {_fmt_num(lo)}{unit}"))
            out.append((Fact("number", hi, unit=u, label=f"최고 {label}"), f"최고 {label} {_fmt_num(hi)}{unit}"))
    return out, span
