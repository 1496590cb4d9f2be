"""What an answer claims beyond the asked facts, judged against what the model saw (`synthesis.seen.Seen`): pure
functions of the judge (`synthesis.facts.check_answer`).

* `doubt`: a claim not committed to, in any wording (uncertainty, a question or condition about the answer, a
  retraction, in Korean or English).
* `pasted`: rows pasted instead of an answer (`field: value` lines, a dict or JSON, a table of the raw fields).
* `unsupported`: a figure, date, time, place or facility that nothing seen supports (a difference or sum of two
  seen values, a rounding at the precision written, a count of listed things are supported).

What a value is said *of* lives in synthesis.qualifiers, a value of another listed row said of a named one in
synthesis.listing_claims.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from itertools import combinations

from synthesis.answer_dates import date_spans
from synthesis.answer_values import (
    EN_MAGNITUDES,
    Mention,
    clauses,
    mentions,
    nfkc,
    normalise_name,
    prepare_text,
    unit_at,
    unit_family,
)
from synthesis.qualifiers import WEEKDAYS, clock_spans, places_in
from synthesis.seen import Seen

#: Factors between a figure as an answer writes it and as a result holds it, per unit family (km and m, 만원 and
#: 원, 분 and 초); a figure of another family is compared as written.
_SCALES_BY_FAMILY: dict[str, tuple[float, ...]] = {
    "money": (1.0, 1e-4, 1e-3, 1e-8, 1e4),
    "length": (1.0, 1e3, 1e-3, 1e2, 1e-2),
    "duration": (1.0, 60.0, 1 / 60, 3600.0, 1 / 3600),
    "area": (1.0,),
}
#: Integers up to this many an answer may state as a count of the things it lists without a result saying it.
SMALL_COUNT = 10


def _near(values: list[float], x: float, tol: float) -> bool:
    i = bisect_left(values, x - tol)
    return i < len(values) and values[i] <= x + tol


# ---------------------------------------------------------------------------------------------- doubt

#: Wording that does not commit to what it says (any language the answers use).
_DOUBT = re.compile(
    r"모르겠|모릅니다|몰라요|잘 모르|확실하지 않|확실하지는 않|확실치 않|확실하진|확실치는|확신할 수 없|확신이 없"
    r"|불확실"
    r"|정확하지 않을"
    r"|정확하지 않습니다|정확하지는 않|틀릴 수|틀릴 가능성|다를 가능성|틀렸을"
    r"|누락[가-힣]{0,3}\s*수\s*있|빠졌을 수 있|빠진 (?:게|것이|곳이) 있을 수"
    r"|틀린 것일|잘못되었을|잘못됐을|오류가 있을|다를 수도 있"
    r"|추정치|추정됩니다|추정돼요|추측|짐작|(?<![가-힣])아마(?:도)?(?:\s|요|[,.!]|$)|어쩌면"
    r"|일 거(?:예요|에요|야|라|다|고)|혹시 모르|것 같기도"
    r"|일 수도|수도 있(?:습니다|어요|어|음|고|으니|지만|겠|을)|일지도|일걸|보장할 수 없|장담할 수 없|장담은 못"
    r"|참고(?:만|용으로만)|(?:인|일|였을|이었을)\s?가능성이|확인된 (?:건|것은|게|것이|바는) 아니"
    r"|(?:맞|정확하|옳|틀리지 않)(?:다면|으면|는다면)|(?:맞는|정확한)지 (?:모르|확인해 보|다시)|(?:인|일)까요|(?:인"
    r"|일)지요|아닐까"
    r"|\bnot (?:sure|certain|confident)\b|\bdon'?t know\b|\bdo not know\b|\buncertain\b|\bmight\b|\bmaybe\b"
    r"|\bprobably\b"
    r"|\bperhaps\b|\bpossibly\b|\bi think\b|\bi believe\b|\bi guess\b|\bcould be\b|\bmay be\b|\bseems?\b|\blikely\b"
    r"|\bif (?:this|that|the \w+) (?:is|was) (?:right|correct|accurate)\b",
    re.I,
)
#: A turn back on what was said (a retraction or a contradiction after it).
_RETRACT = re.compile(
    r"(?:(?<!죄송)(?<!아쉽)(?<!미안)하지만|그러나|다만|그런데|근데|아,|앗|아니(?![라요오고])|(?<![가-힣])정정|however|but|actually|wait|oops)\s*,?[^.!?\n]{0,50}?"
    r"(?:수\s*(?:가|는|도)?\s*없|없습니다|없어요|없네요|없었|못\s*했|못합니다|않습니다|않아요|않았|아닙니다|아니에요"
    r"|아니라|아닐 "
    r"|잘못|틀렸|틀린|정정|취소|무시|다시 확인|cannot|can't|unable|wrong|incorrect|ignore|disregard|not (?:correct"
    r"|right|"
    r"accurate|true|verified)|couldn'?t)"
    r"|\bignore (?:that|this|the above|my)\b|\bscratch that\b|\bdisregard\b|\bthat was wrong\b|\bi was wrong\b"
    r"|(?:무시해|잊어) 주세요|앞의 (?:답|내용|말)은|정정(?:합니다|할게요|하겠습니다|해 드릴게요)|다시 (?:보니"
    r"|확인해 ?보니|살펴보니)"
    r"|(?:sorry|죄송)[^!?\n]{0,30}(?:wrong|incorrect|mistake|잘못|틀렸|바뀌|바뀐|뒤바뀌|헷갈)"
    r"|아니[,…\s]*(?:죄송|미안|sorry)|\bno,? sorry\b"
    r"|(?:아|앗|어),?\s*아니(?:네요|에요|다|야|군요|었)|잘못 (?:말씀|봤|읽|안내)|\bcorrection\b|\bi misread\b"
    r"|\bmy mistake\b",
    re.I,
)
#: Statements that the asked information could not be had (a doubt unless the facts are about missing data).
INABLE = re.compile(
    r"(?:확인|조회|찾|검색|알|제공|답변|파악|안내|말씀|드리|얻|가져오|가져올|볼|드릴)[가-힣]{0,4}\s*수\s*(?:가|는"
    r"|도)?\s*없"
    r"|(?:찾|확인|조회|검색|가져오|얻|파악하)지\s*못|못\s*(?:찾|했|합니다|해요)"
    r"|(?:정보|자료|데이터|결과|내용|답)(?:가|이|은|는|을|를|도)?\s*(?:없|존재하지 "
    r"않|확인되지 않|조회되지 않|제공되지 않|나오지 않)"
    r"|제공하지 않|지원하지 않|제공되지 않|불가능|어렵습니다|cannot|can't|unable|not found|no data|not available",
    re.I,
)


#: Softening that hedges only the sentence it closes (`것 같아요`, `~인 듯해요`, `다를 수 있어요`): Korean adds it to
#: advice and to reasons as often as to claims (`산책하셔도 괜찮을 것 같아요`, `약국이라 목록에 없는 것 같아요`).
_SOFT = re.compile(r"[가-힣] 것 같|(?:인|일|한|는)듯(?:해|합|하)|다를 수 있")


#: What a turn says when it corrects what came before (not when it reports that nothing was found).
_CORRECTING = re.compile(
    r"잘못|틀|정정|취소|무시|다시|잊어|바뀌|헷갈|죄송|미안|아니(?:네요|에요|다|야|군요|었)|wrong|incorrect|ignore"
    r"|disregard|mistake|misread|scratch|correction|sorry|not (?:correct|right|accurate|true)",
    re.I,
)


def doubt(answer: str, claims: Callable[[str, str], bool] | None = None, *, missing: bool = False) -> str:
    """The wording that makes the answer non-committal or takes it back, or ''. `claims(sentence, rest)`: whether
    a sentence that ends softened (`것 같아요`) claims something the answer needs (without it, every softening
    is a doubt); `rest` is the answer without that sentence. `missing`: the answer reports missing data, so a
    turn to a negative within a sentence (`searched, but got no results`) is the report itself unless it corrects
    something; one that opens a sentence turns back on the one before."""
    text = nfkc(answer)
    m = _DOUBT.search(text)
    if m:
        return m.group().strip()
    for m in _RETRACT.finditer(text):
        opens = not text[: m.start()].strip() or text[: m.start()].rstrip()[-1] in ".!?\n…"
        if missing and not opens and not _CORRECTING.search(m.group()):
            continue  # `searched, but got no results`: within the sentence that reports it
        return m.group().strip()
    for m in _SOFT.finditer(text):
        start = max(text.rfind(c, 0, m.start()) for c in ".!?\n") + 1
        ends = [i for c in ".!?\n" if (i := text.find(c, m.end())) >= 0]
        end = min(ends) if ends else len(text)
        if claims is None or claims(text[start : m.start() + 1], text[:start] + text[end:]):
            return m.group().strip()
    for sentence in re.split(r"(?<=[?？])|[.!\n]", text):
        s = sentence.strip()
        if s.endswith(("?", "？")) and re.search(r"\d", s) and not re.search(r"(궁금|도움|필요|원하|알려 ?드릴)", s):
            return s  # a figure put as a question
    return ""


# ---------------------------------------------------------------------------------------------- pastes

_KV_LINE = re.compile(r"^\s*[-*•]?\s*[\"']?[A-Za-z_][A-Za-z0-9_]{2,}[\"']?\s*[:=]\s*\S", re.M)
_REPR = re.compile(r"[{\[]\s*[\"'][^\"']{1,80}[\"']\s*:|[\"'][A-Za-z_]\w*[\"']\s*:\s*[\"'\d\[{]")
_INLINE_KV = re.compile(r"(?<![A-Za-z])[a-z]+[A-Z_][A-Za-z0-9_]*\s*:\s*\S")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M)


def pasted(answer: str, seen: Seen | None) -> str:
    """Why the answer pastes rows instead of answering, or ''."""
    text = nfkc(answer)
    if _REPR.search(text):
        return "a dict or JSON of the rows"
    if len(_KV_LINE.findall(text)) >= 2:
        return "field: value lines"
    keys = {k for k in (seen.keys if seen else set()) if len(k) >= 4 and re.search(r"[A-Za-z]", k)}
    named = {k for k in keys if re.search(rf"(?<![A-Za-z]){re.escape(k)}(?![A-Za-z])", text)}
    if len(named) >= 3:
        return f"the results' field names ({', '.join(sorted(named)[:3])})"
    keyed = {k for k in keys if re.search(rf"(?<![A-Za-z]){re.escape(k)}\s*[:=]", text)}
    if len(keyed) >= 2 or len(_INLINE_KV.findall(text)) >= 3:
        return "field: value pairs"
    sprayed = [m for m in mentions(prepare_text(text)) if m.unit]
    for m in sprayed:
        families = {unit_family(o.unit) for o in sprayed if abs(o.value - m.value) < 1e-9}
        if len(families) >= 3:
            return f"{m.value:g} written with {len(families)} kinds of unit"
    if _TABLE_SEP.search(text) and len(named) >= 1:
        return "a table of the raw fields"
    return ""


# ---------------------------------------------------------------------------------------------- support


def _korean_step(text: str, m: Mention) -> float:
    """The rounding step of a figure written with Korean magnitudes: its trailing magnitudes (`5억 2천만`: 천만)."""
    written = text[m.start : m.end]
    english = re.search(r"(\d+(?:\.(\d+))?)\s?(thousand|million|billion)$", written)
    if english:  # `256.9 million`: a step of 0.1 million
        scale = EN_MAGNITUDES[english.group(3)]
        return scale * 10.0 ** -len(english.group(2) or "")
    tail = re.search(r"([억만천백]+)\s*$", written.replace(" ", ""))
    step = 1.0
    for ch in tail.group(1) if tail else "":
        step *= {"억": 1e8, "만": 1e4, "천": 1e3, "백": 1e2}[ch]
    return step


#: A clause that compares or takes a difference (`어제보다 2도 높아요`, `일교차 7.1도`, `35 higher than`).
_COMPARING = re.compile(
    r"보다|차이|일교차|높(?!이)|낮(?![에엔 ])|많|적어|적었|적고|적은|올라|올랐|내려|내렸|늘었|늘어|늘고|줄었|줄어|줄고"
    r"|상승|하락|오른|떨어"
    r"|\bthan\b|difference|higher|lower|\bmore\b|\bless\b|increase|decrease|\bdrop|\brise|\bup\b|\bdown\b",
    re.I,
)


_TOTALLING = re.compile(
    r"합치|합하|합계|합산|더하|모두 합|총합|\bin total\b|\btotal\b|altogether|combined|\bsum\b", re.I
)
_ABOUT_BEFORE = re.compile(r"(?:약|대략|거의|about|around|approximately|roughly|almost|nearly|some)\s*$", re.I)
_ABOUT_AFTER = re.compile(r"\s*(?:정도|쯤|가량|남짓|여\b|안팎|가까이|내외|전후)")


def approximate(text: str, m: Mention) -> bool:
    return bool(
        _ABOUT_BEFORE.search(text[max(0, m.start - 14) : m.start]) or _ABOUT_AFTER.match(text, unit_end(text, m))
    )


def approx_step(text: str, m: Mention) -> float:
    """The rounding step of a figure the text says is approximate (`약 620m`: 10, `about 1.5 km`: 0.1), else its
    written precision."""
    if m.decimals or m.korean or not approximate(text, m):
        return 10.0**-m.decimals
    raw = str(int(abs(m.value)))
    zeros = len(raw) - len(raw.rstrip("0")) if raw != "0" else 0
    return 10.0 ** min(zeros, 3)


def _sum_of(value: float, parts: list[float], step: float) -> bool:
    """The value is the sum of two to four of the parts (at the precision written)."""
    parts = [abs(x) for x in parts[:12]]
    return any(abs(sum(c) - value) <= 0.5 * step + 1e-9 for k in (2, 3, 4) for c in combinations(parts, k))


def sentence_at(text: str, pos: int) -> str:
    a = max(text.rfind(c, 0, pos) for c in ".!?\n") + 1
    ends = [i for c in ".!?\n" if (i := text.find(c, pos)) >= 0 and not text[i - 1 : i].isdigit()]
    return text[a : min(ends) if ends else len(text)]


#: Unit families of counts (`3곳`, `1,007세대`, `5개 동`, `12정거장`).
_COUNTED = ("counter", "household", "building", "stops")


def _supported_number(text: str, m: Mention, seen: Seen, found: list[Mention]) -> bool:
    value = abs(m.value)
    # what the answer states of the same kind (a difference of a count and a percentage means nothing)
    stated = [o.value for o in found if unit_family(o.unit) == unit_family(m.unit)]
    if value <= 1 and not (m.unit and m.decimals):
        return True
    step = _korean_step(text, m) if m.korean else 10.0**-m.decimals
    counted = unit_family(m.unit) in _COUNTED
    if counted and value.is_integer():
        # a count: of rows a result holds or reports (of one name among them), a count field, the user's, of the
        # things the answer names; a larger one may be any figure seen (`주차 14대`)
        if value in seen.counts or value <= seen.names_in(text) or (value > SMALL_COUNT and value in seen.figures):
            return True
    elif value.is_integer() and value <= SMALL_COUNT and not measured_unit(m.unit):
        return True  # an ordinal, a number of hours, a count of things listed
    else:
        nums = seen.figures if counted else seen.measures if measured_unit(m.unit) else seen.numbers
        # `약 17분` for 1051초: an approximate figure may be cut at its precision rather than rounded, and a round
        # one is rounded to its zeros (`약 620m` for 622.97 m)
        slack = 1.0 if not m.korean and approximate(text, m) else 0.5
        step = approx_step(text, m) if slack == 1.0 else step
        for scale in _SCALES_BY_FAMILY.get(unit_family(m.unit), (1.0,)):
            x, tol = value * scale, slack * step * scale + 1e-9
            if _near(nums, x, tol):
                return True
        # a product's strength written after (the end of) its name or before a word for the product (`심바스타틴정
        # 20mg`, `20mg 제품`), not as any dose
        names = seen.named_figures.get(round(value, 9), set())
        word = re.search(r"([가-힣A-Za-z]{2,})\s?$", text[max(0, m.start - 20) : m.start])
        if names and (
            (word and any(n.endswith(normalise_name(word.group(1))) for n in names))
            or re.match(r"\s?(?:짜리|제품|정제|정|캡슐|용량|함량)", text[unit_end(text, m) :])
        ):
            return True
    sentence = sentence_at(text, m.start)
    if _TOTALLING.search(sentence) and _sum_of(value, [x for x in stated if abs(x - value) > 1e-9], step):
        return True  # a total of figures the answer states (`27곳, 11곳, 6곳, 합치면 44곳`)
    # a difference or sum of a supported figure the answer states and a seen one (`어제보다 2도 높아요`), or of two
    # figures of one row (`일교차 7.1도`), where the sentence compares
    if not _COMPARING.search(sentence):
        return False
    tol = 0.5 * step + 1e-9
    if _near(seen.row_differences, value, tol):
        return True
    if any(abs(abs(a - b) - value) <= tol for i, a in enumerate(stated) for b in stated[i + 1 :]):
        return True  # the difference of two figures the answer states (`9건, 14건으로 5건 더 많아요`)
    real = seen.measured
    return any(
        _near(real, a + value, tol) or _near(real, a - value, tol) or _near(real, value - a, tol)
        for a in stated
        if abs(a) > 1 and abs(a - value) > 1e-9 and _near(real, a, 0.5 * 10.0 ** -_decimals(a) + 1e-9)
    )


def _decimals(x: float) -> int:
    text = f"{x:.6f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def measured_unit(unit: str) -> bool:
    return bool(unit) and unit not in ("건", "곳", "개", "명", "대", "세대", "동", "층", "정거장")


def _date_or_time_at(text: str, m: Mention, covered: list[tuple[int, int]]) -> bool:
    """A number inside a date or clock time already judged as one (a lone `2020년` or `3월` is judged as a number)."""
    return any(a <= m.start < b for a, b in covered)


def unsupported(answer: str, seen: Seen) -> str:
    """The first figure, date, time or place of the answer that nothing seen supports, or ''."""
    text = prepare_text(answer)
    year = seen.now.year if seen.now else None
    dates = date_spans(text, year)
    times = clock_spans(text)
    covered = [(a, b) for _, a, b in dates] + [(a, b) for _, a, b in times]
    for d, a, b in dates:
        if d not in seen.dates:
            return f"date {text[a:b]}"
        weekday = re.match(r"\s*(?:\(([월화수목금토일])\)|([월화수목금토일])요일)", text[b : b + 8])
        if weekday and "월화수목금토일".index(weekday.group(1) or weekday.group(2)) != d.weekday():
            return f"date {text[a : b + weekday.end()]} (that day is a {WEEKDAYS[d.weekday()]})"
    for mo in re.finditer(r"(?<!\d)(\d{1,2})\s*월(?!\s*\d{1,2}\s*일)", text):
        if any(a <= mo.start() < b for _, a, b in dates):
            continue
        if int(mo.group(1)) not in seen.months:
            return f"month {mo.group()}"
    for mins, a, b in times:
        if not (mins & seen.minutes) and not any(x // 60 * 60 in seen.minutes for x in mins if x % 60 == 0):
            return f"time {text[a:b]}"
    found = mentions(text)
    covered += _identifiers(text, seen)
    for m in found:
        if _date_or_time_at(text, m, covered) or (m.start > 0 and re.match(r"[가-힣a-z]", text[m.start - 1])):
            continue  # a date or time judged as one, or a figure glued to a name (`정부24`, `pm2.5`, `관수1차`)
        if not _supported_number(text, m, seen, found):
            return f"figure {text[m.start : unit_end(text, m)]}"
    for place in places_in(text):
        if place not in seen.text:
            return f"place {place}"
    for name, own in facilities_in(text):
        if own not in seen.text:
            return f"facility {name}"
    return ""


#: Nouns that end the proper name of a place one can visit or call (`경복궁`, `가수원공원`, `관훈보람약국`,
#: `둔산동 측정소`): a name so ended that nothing seen holds is an entity made up.
_FACILITY = (
    "궁|공원|박물관|미술관|도서관|기념관|전시관|과학관|체육관|문화관|회관|아쿠아리움|수족관|전망대|해수욕장|병원|의원"
    "|약국|측정소|정류소|시장|호텔|타워|한의원|내과|외과|치과|안과|피부과|이비인후과|소아과|산부인과"
)
#: Words before such a noun that say what kind it is, not which one (`근처 약국`, `종합병원`, `전통시장`).
_KIND_WORDS = frozenset(
    [
        "근처",
        "주변",
        "인근",
        "해당",
        "다른",
        "실내",
        "야외",
        "동네",
        "대형",
        "종합",
        "대학",
        "동물",
        "한방",
        "지역",
        "국립",
        "공공",
        "일반",
        "주요",
        "전통",
        "재래",
        "근린",
        "어린이",
        "시립",
        "구립",
        "도립",
        "공립",
        "국공립",
        "치과",
        "한의",
        "내과",
        "외과",
        "소아과",
        "이비인후과",
        "안과",
        "피부과",
        "시내",
        "실내문화",
    ]
)
_PARTICLE = re.compile(
    r"(?:이에요|예요|입니다|이고|이며|에서|으로|이나|부터|까지|에는|이랑|하고|은|는|이|가|을|를|에|의|과|와|도|로|나|랑|만)$"
)
_FACILITY_WORD = re.compile(rf"([가-힣]*?)(?:{_FACILITY})")
#: The facility nouns a name may stand before as a word of its own (`코엑스 아쿠아리움`, `남산 전망대`); a pharmacy or a
#: stop after a word is mostly a kind (`나쁨이라 약국`, `경유 정류소`).
_ATTRACTION = re.compile(r"아쿠아리움|수족관|박물관|미술관|기념관|전시관|과학관|전망대|타워")


def _name_word(word: str) -> bool:
    """A word before a facility noun that can be its name: no particle, no ending of a describing word (`가까운`,
    `유명한`, `갈`: a last syllable closed by ㄴ or ㄹ), no area (`강남구`, judged as a place)."""
    if not re.fullmatch(r"[가-힣]{2,6}", word) or re.search(r"[구시군도동읍면리은는이가을를에의과와로랑만]$", word):
        return False
    return (ord(word[-1]) - 0xAC00) % 28 not in (4, 8)


def facilities_in(text: str) -> list[tuple[str, str]]:
    """The proper names of places the (prepared) text states: a facility noun after a name (`창덕궁`, `강남구민회관`)
    or after the area it is named by (`둔산동 측정소`), each as written and as the part that names which one
    (normalised)."""
    out: list[tuple[str, str]] = []
    words = re.findall(r"[^\s]+", text)
    for i, word in enumerate(words):
        core = re.sub(r"^[^가-힣A-Za-z0-9]+|[^가-힣A-Za-z0-9]+$", "", word)
        hangul = re.match(r"[가-힣]+", core)
        if not hangul:
            continue
        whole = hangul.group()
        m = _FACILITY_WORD.fullmatch(whole) or _FACILITY_WORD.fullmatch(_PARTICLE.sub("", whole))
        if not m:
            continue
        own, shown = m.group(1), m.group()
        if not own and i > 0 and re.fullmatch(r"[가-힣]{1,6}[동읍면리]", words[i - 1]):  # named by its area
            own, shown = words[i - 1], f"{words[i - 1]} {m.group()}"
        elif not own and i > 0 and _ATTRACTION.fullmatch(m.group()) and _name_word(words[i - 1]):
            own, shown = words[i - 1], f"{words[i - 1]} {m.group()}"  # by a name of its own (`코엑스 아쿠아리움`)
        if len(own) < 2 or own in _KIND_WORDS:
            continue
        out.append((shown, normalise_name(own)))
    return out


_GROUPED = re.compile(r"(?<![\d.,-])\d{2,}(?:[- ]\d{2,}){1,3}(?![\d.,])")


def _identifiers(text: str, seen: Seen) -> list[tuple[int, int]]:
    """Spans of identifiers written in digit groups (`693-87-40955`, `28185 10600`) whose digits, joined, a result
    or the user states as one code (`6938740955`): one identifier, not several figures."""
    codes = {c for t in seen.texts for c in re.findall(r"\d{6,}", re.sub(r"(?<=\d)[- ](?=\d)", "", nfkc(t)))}
    return [(m.start(), m.end()) for m in _GROUPED.finditer(text) if re.sub(r"[- ]", "", m.group()) in codes]


def unit_end(text: str, m: Mention) -> int:
    return unit_at(text, m.end)[1]


# ---------------------------------------------------------------------------------------------- grades

#: A grade word said of a figure (`61㎍/㎥로 나쁨 단계`), not a threshold the figure is measured against (`나쁨 기준`,
#: `나쁨 이상이면`, `나쁨은 아니`).
_GRADE_SAID = re.compile(
    r"(매우\s?나쁨|좋음|보통|나쁨)(?!\s*\(?\s*\d?\s*(?:등급)?\)?\s*"
    r"(?:기준|이상|이하|이면|이라면|일 때|아니|아닌|미만|까지|부터|보다|에는|에 못|에서))"
)
_GRADE_CODE = {"좋음": "1", "보통": "2", "나쁨": "3", "매우나쁨": "4"}
#: A grade said as a bound the figure is at (`61㎍/㎥라 나쁨(3등급) 이상입니다`): a claim of every grade from it up
#: (이상) or down (이하), not a threshold (`나쁨 이상이면`).
_GRADE_BOUND = re.compile(
    r"(매우\s?나쁨|좋음|보통|나쁨)\s*\(?\s*\d?\s*(?:등급)?\)?\s*(이상|이하)\s*(?:입니|이에|이예|이라서|이라|이네|이고|이야|인\s)"
)

#: A grade's threshold said to be crossed (`61㎍/㎥로 나쁨 기준을 넘어서`): a claim of that grade or a worse one.
_GRADE_CROSSED = re.compile(
    r"(매우\s?나쁨|좋음|보통|나쁨)\s*(?:\(\s*\d?\s*(?:등급)?\s*\))?\s*(?:기준|수준|단계)(?:을|를|치를)?\s*"
    r"(?:넘(?!지\s*(?:않|못|는\s*않))|초과|웃돌)"
)


def misgraded(answer: str, seen: Seen) -> str:
    """A clause that states one figure a result grades (AirKorea's `pm10Grade` beside `pm10Value`) with a grade word
    other than the one the result gives it (`61㎍/㎥로 나쁨 단계` where 61 is graded 보통): the figure and the word,
    or ''."""
    grades = seen.grades
    if not grades:
        return ""
    text = prepare_text(answer)
    for a, b in clauses(text):
        clause = text[a:b]
        said = list({frozenset({_GRADE_CODE[re.sub(r"\s", "", m.group(1))]}) for m in _GRADE_SAID.finditer(clause)})
        for m in [*_GRADE_BOUND.finditer(clause), *_GRADE_CROSSED.finditer(clause)]:
            code = _GRADE_CODE[re.sub(r"\s", "", m.group(1))]
            up = m.re is _GRADE_CROSSED or m.group(2) == "이상"  # a threshold crossed is a bound from below
            bound = frozenset(c for c in _GRADE_CODE.values() if (c >= code if up else c <= code))
            said += [bound] if bound not in said else []
        graded = {m.value for m in mentions(clause) if m.value in grades and unit_family(m.unit) in ("conc", "")}
        if len(said) != 1 or len(graded) != 1:
            continue
        value = next(iter(graded))
        if not said[0] & grades[value]:
            return f"{value:g} is graded otherwise than {clause.strip()}"
    return ""
