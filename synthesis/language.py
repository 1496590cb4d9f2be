"""The Korean user request and the final answer of a trajectory, composed deterministically (seeded).

Requests state a goal, not a plan: the goal is what the final steps' tools give (`x-kopa-intent`, else the
summary, as a noun phrase), the context is what the user knows (address text, names, dates, business
registration numbers); intermediate steps are never named. Frames vary by persona (citizen, civil servant,
analyst), opening, goal construction and closing, with particles chosen by the last syllable.

Answers answer: per final step the fields that answer a question (`graph.concepts.answer_label`, KMA forecast
categories with labels, units and coded values in words), each with its unit, and how many rows the tool gave.

Particles and value formatting live in synthesis.korean, the facts of a row or table in synthesis.row_facts, a
need's words and the field-meaning fallback in synthesis.need_wording, an answer's area in synthesis.answer_scope,
clarification and irrelevance samples in synthesis.special_turns, the optional on-premise paraphrase in
synthesis.paraphrase.
"""

from __future__ import annotations

import random
import re
from typing import Any

from graph.concepts import KMA_CATEGORIES, answer_label, concepts_of, norm
from graph.models import ToolRecord
from graph.regions import SIDO
from synthesis.answer_scope import LEVEL_WORD, area_name, area_scope, more_word
from synthesis.conditions import branch_needs, default_rules
from synthesis.fact_terms import Fact
from synthesis.korean import clean_value, ends_sentence, num_text, object_of, sentences, short_description
from synthesis.korean import fmt_value as fmt_value
from synthesis.korean import has_batchim as has_batchim
from synthesis.korean import josa as josa
from synthesis.korean import verb as verb
from synthesis.need_wording import (
    FALLBACK_ASK,
    NOW_FIELDS,
    POLITE,
    SYSTEM_WORDS,
    base_label,
    fallback,
    fill,
    matching,
    novel,
    time_of,
)
from synthesis.needs import Need, default_needs
from synthesis.records import FactRecord, Plan, Question, StepResponse, TrajectoryStep
from synthesis.routes import counterpart_fields, entity_name_fields, row_kind
from synthesis.row_facts import (
    ANSWER_MAX,
    CODE_NAME,
    NUMERIC,
    field_fact,
    label_of,
    number_of,
    row_facts,
    row_subject,
    table_facts,
    windowed,
)

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


def _context(
    plan: Plan, steps: list[TrajectoryStep], mentioned: set[tuple[int, str]], only: set[int] | None = None
) -> list[str]:
    """The user's own words for every value they state that the goal does not mention (of the steps `only`, when
    given)."""
    near = any(
        p.link is not None and p.link.transform.get("kind") == "coord" for s in plan.steps for p in s.sources.values()
    ) or any(w in (s.tool.intent or "") for s in plan.steps[1:] for w in ("근처", "가까운", "주변"))
    parts: list[str] = []
    for i, (s, st) in enumerate(zip(plan.steps, steps, strict=True)):
        if only is not None and i not in only:
            continue
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
_OUTING = "오늘 나가 보려고 하는데 "


def _openings(persona: str, plan: Plan) -> list[str]:
    """The openings that fit what the plan's final steps ask: going out today only before today's weather, air
    or bus; a report, analysis or survey never before a bus arriving in minutes."""
    tools = [plan.steps[i].tool for i in plan.finals] + (
        [plan.when.gate_tool] if plan.when and plan.when.gate_tool else []
    )
    fields = {norm(f.name) for t in tools for f in t.fields}
    now = any(row_kind(t) == "table" for t in tools) or bool(fields & NOW_FIELDS)
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
    plan: Plan, steps: list[TrajectoryStep], i: int, rnd: random.Random, ranks: tuple[str, ...] = ()
) -> tuple[str, list[str], list[tuple[Fact, str]], str]:
    """(what is asked, the labels the question names, facts with phrases, time span) for final step i; a set's
    extreme is ranked by one of `ranks` (the fields needs rank by) when its rows have one."""
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
            ranked = [k for k in numeric if norm(k) in {norm(r) for r in ranks}]
            k = rnd.choice(ranked) if ranked else numeric[0]
            best = max(items, key=lambda x: number_of(str(x.get(k))) or 0.0)
            got = field_fact(k, best[k], desc.get(k, ""))
            who = clean_value(best.get(names[0], ""))
            if got and who:
                return "highest", [got[0].label], [(Fact("name", who, label=f"{got[0].label} 최고"), who), got], ""
        listed = [clean_value(x.get(names[0], "")) for x in items if clean_value(x.get(names[0], ""))]
        if listed:  # rows without a name are counted, never listed as nothing
            return "list", [], [*facts, *((Fact("name", n, label=label_of(names[0], "")), n) for n in listed)], ""
    return "count", [], facts, ""


def _ask_and_say(
    plan: Plan,
    steps: list[TrajectoryStep],
    i: int,
    rnd: random.Random,
    persona: str = "citizen",
    needs: tuple[Need, ...] | list[Need] | None = None,
    values: dict[str, str] | None = None,
) -> tuple[str, str, str, list[Fact], str]:
    """What final step i is asked (`row`, `table`, `count`, ...), the sentence that asks it (a need's wording
    with the user's entity and time, else the fallback asking what a field means), the sentence that answers it,
    the facts that sentence states (no words and no facts when its rows answer nothing) and the need's id
    (`field meaning` for the fallback)."""
    needs = default_needs() if needs is None else needs
    tool = plan.steps[i].tool
    ranks = tuple(n.rank for n in needs if n.rank and "highest" in n.shape and n.fits_tool(tool))
    ask, labels, fs, span = _step_answer(plan, steps, i, rnd, ranks)
    given = _given(steps, i)
    items = steps[i].response.items
    pair = _counterpart(tool, items, given) is not None
    row = items[min(steps[i].response.chosen, len(items) - 1)] if items and ask == "row" and not pair else None
    found = matching(needs, tool, "pair" if pair else ask, time_of(tool, ask, span), fs, row, given, labels)
    need = rnd.choice(found)[0] if found else None
    asked_words: list[str] = []
    if need is not None:
        fs = next(got for n, got in found if n is need)
        if ask in ("row", "table") and not pair:
            labels = list(dict.fromkeys(base_label(f) for f, _ in fs))
    elif ask in ("row", "table") and fs and not pair:  # a pair's row is asked for its counterpart and why
        earlier = frozenset(goal(s.tool, {})[0] for j, s in enumerate(plan.steps) if j not in plan.finals)
        fs = [(f, p) for f, p in fs if f.kind == "number" or novel(f.value, given)]
        fs, asked_words = fallback(tool, fs, rnd, earlier)
        labels = list(dict.fromkeys(base_label(f) for f, _ in fs))
    noun = _row_noun(tool)
    if need is None and ask in ("count", "list", "highest") and SYSTEM_WORDS.search(noun):
        fs = []  # a set of system identifiers ("TM 좌표 수") is nothing a person asks about
    if not fs:
        return ask, "", "", [], ""
    named = row_subject(row, tool, lambda v: novel(v, given), fs) if row is not None else None
    fs = [named, *fs] if named else fs  # the bus (노선번호) an arrival is about, named first
    area = area_scope(plan, steps, i) if ask in ("count", "list", "highest") else ""
    # the area's name takes the place of the word for its level ("시군구의 아파트 단지")
    whole = f"{area} 전체 {LEVEL_WORD.sub('', noun)}" if area else noun
    # a fact another phrase states (a counterpart's 금기 내용) has none of its own; a value that is a sentence of its
    # own ("이 약은 … 사용합니다.") is said without its label in front
    phrases = [str(f.value) if p == f"{f.label} {f.value}" and ends_sentence(str(f.value)) else p for f, p in fs if p]
    # the bus named first says what the row is about; it is no asked fact (the user asked when it comes)
    facts = [f for f, _ in fs if named is None or f is not named[0]]
    if ask == "table":  # each category over the hours the shown rows hold for it (`row_facts.windowed`)
        shared, span, phrases = windowed(steps[i].response.items, fs)
        days = "일 " in span  # rows over several days: each end of the window says its day, never "오늘"
        forecast = any("fcstTime" in x for x in steps[i].response.items)  # one forecast hour is that hour, not now
        when = (
            rnd.choice([f"{span} 사이 " if days else f"오늘 {span} ", f"{span} 사이 ", f"{span}까지 "])
            if "~" in shared
            else f"{shared} "
            if forecast and shared
            else (rnd.choice(["지금 ", "현재 ", f"{shared} 기준 "]) if shared else "")
        )
        asked = f"{when}{_and(asked_words or labels[:3], rnd)}"
        said = f"{when.strip() + ' ' if when else ''}{sentences(phrases)}"
    elif ask == "row":
        asked = _and(asked_words or labels[:3], rnd) if labels else noun
        said = sentences(phrases)
    elif ask == "count":  # the rows counted are the subject ("버스 노선은 14건입니다"), never a label "건수 14건"
        asked = rnd.choice([f"{noun} 건수", f"{noun} 수"])
        n = num_text(facts[0].value)
        said = f"{josa(whole if area else rnd.choice([noun, f'조회된 {noun}']), '은', '는')} {n}건입니다."
    elif ask == "list":  # the names of rows that have one, said as such when some rows have none
        asked = rnd.choice([f"{noun} 목록", f"{noun} 이름"])
        n, named_rows = num_text(facts[0].value), len(phrases) - 1
        lab = facts[1].label if re.search("[가-힣]", facts[1].label) else "이름"  # never a raw field name
        partly = f"그중 {josa(lab, '이', '가')} 있는 것은 " if 0 < named_rows < float(n) else ""
        rest = f"이고, {partly}{sentences(phrases[1:])}" if named_rows else "입니다."
        said = f"{josa(whole, '은', '는')} {n}건{rest}"
    else:  # highest
        subject = f"{labels[0]}{'이' if has_batchim(labels[0]) else '가'}"
        most = f"가장 {more_word(facts[1])} 곳"
        asked = f"{noun} 중 {subject} {most}"
        said = f"{area + ' 전체에서 ' if area else ''}{subject} {most}은 {phrases[0]}({phrases[1]})입니다."
    if need is not None:
        template = rnd.choice(need.wordings.get(persona) or [w for ws in need.wordings.values() for w in ws])
        if need.say:
            said = rnd.choice(need.say).replace("{facts}", said)
    else:
        template = rnd.choice(FALLBACK_ASK[persona]).replace("{x}", asked)
    request = fill(template, {**(values or {}), "span": span if "~" in span else ""})
    return ask, request, said, facts, need.id if need is not None else "field meaning"


def _feeding(plan: Plan, i: int) -> set[int]:
    """Step i and every step that feeds it, directly or through others."""
    out, todo = {i}, [i]
    while todo:
        j = todo.pop()
        ups = {*plan.steps[j].depends_on, *(s.from_step for s in plan.steps[j].sources.values() if s.from_step >= 0)}
        for k in ups - out:
            out.add(k)
            todo.append(k)
    return out


def _user_words(plan: Plan, steps: list[TrajectoryStep], only: set[int], said: set[str]) -> dict[str, str]:
    """What the user knows about the entity of the steps `only` and not yet said: the entity (a place, a name, a
    number) and the time (a month, a day)."""
    every = _context(plan, steps, set(), only)
    parts = [p for p in every if p not in said]
    again = "거기" if every and not parts else ""
    said.update(parts)
    when = [p.removesuffix(" 기준") for p in parts if p.endswith(" 기준")]
    entity = ""
    for p in (p for p in parts if not p.endswith(" 기준")):
        # a place leads what is in it ("서울특별시 경복궁"); other things the user knows are listed
        region = entity and (entity in SIDO or entity in SIDO.values() or area_name([entity], "sgg") == entity)
        entity = f"{entity} {p}" if region else f"{entity}, {p}" if entity else p
    return {"entity": entity, "when": ", ".join(when), "again": again}


def _opening(persona: str, plan: Plan, first: str, rnd: random.Random) -> str:
    """An opening that fits the question, now and then; a casual (반말) question takes none that is polite."""
    if rnd.random() < 0.6:
        return ""
    options = _openings(persona, plan)
    if not POLITE.search(first):
        options = [o for o in options if o in ("", "혹시 ")] or [""]
    return rnd.choice(options)


_AND_THEN = {
    "citizen": ["그리고 ", "또 ", "아, 그리고 "],
    "civil": ["아울러 ", "그리고 "],
    "analyst": ["그리고 ", "또한 "],
}


def compose(
    plan: Plan,
    steps: list[TrajectoryStep],
    rnd: random.Random,
    needs: tuple[Need, ...] | list[Need] | None = None,
    used: list[str] | None = None,
) -> tuple[str, str, list[FactRecord], Question]:
    """The question a person asks about the entity they know, in a need's words (`synthesis.needs`; `needs`
    defaults to the shipped ones and `KOPA_NEEDS_DIRS`'), the answer that states what it asks (with units, codes
    decoded, over the rows asked), and the facts the answer must state; `used` receives the id of the need each
    final step was asked by."""
    if plan.when is not None:
        return _compose_conditional(plan, steps, rnd, needs, used)
    persona = rnd.choice(["citizen", "citizen", "civil", "analyst"])
    entity = _entity_phrase(plan, steps)
    asks: list[str] = []
    asked: list[str] = []
    said: list[str] = []
    facts: list[Fact] = []
    told: set[str] = set()
    for i in plan.finals:
        trial = set(told)  # what this sentence says counts as said only if the step is asked at all
        values = _user_words(plan, steps, _feeding(plan, i), trial)
        ask, asked_text, said_text, fs, need_id = _ask_and_say(plan, steps, i, rnd, persona, needs, values)
        asks.append(ask)
        if not fs and not any(i in s.depends_on for s in plan.steps):
            asked = []  # a call whose answer nobody asked and that feeds nothing is a pointless call: no record
            break
        if not fs:
            continue
        told = trial
        if used is not None:
            used.append(need_id)
        asked.append(asked_text if not asked else rnd.choice(_AND_THEN[persona]) + asked_text)
        said.append(said_text)
        facts.extend(fs)
    if not asked:
        return "", "", [], Question(persona=persona, entity=entity, asks=asks, route=plan.route)
    request = re.sub(r"\s+", " ", _opening(persona, plan, asked[0], rnd) + " ".join(asked)).strip()
    # the entity leads the answer only about one entity's values: a set's answer names the area it covers
    about = entity and all(a in ("row", "table") for a in asks) and rnd.random() < 0.5
    subject = f"{entity}{'으로' if entity.endswith('기준') else ' 기준으로'} " if about else ""
    subject = f"{entity.removesuffix(' 근처')}의 " if about and entity.endswith("근처") else subject
    answer = re.sub(r"\s+", " ", rnd.choice(_ANSWER_OPEN[persona]) + subject + " ".join(said)).strip()
    records = [FactRecord(kind=f.kind, value=f.value, tolerance=f.tolerance, unit=f.unit, label=f.label) for f in facts]
    question = Question(persona=persona, entity=entity, asks=asks, route=plan.route)
    return request, answer, records, question


def _compose_conditional(
    plan: Plan,
    steps: list[TrajectoryStep],
    rnd: random.Random,
    needs: tuple[Need, ...] | list[Need] | None = None,
    used: list[str] | None = None,
) -> tuple[str, str, list[FactRecord], Question]:
    """A conditional request in a person's words ("비 올 확률이 60% 이상이면 지금 비가 오고 있는지도 알려 줘",
    `synthesis.conditions`) and its answer: the deciding value with the hours it covers, then, when the test
    held, what the branch's need asks (its values), else what was not looked up and why. Nothing when the
    branch's answer fits none of the condition's needs."""
    c = plan.when
    assert c is not None and c.fact is not None and c.gate_tool is not None
    rule = next((r for r in default_rules() if r.id == c.rule), None)
    persona = rnd.choice(["citizen", "citizen", "civil", "analyst"])
    entity = _entity_phrase(plan, steps)
    pool = branch_needs(rule, c.gate_tool, default_needs() if needs is None else needs) if rule else []
    if rule is None or not pool:
        return "", "", [], Question(persona=persona, entity=entity, asks=[], route=plan.route)
    if entity.startswith("'") and not entity.endswith("근처"):
        entity = f"{entity} 근처"  # the weather or air of a named place is of its area
    cmp = "이상" if c.op == ">=" else "이하"
    threshold, observed = f"{num_text(c.value)}{c.unit}", f"{num_text(c.observed)}{c.unit}"
    asks = ["condition"]
    facts = [c.fact]
    branch = rule.then[rnd.choice(pool).id]
    lead = f"{c.scope} " if c.scope else ""
    told = f"{lead}{josa(c.label, '은', '는')} {observed}입니다."
    if c.held:
        for _ in range(3):  # a set's answer is drawn (a count, a list or its extreme): one a branch need asks
            ask, _asked, said, fs, need_id = _ask_and_say(plan, steps, c.gate, rnd, persona, pool)
            if fs and need_id in rule.then:
                break
        if not fs or need_id not in rule.then:
            return "", "", [], Question(persona=persona, entity=entity, asks=[*asks, ask], route=plan.route)
        branch = rule.then[need_id]
        asks.append(ask)
        facts.extend(fs)
        body = f"{told} {threshold} {josa(cmp, '이라서', '라서')} {object_of(branch)} 확인했습니다. {said}"
        if used is not None:
            used.extend(["condition", need_id])
    else:
        asks.append("not asked")
        body = f"{told} {threshold} {josa(cmp, '이', '가')} 아니라서 {josa(branch, '은', '는')} 확인하지 않았습니다."
        if used is not None:
            used.append("condition")
    otherwise = {
        "citizen": [f" 아니면 {rule.name}만 알려 줘.", f" 아니면 {rule.name}만 알려 주세요.", ""],
        "civil": [f" 해당하지 않으면 {rule.name}만 알려 주세요.", ""],
        "analyst": [f" 아니면 {rule.name}만 정리해 주세요.", ""],
    }[persona]
    closes = [c for c in _ASK_CLOSE[persona] if not branch.endswith("지") or "어떻게" not in c]  # no "…는지도 어떻게"
    close = rnd.choice(closes).format(x=f"{branch}도")
    where = f"{entity} " if entity else ""
    condition = rule.says.replace("{t}", threshold)
    request = re.sub(
        r"\s+", " ", f"{rnd.choice(_openings(persona, plan))}{where}{condition} {close}{rnd.choice(otherwise)}"
    ).strip()
    answer = re.sub(r"\s+", " ", rnd.choice(_ANSWER_OPEN[persona]) + body).strip()
    records = [FactRecord(kind=f.kind, value=f.value, tolerance=f.tolerance, unit=f.unit, label=f.label) for f in facts]
    return request, answer, records, Question(persona=persona, entity=entity, asks=asks, route=plan.route)
