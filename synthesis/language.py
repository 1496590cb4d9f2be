"""The Korean user request and the final answer of a trajectory, composed deterministically (seeded).

Requests state a goal, not a plan: the goal is what the final steps' tools give (`x-kopa-intent`, else the
summary, as a noun phrase), the context is what the user knows (address text, names, dates, business
registration numbers); intermediate steps are never named. Frames vary by persona (citizen, civil servant,
analyst), opening, goal construction and closing, with particles chosen by the last syllable.

Answers answer: per final step the fields that answer a question (`graph.concepts.answer_label`, KMA forecast
categories with labels, units and coded values in words), each with its unit, and how many rows the tool gave.

An optional paraphrase through an on-premise OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp) can be
configured with KOPA_PARAPHRASE_URL; it is never required and never a hosted model by default.
"""

from __future__ import annotations

import random
import re
from typing import Any

import httpx

from graph.concepts import AIR_GRADES, KMA_CATEGORIES, KMA_CODES, answer_label, concepts_of, field_unit, norm
from graph.models import ParamRecord, ToolRecord
from synthesis.facts import SIDO_LONG, UNITS, Fact
from synthesis.records import FactRecord, Plan, Question, Trajectory, TrajectoryStep
from synthesis.routes import entity_name_fields, row_kind

_PLACEHOLDER = re.compile(r"'?\{(\w+)\}'?(\s*(지역의|지역|측정소의|측정소|번|의|에서|에 대한))?\s*")
#: How many answering fields of one row an answer states (and the quality check expects).
ANSWER_MAX = 4
STEP_WORDS = ("먼저", "중간에", "단계", "그 결과로", "이어서", "그다음", "그 다음", "다음으로", "거쳐")


def fmt_value(name: str, value: Any) -> str:
    text = str(value)
    if (
        re.fullmatch(r"\d{8}", text)
        and text[:2] in ("19", "20")
        and ("date" in name.lower() or "dt" in name.lower() or name.lower().endswith("de"))
    ):
        return f"{text[:4]}년 {int(text[4:6])}월 {int(text[6:])}일"
    if re.fullmatch(r"\d{6}", text) and text[:2] in ("19", "20") and "ymd" in name.lower():
        return f"{text[:4]}년 {int(text[4:])}월"
    if re.fullmatch(r"\d{12}", text) and name == "tmFc":
        return f"{text[:4]}년 {int(text[4:6])}월 {int(text[6:8])}일 {text[8:10]}시 발표"
    if isinstance(value, dict):  # an object item (nts_validate's businesses): its values in words
        return " ".join(fmt_value(str(k), v) for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(fmt_value(name, v) if isinstance(v, dict) else str(v) for v in value)
    return text


_DIGIT_BATCHIM = {
    "0": True,
    "1": True,
    "2": False,
    "3": True,
    "4": False,
    "5": False,
    "6": True,
    "7": True,
    "8": True,
    "9": False,
}


def has_batchim(word: str) -> bool:
    word = re.sub(r"[\s'\".,)]+$", "", word)
    if not word:
        return False
    ch = word[-1]
    if "가" <= ch <= "힣":
        return (ord(ch) - 0xAC00) % 28 != 0
    return _DIGIT_BATCHIM.get(ch, False)


def josa(word: str, with_batchim: str, without: str) -> str:
    return word + (with_batchim if has_batchim(word) else without)


def ro(word: str) -> str:
    """'으로' after a final consonant other than ㄹ, else '로' (서울로, 종로구로, 역삼동으로, 1로)."""
    core = re.sub(r"[\s'\".,)]+$", "", word)
    ch = core[-1:] if core else ""
    rieul = ("가" <= ch <= "힣" and (ord(ch) - 0xAC00) % 28 == 8) or ch in ("1", "7", "8")
    return word + ("으로" if has_batchim(word) and not rieul else "로")


def verb(phrase: str, form: str) -> str:
    """Turn an intent noun phrase ('... 조회', '... 찾기') into a verb form."""
    if phrase.endswith("찾기"):
        stem = phrase[:-2] + "찾"
        return {
            "and": stem + "고",
            "then": stem + "은 다음",
            "req": stem + "아 줘",
            "polite": stem + "아 주세요",
            "so": stem + "아서",
        }[form]
    return {
        "and": phrase + "하고",
        "then": phrase + "한 다음",
        "req": phrase + "해 줘",
        "polite": phrase + "해 주세요",
        "so": phrase + "해서",
    }[form]


def _slots(step: TrajectoryStep) -> dict[str, Any]:
    return {p: v["value"] for p, v in step.provenance.items() if v["kind"] == "slot"}


def _short(desc: str) -> str:
    return re.sub(r"\s*\(.*?\)\s*", "", desc).strip() or desc


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
    parts = []
    for i, (s, st) in enumerate(zip(plan.steps, steps, strict=True)):
        desc = {p.name: _short(p.description) for p in s.tool.params}
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


def _frame(rnd: random.Random, context: list[str], obj: str, persona: str) -> str:
    opening = rnd.choice(_OPENINGS[persona])
    closing = rnd.choice(_CLOSINGS[persona])
    ctx = ", ".join(context)
    if not ctx:
        lead = ""
    elif ctx.endswith(("근처", "기준", "측정소", "버스")):
        lead = ctx + " "
    elif ctx.endswith("'"):
        lead = ctx + rnd.choice([" ", " 관련 ", "의 "])
    else:
        lead = ctx + rnd.choice([" ", " 기준으로 ", " 쪽 ", "의 "])
    body = closing.format(o=josa(obj, "을", "를"), s=josa(obj, "이", "가"))
    return re.sub(r"\s+", " ", f"{opening}{lead}{body}").strip()


def request_text(plan: Plan, steps: list[TrajectoryStep], rnd: random.Random) -> str:
    """The user's request: context (what they know) and goal (what the final steps give), in one of many
    persona frames; intermediate steps are never named."""
    persona = rnd.choice(["citizen", "citizen", "civil", "analyst"])
    mentioned: set[tuple[int, str]] = set()
    objs = []
    for i in plan.finals:
        obj, used = goal(plan.steps[i].tool, _slots(steps[i]))
        mentioned |= {(i, u) for u in used}
        objs.append(obj)
    context = _context(plan, steps, mentioned)
    if len(objs) == 1:
        obj = objs[0]
    else:
        joiner = rnd.choice(["와/과", "하고", "그리고"])
        if joiner == "와/과":
            obj = josa(objs[0], "과", "와") + " " + objs[1]
        elif joiner == "하고":
            obj = f"{objs[0]}하고 {objs[1]}"
        else:
            obj = f"{objs[0]} 그리고 {objs[1]}"
        obj += rnd.choice(["", " 둘 다"]) if persona == "citizen" else ""
    return _frame(rnd, context, obj, persona)


# ---------------------------------------------------------------------------------------------- answers


def _unit_value(key: str, value: Any, desc: str) -> str:
    text = str(value).strip()
    if key.lower().endswith("grade") or key.lower().endswith("grade1h"):
        return f"{text}({AIR_GRADES[text]})" if text in AIR_GRADES else text
    if key == "arrtime" and text.isdigit():
        return f"{text}초(약 {max(1, round(int(text) / 60))}분)"
    unit = field_unit(desc)
    if unit and unit not in text and re.fullmatch(r"[-\d.,]+", text):
        return f"{text}{unit}" if unit in ("℃", "%", "㎡") else f"{text} {unit}"
    return text


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
        out.append((k, _clean(v)))
        if len(out) == ANSWER_MAX:
            break
    return out


def _clean(value: Any) -> str:
    """A value as an answer states it: HTML breaks as spaces, no trailing period."""
    text = re.sub(r"<br\s*/?>", " ", str(value).strip())
    return re.sub(r"\s+", " ", text).rstrip(". ")


def _kma_phrase(cat: str, value: str) -> str:
    label, unit = KMA_CATEGORIES[cat]
    if cat in KMA_CODES:
        return f"{label} {KMA_CODES[cat].get(value, value)}({value})" if value in KMA_CODES[cat] else f"{label} {value}"
    return f"{label} {value}{unit}" if unit in ("℃", "%") else f"{label} {value}{(' ' + unit) if unit else ''}"


def answer_text(plan: Plan, steps: list[TrajectoryStep]) -> tuple[str, dict[str, str]]:
    """The final answer (natural Korean, values with units and labels) and the values it states by
    `step.field`."""
    parts = []
    answered: dict[str, str] = {}
    for i in plan.finals:
        step, tool = steps[i], plan.steps[i].tool
        items = step.response.items
        rows = step.response.rows
        desc = {f.name: f.description for f in tool.fields}
        title, _ = goal(tool, _slots(step))
        fields = answered_fields(items, step.response.chosen)
        for k, v in fields:
            answered[f"{step.step}.{k}"] = v
        if fields and "category" in items[0]:
            row = items[0]
            when = ""
            if row.get("fcstDate") and row.get("fcstTime"):
                d, t = str(row["fcstDate"]), str(row["fcstTime"])
                when = f"{int(d[4:6])}월 {int(d[6:8])}일 {t[:2]}시 기준 "
            elif row.get("baseDate") and row.get("baseTime"):
                d, t = str(row["baseDate"]), str(row["baseTime"])
                when = f"{int(d[4:6])}월 {int(d[6:8])}일 {t[:2]}시 관측 기준 "
            body = ", ".join(_kma_phrase(c, v) for c, v in fields)
            parts.append(f"{title}: {when}{body}입니다.")
            continue
        labelled = []
        for k, v in fields:
            label = answer_label(k, desc.get(k, "")) or k
            labelled.append(f"{label} {_unit_value(k, v, desc.get(k, ''))}")
        if not labelled:
            parts.append(f"{title}: 조회 결과 {rows}건이 있습니다.")
        elif rows > 1:
            parts.append(f"{title}: 받은 결과 {rows}건 중 첫 번째는 {', '.join(labelled)}입니다.")
        else:
            parts.append(f"{title}: {', '.join(labelled)}입니다.")
    return " ".join(parts), answered


# ---------------------------------------------------------------------------------------------- special samples

_ASK = {
    "keyword": "주소",
    "addr": "주소",
    "umdname": "동네 이름(읍면동)",
    "emdongnm": "동네 이름(읍면동)",
    "stationname": "측정소 이름",
    "itemname": "약 이름",
    "item_name": "약 이름",
    "bno": "사업자등록번호",
    "sidoname": "시도",
    "dealymd": "계약 연월",
    "yadmnm": "기관 이름",
    "locataddnm": "지역 이름",
    "nodenm": "정류소 이름",
    "entpname": "업체 이름",
    "routeno": "버스 번호",
}


def clarification_turns(
    record: Trajectory, param: ParamRecord, value: Any, rnd: random.Random
) -> tuple[str, str, str] | None:
    """(opening without the value, the assistant's question, the user's reply that supplies it)."""
    text = fmt_value(param.name, value)
    if text not in record.request:
        return None
    tail = r"'?\s*(지역의|지역|측정소의|측정소|의|근처|기준으로|기준|쪽|관련|번 버스)?\s*"
    opening = re.sub("'?" + re.escape(text) + tail, "", record.request)
    opening = re.sub(r"\s+", " ", opening).strip()
    if len(opening) < 6:
        return None
    label = _ASK.get(norm(param.name), _short(param.description) or param.name)
    if norm(param.name) == "keyword" and "주소" not in param.description:
        label = "장소 이름"
    question = rnd.choice(
        [
            f"어느 {josa(label, '을', '를')} 기준으로 확인할까요?",
            f"확인하려면 {label}{'이' if has_batchim(label) else '가'} 필요해요. 알려 주시겠어요?",
            f"{josa(label, '을', '를')} 알려 주시면 바로 찾아 드릴게요.",
        ]
    )
    reply = rnd.choice(
        [
            f"{josa(text, '이요', '요')}.",
            f"{text} 기준으로 부탁해요.",
            f"{josa(text, '이에요', '예요')}.",
            f"{text}입니다.",
            f"{ro(text)} 알려 주세요.",
        ]
    )
    return opening, question, reply


_IRRELEVANT = [
    "오늘 저녁 메뉴 좀 추천해 줘.",
    "이 문장을 영어로 번역해 줄래요? '회의는 내일 오전 10시입니다.'",
    "파이썬으로 리스트를 정렬하는 방법 알려 주세요.",
    "주말에 볼 만한 영화 추천해 주세요.",
    "123 곱하기 456은 얼마야?",
    "자기소개서 첫 문장 좀 다듬어 주세요.",
    "다음 주 팀 회식 장소 투표 문구 만들어 줘.",
    "요즘 인기 있는 노래 알려 줘.",
    "엑셀에서 VLOOKUP 쓰는 법 알려 주세요.",
    "생일 축하 메시지 짧게 써 줘.",
    "주식 어떤 종목 사면 좋을까요?",
    "고양이가 밥을 안 먹는데 왜 그럴까요?",
    "보고서 제목 세 가지만 제안해 주세요.",
    "민원 답변 메일 인사말을 써 주세요.",
    "분석 결과를 요약하는 문장 하나 만들어 주세요.",
    "회의록 양식 만들어 줄 수 있나요?",
    "시 한 편 지어 줘.",
    "이번 달 운동 계획표 짜 줘.",
    "영어 단어 'ubiquitous' 뜻이 뭐야?",
    "커피와 녹차 중 카페인이 더 많은 건?",
]


def irrelevant_request(rnd: random.Random) -> str:
    return rnd.choice(_IRRELEVANT)


def irrelevance_answer(tools: list[ToolRecord], rnd: random.Random) -> str:
    names = ", ".join(goal(t, {})[0] for t in tools[:3])
    return rnd.choice(
        [
            "죄송하지만 이 요청은 제가 쓸 수 있는 도구로는 도와드릴 수 없어요. "
            f"지금은 {names} 같은 공공데이터 조회를 도와드릴 수 있습니다.",
            f"지금 연결된 도구({names})는 이 요청과 관련이 없어서 도구를 "
            "쓰지 않고 답변드려요. 공공데이터 조회가 필요하시면 말씀해 주세요.",
        ]
    )


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


# ---------------------------------------------------------------------------------------------- questions and facts

_ADDRESS_LABEL = re.compile(r"(주소|위치|소재지|시도|시군구|읍면동)")
_HHMM = re.compile(r"^([01]\d|2[0-3])([0-5]\d)$")
_NUMERIC = re.compile(r"^-?[\d,]+(\.\d+)?$")
_CODE_NAME = re.compile(r"(cd|code|id|seq|sn|no|pk|yn|gb|tp|x|y|pos|lati|long|lat|lon)$")
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


def _label_of(key: str, desc: str) -> str:
    return answer_label(key, desc) or _short(desc).split("(")[0].strip() or key


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


def _num(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _fmt_num(v: float, unit: str | None = None) -> str:
    if v.is_integer():
        return f"{int(v):,}" if unit in ("원", "만원") else str(int(v))
    return f"{v:g}"


def _field_fact(key: str, value: Any, desc: str) -> tuple[Fact, str] | None:
    """One answering field as (fact, phrase the answer writes): numbers with their unit, dates in Korean, codes
    decoded (grades into words), clock times as HH:MM."""
    text = _clean(value)
    label = _label_of(key, desc)
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
    if _NUMERIC.match(text) and not _CODE_NAME.search(n):
        v = _num(text)
        if v is None or len(text.replace(",", "").split(".")[0].lstrip("-")) > 9:
            return None  # a timestamp or an identifier, not a quantity
        unit = _unit_of(key, desc)
        written = _fmt_num(v, unit)
        return Fact("number", v, tolerance=0.0, unit=_judged_unit(unit), label=label), f"{label} {written}{unit or ''}"
    if _NUMERIC.match(text) or ("코드" in desc and "명" not in desc):
        return None  # a code is not an answer
    kind = (
        "name"
        if re.search(r"(nm|name|title|명)$", n)
        or label.endswith(("명", "이름"))
        or any(long in text for long in SIDO_LONG)
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
        got = _field_fact(k, v, desc.get(k, ""))
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
        nums = [x for x in (_num(v) for _, v in values) if x is not None]
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


def _step_answer(
    plan: Plan, steps: list[TrajectoryStep], i: int, rnd: random.Random
) -> tuple[str, list[str], list[tuple[Fact, str]], str]:
    """(what is asked, the labels the question names, facts with phrases, time span) for final step i."""
    step, tool = steps[i], plan.steps[i].tool
    r = step.response
    items = r.items
    mine = {str(v["value"]) for v in step.provenance.values() if v["kind"] == "slot"}
    if items and row_kind(tool) == "table":
        facts, span = table_facts(items)
        labels = list(dict.fromkeys(f.label.replace("최저 ", "").replace("최고 ", "") for f, _ in facts))
        return "table", labels, facts, span
    if r.selected and items:
        row = items[min(r.chosen, len(items) - 1)]
        skip = {k for k, v in row.items() if str(v) in mine}
        facts = row_facts(row, tool, skip)
        return "row", [f.label for f, _ in facts], facts, ""
    count = Fact("number", float(r.rows), unit="건", label="건수")
    facts = [(count, f"건수 {r.rows}건")]
    names = entity_name_fields(tool)
    if r.rows <= len(items) and names:
        desc = {f.name: f.description for f in tool.fields}
        numeric = [
            k
            for k in items[0]
            if answer_label(k)
            and all(_NUMERIC.match(str(x.get(k, ""))) for x in items)
            and not _CODE_NAME.search(norm(k))
        ]
        if numeric and rnd.random() < 0.5:
            k = numeric[0]
            best = max(items, key=lambda x: _num(str(x.get(k))) or 0.0)
            got = _field_fact(k, best[k], desc.get(k, ""))
            who = _clean(best.get(names[0], ""))
            if got and who:
                return "highest", [got[0].label], [(Fact("name", who, label=f"{got[0].label} 최고"), who), got], ""
        listed = [_clean(x.get(names[0], "")) for x in items if _clean(x.get(names[0], ""))]
        return "list", [], [*facts, *((Fact("name", n, label=_label_of(names[0], "")), n) for n in listed)], ""
    return "count", [], facts, ""


def compose(plan: Plan, steps: list[TrajectoryStep], rnd: random.Random) -> tuple[str, str, list[FactRecord], Question]:
    """The question a person asks about the entity they know, the answer that states what it asks (with units,
    codes decoded, over the rows asked), and the facts the answer must state."""
    persona = rnd.choice(["citizen", "citizen", "civil", "analyst"])
    entity = _entity_phrase(plan, steps)
    asks: list[str] = []
    asked: list[str] = []
    said: list[str] = []
    facts: list[Fact] = []
    for i in plan.finals:
        ask, labels, fs, span = _step_answer(plan, steps, i, rnd)
        asks.append(ask)
        if not fs:
            continue
        noun = _row_noun(plan.steps[i].tool)
        phrases = [p for _, p in fs]
        facts.extend(f for f, _ in fs)
        if ask == "table":
            when = (
                rnd.choice([f"오늘 {span} ", f"{span} 사이 ", f"{span}까지 "])
                if "~" in span
                else (rnd.choice(["지금 ", "현재 ", f"{span} 기준 "]) if span else "")
            )
            asked.append(f"{when}{_and(labels[:3], rnd)}")
            body = ", ".join(phrases)
            said.append(f"{when.strip() + ' ' if when else ''}{body}입니다.")
        elif ask == "row":
            asked.append(_and(labels[:3], rnd) if labels else noun)
            said.append(f"{', '.join(phrases)}입니다.")
        elif ask == "count":
            asked.append(rnd.choice([f"{noun} 건수", f"{josa(noun, '이', '가')} 몇 건인지", f"{noun} 몇 건"]))
            said.append(rnd.choice([f"{noun} {phrases[0]}입니다.", f"조회된 {noun} {phrases[0]}입니다."]))
        elif ask == "list":
            asked.append(rnd.choice([f"{noun} 목록", f"{josa(noun, '이', '가')} 어디 어디인지", f"{noun} 전부"]))
            said.append(f"{noun} {phrases[0]}이고, {', '.join(phrases[1:])}입니다.")
        else:  # highest
            asked.append(f"{noun} 중 {labels[0]}{'이' if has_batchim(labels[0]) else '가'} 가장 높은 곳")
            said.append(
                f"{labels[0]}{'이' if has_batchim(labels[0]) else '가'} "
                f"가장 높은 곳은 {phrases[0]}({phrases[1]})입니다."
            )
    if not asked:
        return "", "", [], Question(persona=persona, entity=entity, asks=asks, route=plan.route)
    goal_text = _and(asked, rnd) if len(asked) > 1 else asked[0]
    lead = entity + (
        rnd.choice([" ", "의 ", " 기준으로 "]) if entity and not entity.endswith(("근처", "기준")) else " "
    )
    close = rnd.choice(_ASK_CLOSE[persona])
    opening = rnd.choice(_OPENINGS[persona])
    request = re.sub(r"\s+", " ", f"{opening}{lead if entity else ''}{close.format(x=goal_text)}").strip()
    subject = f"{entity} 기준으로 " if entity and rnd.random() < 0.5 else ""
    answer = re.sub(r"\s+", " ", rnd.choice(_ANSWER_OPEN[persona]) + subject + " ".join(said)).strip()
    records = [FactRecord(kind=f.kind, value=f.value, tolerance=f.tolerance, unit=f.unit, label=f.label) for f in facts]
    question = Question(persona=persona, entity=entity, asks=asks, route=plan.route)
    return request, answer, records, question
