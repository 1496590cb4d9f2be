"""Whether an answer commits to a name, text, time or date fact (`text_hit`, `date_hit`): the value as written (names
normalised, never inside a longer number), or in other words of the same meaning (a colour, a verdict, a status
noun as its state, a dosing frequency, a number of days, a phrase's words), a clock time in any form, an honest
report of missing data in any wording; never negated, never beside another row's value offered as an alternative,
said of the fact's own row. For the judge (`synthesis.facts.check_answer`).
"""

from __future__ import annotations

import re
from datetime import datetime

from synthesis.answer_dates import as_date, date_spans, time_spans, time_values
from synthesis.answer_values import (
    clause_of,
    negated_at,
    nfkc,
    normalise_name,
    normalise_text,
    prepare_text,
    squeeze,
)
from synthesis.attribution import bound_to_other, labelled_as_other, said_of_other, times_of
from synthesis.fact_terms import (
    DATA_NOUNS,
    MODAL,
    Fact,
    guessable,
    in_context,
    label_terms,
    negative,
)
from synthesis.number_facts import ALTERNATIVE


def _span_hits(text: str, needle: str, prepared: str) -> list[tuple[int, int]]:
    """Offsets in `prepared` of the normalised needle, never inside a longer number or word of digits."""
    squeezed, pos = squeeze(prepared)
    out = []
    start = 0
    while needle:
        i = squeezed.find(needle, start)
        if i < 0:
            break
        a, b = pos[i], pos[i + len(needle) - 1] + 1
        start = i + 1
        if needle[0].isdigit() and a > 0 and prepared[a - 1].isdigit():
            continue
        if (
            needle[-1].isdigit()
            and b < len(prepared)
            and (prepared[b].isdigit() or (prepared[b] in ".," and prepared[b + 1 : b + 2].isdigit()))
        ):
            continue
        if (
            needle.isascii()
            and needle[0].isalpha()
            and a > 0
            and prepared[a - 1].isascii()
            and prepared[a - 1].isalpha()
        ):
            continue
        out.append((a, b))
    return out


def _absence_hit(prepared: str, bounds: list[tuple[int, int]], terms: list[str]) -> list[tuple[int, int]]:
    """Committed statements of missing data (`자료가 없습니다`, `검색 결과 없음`), never the modal `수 없`."""
    out = []
    for m in re.finditer(r"없|않", prepared):
        if MODAL.search(prepared[max(0, m.start() - 6) : m.start()]):
            continue
        a, _ = clause_of(bounds, m.start())
        clause = normalise_name(prepared[a : m.start()])
        if any(t in clause for t in (*terms, *DATA_NOUNS)):
            out.append((m.start(), m.end()))
    return out


def text_hit(
    prepared: str,
    fact: Fact,
    bounds: list[tuple[int, int]],
    facts: list[Fact],
    now: datetime | None = None,
    *,
    strict: bool = True,
    asked: str = "",
    field_labels: frozenset[str] = frozenset(),
) -> bool:
    """Whether the text commits to the name, text or time fact; `field_labels` as for `number_facts.number_hit`."""
    raw = str(fact.value)
    times = time_values(raw.zfill(4) if re.fullmatch(r"\d{3}", raw.strip()) else raw)
    clock = time_spans(prepared, raw=False)
    if times is not None and (
        not raw.strip().isdigit()
        or not (written := _span_hits(prepared, normalise_text(raw), prepared))
        # written as a clock time (`5:20 a.m.` for 520, `13시` beside a range `1300~1400`): judged as one
        or any(a <= h < b for _, a, b in clock for h, _ in written)
        or any(times[0] in mins for mins, _, _ in clock)
    ):
        spans = time_spans(prepared)
        # another asked time, or another time of the fact's own row (the last bus beside the first), is no
        # alternative
        beside = {t for f in facts if f is not fact for t in times_of(f)}
        beside |= {t for x in fact.about for t in (time_values(x) or [])}
        for first, (mins0, a0, _) in enumerate(spans):
            if times[0] not in mins0:
                continue
            at, end, ok = a0, spans[first][2], True
            for want in times[1:]:
                nxt = next(((a, b) for mins, a, b in spans if want in mins and a > at), None)
                if nxt is None:
                    ok = False
                    break
                at, end = nxt
            if not ok or negated_at(prepared, end):
                continue
            lo, hi = clause_of(bounds, a0)
            if (
                len(times) == 1
                and re.search(r"사이|\bbetween\b", prepared[lo:hi])
                and _paired_with_any(prepared, a0, spans)
            ):
                continue  # a range where one time is asked (`오후 1시~2시 사이에 마쳐요`)
            if len(times) == 1 and any(
                lo <= a <= hi
                and not mins & set(times)
                and not mins & beside
                and not _range_end(prepared, a)
                and not _paired(prepared, a, spans, times)
                and not _time_compared(prepared, b)
                for mins, a, b in spans
            ):
                continue  # another time offered for the same thing
            if said_of_other(prepared, bounds, a0, fact, facts, now, asked=asked) or labelled_as_other(
                prepared, a0, field_labels
            ):
                continue
            return True
        return False
    needle = normalise_name(raw) if fact.kind == "name" else normalise_text(raw)
    if not needle:
        return False
    terms = label_terms(fact)
    weak = guessable(fact)
    if negative(fact):
        # an honest report of missing data in any wording (`자료가 없어요`, `등록된 정보가 없습니다`,
        # `찾을 수 없었어요`, `no data came back`), or the words
        if _DECLINING.search(prepared):
            return False  # a refusal to look (`도구로는 확인할 수 없습니다`) reports nothing about the data
        return bool(
            _absence_hit(prepared, bounds, terms)
            or _span_hits(prepared, needle, prepared)
            or _NOT_FOUND.search(prepared)
            or _NONE_EN.search(prepared)
        )
    if weak and not terms:
        return False
    hits = (
        _span_hits(prepared, needle, prepared)
        + _days_hits(prepared, raw)
        + _synonym_hits(prepared, raw)
        + _stem_hits(prepared, raw)
        + _frequency_hits(prepared, raw)
        + _address_tail_hits(prepared, raw)
        + _ordinal_hits(prepared, needle)
        + _weekday_hits(prepared, raw)
        + _taxpayer_hits(prepared, raw)
    )
    if not hits and fact.kind == "text":
        hits = _loose_hits(prepared, raw, bounds)
    if any(negated_at(prepared, b) or _negating_prefix(prepared, a, raw) for a, b in hits):
        return False  # the answer says it is not so (somewhere): `아닙니다` after it, `불일치` for `일치`
    short = fact.kind == "name" and bool(re.fullmatch(r"[가-힣]{2}", normalise_name(raw)))
    for a, b in hits:
        if weak and not in_context(prepared, bounds, a, terms):
            continue
        if short and a > 0 and re.match(r"[가-힣]", prepared[a - 1]):
            continue  # the end of a longer word (`원형` in `타원형`, `내과` in `한방내과`), another thing
        if bound_to_other(prepared, a, b, fact, facts):
            continue
        if _candidates(prepared, bounds, a, fact, facts, strict=strict) or said_of_other(
            prepared, bounds, a, fact, facts, now, asked=asked
        ):
            continue
        return True
    return False


def _negating_prefix(prepared: str, at: int, raw: str) -> bool:
    """A word found behind a negation that makes it its opposite: a Korean prefix (`불일치` for `일치`, `미등록` for
    `등록`, `비대상` for `대상`, where the value itself does not begin so) or an English `not` (`do not match`)."""
    value = normalise_name(raw)
    if re.search(r"\b(?:not|no|never)\s+$|n't\s+$", prepared[max(0, at - 8) : at]):
        return True  # `do not match`, `isn't white`
    return (
        bool(re.fullmatch(r"[가-힣]{2,}", value))
        and at > 0
        and prepared[at - 1] in "불미비무"
        and not (at > 1 and re.match(r"[가-힣]", prepared[at - 2]))
    )


#: What the call found: nothing (`찾을 수 없었어요`, `조회되지 않아요`), as opposed to a refusal to look.
_NOT_FOUND = re.compile(
    r"(?:찾|조회|검색|확인)[가-힣]{0,3}\s*수\s*(?:가|는)?\s*없었|(?:조회|검색|확인|등록)되지 않|나오지 않"
    r"|(?:찾|조회하|검색하|확인하)지\s*못했|비어\s*있|(?<![\d.,])0\s*건|한\s*건도|확인\s*불가"
)
#: A refusal to look rather than a report of what was found.
_DECLINING = re.compile(r"도구(?:로는|로|가|를)|요청하신 (?:정보|내용)|\btools?\b", re.I)
_NONE_EN = re.compile(
    r"\bno (?:[\w-]+ ){0,3}(?:data|record|records|result|results|rows|information|match|matched|matches|entry|entries"
    r"|listing|listings)\b"
    # `no region code came back`, `no station was found`: whatever was asked for, reported missing
    r"|\bno (?:[\w-]+ ){0,3}[\w-]+ (?:came back|(?:was|were) (?:returned|found)|turned up|exists?)\b"
    r"|\b(?:could not|couldn'?t|cannot|can'?t) be (?:confirmed|verified|found)\b"
    r"|\b(?:isn'?t|is not|wasn'?t|was not|aren'?t|are not) (?:in|listed in|among) (?:the|any)\b"
    r"|\bnot found\b"
    r"|\bnothing (?:came|was)"
    r"|\bzero rows\b|\breturned (?:no|nothing|zero)\b|\bnot registered\b|\bisn'?t registered\b|\bno such\b"
    r"|\b(?:came back|returned|was|were|is) empty\b|\b(?:does not|doesn'?t|did not|didn'?t) (?:appear|show up|exist)\b"
)
#: Words that say the same colour (MFDS 낱알식별 writes 하양, 노랑, 분홍 ...; answers write 흰색, 하얀색 ...).
COLOURS: tuple[tuple[str, ...], ...] = (
    ("하양", "흰색", "하얀색", "하얀", "흰", "백색", "white"),
    ("노랑", "노란색", "노란", "황색", "yellow"),
    ("빨강", "빨간색", "빨간", "적색", "red"),
    ("주황", "주황색", "orange"),
    ("분홍", "분홍색", "핑크", "핑크색", "pink"),
    ("파랑", "파란색", "파란", "청색", "blue"),
    ("초록", "초록색", "녹색", "green"),
    ("연두", "연두색", "light green"),
    ("갈색", "밤색", "brown"),
    ("검정", "검은색", "검정색", "흑색", "black"),
    ("보라", "보라색", "자주", "자주색", "purple"),
    ("회색", "gray", "grey"),
)


#: Words that say the same tablet shape (MFDS 낱알식별's DRUG_SHAPE codes 원형, 타원형, 장방형 ...; answers write 둥근,
#: round, oval ...).
SHAPES: tuple[tuple[str, ...], ...] = (
    ("원형", "둥근", "동그란", "round", "circular"),
    ("타원형", "타원", "oval", "elliptical"),
    ("장방형", "oblong"),
    ("반원형", "semicircular"),
    ("삼각형", "triangular"),
    ("사각형", "square"),
    ("마름모형", "마름모", "diamond-shaped"),
    ("오각형", "pentagonal"),
    ("육각형", "hexagonal"),
    ("팔각형", "octagonal"),
)


#: Words that give the same verdict (a validation's 일치, in English `match`).
VERDICTS: tuple[tuple[str, ...], ...] = (
    ("일치", "match", "matches", "matched", "matching"),
    ("불일치", "mismatch", "mismatched"),
)

#: Words that name the same effect of a medicine (e약은요's efcyQesitm, `이 약은 해열, 진통에 사용합니다`), as
#: answers paraphrase or translate it.
EFFECTS: tuple[tuple[str, ...], ...] = (
    ("해열", "열을 내리", "열 내리", "열내림", "열을 떨어뜨", "fever"),
    ("진통", "통증을 줄", "통증 완화", "통증을 완화", "pain relief", "painkiller", "relieves pain", "relieve pain"),
    ("소염", "염증을 줄", "염증 완화", "염증을 가라앉", "anti-inflammatory", "inflammation"),
)

#: A service's limit in days as English answers say it (`data up to the previous day` for `전날까지`, `only the most
#: recent day` for `최근 1일`): whole phrases, not `yesterday` alone (a day asked about is no limit).
LIMITS: tuple[tuple[str, ...], ...] = (
    ("전날", "전일", "previous day", "the day before", "up to yesterday", "until yesterday", "through yesterday"),
    ("1일", "most recent day", "last day", "latest day", "past day", "one day"),
)


def _synonym_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """Another word for the same colour, shape, verdict or limit (`흰색` for `하양`, `round` for `원형`, `match` for
    `일치`, `previous day` for `전날`)."""
    value = normalise_name(raw)
    for words in (*COLOURS, *SHAPES, *VERDICTS, *LIMITS, *EFFECTS):
        if value in (normalise_name(w) for w in words):
            rx = "|".join(
                rf"\b{re.escape(w)}\b" if w.isascii() else rf"(?<!\d){re.escape(w)}"  # `1일` is not in `11일`
                for w in sorted(words, key=len, reverse=True)
            )
            return [(m.start(), m.end()) for m in re.finditer(rx, prepared)]
    return []


def _loose_hits(prepared: str, raw: str, bounds: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A phrase of several words said in other words (`횡문근융해증 위험이 커져요` for `… 위험 증가`): a clause
    holding its longest word and words covering at least 60 % of its letters (a word's stem counts)."""
    words = [normalise_name(w) for w in re.split(r"\s+", prepare_text(raw)) if len(normalise_name(w)) >= 2]
    if len(words) < 2:
        return []
    longest = max(words, key=len)
    total = sum(len(w) for w in words)
    out = []
    for a, b in bounds:
        clause = normalise_name(prepared[a:b])
        if longest not in clause:
            continue
        covered = sum(len(w) for w in words if w in clause or (len(w) >= 3 and w[:-1] in clause))
        if covered >= 0.6 * total:
            out.append((a + max(0, prepared[a:b].find(longest[:2])), b))
    return out


def _address_tail_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """An address written without its leading 시도 or 구 (`종로구 사직로 102`, `압구정동 271` for `서울 강남구 압구정동
    271`): its road, 동 or 리 and number at least, followed by no further number."""
    words = raw.split()
    if len(words) < 3 or not re.fullmatch(r"\d+(?:-\d+)?", words[-1]) or not re.search(r"[로길동리가]$", words[-2]):
        return []
    out = []
    for a, b in _span_hits(prepared, normalise_name(" ".join(words[-2:])), prepared):
        if not re.match(r"-?\d", prepared[b : b + 2]):
            out.append((a, b))
    return out


_WEEKDAYS = {
    "월": "monday",
    "화": "tuesday",
    "수": "wednesday",
    "목": "thursday",
    "금": "friday",
    "토": "saturday",
    "일": "sunday",
}


def _weekday_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """A weekly day said in other words (`화요일마다`, `every Tuesday`, `on Tuesdays` for `매주 화요일`); a day
    without `매주` also in English (`Tuesday` for `화요일`)."""
    m = re.fullmatch(r"\s*(매주)?\s*([월화수목금토일])요일\s*", nfkc(raw))
    if not m:
        return []
    day, english = m.group(2), _WEEKDAYS[m.group(2)]
    rx = rf"{day}요일\s*마다|매주\s*{day}요일|\bevery {english}\b|\b{english}s\b"
    if not m.group(1):
        rx += rf"|\b{english}\b"
    return [(x.start(), x.end()) for x in re.finditer(rx, prepared)]


def _taxpayer_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """A taxpayer type said without the tax it is of (`일반과세자` for NTS's `부가가치세 일반과세자`): the type names
    the taxpayer, the tax before it only files it."""
    m = re.fullmatch(r"\s*[가-힣]+세\s+([가-힣]{2,}자)\s*", nfkc(raw))
    return _span_hits(prepared, m.group(1), prepared) if m else []


def _ordinal_hits(prepared: str, needle: str) -> list[tuple[int, int]]:
    """A value with an ordinal `제` before a number written without it (`2종 일반주거지역` for `제2종일반주거지역`,
    `1호` for `제1호`): Korean drops the prefix freely."""
    bare = re.sub(r"제(?=\d)", "", needle)
    return _span_hits(prepared, bare, prepared) if bare != needle else []


def _stem_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """A status noun in `…자` said as its state (`폐업한 상태`, `휴업 중` for `폐업자`, `휴업자`)."""
    value = normalise_name(raw)
    if len(value) < 3 or not value.endswith("자") or not re.fullmatch(r"[가-힣]+", value):
        return []
    rx = rf"{re.escape(value[:-1])}(?=\s?(?:한|된|했|중|상태|하였|되었|이에요|입니다|이고|으로|로|[(),.:—–\n-]|$))"
    return [(m.start(), m.end()) for m in re.finditer(rx, prepared)]


_TIMES_WORD = {1: "한", 2: "두", 3: "세", 4: "네", 5: "다섯"}
_TIMES_EN = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _frequency_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """A dosing frequency in other words (`하루 세 번`, `1일 3번`, `3 times a day` for `1일 3회`)."""
    m = re.fullmatch(r"\s*1\s*일\s*(\d)\s*회\s*", nfkc(raw))
    if not m:
        return []
    n = int(m.group(1))
    times = rf"(?:{n}\s*(?:회|번)" + (rf"|{_TIMES_WORD[n]}\s*(?:번|차례)" if n in _TIMES_WORD else "") + ")"
    english = "once" if n == 1 else rf"(?<![\d.]){n}\s*(?:times|x)|{_TIMES_EN.get(n, n)} times"
    rx = rf"(?:1\s*일|하루(?:에)?)\s*{times}|\b(?:{english})\s*(?:(?:a|per|each)\s*day|daily)\b"
    return [(x.start(), x.end()) for x in re.finditer(rx, prepared)]


def _days_hits(prepared: str, raw: str) -> list[tuple[int, int]]:
    """A number of days written in English or as a Korean word (`3 days`, `사흘`) for a value such as `3일`."""
    m = re.fullmatch(r"\s*(\d{1,2})\s*일\s*", nfkc(raw))
    if not m:
        return []
    n = int(m.group(1))
    words = {1: "하루", 2: "이틀", 3: "사흘", 4: "나흘"}
    rx = rf"(?<![\d.])\b{n}\s*days?\b" + (f"|{words[n]}" if n in words else "")
    return [(x.start(), x.end()) for x in re.finditer(rx, prepared)]


def _paired(text: str, at: int, spans: list[tuple[set[int], int, int]], times: list[int]) -> bool:
    """A time that opens a range whose other end is the asked time (`09:00~13:00` for a closing time 13:00)."""
    end = next((b for _, a, b in spans if a == at), at)
    nxt = next(((mins, a) for mins, a, _ in spans if a > at), None)
    return bool(
        nxt
        and nxt[0] & set(times)
        and re.fullmatch(r"\s*(?:부터|~|∼|〜|-|–|에서)?\s*(?:~|∼|-)?\s*", text[end : nxt[1]])
    )


def _time_compared(text: str, end: int) -> bool:
    """A time the answer measures against (`정오를 넘겨`, `6시 이후`, `9시 전에`): not a second value."""
    return bool(
        re.match(r"\s*(?:을|를|이|가|은|는)?\s*(?:넘|지나|보다|이후|이전|전에|후에|전까지|이전에)", text[end : end + 8])
    )


def _paired_with_any(text: str, at: int, spans: list[tuple[set[int], int, int]]) -> bool:
    """The time at `at` opens or closes a range with another time (`1시~2시`, `1시부터 2시`)."""
    end = next((b for _, a, b in spans if a == at), at)
    nxt = next((a for _, a, _ in spans if a > at), None)
    opens = nxt is not None and re.fullmatch(r"\s*(?:부터|~|∼|〜|-|–|에서|and)?\s*(?:~|∼|-)?\s*", text[end:nxt])
    return bool(opens or _range_end(text, at))


def _range_end(text: str, at: int) -> bool:
    """A time that closes a range opened before it (`10시부터 19시까지`, `10:00~19:00`)."""
    return bool(re.search(r"(부터|~|∼|〜|-|–|에서)\s*$", text[max(0, at - 6) : at]))


def _candidates(
    text: str, bounds: list[tuple[int, int]], at: int, fact: Fact, facts: list[Fact], *, strict: bool = True
) -> bool:
    """Another row's value of a name fact offered in the same clause (`A 또는 B`); with `strict` off (the judge
    checks the rest against what was seen), only when offered as an alternative, not listed beside it."""
    if fact.kind != "name":
        return False
    a, b = clause_of(bounds, at)
    clause = normalise_name(text[a:b])
    own = normalise_name(str(fact.value))
    # another asked value of the same field offered as an alternative (`용두사거리에는 103번 또는 911번`)
    for f in facts:
        other = normalise_name(str(f.value))
        if f is fact or not f.field or f.field != fact.field or other == own or not other:
            continue
        for m in re.finditer(re.escape(other), clause):
            if re.match(r"\S{0,2}\s*(또는|혹은|아니면|\bor\b)", clause[m.end() :]) or re.search(
                r"(또는|혹은|아니면|\bor\b)\s*$", clause[max(0, m.start() - 8) : m.start()]
            ):
                return True

    asked = {normalise_name(str(f.value)) for f in facts}
    for r in fact.rivals:
        other = normalise_name(str(r.get("value", "")))
        if other in asked or len(other) < 2 or other in own or own in other or other not in clause:
            continue
        # a slash joining two figures or two labels (`51/27`, `PM10/PM2.5`) pairs one row's values: no alternative
        if strict or ALTERNATIVE.search(re.sub(r"(?<=[\da-z.])/|/(?=[\da-z])", " ", text[a:b])):
            return True
    return False


def date_hit(
    prepared: str,
    fact: Fact,
    bounds: list[tuple[int, int]],
    facts: list[Fact],
    now: datetime | None = None,
) -> bool:
    wanted = as_date(fact.value)
    if wanted is None:
        return False
    spans = date_spans(prepared, default_year=wanted.year)
    for d, a, b in spans:
        if d != wanted or negated_at(prepared, b):
            continue
        lo, hi = clause_of(bounds, a)
        if any(o != wanted and lo <= s <= hi for o, s, _ in spans):
            continue
        if said_of_other(prepared, bounds, a, fact, facts, now, dated=False):
            continue
        return True
    return False


# ---------------------------------------------------------------------------------------------- attribution
