"""What an answer claims, judged against its facts and what the model saw (synthesis/claims.py through
`synthesis.facts.check_answer`): honest phrasings in English and Korean pass, values said of another place, month,
row or address fail, and a figure is supported only by what was seen, a total or a difference the answer draws."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from synthesis.answer_values import mentions, prepare_text
from synthesis.claims import doubt, unsupported
from synthesis.fact_terms import Fact
from synthesis.facts import check_answer
from synthesis.qualifiers import row_context
from synthesis.seen import Seen

NOW = datetime(2026, 10, 15, 14, 30)


def passes(answer: str, facts: list[Fact], seen: Seen | None = None) -> bool:
    check = check_answer(answer, facts, seen)
    return check.hits == check.total and not check.rejected


def seen_rows(*rows: dict[str, object], user: str = "") -> Seen:
    return Seen(results=(json.dumps({"items": list(rows)}, ensure_ascii=False),), user=(user,), now=NOW)


@pytest.mark.parametrize(
    "text,value,unit",
    [
        ("every 20 minutes", 20, "분"),
        ("2 monitoring stations", 2, "건"),
        ("Two lodging listings", 2, "건"),
        ("parking for 14 cars", 14, "건"),
        ("네 과목", 4, "건"),
        ("0.6g", 0.6, "g"),
        ("6 stops away", 6, "정거장"),
    ],
)
def test_english_units_counters_and_native_numerals(text: str, value: float, unit: str) -> None:
    m = mentions(prepare_text(text))[0]
    assert (m.value, m.unit) == (value, unit)


def test_a_plural_noun_of_time_or_a_preposition_is_no_counter() -> None:
    assert mentions(prepare_text("the last 3 days"))[0].unit == ""
    assert mentions(prepare_text("16 in nowon-gu"))[0].unit == ""


def test_counts_in_english_and_a_building_count_with_the_generic_counter() -> None:
    count = Fact("count", 2, unit="곳", label="측정소 수")
    assert passes("There are 2 monitoring stations in Gangnam-gu.", [count])
    buildings = Fact("number", 5, unit="동", label="동수")
    assert passes("동 수는 다섯 개예요.", [buildings])


def test_a_label_said_of_another_facts_own_value_does_not_move_the_value() -> None:
    stop = Fact("name", "원주민센터", label="정류소", field="nodenm")
    route = Fact("name", 911, label="노선", field="routeno", about=["원주민센터", "좌석버스"])
    assert passes("원주민센터 정류소에 911번 버스가 오고 있어요.", [stop, route])
    # the label alone, with no value of its own, still says the figure is another fact's
    assert not passes("정류소는 911번이에요.", [stop, route])


def test_a_time_the_answer_measures_against_is_not_a_second_closing_time() -> None:
    end = Fact("name", "1300", field="trmtSatEnd")
    assert passes("토요일에 오전 9시부터 오후 1시까지 진료해서 정오를 넘겨 진료합니다.", [end])
    assert not passes("토요일 진료는 오후 1시 또는 정오에 끝나요.", [end])


def test_a_correction_word_inside_another_word_is_no_retraction() -> None:
    assert doubt("'부산'으로 시도별 실시간 측정정보를 요청했는데 돌아온 자료가 없어요.") == ""
    assert doubt("15.2도예요. 정정합니다, 16도예요.") != ""


@pytest.mark.parametrize(
    "answer",
    ["1,007세대일 거예요, 아마도요.", "두 번호가 바뀐 것 같네요.", "아, 죄송해요. 번호가 바뀌었어요."],
)
def test_more_ways_of_not_committing(answer: str) -> None:
    assert doubt(answer)


def test_a_row_of_split_date_fields_is_told_apart_by_its_day() -> None:
    rows = [
        {"aptNm": "신정한양", "dealAmount": "162,400", "dealYear": "2026", "dealMonth": "9", "dealDay": "3"},
        {"aptNm": "신정한양", "dealAmount": "131,600", "dealYear": "2026", "dealMonth": "9", "dealDay": "4"},
    ]
    about, rivals = row_context(rows, rows[0], "dealAmount")
    assert "2026-09-03" in about and rivals[0]["about"] == ["2026-09-04"]
    price = Fact("number", 162400, unit="만원", label="거래금액", about=about, rivals=rivals)
    assert passes("9월 거래는 2건이에요.\n- 9/3 신정한양 162,400만원\n- 9/4 신정한양 131,600만원", [price])
    assert not passes("신정한양 거래금액은 162,400만원, 131,600만원이에요.", [price])


def test_a_value_said_of_another_dong_or_month_fails() -> None:
    pharmacy = Fact("name", "계산행복약국", label="약국", about=["인천광역시 계양구 계산로15길 246-2", "계산동"])
    assert passes("계양구 계산동에는 계산행복약국이 있어요.", [pharmacy])
    assert not passes("인천 계양구 작전동에는 계산행복약국이 있어요.", [pharmacy])
    # an apartment whose name ends in 동 is no place
    apt = Fact("name", "과해극동", label="단지", about=["과해동", "202609"])
    assert passes("첫 번째 거래 건물은 과해극동이에요.", [apt], Seen(now=NOW))
    deals = Fact("count", 13, unit="건", label="거래 건수", about=["202609"])
    listed = seen_rows({"totalCount": 13}, user="마포구 전월세 거래 몇 건이야?")
    assert passes("지난달 마포구 전월세 거래는 13건이에요.", [deals], listed)
    assert passes("9월 마포구 전월세 거래는 13건이에요.", [deals], listed)
    assert not passes("이번 달 마포구 전월세 거래는 13건이에요.", [deals], listed)


def test_an_address_named_by_its_road_and_number_tells_its_row() -> None:
    hotel = Fact(
        "name",
        "덕명호텔",
        field="title",
        about=["대전광역시 유성구 덕명로10길 114-1"],
        rivals=[{"value": "어은호텔", "about": ["대전광역시 유성구 어은로23길 302"]}],
    )
    assert passes("덕명호텔은 덕명로10길 114-1, 어은호텔은 어은로23길 302에 있어요.", [hotel])
    assert not passes("덕명호텔은 어은로23길 302, 어은호텔은 덕명로10길 114-1에 있어요.", [hotel])


def test_figures_a_sum_a_difference_or_an_approximation_supports() -> None:
    seen = seen_rows({"stationName": "서울", "count": 27}, {"stationName": "인천", "count": 11})
    assert unsupported("서울은 27개, 인천은 11개예요. 두 지역을 합치면 38곳이에요.", seen) == ""
    assert unsupported("서울은 27개, 인천은 11개예요. 그리고 38곳이 더 있어요.", seen) != ""
    temps = seen_rows({"stnNm": "대전", "maxTa": "15.3", "minTa": "8.2", "avgTa": "11.7"})
    assert unsupported("평균 기온은 11.7도였고 일교차는 7.1도였어요.", temps) == ""
    assert unsupported("평균 기온은 11.7도였고 습도는 7.1%였어요.", temps) != ""
    arrival = seen_rows({"routeno": "606", "arrtime": "1051"})
    assert unsupported("도착까지는 약 17분(1051초) 예상돼요.", arrival) == ""
    assert unsupported("도착까지는 19분 예상돼요.", arrival) != ""
    assert unsupported("무게는 0.6g 정도예요.", arrival) != ""


def test_a_reading_said_of_another_hour_or_weekday_fails() -> None:
    pm25 = Fact("number", 47, unit="㎍/㎥", field="pm25Value", about=["2026-10-15 14:00"])
    assert passes("오늘 14시 초미세먼지는 47㎍/㎥입니다.", [pm25])
    assert not passes("오늘 오전 10시 초미세먼지는 47㎍/㎥입니다.", [pm25])
    saturday = Fact("number", 19.4, 0.5, "℃", "최고", "fcstValue", "TMX", about=["20261015", "20261017"])
    assert passes("이번 토요일 최고기온은 19.4℃예요.", [saturday], seen_rows({"fcstValue": "19.4"}))
    assert not passes("이번 일요일 최고기온은 19.4℃예요.", [saturday], seen_rows({"fcstValue": "19.4"}))


def test_the_same_quantity_by_its_other_name_tells_two_facts_apart() -> None:
    pm10 = Fact("number", 85, unit="㎍/㎥", label="PM10", field="pm10Value", about=["종로구"])
    pm25 = Fact("number", 52, unit="㎍/㎥", label="PM2.5", field="pm25Value", about=["종로구"])
    assert passes("종로구 미세먼지는 85㎍/㎥, 초미세먼지는 52㎍/㎥예요.", [pm10, pm25])
    assert not passes("종로구 미세먼지는 52㎍/㎥, 초미세먼지는 85㎍/㎥예요.", [pm10, pm25])


def test_another_rows_exact_value_is_not_this_value_rounded() -> None:
    temp = Fact(
        "number", 17.4, 0.5, "℃", "", "fcstValue", "TMP", about=["1500"], rivals=[{"value": "17", "about": ["1600"]}]
    )
    assert passes("내일 오후 3시 기온은 17.4도예요.", [temp])
    assert not passes("내일 오후 3시 기온은 17도로 예보돼 있습니다.", [temp])


def test_another_asked_value_of_the_field_offered_as_an_alternative_fails() -> None:
    first = Fact("name", 911, label="삼성시장", field="routeno", about=["삼성시장"])
    second = Fact("name", 103, label="용두사거리", field="routeno", about=["용두사거리"])
    assert passes("삼성시장에는 911번, 용두사거리에는 103번이 와요.", [first, second])
    assert not passes("삼성시장에는 911번, 용두사거리에는 103번 또는 911번이 와요.", [first, second])


def test_a_figure_said_of_one_row_of_a_listing_that_only_another_row_holds() -> None:
    seen = seen_rows(
        {"stationName": "구도", "pm10Value": "51"},
        {"stationName": "신일", "pm10Value": "94"},
        user="대전 측정소 미세먼지 알려줘",
    )
    count = Fact("count", 2, unit="곳", label="측정소 수")
    assert passes("대전 측정소는 2곳이고, 구도 측정소 미세먼지는 51㎍/㎥예요.", [count], seen)
    assert not passes("대전 측정소는 2곳이고, 구도 측정소 미세먼지는 94㎍/㎥예요.", [count], seen)
    # a station named like an everyday word names no row
    listing = seen_rows({"stationName": "가장", "pm10Value": "66"}, {"stationName": "신일", "pm10Value": "94"})
    assert passes("측정소는 2곳, 미세먼지가 가장 높은 곳은 신일(94㎍/㎥)이에요.", [count], listing)


def test_codes_grid_cells_and_date_parts_support_no_measurement() -> None:
    seen = seen_rows({"nx": 60, "dealDay": "20", "routeno": "탄방5", "ITEM_NAME": "심바스타틴정40밀리그램"})
    assert unsupported("강수확률은 60%예요.", seen) != ""
    assert unsupported("전월보다 20% 늘었어요.", seen) != ""
    assert unsupported("약 5분 후 도착해요.", seen) != ""
    assert unsupported("40mg 제품이에요.", seen) == ""
    # a car is no difference (`다음 차가 와요`)
    buses = seen_rows({"arrprevstationcnt": 12, "routeno": "관교4"})
    assert unsupported("12정거장 전에 있고, 배차 간격은 15분이라 다음 차가 와요.", buses) != ""


def test_a_small_count_needs_rows_a_count_field_or_the_things_named() -> None:
    deals = seen_rows(
        {"aptNm": "신정한양", "dealAmount": "162,400"},
        {"aptNm": "신정한양", "dealAmount": "131,600"},
        {"aptNm": "목동", "dealAmount": "99,000"},
        user="양천구 매매",
    )
    assert unsupported("양천구 매매는 3건이에요.", deals) == ""
    assert unsupported("단지별로는 신정한양 2건, 목동 1건이에요.", deals) == ""
    distinct = seen_rows({"aptNm": "신정한양"}, {"aptNm": "목동"}, {"aptNm": "현대"}, user="양천구 매매")
    assert unsupported("양천구 매매는 3건이고, 그중 직거래가 2건이에요.", distinct) != ""
    parking = seen_rows({"yadmNm": "송정의원", "parkQty": "14"})
    assert unsupported("주차가 14대 가능해요.", parking) == ""
    assert unsupported("주차는 세대당 1.3대예요.", parking) != ""
    assert unsupported("하루 최대 8캡슐까지 드세요.", parking) != ""


def test_a_weekday_must_be_the_dates_and_a_negated_match_is_no_match() -> None:
    seen = seen_rows({"tm": "20261019"})
    assert unsupported("10월 19일 월요일 최저 9도예요.", Seen(results=seen.results, now=NOW, user=("9도",))) == ""
    assert "화요일" in unsupported("10월 20일 월요일 최저 9도예요.", Seen(results=seen.results, now=NOW, user=("9도",)))
    matched = Fact("text", "일치", label="진위확인")
    assert passes("국세청 자료와 일치합니다.", [matched])
    assert not passes("국세청 자료와 일치하지 않아요.", [matched])


def test_a_code_written_beside_another_rows_name_fails() -> None:
    seen = seen_rows(
        {"code": "11", "name": "서울특별시"}, {"code": "28", "name": "인천광역시"}, {"code": "30", "name": "대전광역시"}
    )
    count = Fact("count", 3, label="시도 수")
    assert passes("시도는 3개예요: 서울특별시 11, 인천광역시 28, 대전광역시 30.", [count], seen)
    assert not passes("시도는 3개예요: 서울특별시 11, 인천광역시 30, 대전광역시 28.", [count], seen)


def test_sentences_and_list_values_keep_their_own_clauses() -> None:
    eunpyeong = Fact("number", 14, unit="㎍/㎥", label="은평구", field="pm10Value", about=["은평구"])
    nowon = Fact("number", 16, unit="㎍/㎥", label="노원구", field="pm10Value", about=["노원구"])
    # a sentence ending after a unit (`㎍/㎥.`) ends the clause; a unit written once in brackets is lent to the list
    assert passes("강남 61, 노원 16, 은평 14 ㎍/㎥. 강남구가 노원구보다 45 높습니다.", [eunpyeong, nowon])
    assert passes("노원 16, 은평 14(단위 ㎍/㎥)예요.", [eunpyeong, nowon])
    assert passes("PM10 reads 16 in Nowon-gu and 14 in Eunpyeong-gu (µg/m³).", [eunpyeong, nowon])


def test_enumerated_labels_name_the_same_thing() -> None:
    first = Fact("name", "인천광역시", label="도시1", field="cityname")
    second = Fact("name", "대전광역시", label="도시2", field="cityname")
    assert passes("지원 도시 2개: 인천광역시(도시코드 23), 대전광역시(도시코드 25).", [first, second])


@pytest.mark.parametrize(
    "text,value,unit",
    [
        ("천칠 세대", 1007, "세대"),
        ("천백사십사 세대", 1144, "세대"),
        ("십 분", 10, "분"),
        ("삼십 퍼센트", 30, "%"),
        ("열일곱 단지", 17, "건"),
        ("다섯 동에", 5, "동"),
        ("두 도시예요", 2, "건"),
        ("about 190 meters", 190, "m"),
    ],
)
def test_numbers_written_as_words(text: str, value: float, unit: str) -> None:
    assert [(m.value, m.unit) for m in mentions(prepare_text(text))] == [(value, unit)]


def test_words_that_only_look_like_numbers_or_halves() -> None:
    assert [m.value for m in mentions(prepare_text("1,007세대, 162,400만원"))] == [1007, 1624000000]
    assert mentions(prepare_text("사거리")) == []
    station = Fact("text", "1700", label="시각")
    assert not passes("오후 5시 반포전망대 근처예요.", [Fact("text", "17:30")])
    assert passes("오후 5시 반포전망대 근처예요.", [station])


def test_an_approximate_figure_rounds_to_its_zeros() -> None:
    dist = Fact("number", 622.97, unit="m", label="거리")
    assert passes("병원은 약 620m 떨어져 있어요.", [dist])
    assert not passes("병원은 620m 떨어져 있어요.", [dist])
    temp = Fact(
        "number", 17.4, 0.5, "℃", "", "fcstValue", "TMP", about=["1500"], rivals=[{"value": "17", "about": ["1600"]}]
    )
    assert passes("내일 15시 기온 예보는 약 17도예요.", [temp])


def test_a_direct_no_and_a_not_but_are_no_retraction() -> None:
    assert doubt("아니요, 제일 먼저 오는 버스는 저상버스가 아니에요.") == ""
    assert doubt("병원이 아니라 약국이어서 진료시간 정보는 제공되지 않아요.") == ""
    assert doubt("15.2도예요. 아니, 잘못 봤어요.") != ""


def test_a_value_or_phone_belongs_to_the_name_written_just_before_it() -> None:
    seen = seen_rows(
        {"cityname": "인천광역시", "citycode": "23", "tel": "032-111-2222"},
        {"cityname": "대전광역시", "citycode": "25", "tel": "042-333-4444"},
    )
    count = Fact("count", 2, label="도시 수")
    assert passes("인천광역시(코드 23)와 대전광역시(코드 25) 두 곳이에요.", [count], seen)
    assert not passes("인천광역시(코드 25)와 대전광역시(코드 23) 두 곳이에요.", [count], seen)
    assert passes("두 곳이에요. 인천광역시 전화는 032-111-2222예요.", [count], seen)
    assert not passes("두 곳이에요. 인천광역시 전화는 042-333-4444예요.", [count], seen)
    # values in the order of the names are each's
    assert passes("인천광역시와 대전광역시, 코드는 각각 23, 25예요. 두 곳이에요.", [count], seen)


def test_a_range_around_an_asked_time_and_a_sorry_no_fail() -> None:
    end = Fact("name", "1300", field="trmtSatEnd")
    assert passes("토요일에는 오전 9시부터 오후 1시까지 진료해요.", [end])
    assert not passes("토요일에 오후 1시~2시 사이에 진료를 마쳐요.", [end])
    assert doubt("기온은 92도… 아니 죄송해요, 그건 습도고 기온은 15.3도예요.") != ""
