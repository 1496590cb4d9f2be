"""Claims of one value of a closed set that the results give another value of: a medicine's class (`일반의약품`
where MFDS says `전문의약품`), a business's status or taxpayer type, a weekly closing day (`매주 월요일 휴무` where
the results say `화요일`). The APIs state these as one field's value among a few fixed ones, so an answer that names
one the results never hold, where they hold another of the same set, says something they contradict. For the judge
(`synthesis.facts.rejected`)."""

from __future__ import annotations

import re

from synthesis.answer_values import negated_at, normalise_name, prepare_text
from synthesis.seen import Seen

#: Values of one field that exclude each other, as the public APIs write them (MFDS ETC_OTC_CODE, NTS b_stt and
#: tax_type).
EXCLUSIVE: tuple[tuple[str, ...], ...] = (
    ("일반의약품", "전문의약품"),
    ("계속사업자", "휴업자", "폐업자"),
    ("일반과세자", "간이과세자", "면세사업자"),
)
_WEEKDAY = re.compile(r"([월화수목금토일])요일")
#: What follows a value the answer says the thing is (`일반의약품이고`, `일반의약품입니다`, `(일반의약품)`), not one
#: it names as a condition or a kind of information (`계속사업자 조건에`, `일반의약품 복용정보`).
_ASSERTED = re.compile(r"\s?(?:이에요|예요|입니다|이고|이며|이라|이야|이네|이죠|인 |으로 (?:분류|확인|등록)|[(),.;]|$)")
#: A clause that gives a day as the one a place is closed on.
_CLOSED = re.compile(r"휴무|휴관|휴일|쉬는 날|쉽니다|쉬어요|쉬고|문을 닫|closed", re.I)


def contradicted_value(answer: str, seen: Seen) -> str:
    """A value of a closed set the answer states (not negated) that the results never hold, where they hold another
    of its set; or a weekday given as a closing day that the results never name, where they name another. The
    value, or ''."""
    text = prepare_text(answer)
    held = seen.result_text
    if not held:
        return ""
    for group in EXCLUSIVE:
        present = [v for v in group if v in held]
        if not present:
            continue
        for value in group:
            if value in present:
                continue
            for m in re.finditer(value, text):
                if (
                    _ASSERTED.match(text, m.end())
                    and not negated_at(text, m.end())
                    and not _contrasted(text, m.start())
                ):
                    return value
    if not _CLOSED.search(text) or not (days := set(_WEEKDAY.findall(" ".join(seen.leaves)))):
        return ""
    if seen.now is not None:
        days.add("월화수목금토일"[seen.now.weekday()])  # today, which the answer may name
    for clause in re.split(r"[.!?\n,;]|이고|이며", text):
        if not _CLOSED.search(clause) or re.search(r"아니|않|\bnot\b|n't\b", clause):
            continue
        for m in _WEEKDAY.finditer(clause):
            if m.group(1) not in days and not negated_at(clause, m.end()):
                return m.group()
    return ""


def _contrasted(text: str, at: int) -> bool:
    """The value is set against another (`일반의약품이 아니라`, `not a 일반의약품`) just before it."""
    return bool(re.search(r"(?:\bnot (?:an? )?|\bno )$", text[max(0, at - 8) : at])) or bool(
        re.search(r"아니(?:라|고)?\s*$", normalise_name(text[max(0, at - 6) : at]))
    )
