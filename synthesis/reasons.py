"""Reasons an answer gives for what came back, judged against what the model saw (`synthesis.facts.rejected`).

An answer may say why a result is empty or why a check failed, but only with a cause the results give: an empty
result says that nothing came back, not that the service is down for maintenance, that the key expired, that the
user mistyped the address or that a number is not registered. Each cause is a kind of words an answer uses to
state it and the words a result or error message uses when it is so (a gateway's `SERVICE_KEY_IS_NOT_REGISTERED`,
NTS's `국세청에 등록되지 않은 사업자등록번호입니다`, a `지원하지 않는` message). A cause whose kind no result the model
saw speaks of is made up.
"""

from __future__ import annotations

import re

from synthesis.answer_values import nfkc
from synthesis.seen import Seen

#: (what the answer says, what a result must speak of for it): the service or the area not covered (`주소 검색
#: 서비스는 지원하지 않아요`, `…를 제공하지 않는 지역이에요`, `관측소가 없는 지역이에요`), maintenance or an outage
#: (`측정소 점검 중이라`, `장비 점검`, `under maintenance`), the credentials (`API 인증이 만료돼서`, `the key expired`),
#: the user's input (`주소를 잘못 입력하신`, `a typo in the address`), a number not registered (`국세청에 등록되지 않은
#: 번호`, `not a registered number`).
_CAUSES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (
        re.compile(
            r"(?:서비스|기능|API)(?:는|은|가|이|를|을|에서는?)?\s*(?:지원|제공)(?:하지|되지)\s*않"
            r"|(?:지원|제공)(?:하지|되지)\s*않는\s*(?:지역|곳|도시)|없는\s*(?:지역|도시)(?:이|입니|예)"
            r"|\b(?:service|API) (?:is not|isn't) (?:supported|available)|\bnot a supported (?:area|region|city)\b",
            re.I,
        ),
        re.compile(r"지원|제공|support|provide|cover|available", re.I),
    ),
    (
        re.compile(r"점검|\bmaintenance\b|서버\s*(?:장애|오류)|\boutage\b", re.I),
        re.compile(r"점검|maintenance|장애|outage", re.I),
    ),
    (
        re.compile(
            r"(?:인증|서비스\s*키|API\s*키|인증키)\S{0,3}\s*(?:정보\S{0,2}\s*)?(?:만료|오류|실패|문제)"
            r"|\b(?:key|credentials?|token|authenti[a-z]+)\b[^.!?\n]{0,20}\b(?:expired|invalid|failed|rejected)\b",
            re.I,
        ),
        re.compile(r"인증|서비스\s*키|service_?key|\bkey\b|auth|expired|credential", re.I),
    ),
    (
        re.compile(
            r"잘못\s*(?:입력|적|쓰|기재)|입력\S{0,2}\s*(?:잘못|오류|오타)|오타|잘못된\s*(?:주소|번호|입력|지명|이름)"
            r"|\b(?:typo|mistyped|misspel+ed)\b|\b(?:wrong|invalid|incorrect) (?:address|input|number)\b",
            re.I,
        ),
        re.compile(r"잘못|유효하지|올바르지|형식|invalid|incorrect|wrong", re.I),
    ),
    (
        re.compile(
            r"(?:번호|사업자)[^.!?\n]{0,20}등록(?:되지|이\s*되지|돼\s*있지|되어\s*있지)\s*않|미등록\s*(?:번호|사업자)"
            r"|등록(?:되지|이\s*되지|돼\s*있지|되어\s*있지)\s*않은\s*(?:번호|사업자)"
            r"|\bnot (?:a )?registered\b|\bunregistered\b",
            re.I,
        ),
        re.compile(r"등록되지\s*않|미등록|not registered|unregistered", re.I),
    ),
)


def unsupported_reason(answer: str, seen: Seen, asked: list[str]) -> str:
    """The words of the first cause the answer gives (for an empty result, an error or a row) that no result or
    error message the model saw speaks of, nor an `asked` value (a fact of the task: an empty NTS status answers
    that a number is not registered), or ''. With no result seen, nothing is judged."""
    if not seen.results:
        return ""
    text = nfkc(answer)
    for says, needs in _CAUSES:
        m = says.search(text)
        if m and not any(needs.search(v) for v in (*seen.leaves, *seen.keys, *asked)):
            return m.group(0)
    return ""
