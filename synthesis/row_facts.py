"""The facts a final answer states about a response: per row the fields that answer a question (with their
labels, units and coded values in words), per table its lowest and highest values, each as the Fact it must state
and the phrase that states it."""

from __future__ import annotations

import re
from typing import Any

from graph.concepts import AIR_GRADES, KMA_CATEGORIES, KMA_CODES, answer_label, field_unit, norm
from graph.models import ToolRecord
from graph.transforms import SIDO_SHORT
from synthesis.facts import UNITS, Fact
from synthesis.korean import clean_value, short_description

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
        written = _fmt_num(v, unit)
        return Fact("number", v, tolerance=0.0, unit=_judged_unit(unit), label=label), f"{label} {written}{unit or ''}"
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


def table_facts(items: list[dict[str, Any]]) -> tuple[list[tuple[Fact, str]], str]:
    """An observation or forecast over the shown rows: per category its value, or its range over the hours
    shown; coded categories in words. Returns the facts with phrases and the time span ("15시~17시")."""
    by_cat: dict[str, list[tuple[str, str]]] = {}
    for row in items:
        cat = str(row.get("category"))
        value = row.get("fcstValue", row.get("obsrValue"))
        if cat in KMA_CATEGORIES and value not in (None, ""):
            when = str(row.get("fcstTime") or row.get("baseTime") or "")
            by_cat.setdefault(cat, []).append((when, str(value).strip()))
    hours = sorted({w for vs in by_cat.values() for w, _ in vs if w})
    span = (
        (f"{int(hours[0][:2])}시" if len(hours) == 1 else f"{int(hours[0][:2])}시~{int(hours[-1][:2])}시")
        if hours
        else ""
    )
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
