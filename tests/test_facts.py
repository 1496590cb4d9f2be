"""The strict fact checker shared by KOPA-Bench and the training rewards: Korean numbers, units, dates and times read
the way answers write them, and an answer passes only when it commits (no hedge, no negation, no rival value, no
dump, a guessable value only with its label). The table holds real phrasings, positive and negative."""

from __future__ import annotations

from datetime import date

import pytest

from synthesis.answer_dates import dates_in, time_spans
from synthesis.answer_values import normalise_name, numbers_in
from synthesis.fact_terms import Fact, FactCheck, hedge
from synthesis.facts import check_answer, dump, render_fact

TEMP = Fact("number", 15.2, 0.5, "℃", "", "fcstValue", "TMP")
TEMP_EXACT = Fact("number", 14.9, 0.0, "℃", "기온")
PM10 = Fact("number", 85, unit="㎍/㎥", label="미세먼지")
POP = Fact("number", 60, unit="%", label="강수확률")
PRICE = Fact("number", 52340, unit="만원", label="거래금액")
DEPOSIT = Fact("number", 82500, unit="만원", field="deposit")
WON = Fact("number", 3000, unit="원", label="요금")
DIST = Fact("number", 1200, unit="m", label="거리")
INTERVAL = Fact("number", 15, unit="분", label="배차간격")
STOPS = Fact("number", 3, label="남은 정거장")
STOPS_FIELD = Fact("number", 3, field="arrprevstationcnt")
PTY = Fact("number", 0, field="fcstValue", category="PTY")
SUBJECTS = Fact("count", 4, label="진료과목 수")
PLACES = Fact("count", 3, unit="곳", label="약국 수")
ROUTE = Fact("name", "5", label="노선")
STATUS = Fact("name", "계속사업자", label="상태")
NAME = Fact("name", "청운행복약국", label="약국")
SAT_END = Fact("name", "1300", field="trmtSatEnd")
HOURS = Fact("text", "09:00~18:00", label="이용시간")
CLOSE = Fact("text", "19:00")
CLOSED = Fact("date", "2024-03-01", label="폐업일")
HOLIDAY = Fact("date", "2026-10-09", label="한글날")
NO_DATA = Fact("text", "없", label="자료 없음")
NO_STATION = Fact("text", "없", label="측정소 없음")
ONE_DAY = Fact("text", "1일", label="최근 1일만 제공")
MISMATCH = Fact("text", "확인할 수 없", label="진위확인 불일치")
UNREGISTERED = Fact("text", "등록되지 않", label="미등록 번호")
EFFECT = Fact("text", "해열", label="효능")
DOSING = Fact("text", "1일 3회", label="복용법")
ZONE = Fact("name", "제2종일반주거지역", label="용도지역")
CLOSED_ON = Fact("text", "매주 화요일", label="휴무일")
TAX_TYPE = Fact("name", "부가가치세 일반과세자", label="과세유형")
APPROVED = Fact("date", "2003-03-26", label="사용승인일")
NO_CODE = Fact("text", "없습니다", label="지역코드 없음")

CASES: list[tuple[str, Fact, bool]] = [
    # numbers with units, rounding and the neighbouring value
    ("내일 오후 3시 기온은 15.2℃입니다.", TEMP, True),
    ("내일 오후 3시 기온은 15.2도로 예상됩니다.", TEMP, True),
    ("기온은 섭씨 15.2도입니다.", TEMP, True),
    ("기온 15.2 °C", TEMP, True),
    ("내일 3시 기온은 15도입니다.", TEMP, True),  # rounded to the precision written
    ("내일 3시 기온은 15.4도입니다.", TEMP, False),  # the next hour's value, not a rounding
    ("내일 3시 기온은 16도입니다.", TEMP, False),
    ("기온은 15.9cm입니다.", TEMP, False),  # wrong unit
    ("기온은 15.2입니다.", TEMP, False),  # no unit
    ("기온은 15.2%입니다.", TEMP, False),
    ("기온은 14.9℃입니다", TEMP_EXACT, True),
    ("기온은 15℃입니다", TEMP_EXACT, False),  # exact by default
    ("미세먼지 85㎍/㎥로 나쁨입니다.", PM10, True),
    ("미세먼지 농도 85 µg/m³", PM10, True),
    ("미세먼지 85 ug/m3 입니다", PM10, True),
    ("미세먼지 85%", PM10, False),
    ("강수확률은 60퍼센트입니다.", POP, True),
    ("강수확률 60프로", POP, True),
    # Korean amounts
    ("거래금액은 5억 2,340만 원입니다.", PRICE, True),
    ("거래금액은 52,340만원입니다.", PRICE, True),
    ("거래금액 523,400,000원", PRICE, True),
    ("거래금액은 5억 2천만 원입니다.", PRICE, False),
    ("거래금액은 5억 2,340원입니다.", PRICE, False),
    ("보증금 8억 2,500만 원", DEPOSIT, True),
    ("보증금 82,500 만원", DEPOSIT, True),
    ("요금은 3천 원입니다.", WON, True),
    ("요금은 3,000원입니다.", WON, True),
    ("요금은 3만 원입니다.", WON, False),
    ("거리는 1.2km입니다.", DIST, True),
    ("거리는 1,200m입니다.", DIST, True),
    ("거리는 1.2m입니다.", DIST, False),
    ("배차간격은 15분입니다.", INTERVAL, True),
    ("배차간격은 15초입니다.", INTERVAL, False),
    # a guessable value needs its label
    ("버스가 3정거장 남았습니다.", STOPS, True),
    ("남은 정거장은 세 곳입니다.", STOPS, True),
    ("0 1 2 3 4 5 6 7 8 9 10 11", STOPS, False),
    ("3", STOPS, False),
    ("남은 정류장 수: 3", STOPS_FIELD, True),
    ("3번째 정류장입니다", STOPS_FIELD, False),
    ("강수 형태 없음(0)", PTY, True),
    ("0", PTY, False),
    ("진료과목은 4개입니다.", SUBJECTS, True),
    ("4개입니다.", SUBJECTS, True),  # a count written with a counter word needs no label (issue 32)
    ("근처 약국은 세 곳입니다.", PLACES, True),
    ("근처 약국은 3곳입니다.", PLACES, True),
    ("근처 약국은 4곳입니다.", PLACES, False),
    ("5번 버스가 곧 도착합니다.", ROUTE, True),
    ("15번 버스가 곧 도착합니다.", ROUTE, False),
    ("곧 5분 뒤에 도착합니다.", ROUTE, False),
    # several candidates for one fact
    ("기온은 15℃ 또는 16℃입니다.", TEMP, False),
    ("기온은 14~16도입니다.", TEMP, False),
    ("기온은 15.2℃, 15.4℃, 15.8℃ 중 하나입니다.", TEMP, False),
    ("서울은 15.2℃이고 대전은 12℃입니다.", Fact("number", 15.2, 0.5, "℃", "서울"), True),
    ("서울 15.2℃, 대전 12℃", Fact("number", 12, 0.5, "℃", "대전"), True),
    ("한글날은 10월 3일, 10월 9일, 12월 25일 중 하나입니다.", HOLIDAY, False),
    ("한글날은 2026년 10월 9일(금)입니다.", HOLIDAY, True),
    # negation
    ("이 사업자는 계속사업자가 아닙니다.", STATUS, False),
    ("계속사업자는 아니고 휴업자입니다.", STATUS, False),
    ("상태: 계속사업자입니다.", STATUS, True),
    ("가장 가까운 약국은 청운 행복 약국입니다.", NAME, True),
    ("가장 가까운 곳은 청운행복약국이 아닙니다.", NAME, False),
    ("폐업일은 2024-03-01이 아닙니다.", CLOSED, False),
    ("폐업일은 2024년 3월 1일입니다.", CLOSED, True),
    ("폐업일은 2024.03.01입니다.", CLOSED, True),
    ("폐업일은 20240301입니다.", CLOSED, True),
    ("폐업일은 24.3.1입니다.", CLOSED, True),
    ("폐업일은 2024년 3월 2일입니다.", CLOSED, False),
    # times
    ("토요일은 오후 1시까지 진료합니다.", SAT_END, True),
    ("토요일은 13시까지 진료합니다.", SAT_END, True),
    ("토요일은 13:00에 진료를 마칩니다.", SAT_END, True),
    ("토요일 종료 1300", SAT_END, True),
    ("토요일은 오전 1시까지 진료합니다.", SAT_END, False),
    ("토요일은 오후 2시까지 진료합니다.", SAT_END, False),
    ("이용시간은 오전 9시부터 오후 6시까지입니다.", HOURS, True),
    ("이용시간은 09:00~18:00입니다.", HOURS, True),
    ("이용시간은 오전 9시부터 오후 5시 반까지입니다.", HOURS, False),
    ("저녁 7시에 문을 닫습니다.", CLOSE, True),
    ("오후 7시 30분에 문을 닫습니다.", CLOSE, False),
    ("19:00 또는 20:00에 닫습니다.", CLOSE, False),
    ("19:00이 아닙니다.", CLOSE, False),
    # facts about missing data: a committed statement, never a refusal
    ("요청하신 기간의 관측 자료가 없습니다.", NO_DATA, True),
    ("조회 결과가 없습니다.", NO_DATA, True),
    ("죄송하지만 제공된 도구로는 요청하신 정보를 확인할 수 없습니다.", NO_DATA, False),
    ("해운대구라는 측정소는 없습니다.", NO_STATION, True),
    ("정보를 찾을 수 없습니다.", NO_STATION, True),  # an honest report of missing data in another wording
    ("중기예보는 최근 1일 자료만 제공됩니다.", ONE_DAY, True),
    ("중기예보는 최근 11일 자료만 제공됩니다.", ONE_DAY, False),
    ("진위확인 결과 입력하신 정보와 일치 여부를 확인할 수 없습니다(불일치).", MISMATCH, True),
    ("죄송하지만 제공된 도구로는 요청하신 정보를 확인할 수 없습니다.", MISMATCH, False),
    ("국세청에 등록되지 않은 사업자등록번호입니다.", UNREGISTERED, True),
    ("해열 효과가 있는 약입니다.", EFFECT, True),
    # part9 (writer-9): English dates, English reports of missing data, paraphrased effects and frequencies, a zone
    # without its ordinal 제, a weekly closing day in English, a taxpayer type without its tax
    ("Main use: detached house (단독주택); use approval date: March 26, 2003.", APPROVED, True),
    ("Use approval date: 26 Mar 2003.", APPROVED, True),
    ("Use approval date: March 27, 2003.", APPROVED, False),
    ("No region code came back for 부산 해운대구 우동.", NO_CODE, True),
    ("No real-time air-quality data came back for Busan.", NO_CODE, True),
    ("Validation failed: the details could not be confirmed for 741-88-99539.", MISMATCH, True),
    ("열 내리는 약이에요. 하루 세 번 식후에 한 알씩 드세요.", EFFECT, True),
    ("For fever relief; adults take 1 tablet 3 times a day after meals.", EFFECT, True),
    ("For fever relief; adults take 1 tablet 3 times a day after meals.", DOSING, True),
    ("Adults take 1 tablet twice a day.", DOSING, False),
    ("Adults take 1 tablet 13 times a day.", DOSING, False),
    ("기침을 멎게 하는 약이에요.", EFFECT, False),
    ("2종 일반주거지역이에요.", ZONE, True),
    ("3종 일반주거지역이에요.", ZONE, False),
    ("Gyeongbokgung is open 9 AM to 6 PM and closed every Tuesday.", CLOSED_ON, True),
    ("화요일마다 쉬어요.", CLOSED_ON, True),
    ("Gyeongbokgung is closed every Monday.", CLOSED_ON, False),
    ("정상 영업 중(계속사업자)이고 일반과세자예요.", TAX_TYPE, True),
    ("정상 영업 중(계속사업자)이고 간이과세자예요.", TAX_TYPE, False),
]


@pytest.mark.parametrize(("answer", "fact", "hit"), CASES, ids=[f"{i:02d}" for i in range(len(CASES))])
def test_real_phrasings(answer: str, fact: Fact, hit: bool) -> None:
    assert check_answer(answer, [fact]).hits == int(hit), (answer, fact)


def test_the_table_is_large_and_balanced() -> None:
    assert len(CASES) >= 60
    assert sum(h for _, _, h in CASES) >= 30 and sum(not h for _, _, h in CASES) >= 30


@pytest.mark.parametrize(
    "hedged",
    [
        "조회 결과입니다. 기온: 15.2℃. 하지만 이 정보는 확인할 수 없습니다.",
        "기온은 15.2℃인 것 같습니다.",
        "아마 15.2℃일 겁니다.",
        "정확하지 않을 수 있지만 15.2℃입니다.",
        "기온은 15.2℃입니다. 다만 최신 자료는 찾을 수 없습니다.",
        "요청하신 정보를 찾지 못했습니다. 기온 15.2℃",
        "잘 모르겠지만 15.2도입니다.",
        "I am not sure, maybe 15.2℃.",
        "15.2℃ 정도지만 예보라 틀릴 가능성이 커요.",
        "기온 15.2℃로 보이는데, 일부 자료가 누락됐을 수 있어요.",
    ],
)
def test_an_answer_that_states_the_facts_and_hedges_fails(hedged: str) -> None:
    got = check_answer(hedged, [TEMP])
    assert got.hits == 0 and got.rejected.startswith("hedge"), got


def test_a_retraction_fails_even_where_missing_data_is_the_answer() -> None:
    right = "요청하신 관측 자료가 없습니다."
    assert check_answer(right, [NO_DATA]).score == 1.0
    assert check_answer(right + " 하지만 이 정보는 확인할 수 없습니다.", [NO_DATA]).score == 0.0
    # an answer about missing data may say the data cannot be looked up
    explained = "단기예보는 최근 3일치만 제공되어 일주일 전 자료는 조회할 수 없습니다."
    assert check_answer(explained, [Fact("text", "3일", label="최근 3일만 제공")]).score == 1.0
    assert hedge(explained, [Fact("text", "3일", label="최근 3일만 제공")]) == ""


def test_dumps_fail_every_fact() -> None:
    facts = [TEMP, POP]
    every = "조회 결과: " + ", ".join(f"{v / 10:.1f}℃" for v in range(100, 200))
    assert dump(every, facts) and check_answer(every, facts).score == 0.0
    units = "fcstValue: " + " ".join(f"15.2{u}" for u in ("", "℃", "%", "mm", "m/s", "㎍/㎥", "분", "건", "m", "원"))
    assert check_answer(units + " 60%", facts).score == 0.0
    pasted = '{"category": "TMP", "fcstValue": "15.2", "unit": "℃"}'
    assert check_answer(pasted, [Fact("name", "TMP")]).rejected.startswith(("dump", "paste"))
    # a full answer with several values of one unit for several labels is not a dump
    full = "기온 15.2℃, 최고 18℃, 최저 9℃, 체감 14℃, 강수확률 60%."
    assert check_answer(full, facts).score == 1.0


def test_numbers_in_reads_thousands_decimals_negatives_korean_amounts_and_counts() -> None:
    assert numbers_in("기온 -3.5도, 거래 1,234건, 12억 5,000만원") == [-3.5, 1234.0, 1250000000.0]
    assert numbers_in("1억 5천만원과 3천 원, 세 곳") == [150000000.0, 3000.0, 3.0]
    assert numbers_in("PM10 45㎍/㎥") == [45.0]  # the 10 of PM10 is a name
    assert numbers_in("값 없음") == []


def test_dates_and_times_in_every_common_form() -> None:
    d = date(2026, 10, 15)
    for text in (
        "2026-10-15",
        "2026.10.15",
        "2026/10/15",
        "20261015",
        "2026년 10월 15일",
        "2026. 10. 15.",
        "26.10.15",
        "2026년 10월 15일(목)",
        "October 15, 2026",
        "Oct. 15th 2026",
        "15 Oct 2026",
        "the 15th of October, 2026",
    ):
        assert d in dates_in(text), text
    assert dates_in("10월 15일") == set() and dates_in("10월 15일", default_year=2026) == {d}
    assert dates_in("2026-13-45") == set()
    assert dates_in("Oct 15", default_year=2026) == {d} and dates_in("you may 5 times", default_year=2026) == set()
    minutes = [sorted(m) for m, _, _ in time_spans("오후 1시 30분, 1시 반, 13:00, 정오, 오전 9시, 밤 11시")]
    assert minutes == [[810], [90, 810], [780], [720], [540], [1380]]


def test_names_are_normalised() -> None:
    assert normalise_name("서울특별시 종로구 세종대로 110") == normalise_name("서울 종로구 세종대로110")
    assert normalise_name("(주)한빛제약") == normalise_name("한빛 제약")
    fact = Fact("name", "서울특별시 종로구")
    assert check_answer("서울 종로구에 있습니다", [fact]).hits == 1
    assert check_answer("서울 중구에 있습니다", [fact]).hits == 0


def test_counts_text_and_the_score() -> None:
    facts = [Fact("count", 3, label="약국"), Fact("text", "1일 3회"), Fact("name", "청운행복약국")]
    ok = check_answer("근처 약국은 3곳이고 청운 행복 약국이 가장 가깝습니다. 1일 3회 복용하세요.", facts)
    assert isinstance(ok, FactCheck) and (ok.hits, ok.total, ok.score, ok.missing) == (3, 3, 1.0, [])
    part = check_answer("근처 약국은 4곳입니다.", facts)
    assert part.hits == 0 and part.score == 0.0 and len(part.missing) == 3
    assert check_answer("anything", []).score == 1.0
    assert check_answer("", [Fact("text", "")]).hits == 0  # an empty literal never matches


def test_rendered_facts_check_as_hits() -> None:
    facts = [
        Fact("number", 14.9, 0.1, "℃", "기온"),
        Fact("count", 7, label="결과"),
        Fact("date", "2026-10-15"),
        Fact("name", "서울특별시 종로구"),
        Fact("number", 82500.0, unit="만원", label="보증금"),
        STOPS_FIELD,
        PTY,
        SAT_END,
        NO_DATA,
        ONE_DAY,
    ]
    answer = " / ".join(render_fact(f) for f in facts)
    got = check_answer(answer, facts)
    assert got.score == 1.0, (answer, got.missing)
