"""The judge's rules added from the labelled corpus's misses (synthesis/facts.py, claims.py, fact_terms.py,
answer_values.py through `synthesis.facts.check_answer`): each with an answer that passes and one that fails, all
written here, none taken from the corpus."""

from __future__ import annotations

import json

from synthesis.answer_values import mentions, prepare_text
from synthesis.claims import Seen, facilities_in, unsupported
from synthesis.facts import Fact, refusal
from tests.test_answer_claims import NOW, passes, seen_rows


def test_english_magnitudes_are_amounts_rounded_at_the_magnitude_written() -> None:
    m = mentions(prepare_text("₩318.4 million"))[0]
    assert (m.value, m.unit) == (318_400_000, "원")
    seen = seen_rows({"dealAmount": "31,840", "aptNm": "한솔마을"})
    assert unsupported("한솔마을 sold for ₩318.4 million (31,840만 원).", seen) == ""
    assert unsupported("한솔마을 sold for 1.2 billion won.", seen).startswith("figure")


def test_a_facility_name_nothing_seen_holds_is_made_up() -> None:
    seen = seen_rows({"title": "반딧불공원", "addr1": "대전 서구 둔산로 12"}, user="둔산로 근처 공원 알려줘")
    assert unsupported("반딧불공원이 제일 가까워요.", seen) == ""
    assert unsupported("근처 약국이나 종합병원은 따로 찾아봐야 해요.", seen) == ""
    assert unsupported("반딧불공원이나 별빛미술관에 가 보세요.", seen) == "facility 별빛미술관"
    assert unsupported("탄방동 측정소 기준이에요.", seen) == "facility 탄방동 측정소"
    assert [n for n, _ in facilities_in(prepare_text("등록된 병원이 없어요"))] == []


def test_a_softened_sentence_doubts_only_what_it_claims() -> None:
    pm = Fact("number", 61, unit="㎍/㎥", label="미세먼지")
    assert passes("미세먼지는 61㎍/㎥예요. 마스크 쓰시면 산책해도 괜찮을 것 같아요.", [pm])
    assert not passes("미세먼지는 61㎍/㎥인 것 같아요.", [pm])
    assert not passes("미세먼지는 61㎍/㎥예요. 실제로는 더 나쁠 수도 있을 것 같아요.", [pm])
    empty = Fact("text", "없습니다", label="자료 없음")
    assert passes("조회 결과가 한 건도 없어요. 측정소 이름이 달라서 안 나오는 것 같아요.", [empty])
    assert not passes("그 측정소 자료는 없는 것 같아요.", [empty])


def test_a_verdict_in_english_and_a_negation_that_turns_it_into_its_opposite() -> None:
    verdict = Fact("name", "일치", label="진위확인 결과")
    assert passes("진위확인 결과는 일치예요.", [verdict])
    assert not passes("진위확인 결과는 불일치예요.", [verdict])
    assert passes("The name and opening date you gave match the tax office's records (진위확인).", [verdict])
    assert not passes("The name and opening date you gave do not match the records (진위확인).", [verdict])
    assert not passes("진위확인 결과 mismatch로 나왔어요.", [verdict])


def test_a_status_said_with_a_date_or_a_dash_after_it() -> None:
    closed = Fact("name", "폐업자", label="상태")
    assert passes("사업자 상태: 폐업 (2024-03-02 폐업)", [closed])
    assert passes("상태는 폐업 — 2024년 3월에 문을 닫았어요.", [closed])
    assert not passes("상태는 휴업 — 2024년 3월부터 쉬고 있어요.", [closed])


def test_a_request_declined_as_data_the_tools_do_not_hold() -> None:
    assert refusal("주식 시세는 제가 조회할 수 있는 자료가 아니에요.", [])
    assert not refusal("주식 시세는 오늘 3% 올랐어요.", [])


def test_a_value_written_beside_another_asked_facts_label_is_that_facts() -> None:
    x = Fact("number", 201334.5, 1.0, label="TM X")
    y = Fact("number", 447120.8, 1.0, label="TM Y")
    assert passes("TM 좌표는 X = 201334.5, Y = 447120.8이에요.", [x, y])
    assert passes("TM 좌표는 X 201,334, Y 447,121이에요.", [x, y])
    assert not passes("TM 좌표는 X = 447120.8, Y = 201334.5이에요.", [x, y])
    assert passes("TM 좌표입니다.\nX: 201334.5\nY: 447120.8", [x, y])
    assert not passes("TM 좌표입니다.\nX: 447120.8\nY: 201334.5", [x, y])
    start = Fact("name", "신흥시장", label="기점", field="startnodenm")
    end = Fact("name", "보람마을", label="종점", field="endnodenm")
    assert passes("이 노선은 신흥시장에서 출발해 보람마을이 종점이에요.", [start, end])
    assert passes("기점은 신흥시장, 종점은 보람마을입니다.", [start, end])
    assert not passes("이 노선은 보람마을에서 출발해 신흥시장이 종점이에요.", [start, end])
    assert not passes("기점은 보람마을, 종점은 신흥시장입니다.", [start, end])


def test_english_clock_times_and_another_asked_time_beside_one() -> None:
    checkin = Fact("text", "14:00", label="체크인", field="checkintime", about=["12:00"])
    checkout = Fact("text", "12:00", label="체크아웃", field="checkouttime", about=["14:00"])
    assert passes("Check-in is at 2 p.m. and check-out at noon.", [checkin, checkout])
    assert passes("Check-in is at 14:00 and check-out at 12:00.", [checkin, checkout])
    assert not passes("Check-in is at 3 p.m. and check-out at noon.", [checkin, checkout])
    first = Fact("name", 610, field="startvehicletime", label="첫차", about=["2250"])
    assert passes("The first bus (첫차) leaves at 6:10 a.m.; the last one at 22:50.", [first])
    assert not passes("The first bus (첫차) leaves at 6:10 p.m.", [first])
    assert not passes("The first bus (첫차) leaves at 6:10 or 6:40 a.m.", [first])


def test_reports_of_missing_data_in_more_wordings() -> None:
    empty = Fact("text", "없습니다", label="자료 없음")
    for answer in (
        "조회 결과가 비어 있어요.",
        "검색 결과가 0건이라 주소를 찾지 못했습니다.",
        "한 건도 나오지 않았어요.",
        "The query came back empty.",
        "That clinic doesn't appear in the hospital list.",
        "I searched the address service, but got no results.",
    ):
        assert passes(answer, [empty]), answer
    assert not passes("The query returned 3 stations.", [empty])
    assert not passes("조회 결과가 없어요. 하지만 아까 건 잘못 봤어요.", [empty])
    assert not passes("No results came back, but scratch that, I was wrong.", [empty])


def test_missing_data_said_of_another_month_than_the_one_asked() -> None:
    empty = Fact("text", "없습니다", label="아직 자료 없음")
    seen = Seen(results=('{"items": []}',), user=("다음 달 거래 알려줘",), now=NOW, sent=("11110", "202611"))
    assert passes("11월 거래 자료는 아직 없습니다.", [empty], seen)
    assert passes("다음 달 거래 자료는 아직 없습니다.", [empty], seen)
    assert not passes("이번 달(10월) 거래 자료는 없습니다.", [empty], seen)


def test_a_strength_in_a_product_name_is_no_dose() -> None:
    seen = seen_rows({"ITEM_NAME": "새봄로수바스타틴정10밀리그램(로수바스타틴)", "ENTP_NAME": "새봄제약"})
    assert unsupported("새봄로수바스타틴정 10mg은 새봄제약 제품이에요.", seen) == ""
    assert unsupported("하루 최대 10mg까지만 드세요.", seen) == "figure 10mg"


def test_a_count_or_a_coordinate_supports_no_measurement() -> None:
    seen = seen_rows({"nodenm": "솔밭삼거리", "arrprevstationcnt": 4, "arrtime": 420, "gpslong": 127.38})
    assert unsupported("솔밭삼거리에 4정거장 남았고 약 7분 뒤 도착해요.", seen) == ""
    assert unsupported("솔밭삼거리에 약 4분 뒤 도착해요.", seen) == "figure 4분"
    assert unsupported("솔밭삼거리에서 127m 떨어져 있어요.", seen) == "figure 127m"


def test_height_is_no_comparison() -> None:
    seen = seen_rows({"title": "별빛전망대", "addr1": "중구 별빛로 151", "zipcode": "01500", "mlevel": "6"})
    assert unsupported("별빛전망대는 별빛로 151에 있어요.", seen) == ""
    assert unsupported("별빛전망대는 해발 145m 높이에 있어요.", seen) == "figure 145m"


def test_a_short_value_at_the_end_of_a_longer_word_is_another_word() -> None:
    shape = Fact("name", "원형", label="모양", field="DRUG_SHAPE")
    assert passes("알약 모양은 원형이에요.", [shape])
    assert not passes("알약 모양은 타원형이에요.", [shape])


def test_a_reference_time_of_another_day_moves_the_figures_of_its_sentence() -> None:
    pm = Fact("number", 42, unit="㎍/㎥", label="초미세먼지", about=["2026-10-15 14:00"])
    seen = seen_rows({"stationName": "솔밭", "pm25Value": "42", "dataTime": "2026-10-15 14:00"})
    assert passes("초미세먼지는 42㎍/㎥인데, 오늘 오후 2시 기준 값이에요.", [pm], seen)
    assert not passes("초미세먼지는 42㎍/㎥인데, 어제 오후 2시 기준 값이에요.", [pm], seen)


def test_a_bare_figure_right_after_its_own_label_takes_the_labels_unit() -> None:
    pm10 = Fact("number", 23, unit="㎍/㎥", field="pm10Value")
    pm25 = Fact("number", 9, unit="㎍/㎥", field="pm25Value")
    assert passes("미세먼지 23, 초미세먼지 9예요.", [pm10, pm25])
    assert passes("PM10 23이에요.", [pm10])
    assert not passes("미세먼지 9, 초미세먼지 23이에요.", [pm10, pm25])
    assert not passes("미세먼지는 좋음이고, 23번 버스를 타세요.", [pm10])


def test_english_province_and_city_names_and_routes() -> None:
    seoul = Fact("count", 14, unit="곳", label="서울", about=["서울"])
    busan = Fact("count", 8, unit="곳", label="부산", about=["부산"])
    assert passes("Seoul has 14 stations and Busan 8.", [seoul, busan])
    assert not passes("Seoul has 8 stations and Busan 14.", [seoul, busan])
    route = Fact("name", 721, label="노선", field="routeno")
    assert passes("Only one route stops there: bus 721.", [route])
    assert not passes("Only one route stops there: bus 712.", [route])


def test_an_item_made_up_among_listed_values() -> None:
    seen = seen_rows({"dgsbjtCdNm": "내과"}, {"dgsbjtCdNm": "안과"}, {"dgsbjtCdNm": "치과"})
    first = Fact("name", "내과", field="dgsbjtCdNm", rivals=[{"value": "안과"}, {"value": "치과"}])
    assert passes("진료과목은 내과, 안과, 치과예요.", [first], seen)
    assert not passes("진료과목은 내과, 안과, 외과예요.", [first], seen)


def test_an_item_made_up_beside_one_listed_value_of_the_same_kind() -> None:
    seen = seen_rows({"MIXTURE_INGR_KOR_NAME": "이트라코나졸", "PROHBT_CONTENT": "근육 손상 위험"})
    taboo = Fact("name", "이트라코나졸", field="MIXTURE_INGR_KOR_NAME")
    assert passes("이트라코나졸, 그리고 자몽 같은 음식은 피하세요.", [taboo], seen)
    assert not passes("이트라코나졸, 케토코나졸, 자몽주스와 같이 드시면 안 돼요.", [taboo], seen)


def test_a_value_said_in_a_clause_naming_another_entity_listed_beside_its_own() -> None:
    stops = {"items": [{"nodenm": "솔밭삼거리", "nodeid": "A1"}, {"nodenm": "솔밭역", "nodeid": "A2"}]}
    arrivals = {"items": [{"nodenm": "솔밭삼거리", "routeno": 705, "arrprevstationcnt": 7}]}
    seen = Seen(results=tuple(json.dumps(d, ensure_ascii=False) for d in (stops, arrivals)), now=NOW)
    route = Fact("name", 705, label="노선", field="routeno", about=["솔밭삼거리", "간선버스"])
    assert passes("솔밭삼거리 정류소에 705번 버스가 와요.", [route], seen)
    assert not passes("솔밭역 정류소에 705번 버스가 와요.", [route], seen)


def test_an_address_given_as_the_found_entitys_must_be_its_own() -> None:
    clinic = Fact("name", "솔밭내과의원", label="병원", about=["대전광역시 서구 솔밭로12길 40", "솔밭동"])
    assert passes("솔밭동 병원은 솔밭내과의원이고, 주소는 대전 서구 솔밭로12길 40입니다.", [clinic])
    assert not passes("솔밭동 병원은 솔밭내과의원이고, 주소는 대전 서구 솔밭로 77-3입니다.", [clinic])


def test_a_figure_compared_with_is_no_value_stated() -> None:
    wind = Fact("number", 5, unit="m/s", label="최대 풍속")
    assert passes("최대 풍속은 5m/s예요. 4m/s 이하가 아니라서 야외 활동은 조심하세요.", [wind])
    assert not passes("최대 풍속은 6m/s예요. 5m/s 이하가 아니라서 야외 활동은 조심하세요.", [wind])


def test_an_identifier_written_in_digit_groups_is_one_code() -> None:
    seen = seen_rows({"b_no": "2148812345", "bjdCode": "1174010900"})
    assert unsupported("사업자번호 214-88-12345는 계속사업자예요.", seen) == ""
    assert unsupported("법정동코드는 11740 10900이에요.", seen) == ""
    assert unsupported("사업자번호 214-88-54321는 계속사업자예요.", seen).startswith("figure")


def test_the_entity_the_user_asked_about_tells_no_rival_row_apart() -> None:
    seen = seen_rows(
        {"routeno": 705, "startnodenm": "신흥시장", "endnodenm": "보람마을"},
        {"routeno": 33, "startnodenm": "솔밭사거리", "endnodenm": "한빛공원"},
        user="솔밭사거리 지나는 버스 알려줘",
    )
    route = Fact(
        "name",
        705,
        label="노선",
        field="routeno",
        about=["신흥시장", "보람마을"],
        rivals=[{"value": 33, "about": ["솔밭사거리", "한빛공원"]}],
    )
    assert passes("솔밭사거리 경유 노선: 705번, 33번.", [route], seen)
    assert not passes("한빛공원 경유 노선: 705번.", [route], seen)


def test_the_slash_of_a_unit_offers_no_alternative() -> None:
    seen = seen_rows(
        {"stationName": "솔밭", "pm10Value": "31"},
        {"stationName": "강", "pm10Value": "48"},
        {"stationName": "보람", "pm10Value": "52"},
    )
    rivals = [{"value": "강", "about": []}, {"value": "보람", "about": []}]
    first = Fact("name", "솔밭", label="측정소", field="stationName", rivals=rivals)
    assert passes("미세먼지는 솔밭 31, 강 48, 보람 52㎍/㎥예요.", [first], seen)
    assert not passes("측정소는 솔밭 또는 보람이에요.", [first], seen)
