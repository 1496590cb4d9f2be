"""The Korean user request and the final answer of a trajectory, composed deterministically (seeded).

Requests state a goal, not a plan: the goal is what the final steps' tools give (`x-kopa-intent`, else the
summary, as a noun phrase), the context is what the user knows (address text, names, dates, business
registration numbers); intermediate steps are never named. Frames vary by persona (citizen, civil servant,
analyst), opening, goal construction and closing, with particles chosen by the last syllable.

Answers answer: per final step the fields that answer a question (`graph.concepts.answer_label`, KMA forecast
categories with labels, units and coded values in words), each with its unit, and how many rows the tool gave.

An optional paraphrase through an on-premise OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp) can be
configured with KOPA_PARAPHRASE_URL; it is never required and never a hosted model by default.

Particles and value formatting live in synthesis.korean, the facts of a row or table in synthesis.row_facts,
clarification and irrelevance samples in synthesis.special_turns.
"""

from __future__ import annotations

import random
import re
from typing import Any

import httpx

from graph.concepts import KMA_CATEGORIES, answer_label, concepts_of, norm
from graph.models import ToolRecord
from graph.regions import FORMER_SIDO, FORMER_SIGUNGU, SIDO, SIGUNGU
from synthesis.facts import Fact
from synthesis.korean import clean_value, sentences, short_description
from synthesis.korean import fmt_value as fmt_value
from synthesis.korean import has_batchim as has_batchim
from synthesis.korean import josa as josa
from synthesis.korean import verb as verb
from synthesis.records import FactRecord, Plan, Question, StepResponse, TrajectoryStep
from synthesis.routes import counterpart_fields, entity_name_fields, row_kind
from synthesis.row_facts import ANSWER_MAX, CODE_NAME, NUMERIC, field_fact, label_of, number_of, row_facts, table_facts

_PLACEHOLDER = re.compile(r"'?\{(\w+)\}'?(\s*(지역의|지역|측정소의|측정소|번|의|에서|에 대한))?\s*")
STEP_WORDS = ("먼저", "중간에", "단계", "그 결과로", "이어서", "그다음", "그 다음", "다음으로", "거쳐")


def _slots(step: TrajectoryStep) -> dict[str, Any]:
    return {p: v["value"] for p, v in step.provenance.items() if v["kind"] == "slot"}


# ---------------------------------------------------------------------------------------------- goals


def goal(tool: ToolRecord, slots: dict[str, Any]) -> tuple[str, set[str]]:
    """The noun phrase of what a tool gives (its intent with the user's values in place, without the verb),
    and the slot names it already mentions."""
    template = tool.intent or tool.summary or tool.description_en or tool.name
    used: set[str] = set()

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in slots:
            used.add(name)
            return fmt_value(name, slots[name]).strip() + (m.group(2) or "") + " "
        return ""

    text = _PLACEHOLDER.sub(repl, template)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s*(확인|조회|찾기|검색)$", "", text).strip()
    return text or template, used


_PLACE = {"keyword", "addr", "locataddnm", "umdname", "emdongnm", "sidoname", "sggname"}


def _context(plan: Plan, steps: list[TrajectoryStep], mentioned: set[tuple[int, str]]) -> list[str]:
    """The user's own words for every value they state that the goal does not mention."""
    near = any(
        p.link is not None and p.link.transform.get("kind") == "coord" for s in plan.steps for p in s.sources.values()
    ) or any(w in (s.tool.intent or "") for s in plan.steps[1:] for w in ("근처", "가까운", "주변"))
    parts: list[str] = []
    for i, (s, st) in enumerate(zip(plan.steps, steps, strict=True)):
        parts.extend(clean_value(v) for v in st.mentions.values())  # a row the user names (a city, a complex)
        desc = {p.name: short_description(p.description) for p in s.tool.params}
        for name, value in _slots(st).items():
            if (i, name) in mentioned:
                continue
            n = norm(name)
            text = fmt_value(name, value)
            if n in _PLACE or "주소" in desc.get(name, ""):
                parts.append(f"{text} 근처" if near else text)
            elif n in ("bno", "b_no", "bizrno") or "brn" in concepts_of(name, desc.get(name, "")):
                parts.append(f"사업자등록번호 {text}")
            elif n == "routeno":
                parts.append(f"{text}번 버스")
            elif re.search(r"ymd|dt$|date|de$", name.lower()):
                parts.append(f"{text} 기준")
            elif n == "stationname":
                parts.append(f"{text} 측정소")
            else:
                parts.append(f"'{text}'")
    return list(dict.fromkeys(parts))


_OPENINGS = {
    "citizen": [
        "",
        "",
        "혹시 ",
        "저기요, ",
        "궁금한 게 있는데요, ",
        "오늘 나가 보려고 하는데 ",
        "가족이 물어봐서요. ",
        "급하게 알아봐야 해서요. ",
    ],
    "civil": [
        "민원 문의가 들어와서 확인하려고 합니다. ",
        "민원 응대 중인데요, ",
        "담당 업무 때문에 확인이 필요합니다. ",
        "주민 문의 건입니다. ",
    ],
    "analyst": ["보고서에 넣으려고 하는데 ", "데이터 분석용으로 ", "자료 정리 중인데 ", "현황 파악을 위해 "],
}
_CLOSINGS = {
    "citizen": [
        "{o} 알려 줘.",
        "{o} 알려 주세요.",
        "{s} 궁금해요.",
        "{o} 좀 찾아 줄래?",
        "{o} 확인해 줄 수 있어요?",
        "{o} 알고 싶어요.",
    ],
    "civil": [
        "{o} 확인해 주시겠어요?",
        "{o} 확인 부탁드립니다.",
        "{o} 알려 주시면 감사하겠습니다.",
        "{s} 어떻게 되나요?",
    ],
    "analyst": ["{o} 정리해 주세요.", "{o} 뽑아 주세요.", "{o} 확인해서 알려 주세요.", "{s} 필요합니다."],
}


#: Answering fields of a state that holds now and changes within the hour (air measured this hour, a bus on its way).
_NOW_FIELDS = {"pm10value", "pm25value", "khaivalue", "o3value", "arrtime", "arrprevstationcnt"}
#: An opening about going out today: it fits only a question about conditions now (weather, air, a bus coming).
_OUTING = "오늘 나가 보려고 하는데 "


def _openings(persona: str, plan: Plan) -> list[str]:
    """The openings that fit what the plan's final steps ask: going out today only before today's weather, air
    or bus; a report, analysis or survey never before a bus arriving in minutes."""
    tools = [plan.steps[i].tool for i in plan.finals] + (
        [plan.when.gate_tool] if plan.when and plan.when.gate_tool else []
    )
    fields = {norm(f.name) for t in tools for f in t.fields}
    now = any(row_kind(t) == "table" for t in tools) or bool(fields & _NOW_FIELDS)
    arriving = "arrtime" in fields
    out = [o for o in _OPENINGS[persona] if (now or o != _OUTING) and not (arriving and persona == "analyst")]
    return out or [""]


# ---------------------------------------------------------------------------------------------- answers


def answered_fields(items: list[dict[str, Any]], chosen: int = 0) -> list[tuple[str, str]]:
    """The (label key, value text) an answer states for one step's shown rows: the KMA categories of the rows,
    else up to ANSWER_MAX answering fields of the used row."""
    if not items:
        return []
    if "category" in items[0]:
        out = []
        seen: set[str] = set()
        for row in items:
            cat = str(row.get("category"))
            value = row.get("fcstValue", row.get("obsrValue"))
            if cat in KMA_CATEGORIES and value not in (None, "") and cat not in seen:
                seen.add(cat)
                out.append((cat, str(value).strip()))
        return out
    row = items[min(chosen, len(items) - 1)]
    out = []
    for k, v in row.items():
        if isinstance(v, bool) or not isinstance(v, str | int | float) or not str(v).strip() or str(v).strip() == "-":
            continue
        if answer_label(k) is None or len(str(v)) > 80:
            continue
        out.append((k, clean_value(v)))
        if len(out) == ANSWER_MAX:
            break
    return out


_ASK_CLOSE = {
    "citizen": [
        "{x} 알려 줘.",
        "{x} 알려 주세요.",
        "{x} 궁금해요.",
        "{x} 좀 알려 줄래?",
        "{x} 어떻게 돼요?",
        "{x} 알 수 있을까요?",
    ],
    "civil": [
        "{x} 확인 부탁드립니다.",
        "{x} 확인해 주시겠어요?",
        "{x} 알려 주시면 감사하겠습니다.",
        "{x} 어떻게 되나요?",
    ],
    "analyst": ["{x} 정리해 주세요.", "{x} 뽑아 주세요.", "{x} 확인해서 알려 주세요.", "{x} 필요합니다."],
}
_ANSWER_OPEN = {
    "citizen": ["", "확인해 봤어요. ", "찾아봤어요. ", "조회해 보니 "],
    "civil": ["확인 결과를 말씀드립니다. ", "조회 결과입니다. ", ""],
    "analyst": ["조회 결과를 정리하면 ", "정리하면 ", ""],
}


def _and(items: list[str], rnd: random.Random) -> str:
    if len(items) <= 1:
        return "".join(items)
    joiner = rnd.choice(["와/과", ", ", "하고 "])
    if joiner == "와/과":
        return ", ".join([*items[:-2], josa(items[-2], "과", "와") + " " + items[-1]])
    return joiner.join(items)


def _row_noun(tool: ToolRecord) -> str:
    """What a tool's rows are, in a few words ('병원', '아파트 매매 실거래'), for questions about a set."""
    text = goal(tool, {})[0]
    text = re.sub(r"\s*(목록|상세 정보|기본 정보|정보|찾기|조회|확인)$", "", text).strip()
    text = re.sub(r"^(근처|주변|가장 가까운)\s*", "", text).strip()
    return text or "결과"


def _entity_phrase(plan: Plan, steps: list[TrajectoryStep]) -> str:
    parts = _context(plan, steps, set())
    return ", ".join(parts)


def _given(steps: list[TrajectoryStep], i: int) -> set[str]:
    """Values the user gave (here or at an earlier step, a row they named included) and the values the previous
    steps supplied to final step i: a field that repeats one answers nothing."""
    mine = {str(v["value"]) for st in steps for v in st.provenance.values() if v["kind"] == "slot"}
    mine |= {str(v) for st in steps for v in st.mentions.values()}
    step = steps[i]
    return mine | {
        str(step.arguments[p]) for p, v in step.provenance.items() if v["kind"] == "link" and p in step.arguments
    }


def _counterpart(tool: ToolRecord, items: list[dict[str, Any]], given: set[str]) -> tuple[str, list[str]] | None:
    """For rows that each describe a pair (`routes.counterpart_fields`: the queried product and the one it must
    not be taken with), the field naming the member the user did not give (the one whose name repeats a given
    value answers nothing), and the answering fields of neither member, which say what holds of the pair (its
    금기 내용); None for other rows."""
    pairs = counterpart_fields(tool)
    names = entity_name_fields(tool)
    first = [a for a in names if a in pairs and pairs[a] in names]
    if not items or not first:
        return None
    queried, other = first[0], pairs[first[0]]
    if any(str(x.get(other, "")) in given for x in items) and not any(str(x.get(queried, "")) in given for x in items):
        queried, other = other, queried
    members = set(pairs) | set(pairs.values()) | set(names)
    about = [k for k in items[0] if k not in members and answer_label(k) is not None]
    return other, about


def _pair_answer(
    tool: ToolRecord, r: StepResponse, other: str, about: list[str]
) -> tuple[str, list[str], list[tuple[Fact, str]], str]:
    """The answer over pair rows: each row's counterpart with what its row says of the pair (why not together)."""
    desc = {f.name: f.description for f in tool.fields}
    items = r.items
    one = r.selected or len(items) == 1
    rows = [items[min(r.chosen, len(items) - 1)]] if one else items
    facts: list[tuple[Fact, str]] = (
        [] if one else [(Fact("number", float(r.rows), unit="건", label="건수"), f"건수 {r.rows}건")]
    )
    if not one and r.rows > len(items):
        return "count", [], facts, ""  # rows left unseen: their counterparts cannot be listed
    for row in rows:
        who = clean_value(row.get(other, ""))
        if not who:
            continue
        label = label_of(other, desc.get(other, ""))
        notes = [x for x in (field_fact(k, row[k], desc.get(k, "")) for k in about if k in row) if x is not None]
        note = ", ".join(f"{f.label}: {f.value}" for f, _ in notes)
        facts.append(
            (Fact("name", who, label=label), (f"{label} " if one else "") + who + (f"({note})" if note else ""))
        )
        facts.extend((f, "") for f, _ in notes)
    if len(facts) == (0 if one else 1):
        return ("row" if one else "count"), [], facts, ""
    labels = [label_of(other, desc.get(other, ""))]
    return ("row" if one else "list"), labels, facts, ""


def _step_answer(
    plan: Plan, steps: list[TrajectoryStep], i: int, rnd: random.Random
) -> tuple[str, list[str], list[tuple[Fact, str]], str]:
    """(what is asked, the labels the question names, facts with phrases, time span) for final step i."""
    step, tool = steps[i], plan.steps[i].tool
    r = step.response
    items = r.items
    mine = _given(steps, i)
    if items and row_kind(tool) == "table":
        facts, span = table_facts(items)
        labels = list(dict.fromkeys(f.label.replace("최저 ", "").replace("최고 ", "") for f, _ in facts))
        return "table", labels, facts, span
    pair = _counterpart(tool, items, mine)
    if pair is not None:
        return _pair_answer(tool, r, *pair)
    if r.selected and items:
        row = items[min(r.chosen, len(items) - 1)]
        skip = {k for k, v in row.items() if str(v) in mine}
        facts = row_facts(row, tool, skip)
        return "row", [f.label for f, _ in facts], facts, ""
    count = Fact("number", float(r.rows), unit="건", label="건수")
    facts = [(count, f"건수 {r.rows}건")]
    # the name that tells the rows apart (not the stop every arrival row repeats): without one, the set is counted
    # (and not a name the user or the previous step gave: repeating it answers nothing)
    names = [
        f
        for f in entity_name_fields(tool)
        if (len({str(x.get(f, "")) for x in items}) > 1 or len(items) == 1)
        and any(clean_value(x.get(f, "")) and str(x.get(f, "")) not in mine for x in items)
    ]
    if r.rows <= len(items) and names:
        desc = {f.name: f.description for f in tool.fields}
        numeric = [
            k
            for k in items[0]
            if answer_label(k)
            and all(NUMERIC.match(str(x.get(k, ""))) for x in items)
            and not CODE_NAME.search(norm(k))
        ]
        if numeric and rnd.random() < 0.5:
            k = numeric[0]
            best = max(items, key=lambda x: number_of(str(x.get(k))) or 0.0)
            got = field_fact(k, best[k], desc.get(k, ""))
            who = clean_value(best.get(names[0], ""))
            if got and who:
                return "highest", [got[0].label], [(Fact("name", who, label=f"{got[0].label} 최고"), who), got], ""
        listed = [clean_value(x.get(names[0], "")) for x in items if clean_value(x.get(names[0], ""))]
        if listed:  # rows without a name are counted, never listed as nothing
            return "list", [], [*facts, *((Fact("name", n, label=label_of(names[0], "")), n) for n in listed)], ""
    return "count", [], facts, ""


#: Words of labels that name how an API files a value rather than what a person asks (`직전과세유형메세지`,
#: `사업자등록번호`, `구분`): such a field is asked only when nothing else is.
_FILING_WORDS = re.compile(r"코드|메세지|메시지|여부|구분|번호|일련|식별|유형명?$|순번|ID|Id|id")


#: Words of labels that name a system identifier (an ID, a code, coordinates): never what a person asks.
_SYSTEM_WORDS = re.compile(r"ID|Id|id|코드|좌표|격자")


def _askable(label: str) -> bool:
    return len(label.replace(" ", "")) <= 8 and not _FILING_WORDS.search(label)


def _base_label(fact: Fact) -> str:
    """A forecast fact's label without the end of its range (`최저 기온` -> `기온`)."""
    return fact.label.replace("최저 ", "").replace("최고 ", "")


def _what_is_asked(
    fs: list[tuple[Fact, str]], labels: list[str], rnd: random.Random, earlier: frozenset[str] = frozenset()
) -> tuple[list[tuple[Fact, str]], list[str]]:
    """The one to three things a person asks of a row or a forecast, drawn among what it answers (not the first
    fields of the response), preferring what people ask by name over how the API files it, and not what an earlier
    step of the route already gives (`earlier`: their goals, such as the address a lookup started from); the
    answer then states exactly those (in the response's order)."""
    names = list(dict.fromkeys(labels))
    fresh = [x for x in names if _askable(x) and not any(e and e in x for e in earlier)]
    preferred = fresh or [x for x in names if _askable(x)] or [x for x in names if not _SYSTEM_WORDS.search(x)]
    if not preferred:
        return [], []  # a row that answers only with system identifiers answers nothing a person asks
    k = min(len(preferred), rnd.choice([1, 2, 2, 3]))
    chosen = set(rnd.sample(preferred, k))
    kept = [(f, p) for f, p in fs if _base_label(f) in chosen]
    return kept or fs[:1], [x for x in names if x in chosen] or labels[:1]


#: Concepts of a query parameter by the area they confine the rows to, finest first.
_AREA_LEVELS = (
    ("umd", {"bjd_code", "umd_code", "umd_name"}),
    ("sgg", {"sgg_code", "sgg_name", "sgg3_code"}),
    ("sido", {"sido_code", "sido_name"}),
)


#: The word for an area's level that leads a goal ("시군구의 아파트 단지"), left out where the area is named.
_LEVEL_WORD = re.compile(r"^(시군구|시도)의?\s*")


def _area_name(texts: list[str], level: str) -> str:
    """The 시도 (`sido`) or 시군구 (`sgg`, with its 시도) that the first of `texts` to name one names, as it names
    it (data still writes a 시도 or 시군구 by its former name)."""
    for text in texts:
        words = text.split()
        for k, w in enumerate(words):
            if w in SIGUNGU or w in FORMER_SIDO:
                written, sido = w, FORMER_SIDO[w][1] if w in FORMER_SIDO else w
            else:
                full = next((f for f, short in SIDO.items() if short == w), None)
                if full is None:
                    continue
                written, sido = full, full
            if level == "sido":
                return written
            sggs = {*SIGUNGU.get(sido, ()), *FORMER_SIGUNGU.get(sido, {})}
            sgg = next((x for x in words[k + 1 :] if x in sggs), None)
            if sgg is not None:
                return f"{written} {sgg}"
    return ""


def _scope(plan: Plan, steps: list[TrajectoryStep], i: int) -> str:
    """The area a final step's set covers when only a 시군구 or a 시도 confines its query (an area code or name,
    besides dates and constants): a count or list of that whole area, which an answer states as such, since the
    user may have named a narrower place (a 동, an address, a clinic in it). Empty when a finer place, another
    filter or nothing of the kind confines it, or the area's name is nowhere in what the user or the steps said."""
    step, tool = steps[i], plan.steps[i].tool
    desc = {p.name: p.description for p in tool.params}
    levels: set[str] = set()
    for name, prov in step.provenance.items():
        if prov.get("kind") not in ("slot", "link", "mention"):
            continue
        found = concepts_of(name, desc.get(name, ""))
        matched = [lv for lv, cs in _AREA_LEVELS if found & cs]
        value = str(step.arguments.get(name, ""))
        if len(matched) > 1 and value.isdigit():  # a code read as several: its length tells (LAWD_CD: 5 digits)
            matched = ["sido" if len(value) <= 2 else "sgg" if len(value) <= 5 else "umd"]
        level = matched[0] if matched else None
        if level is None and not found & {"date", "year_month"}:
            return ""  # a name, a point or another filter narrows the set: the area is not its scope
        if level is not None:
            levels.add(level)
    if not levels or "umd" in levels:
        return ""
    level = "sgg" if "sgg" in levels else "sido"
    texts = [str(v) for v in step.arguments.values() if isinstance(v, str)]
    texts += [str(v["value"]) for st in steps for v in st.provenance.values() if v["kind"] == "slot"]
    texts += [str(v) for st in steps for v in st.mentions.values()]
    for st in steps[:i]:
        if st.response.items:
            row = st.response.items[min(st.response.chosen, len(st.response.items) - 1)]
            texts.append(" ".join(str(v) for v in row.values() if isinstance(v, str)))
    return _area_name(texts, level)


def _more(fact: Fact) -> str:
    """The word for "more" of a quantity by what it measures: an area is 넓은, a number of things 많은, else 높은."""
    unit = fact.unit or ""
    if unit in ("㎡", "m²", "m2", "평") or "면적" in fact.label:
        return "넓은"
    if unit in ("세대", "명", "대", "개", "건", "곳") or re.search(r"(수|대수)$", fact.label):
        return "많은"
    return "높은"


def _ask_and_say(
    plan: Plan, steps: list[TrajectoryStep], i: int, rnd: random.Random
) -> tuple[str, str, str, list[Fact]]:
    """What final step i is asked (`row`, `table`, `count`, ...), the words that ask it, the sentence that answers
    it and the facts that sentence states (no words and no facts when its rows answer nothing)."""
    ask, labels, fs, span = _step_answer(plan, steps, i, rnd)
    pair = _counterpart(plan.steps[i].tool, steps[i].response.items, _given(steps, i)) is not None
    if ask in ("row", "table") and fs and not pair:  # a pair's row is asked for its counterpart and why
        earlier = frozenset(goal(s.tool, {})[0] for j, s in enumerate(plan.steps) if j not in plan.finals)
        fs, labels = _what_is_asked(fs, labels, rnd, earlier)
    if not fs:
        return ask, "", "", []
    noun = _row_noun(plan.steps[i].tool)
    area = _scope(plan, steps, i) if ask in ("count", "list", "highest") else ""
    # the area's name takes the place of the word for its level ("시군구의 아파트 단지")
    whole = f"{area} 전체 {_LEVEL_WORD.sub('', noun)}" if area else noun
    phrases = [p for _, p in fs if p]  # a fact another phrase states (a counterpart's 금기 내용) has none of its own
    facts = [f for f, _ in fs]
    if ask == "table":
        when = (
            rnd.choice([f"오늘 {span} ", f"{span} 사이 ", f"{span}까지 "])
            if "~" in span
            else (rnd.choice(["지금 ", "현재 ", f"{span} 기준 "]) if span else "")
        )
        asked = f"{when}{_and(labels[:3], rnd)}"
        said = f"{when.strip() + ' ' if when else ''}{sentences(phrases)}"
    elif ask == "row":
        asked = _and(labels[:3], rnd) if labels else noun
        said = sentences(phrases)
    elif ask == "count":
        asked = rnd.choice([f"{noun} 건수", f"{josa(noun, '이', '가')} 몇 건인지", f"{noun} 몇 건"])
        said = (
            f"{whole} {phrases[0]}입니다."
            if area
            else rnd.choice([f"{noun} {phrases[0]}입니다.", f"조회된 {noun} {phrases[0]}입니다."])
        )
    elif ask == "list":
        asked = rnd.choice([f"{noun} 목록", f"{josa(noun, '이', '가')} 어디 어디인지", f"{noun} 전부"])
        said = f"{whole} {phrases[0]}이고, {sentences(phrases[1:])}" if phrases[1:] else f"{whole} {phrases[0]}입니다."
    else:  # highest
        subject = f"{labels[0]}{'이' if has_batchim(labels[0]) else '가'}"
        most = f"가장 {_more(facts[1])} 곳"
        asked = f"{noun} 중 {subject} {most}"
        said = f"{area + ' 전체에서 ' if area else ''}{subject} {most}은 {phrases[0]}({phrases[1]})입니다."
    return ask, asked, said, facts


def compose(plan: Plan, steps: list[TrajectoryStep], rnd: random.Random) -> tuple[str, str, list[FactRecord], Question]:
    """The question a person asks about the entity they know, the answer that states what it asks (with units,
    codes decoded, over the rows asked), and the facts the answer must state."""
    if plan.when is not None:
        return _compose_conditional(plan, steps, rnd)
    persona = rnd.choice(["citizen", "citizen", "civil", "analyst"])
    entity = _entity_phrase(plan, steps)
    asks: list[str] = []
    asked: list[str] = []
    said: list[str] = []
    facts: list[Fact] = []
    for i in plan.finals:
        ask, asked_text, said_text, fs = _ask_and_say(plan, steps, i, rnd)
        asks.append(ask)
        if not fs:
            continue
        asked.append(asked_text)
        said.append(said_text)
        facts.extend(fs)
    if not asked:
        return "", "", [], Question(persona=persona, entity=entity, asks=asks, route=plan.route)
    goal_text = _and(asked, rnd) if len(asked) > 1 else asked[0]
    lead = entity + (
        rnd.choice([" ", "의 ", " 기준으로 "]) if entity and not entity.endswith(("근처", "기준")) else " "
    )
    close = rnd.choice(_ASK_CLOSE[persona])
    opening = rnd.choice(_openings(persona, plan))
    request = re.sub(r"\s+", " ", f"{opening}{lead if entity else ''}{close.format(x=goal_text)}").strip()
    subject = f"{entity}{'으로' if entity.endswith('기준') else ' 기준으로'} " if entity and rnd.random() < 0.5 else ""
    answer = re.sub(r"\s+", " ", rnd.choice(_ANSWER_OPEN[persona]) + subject + " ".join(said)).strip()
    records = [FactRecord(kind=f.kind, value=f.value, tolerance=f.tolerance, unit=f.unit, label=f.label) for f in facts]
    question = Question(persona=persona, entity=entity, asks=asks, route=plan.route)
    return request, answer, records, question


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _compose_conditional(
    plan: Plan, steps: list[TrajectoryStep], rnd: random.Random
) -> tuple[str, str, list[FactRecord], Question]:
    """A conditional request ("X가 T 이상이면 Y도 알려 줘") and its answer: the deciding value always, then the gated
    lookup's facts when the test held, else that it was not looked up and why."""
    c = plan.when
    assert c is not None and c.fact is not None and c.gate_tool is not None
    persona = rnd.choice(["citizen", "citizen", "civil", "analyst"])
    entity = _entity_phrase(plan, steps)
    cmp = "이상" if c.op == ">=" else "이하"
    threshold, observed = f"{_num(c.value)}{c.unit}", f"{_num(c.observed)}{c.unit}"
    gate_goal = goal(c.gate_tool, {})[0]
    # a count decides over a set: named by what is counted ("아파트 매매 실거래가 건수")
    label = f"{_row_noun(plan.steps[c.step].tool)} {c.label}" if c.label == "건수" else c.label
    # the answer says which area the count covers when it is a whole 시군구 or 시도 (`_scope`)
    area = _scope(plan, steps, c.step) if c.label == "건수" else ""
    told = f"{area} 전체 {_LEVEL_WORD.sub('', label)}" if area else label
    asks = ["condition"]
    facts = [c.fact]
    if c.held:
        ask, _asked, said, fs = _ask_and_say(plan, steps, c.gate, rnd)
        if not fs:
            return "", "", [], Question(persona=persona, entity=entity, asks=[*asks, ask], route=plan.route)
        asks.append(ask)
        facts.extend(fs)
        because = josa(cmp, "이라서", "라서")
        body = f"{josa(told, '은', '는')} {observed}이고, {threshold} {because} 확인했습니다. {said}"
    else:
        asks.append("not asked")
        body = (
            f"{josa(told, '은', '는')} {observed}입니다. {threshold} {josa(cmp, '이', '가')} 아니라서 "
            f"{josa(gate_goal, '은', '는')} 찾지 않았습니다."
        )
    subject = josa(label, "이", "가")
    otherwise = {
        "citizen": [f" 아니면 {label}만 알려 줘.", f" 아니면 {label}만 알려 주세요.", ""],
        "civil": [f" 해당하지 않으면 {label}만 알려 주세요.", ""],
        "analyst": [f" 아니면 {label}만 정리해 주세요.", ""],
    }[persona]
    close = rnd.choice(_ASK_CLOSE[persona]).format(x=f"{gate_goal}도")
    lead = f"{entity} " if entity else ""
    request = re.sub(
        r"\s+",
        " ",
        f"{rnd.choice(_openings(persona, plan))}{lead}{subject} {threshold} {cmp}이면 {close}{rnd.choice(otherwise)}",
    ).strip()
    answer = re.sub(r"\s+", " ", rnd.choice(_ANSWER_OPEN[persona]) + body).strip()
    records = [FactRecord(kind=f.kind, value=f.value, tolerance=f.tolerance, unit=f.unit, label=f.label) for f in facts]
    return request, answer, records, Question(persona=persona, entity=entity, asks=asks, route=plan.route)


def paraphrase(text: str, url: str, *, must_keep: list[str], timeout: float = 15.0) -> str:
    """Ask an on-premise OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp) for a natural rewording.

    Falls back to the deterministic text when the endpoint fails or drops a value the request must carry."""
    body = {
        "model": "local",
        "temperature": 0.7,
        "max_tokens": 256,
        "messages": [
            {
                "role": "system",
                "content": "다음 요청을 같은 뜻의 자연스러운 한국어 한두 문장으로 바꿔 쓰세요. "
                "숫자, 코드, 이름 같은 값은 그대로 두고 바꾼 문장만 답하세요.",
            },
            {"role": "user", "content": text},
        ],
    }
    try:
        resp = httpx.post(url.rstrip("/") + "/v1/chat/completions", json=body, timeout=timeout)
        resp.raise_for_status()
        out = str(resp.json()["choices"][0]["message"]["content"]).strip()
    except (httpx.HTTPError, KeyError, IndexError, ValueError):
        return text
    if not out or any(v and v not in out for v in must_keep):
        return text
    return out
