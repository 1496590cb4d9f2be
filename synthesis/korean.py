"""Korean grammar for composed text: particles chosen by the last syllable (digits read aloud), verb forms of a
goal phrase, and values as a sentence writes them (compact dates as dates)."""

from __future__ import annotations

import re
from typing import Any


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


def short_description(desc: str) -> str:
    return re.sub(r"\s*\(.*?\)\s*", "", desc).strip() or desc


def clean_value(value: Any) -> str:
    """A value as an answer states it: HTML breaks as spaces, no trailing period."""
    text = re.sub(r"<br\s*/?>", " ", str(value).strip())
    return re.sub(r"\s+", " ", text).rstrip(". ")


#: Endings that close a Korean sentence (…합니다, …한다, …하세요, …하십시오, …해요): a value ending in one is itself a
#: sentence and takes no copula after it (never "복용합니다입니다").
_SENTENCE_END = re.compile(r"(니다|[한된었았였했있없겠는]다|세요|시오|[어아해에예]요)[.!]?$")


def ends_sentence(text: str) -> bool:
    return bool(_SENTENCE_END.search(text.strip()))


def sentences(parts: list[str]) -> str:
    """Phrases of an answer ("업체명 …", "복용법 … 복용합니다") as sentences: phrases are listed with commas and the
    last closes with 입니다, except that a phrase which already ends a sentence closes its own (with a period);
    empty phrases are left out."""
    out = ""
    parts = [p.strip() for p in parts if p and p.strip()]
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if ends_sentence(part):
            out += part.rstrip(".!") + "." + ("" if last else " ")
        else:
            out += part + ("입니다." if last else ", ")
    return out


def num_text(v: float) -> str:
    """A number as a person writes it: 60, not 60.0; 2.5 as is."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def object_of(phrase: str) -> str:
    """A phrase as the object of a verb (확인했습니다): a clause ending in 지 takes no particle, a noun 을/를."""
    return phrase if phrase.endswith("지") else josa(phrase, "을", "를")
