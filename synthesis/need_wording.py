"""The words of a need (synthesis.needs): what a person asks of a row or a table (never how the API files it),
the need's wording filled with the user's entity and time (particles fitted), the facts a need asks that the user
does not know yet, the need a final step's answer fits, and for a tool no need covers the field-meaning fallback
(what a field means in plain words, never an API label)."""

from __future__ import annotations

import random
import re
from typing import Any

from graph.concepts import ANSWER_FIELDS, KMA_CATEGORIES, norm
from graph.models import ToolRecord
from synthesis.fact_terms import Fact
from synthesis.korean import clean_value, ro, short_description
from synthesis.korean import fmt_value as fmt_value
from synthesis.korean import has_batchim as has_batchim
from synthesis.korean import josa as josa
from synthesis.korean import verb as verb
from synthesis.needs import Need, category_labels, field_keys, matches_meaning
from synthesis.row_facts import (
    ANSWER_MAX,
    NUMERIC,
    field_fact,
    label_of,
)

#: Answering fields of a state that holds now and changes within the hour (air measured this hour, a bus on its way).
NOW_FIELDS = {"pm10value", "pm25value", "khaivalue", "o3value", "arrtime", "arrprevstationcnt"}
#: An opening about going out today: it fits only a question about conditions now (weather, air, a bus coming).

#: Words of labels that name how an API files a value rather than what a person asks (`직전과세유형메세지`,
#: `사업자등록번호`, `구분`): such a field is asked only when nothing else is.
FILING_WORDS = re.compile(r"코드|메세지|메시지|여부|구분|번호|일련|식별|유형명?$|순번|서열|최하위|최상위|ID|Id|id")


#: Words of labels that name a system identifier (an ID, a code, coordinates): never what a person asks.
SYSTEM_WORDS = re.compile(r"ID|Id|id|코드|좌표|격자")


def askable(label: str) -> bool:
    return len(label.replace(" ", "")) <= 8 and not FILING_WORDS.search(label)


def base_label(fact: Fact) -> str:
    """A forecast fact's label without the end of its range (`최저 기온` -> `기온`)."""
    return fact.label.replace("최저 ", "").replace("최고 ", "")


def what_is_asked(
    fs: list[tuple[Fact, str]], labels: list[str], rnd: random.Random, earlier: frozenset[str] = frozenset()
) -> tuple[list[tuple[Fact, str]], list[str]]:
    """The one to three things a person asks of a row or a forecast, drawn among what it answers (not the first
    fields of the response), preferring what people ask by name over how the API files it, and not what an earlier
    step of the route already gives (`earlier`: their goals, such as the address a lookup started from); the
    answer then states exactly those (in the response's order)."""
    names = list(dict.fromkeys(labels))
    fresh = [x for x in names if askable(x) and not any(e and e in x for e in earlier)]
    preferred = fresh or [x for x in names if askable(x)] or [x for x in names if not SYSTEM_WORDS.search(x)]
    if not preferred:
        return [], []  # a row that answers only with system identifiers answers nothing a person asks
    k = min(len(preferred), rnd.choice([1, 2, 2, 3]))
    chosen = set(rnd.sample(preferred, k))
    kept = [(f, p) for f, p in fs if base_label(f) in chosen]
    return kept or fs[:1], [x for x in names if x in chosen] or labels[:1]


#: Particles a wording may attach to a slot (`{entity:이랑}`), each with its form after a final consonant and without.
PARTICLES = {
    "은": ("은", "는"),
    "는": ("은", "는"),
    "이": ("이", "가"),
    "가": ("이", "가"),
    "을": ("을", "를"),
    "를": ("을", "를"),
    "과": ("과", "와"),
    "와": ("과", "와"),
    "이랑": ("이랑", "랑"),
    "랑": ("이랑", "랑"),
    "이야": ("이야", "야"),
    "야": ("이야", "야"),
}
SLOT = re.compile(r"\{(\w+)(?::([^{}]*))?\}(\S*)")
POLITE = re.compile(r"(요|니다|세요|습니까|시오|까요)[?.!]*$")


def fill(template: str, values: dict[str, str]) -> str:
    """A wording with its slots filled: `{entity}`, `{entity:이랑}` (the particle fitted to the value), `{when}`,
    `{span}`; an empty slot leaves out what is attached to it (`{entity}에서` with no entity). A value the
    wording has no slot for leads the sentence (`{when}` as "2026년 9월 기준으로")."""

    def repl(m: re.Match[str]) -> str:
        value = values.get(m.group(1), "")
        if not value and m.group(1) == "entity" and (m.group(2) or m.group(3)):
            value = values.get("again", "")  # said in an earlier sentence: "거기에 있는 아파트"
        if not value:
            return ""
        particle = m.group(2) or ""
        if particle in ("로", "으로"):
            return ro(value) + m.group(3)
        if particle in PARTICLES:
            return josa(value, *PARTICLES[particle]) + m.group(3)
        return value + particle + m.group(3)

    lead = []
    if values.get("entity") and "{entity" not in template:
        lead.append(values["entity"])
    if values.get("when") and "{when" not in template:
        lead.append(f"{values['when']} 기준으로")
    text = " ".join([*lead, SLOT.sub(repl, template)])
    return re.sub(r"근처 (근처|인근)", "근처", re.sub(r"\s+", " ", text)).strip()


def time_of(tool: ToolRecord, ask: str, span: str) -> str:
    """Whether a final step's answer is about now (an observation of one hour, air measured now, a bus on its
    way) or later (a forecast over hours); `any` for other rows."""
    if ask == "table":
        return "later" if "~" in span else "now"
    return "now" if {norm(f.name) for f in tool.fields} & NOW_FIELDS else "any"


def novel(value: Any, given: set[str]) -> bool:
    """A value the user's own words do not already hold (a name inside the address they typed answers nothing);
    short and numeric values count only when given whole."""
    text = clean_value(value)
    return text not in given and (len(text) < 2 or bool(NUMERIC.match(text)) or text not in " ".join(given))


def need_row_facts(need: Need, tool: ToolRecord, row: dict[str, Any], given: set[str]) -> list[tuple[Fact, str]]:
    """The facts a row gives for every entry of the need's `asks` (and the fields of its meaning), in the row's
    order; empty when one entry gives none (the need is not what this row answers), and a value the user's own
    words already hold answers nothing ("적선동 아파트 무슨 동에 있어?")."""
    desc = {f.name: f.description for f in tool.fields}

    def new(value: Any) -> bool:
        return novel(value, given)

    keys: list[str] = []
    for ask in need.asks:
        found = [k for k in field_keys(tool, ask) if k in row and new(row[k])]
        stated = [k for k in found if field_fact(k, row[k], desc.get(k, "")) is not None]
        if not stated:
            return []
        keys.extend(stated)
    if need.meaning or need.concepts:
        meant = [k for k in row if matches_meaning(need, k, desc.get(k, "")) and new(row[k])]
        if not meant and not need.asks:
            return []
        keys.extend(meant)
    out: list[tuple[Fact, str]] = []
    for k in row:
        got = field_fact(k, row[k], desc.get(k, "")) if k in keys else None
        if got is not None and not any(got[0].label == f.label for f, _ in out):
            out.append(got)
    return out[:ANSWER_MAX]


def need_table_facts(need: Need, fs: list[tuple[Fact, str]]) -> list[tuple[Fact, str]]:
    """The facts of an observation or forecast a need asks: every `asks` entry's category among them, else
    nothing."""
    labels = [category_labels(a) for a in need.asks]
    have = {base_label(f) for f, _ in fs}
    if not labels or any(not ls or not set(ls) & have for ls in labels):
        return []
    wanted = {x for ls in labels for x in ls}
    return [(f, p) for f, p in fs if base_label(f) in wanted]


def matching(
    needs: tuple[Need, ...] | list[Need],
    tool: ToolRecord,
    shape: str,
    time: str,
    fs: list[tuple[Fact, str]],
    row: dict[str, Any] | None,
    given: set[str],
    labels: list[str],
) -> list[tuple[Need, list[tuple[Fact, str]]]]:
    """The needs a final step's answer fits, each with the facts it states."""
    out = []
    for need in needs:
        if shape not in need.shape or (need.time != "any" and need.time != time) or not need.fits_tool(tool):
            continue
        if shape == "table":
            got = need_table_facts(need, fs)
        elif shape == "row":
            got = need_row_facts(need, tool, row, given) if row is not None else []
        elif shape == "highest":
            desc = {f.name: f.description for f in tool.fields}
            rank = [label_of(k, desc.get(k, "")) for k in field_keys(tool, need.rank)]
            got = fs if labels and labels[0] in rank else []
        else:  # count, list, pair: the rows are what the need is about
            got = fs
        if got:
            out.append((need, got))
    return out


def fallback(
    tool: ToolRecord, fs: list[tuple[Fact, str]], rnd: random.Random, earlier: frozenset[str]
) -> tuple[list[tuple[Fact, str]], list[str]]:
    """For an API no need covers: one or two things a row or table answers, asked by what the field means in plain
    words (its documented meaning, `meaning_of`, else its answer label when that is a plain word), never a label the
    API files under (코드, 메세지, 서열) nor a system identifier; nothing when no field has such a meaning."""
    plain: dict[str, str] = {}
    for f, _ in fs:
        label = base_label(f)
        desc = next((x.description for x in tool.fields if label_of(x.name, x.description) == label), "")
        meaning = meaning_of(desc) if desc else ""
        if label in ANSWER_WORDS and askable(label):
            plain[label] = meaning if meaning and label not in meaning else label
        elif meaning:
            plain[label] = meaning
    mine = [(f, p) for f, p in fs if base_label(f) in plain]
    if not mine:
        return [], []
    kept, chosen = what_is_asked(mine, list(dict.fromkeys(base_label(f) for f, _ in mine)), rnd, earlier)
    return kept, [plain[x] for x in chosen if x in plain]


#: What a documented meaning in parentheses reads like when it is a format or a unit, not words.
_FORMAT = re.compile(r"^[\sA-Za-z0-9_:/.,~%㎍㎥㎡℃°-]*$|자리|YYYY|HHMM")


def meaning_of(desc: str) -> str:
    """A field's documented meaning in plain words: the words in its parentheses when they explain it
    ("최하위지역명 (읍면동 또는 리 이름)" -> "읍면동 또는 리 이름"), else its description without them; '' when that
    is a filing label (코드, 메세지, 서열), a system identifier or too long to ask."""
    m = re.search(r"\(([^()]+)\)", desc)
    inner = m.group(1).strip() if m else ""
    for text in (inner if inner and not _FORMAT.search(inner) else "", short_description(desc).split("(")[0].strip()):
        if (
            text
            and len(text.replace(" ", "")) <= 12
            and not FILING_WORDS.search(text)
            and not SYSTEM_WORDS.search(text)
        ):
            return text
    return ""


#: The plain words answer labels are (`graph.concepts.answer_label`): what a person asks by name.
ANSWER_WORDS = frozenset(v for v in ANSWER_FIELDS.values() if v) | {v[0] for v in KMA_CATEGORIES.values()}

FALLBACK_ASK = {
    "citizen": [
        "{entity} {x} 어떻게 돼?",
        "{entity} {x} 알려 줘.",
        "{entity} {x} 알 수 있을까요?",
        "{entity} {x} 궁금해요.",
    ],
    "civil": ["{entity} {x} 확인 부탁드립니다.", "{entity} {x} 어떻게 되나요?"],
    "analyst": ["{entity} {x} 정리해 주세요.", "{entity} {x} 확인해서 알려 주세요."],
}
