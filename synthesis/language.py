"""The Korean user request and the final answer of a trajectory, composed deterministically (seeded) from
per-tool intent phrases (`x-kopa-intent`, else the summary) and the user-provided slot values.

An optional paraphrase through an on-premise OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp) can be
configured with KOPA_PARAPHRASE_URL; it is never required and never a hosted model by default.
"""

from __future__ import annotations

import random
import re
from typing import Any

import httpx

from synthesis.records import Plan, TrajectoryStep

_PLACEHOLDER = re.compile(r"\{(\w+)\}(\s*(지역의|지역|측정소의|측정소|번|의|에서|에 대한))?\s*")


def fmt_value(name: str, value: Any) -> str:
    text = str(value)
    if re.fullmatch(r"\d{8}", text) and text[:2] in ("19", "20") and ("date" in name.lower() or "dt" in name.lower()
                                                                     or name.lower().endswith("de")):
        return f"{text[:4]}년 {int(text[4:6])}월 {int(text[6:])}일"
    if re.fullmatch(r"\d{6}", text) and text[:2] in ("19", "20") and "ymd" in name.lower():
        return f"{text[:4]}년 {int(text[4:])}월"
    if re.fullmatch(r"\d{12}", text) and name == "tmFc":
        return f"{text[:4]}년 {int(text[4:6])}월 {int(text[6:8])}일 {text[8:10]}시 발표"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return text


def _phrase(tool: Any, slots: dict[str, Any]) -> str:
    template = tool.intent or tool.summary or tool.description_en

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in slots:
            return fmt_value(name, slots[name]).strip() + (m.group(2) or "") + " "
        return ""

    text = _PLACEHOLDER.sub(repl, template)
    text = re.sub(r"'\s*([^']*?)\s*'", r"'\1'", text).replace("''", "")
    return re.sub(r"\s+", " ", text).strip()


_DIGIT_BATCHIM = {"0": True, "1": True, "2": False, "3": True, "4": False, "5": False, "6": True, "7": True,
                  "8": True, "9": False}


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


def verb(phrase: str, form: str) -> str:
    """Turn an intent noun phrase ('... 조회', '... 찾기') into a verb form."""
    if phrase.endswith("찾기"):
        stem = phrase[:-2] + "찾"
        return {"and": stem + "고", "then": stem + "은 다음", "req": stem + "아 줘", "polite": stem + "아 주세요",
                "so": stem + "아서"}[form]
    return {"and": phrase + "하고", "then": phrase + "한 다음", "req": phrase + "해 줘", "polite": phrase + "해 주세요",
            "so": phrase + "해서"}[form]


def _slots(step: TrajectoryStep) -> dict[str, Any]:
    return {p: v["value"] for p, v in step.provenance.items() if v["kind"] == "slot"}


def _context(plan: Plan, steps: list[TrajectoryStep]) -> str:
    """User-provided values the phrases do not mention, so the request carries every argument a model needs."""
    parts = []
    for s, st in zip(plan.steps, steps, strict=True):
        template = s.tool.intent or ""
        desc = {p.name: _short(p.description) for p in s.tool.params}
        for name, value in _slots(st).items():
            if "{" + name + "}" in template:
                continue
            parts.append(f"{desc.get(name, name)} {fmt_value(name, value)}")
    return ", ".join(dict.fromkeys(parts))


def request_text(plan: Plan, steps: list[TrajectoryStep], rnd: random.Random) -> str:
    text = _request(plan, steps, rnd)
    context = _context(plan, steps)
    return f"{text} ({context})" if context else text


def _request(plan: Plan, steps: list[TrajectoryStep], rnd: random.Random) -> str:
    p = [_phrase(s.tool, _slots(st)) for s, st in zip(plan.steps, steps, strict=True)]
    if plan.shape == "single":
        return rnd.choice([verb(p[0], "req") + ".", verb(p[0], "polite") + ".", p[0] + " 부탁해요."])
    if plan.shape == "chain":
        text = rnd.choice([f"{verb(p[0], 'then')}, 그 결과로 {verb(p[-1], 'req')}.",
                           f"{verb(p[-1], 'polite')}. 먼저 {josa(p[0], '이', '가')} 필요해요.",
                           f"{verb(p[0], 'and')} 이어서 {verb(p[-1], 'req')}."])
        if len(p) > 2:
            text += " 중간에 " + ", ".join(p[1:-1]) + " 단계도 거쳐야 해요."
        return text
    if plan.shape == "fan_in":
        return rnd.choice([f"{verb(p[0], 'and')} {verb(p[1], 'so')}, 두 결과로 {verb(p[2], 'req')}.",
                           f"{verb(p[2], 'polite')}. 이를 위해 {josa(p[0], '과', '와')} {josa(p[1], '을', '를')} 함께 써 주세요."])
    return rnd.choice([f"{verb(p[0], 'then')} {verb(p[1], 'and')} {josa(p[2], '도', '도')} 함께 알려줘.",
                       f"{verb(p[0], 'so')} {josa(p[1], '과', '와')} {josa(p[2], '을', '를')} 한 번에 정리해 주세요."])


def _short(desc: str) -> str:
    return re.sub(r"\s*\(.*?\)\s*", "", desc).strip() or desc


def answer_text(plan: Plan, steps: list[TrajectoryStep]) -> str:
    parts = []
    for i in plan.finals:
        step, tool = steps[i], plan.steps[i].tool
        items = step.response.items
        rows = step.response.rows
        desc = {f.name: _short(f.description) for f in tool.fields}
        highlights = []
        if items:
            for k, v in items[0].items():
                if isinstance(v, str | int | float) and str(v).strip() and k in desc and len(str(v)) <= 60:
                    highlights.append(f"{desc[k]} {str(v).strip()}")
                if len(highlights) == 4:
                    break
        title = tool.summary or tool.name
        line = f"{title} 결과 {rows}건을 찾았습니다."
        if highlights:
            line += " 첫 번째 결과: " + ", ".join(highlights) + "."
        parts.append(line)
    return " ".join(parts)


def paraphrase(text: str, url: str, *, must_keep: list[str], timeout: float = 15.0) -> str:
    """Ask an on-premise OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp) for a natural rewording.

    Falls back to the deterministic text when the endpoint fails or drops a value the request must carry."""
    body = {"model": "local", "temperature": 0.7, "max_tokens": 256, "messages": [
        {"role": "system", "content": "다음 요청을 같은 뜻의 자연스러운 한국어 한두 문장으로 바꿔 쓰세요. "
                                      "숫자, 코드, 이름 같은 값은 그대로 두고 바꾼 문장만 답하세요."},
        {"role": "user", "content": text}]}
    try:
        resp = httpx.post(url.rstrip("/") + "/v1/chat/completions", json=body, timeout=timeout)
        resp.raise_for_status()
        out = str(resp.json()["choices"][0]["message"]["content"]).strip()
    except (httpx.HTTPError, KeyError, IndexError, ValueError):
        return text
    if not out or any(v and v not in out for v in must_keep):
        return text
    return out
