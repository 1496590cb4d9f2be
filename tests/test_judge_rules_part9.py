"""The judge's rules added from the misses and false passes of part9 of the labelled corpus (writer-9), through
`synthesis.facts.check_answer` and `refusal`: each with an answer that passes and one that fails, written here."""

from __future__ import annotations

import json

from synthesis.answer_values import mentions, prepare_text
from synthesis.fact_terms import Fact
from synthesis.facts import refusal
from synthesis.seen import Seen
from tests.test_answer_claims import NOW, passes, seen_rows


def test_a_request_declined_as_not_covered_or_not_viewable() -> None:
    assert refusal("Sorry, New York isn't covered by the available data tools.", [])
    assert refusal("주식 시세는 제 도구로 못 봐요.", [])
    assert not refusal("New York is covered: it is 12°C there now.", [])
    assert not refusal("주식 시세는 오늘 3% 올랐어요.", [])


def test_a_figure_followed_by_in_total_is_a_count() -> None:
    m = mentions(prepare_text("Incheon and Daejeon (2 in total)"))[0]
    assert (m.value, m.unit) == (2, "건")
    assert mentions(prepare_text("2 in the morning"))[0].unit == ""
    cities = Fact("count", 2, label="도시 수")
    assert passes("Supported cities: Incheon and Daejeon (2 in total).", [cities])
    assert not passes("Supported cities: Incheon, Daejeon and Busan (3 in total).", [cities])


def test_a_sentence_that_only_says_when_the_figures_are_of_moves_them() -> None:
    pm = Fact("number", 42, unit="㎍/㎥", label="초미세먼지", about=["2026-10-14 14:00"])
    seen = seen_rows({"stationName": "솔밭", "pm25Value": "42", "dataTime": "2026-10-14 14:00"})
    assert passes("초미세먼지는 42㎍/㎥예요. 어제 기준입니다.", [pm], seen)
    assert not passes("초미세먼지는 42㎍/㎥예요. 오늘 기준입니다.", [pm], seen)
    # a sentence of its own that says more than the day is not a reference of the figures before it
    assert passes("초미세먼지는 42㎍/㎥예요. 오늘 기준으로 바깥 활동은 괜찮은 편이에요.", [pm], seen)


def test_a_value_of_a_closed_set_the_results_give_another_of() -> None:
    seen = seen_rows({"ITEM_NAME": "한빛정", "ETC_OTC_CODE": "전문의약품", "ENTP_NAME": "한빛제약"})
    maker = Fact("name", "한빛제약", label="제조사")
    assert passes("한빛정은 전문의약품이고 한빛제약이 만듭니다.", [maker], seen)
    assert not passes("한빛정은 일반의약품이고 한빛제약이 만듭니다.", [maker], seen)
    # named as a condition or a kind of information, or denied, it is no claim
    assert passes(
        "한빛정은 전문의약품이라 일반의약품 복용정보는 조회하지 않았어요. 제조사는 한빛제약입니다.", [maker], seen
    )
    assert passes("한빛정은 일반의약품이 아니고 한빛제약이 만듭니다.", [maker], seen)


def test_a_closing_day_the_results_never_name() -> None:
    seen = seen_rows({"title": "경복궁", "usetime": "09:00~18:00", "restdate": "매주 화요일"})
    hours = Fact("text", "09:00~18:00", label="이용시간")
    assert passes("경복궁은 09:00~18:00에 열고 매주 화요일 휴무입니다.", [hours], seen)
    assert not passes("경복궁은 09:00~18:00에 열고 매주 월요일 휴무입니다.", [hours], seen)
    assert passes("경복궁은 09:00~18:00에 열어요. 월요일은 휴무가 아니에요.", [hours], seen)


def test_the_values_a_scope_sentence_names_are_no_retraction() -> None:
    cities = [Fact("name", "인천", label="도시"), Fact("name", "대전", label="도시")]
    assert passes("이 서비스가 다루는 도시는 인천과 대전뿐이라 서울 버스 정보는 조회할 수 없습니다.", cities)
    assert not passes("인천뿐이라 대전 버스 정보는 조회할 수 없습니다.", cities)


def test_names_joined_by_a_middle_dot_share_the_value_after_them() -> None:
    rows = [("서울", "12.6"), ("인천", "12.6"), ("대전", "11.7")]
    seen = seen_rows(*[dict[str, object](stnNm=n, avgTa=t) for n, t in rows])
    facts = [Fact("number", float(t), 0.1, "℃", field="avgTa", about=[n]) for n, t in rows]
    assert passes("평균기온: 서울·인천 둘 다 12.6도, 대전 11.7도예요.", facts, seen)
    assert not passes("평균기온: 서울·인천 둘 다 11.7도, 대전 12.6도예요.", facts, seen)
    # a dot between figures still parts their clauses
    assert passes("평균기온: 서울 12.6도·인천 12.6도·대전 11.7도예요.", facts, seen)


def test_a_range_drawn_around_an_asked_value_is_no_value() -> None:
    seen = seen_rows({"category": "T1H", "fcstTime": "1700", "fcstValue": "16"})
    temp = Fact("number", 16, 0.5, "℃", label="기온")
    assert passes("오후 5시 기온은 16℃예요.", [temp], seen)
    assert not passes("오후 5시 기온은 16℃ 안팎, 대략 15~17도 사이로 보입니다.", [temp], seen)
    # a range the results hold (a day's lowest and highest) is no interval made up
    day = seen_rows(
        {"category": "T1H", "fcstTime": "1700", "fcstValue": "16"},
        {"category": "TMN", "fcstValue": "9"},
        {"category": "TMX", "fcstValue": "18"},
    )
    assert passes("오늘 기온은 9~18도이고, 오후 5시 기온은 16℃예요.", [temp], day)


def test_a_grade_threshold_said_to_be_crossed_is_that_grade_or_worse() -> None:
    seen = seen_rows({"dataTime": "2026-10-15 14:00", "pm10Value": "61", "pm10Grade": "2"})
    pm10 = Fact("number", 61, unit="㎍/㎥", label="미세먼지")
    assert not passes("미세먼지는 61㎍/㎥로 나쁨 기준을 넘어서 실내 시설을 찾아볼게요.", [pm10], seen)
    assert passes("미세먼지는 61㎍/㎥로 나쁨 기준을 넘지 않아 실내 시설은 찾지 않았어요.", [pm10], seen)
    assert passes("미세먼지는 61㎍/㎥로 좋음 기준을 넘어 보통이에요.", [pm10], seen)


def test_a_figure_in_the_facts_counter_after_another_fields_label_counts_those_things() -> None:
    rows = [{"nodenm": n, "nodeord": i, "routeno": "송정7"} for i, n in enumerate(("송정사거리", "송정시장"), 1)]
    seen = Seen(results=(json.dumps({"rows": 29, "shown": 2, "items": rows}, ensure_ascii=False),), now=NOW)
    total = Fact("number", 29, unit="건", label="건수")
    assert passes("버스 노선의 경유 정류소는 29건입니다.", [total], seen)
    assert not passes("버스 노선의 경유 정류소는 28건입니다.", [total], seen)
    # a figure of another unit after the label is still that field's (`정류소 29` is no count)
    assert not passes("버스 노선의 경유 정류소는 29입니다.", [total], seen)
