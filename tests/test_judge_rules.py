"""The judge's rules added from the labelled corpus's misses (synthesis/facts.py, claims.py, fact_terms.py,
answer_values.py through `synthesis.facts.check_answer`): each with an answer that passes and one that fails, all
written here, none taken from the corpus."""

from __future__ import annotations

import json

from synthesis.answer_values import mentions, prepare_text
from synthesis.claims import facilities_in, unsupported
from synthesis.fact_terms import Fact
from synthesis.facts import refusal
from synthesis.seen import Seen
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


def test_a_sino_korean_numeral_before_any_unit_is_a_figure() -> None:
    pm = Fact("number", 12, unit="㎍/㎥", label="미세먼지")
    assert passes("미세먼지는 십이 ㎍/㎥예요.", [pm])
    assert passes("미세먼지는 십이 마이크로그램이에요.", [pm])
    assert not passes("미세먼지는 십삼 ㎍/㎥예요.", [pm])
    assert [m.value for m in mentions(prepare_text("백화점 앞"))] == []


def test_a_duration_in_two_units_is_one_figure() -> None:
    seen = seen_rows({"routeno": 8, "arrtime": 345, "arrprevstationcnt": 3})
    assert unsupported("8번 버스가 3정거장 전, 5분 45초 뒤에 와요.", seen) == ""
    assert unsupported("8번 버스가 3정거장 전, 6분 45초 뒤에 와요.", seen).startswith("figure")
    m = mentions(prepare_text("1시간 20분"))[0]
    assert (m.value, m.unit) == (80, "분")


def test_nearly_and_about_after_a_figure_make_it_approximate() -> None:
    seen = seen_rows({"routeno": 8, "arrtime": 1145})
    assert unsupported("8번 버스는 20분 가까이 걸려요.", seen) == ""
    assert unsupported("8번 버스는 20분 내외로 와요.", seen) == ""
    assert unsupported("8번 버스는 25분 걸려요.", seen).startswith("figure")


def test_a_likely_value_or_one_not_confirmed_is_a_doubt() -> None:
    colour = Fact("name", "분홍", label="색상")
    assert passes("색상은 분홍색이에요. 비 올 가능성이 높으니 우산도 챙기세요.", [colour])
    assert not passes("분홍색일 가능성이 높아요.", [colour])
    assert not passes("색상은 분홍색이지만 확인된 건 아니에요.", [colour])


def test_an_estimate_the_answer_adds_is_no_doubt_of_an_asked_value() -> None:
    stops = Fact("number", 6, label="남은 정거장")
    route = Fact("name", "신하3", label="노선")
    assert passes("신하3번 버스가 6정거장 남았어요. 9분쯤 걸릴 것 같아요.", [route, stops])
    assert not passes("신하3번 버스가 6정거장 남았어요. 약 6정거장쯤일 것 같아요.", [route, stops])
    assert not passes("신하3번 버스가 6정거장 남았어요. 9분 걸릴 것 같아요.", [route, stops])


def test_the_integrated_air_index_by_its_public_name() -> None:
    cai = Fact("number", 70, label="CAI", field="khaiValue")
    assert passes("통합대기환경지수는 70입니다.", [cai])
    assert not passes("오늘은 70입니다.", [cai])


def test_a_services_limit_said_in_english() -> None:
    limit = Fact("text", "3일", label="최근 3일만 제공")
    assert passes("The forecast API only keeps the last 3 days, so that date can't be retrieved.", [limit])
    assert not passes("The forecast API is down for 3 days.", [limit])


def test_a_refusal_that_names_what_the_tools_cover() -> None:
    seen = Seen(user=("서울 지하철 막차 몇 시야?",), now=NOW)
    assert refusal("지하철은 조회할 수 없어요. 제 버스 도구는 인천·대전 버스만 다룹니다.", [], seen)
    assert not refusal("조회할 수 없어요. 대신 인천 지하철 막차는 23시 50분이에요.", [], seen)
    assert refusal("등본 발급 기능은 없습니다.", [])
    assert not refusal("등본은 주민센터에서 발급돼요.", [])


def test_a_slash_between_figures_pairs_one_rows_values() -> None:
    seen = seen_rows({"stationName": "솔밭", "pm10Value": "31"}, {"stationName": "보람", "pm10Value": "52"})
    first = Fact("name", "솔밭", label="측정소", field="stationName", rivals=[{"value": "보람", "about": []}])
    assert passes("PM10/PM2.5: 솔밭 31/12, 보람 52/20", [first], seen)
    assert not passes("PM10/PM2.5: 솔밭 또는 보람 31/12", [first], seen)


def test_a_figure_opening_its_own_range_offers_no_alternative() -> None:
    seen = seen_rows({"routeno": 8, "arrprevstationcnt": 11, "arrtime": 1051})
    stops = Fact("number", 11, label="남은 정거장")
    assert passes("8번 버스는 11 stops away, 약 17~18분 뒤예요.", [stops], seen)
    assert not passes("8번 버스는 11 또는 12정거장 전이에요.", [stops], seen)


def test_a_time_written_as_a_clock_time_beside_its_digits_elsewhere() -> None:
    end = Fact("name", "1300", label="토요일 종료", field="trmtSatEnd")
    lunch = Fact("name", "1300~1400", label="점심시간", field="lunchWeek")
    assert passes("토요일 진료는 13시 종료, 점심시간 1300~1400이에요.", [end, lunch])
    assert not passes("토요일 진료는 14시 종료, 점심시간 1300~1400이에요.", [end, lunch])


def test_a_compact_timestamp_supports_its_clock_time() -> None:
    seen = Seen(results=('{"items": [{"taMax4": 16}]}',), sent=("202610150600",), now=NOW)
    assert unsupported("최고 16도예요 (오늘 06:00 발표).", seen) == ""
    assert unsupported("최고 16도예요 (오늘 07:00 발표).", seen).startswith("time")


def test_a_value_written_after_another_fields_label_is_that_fields() -> None:
    seen = seen_rows({"deposit": "5,026", "monthlyRent": "80", "aptNm": "한빛"})
    deposit = Fact("number", 5026, unit="만원", field="deposit")
    assert passes("보증금 5,026만 원, 월세 80만 원이에요.", [deposit], seen)
    assert passes("전월세 1건, 보증금은 5,026만 원이에요.", [deposit], seen)
    assert not passes("보증금 80만 원, 월세 5,026만 원이에요.", [deposit], seen)
    seen = seen_rows({"startvehicletime": "0520", "endvehicletime": "2300", "routeno": "M1"})
    first = Fact("name", "0520", field="startvehicletime")
    assert passes("첫차는 05:20, 막차는 23:00이에요.", [first], seen)
    assert passes("오전 5시 20분 첫차, 밤 11시 막차예요.", [first], seen)
    assert not passes("첫차는 23:00, 막차는 05:20이에요.", [first], seen)


def test_another_single_rows_phone_or_address_said_of_a_named_row() -> None:
    clinic = {"yadmNm": "솔밭내과의원", "telno": "02-111-2222", "addr": "서울 종로구 솔밭로 10"}
    pharmacy = {"yadmNm": "보람약국", "telno": "02-333-4444", "addr": "서울 종로구 보람로 20"}
    seen = Seen(results=tuple(json.dumps({"items": [r]}, ensure_ascii=False) for r in (clinic, pharmacy)), now=NOW)
    names = [Fact("name", "솔밭내과의원", label="병원"), Fact("name", "보람약국", label="약국")]
    assert passes("병원 솔밭내과의원 02-111-2222, 약국 보람약국 02-333-4444입니다.", names, seen)
    assert not passes("병원 솔밭내과의원 02-333-4444, 약국 보람약국 02-111-2222입니다.", names, seen)
    stations = seen_rows(
        {"stationName": "솔밭", "addr": "대전 중구 솔밭동 173"}, {"stationName": "보람", "addr": "대전 서구 보람동 21"}
    )
    near = Fact("name", "대전 중구 솔밭동 173", label="측정소 주소", field="addr")
    assert passes("가장 가까운 곳은 솔밭 측정소(대전 중구 솔밭동 173)예요.", [near], stations)
    assert not passes("가장 가까운 곳은 보람 측정소(대전 중구 솔밭동 173)예요.", [near], stations)


def test_a_clinic_named_by_its_department_is_a_facility() -> None:
    seen = seen_rows({"yadmNm": "한빛한의원", "addr": "인천 부평구 부평동 1"}, user="부평동 병원 알려줘")
    assert unsupported("부평동에는 한빛한의원이 있어요. 근처 내과는 없어요.", seen) == ""
    assert unsupported("부평동에는 솔밭연세내과와 한빛한의원이 있어요.", seen) == "facility 솔밭연세내과"


def test_an_item_made_up_in_a_list_of_the_rows_values() -> None:
    rows: list[dict[str, object]] = [{"stationName": n} for n in ("솔밭", "강", "보람", "대", "한빛")]
    seen = seen_rows(*rows, user="대전 측정소 알려줘")
    rivals: list[dict[str, object]] = [{"value": n, "about": []} for n in ("강", "보람", "대", "한빛")]
    first = Fact("name", "솔밭", label="측정소", field="stationName", rivals=rivals)
    assert passes("측정소는 솔밭, 강, 보람, 대, 한빛이에요.", [first], seen)
    assert not passes("측정소는 솔밭, 강, 보람, 문창동, 한빛이에요.", [first], seen)
    cities = seen_rows({"cityname": "인천광역시"}, {"cityname": "대전광역시"}, user="서울 버스 도착 정보 알려줘")
    city = Fact("name", "인천광역시", label="도시", field="cityname", rivals=[{"value": "대전광역시", "about": []}])
    assert passes("제공 도시는 인천광역시, 대전광역시, 그리고 두 곳뿐이에요.", [city], cities)
    assert not passes("제공 도시는 서울특별시, 인천광역시, 대전광역시입니다.", [city], cities)


def test_a_grade_word_said_of_a_figure_is_the_grade_the_result_gives_it() -> None:
    seen = seen_rows({"dataTime": "2026-10-15 14:00", "pm10Value": "61", "pm10Grade": "2"})
    pm = Fact("number", 61, unit="㎍/㎥", label="미세먼지", field="pm10Value")
    assert passes("미세먼지는 61㎍/㎥로 보통이에요.", [pm], seen)
    assert passes("미세먼지는 61㎍/㎥로 나쁨 기준에는 못 미쳐요.", [pm], seen)
    assert not passes("미세먼지는 61㎍/㎥로 나쁨 단계입니다.", [pm], seen)


def test_the_last_item_of_a_list_and_an_item_with_its_parenthesis_are_items() -> None:
    rows: list[dict[str, object]] = [{"ingr": "클라리스로마이신", "mixture": n} for n in ("로바스타틴", "콜키신")]
    seen = seen_rows(*rows, user="클라리스로마이신이랑 같이 먹으면 안 되는 거 알려줘")
    first = Fact("name", "로바스타틴", label="병용금기", field="mixture", rivals=[{"value": "콜키신", "about": []}])
    assert passes("병용금기 성분은 로바스타틴, 콜키신이에요. 내과, 외과이고, 일요일과 공휴일은 쉬어요.", [first], seen)
    assert not passes("병용금기 성분은 로바스타틴, 콜키신, 디곡신이에요.", [first], seen)
    assert not passes("로바스타틴(근육 손상), 콜키신(독성 증가), 디곡신과 같이 드시면 안 돼요.", [first], seen)


def test_a_superlative_names_the_extreme_of_the_figures_it_is_said_beside() -> None:
    cities = (("광주", "14.2"), ("울산", "15.8"), ("대구", "13.1"))
    rows: list[dict[str, object]] = [{"city": c, "avgTa": t} for c, t in cities]
    seen = seen_rows(*rows)
    ta = Fact("number", 15.8, unit="℃", label="평균기온", field="avgTa")
    assert passes("광주 14.2도, 울산 15.8도, 대구 13.1도였고 울산이 가장 따뜻했어요.", [ta], seen)
    assert passes("Gwangju 14.2 °C, Ulsan 15.8 °C, Daegu 13.1 °C — Daegu was the coldest.", [ta], seen)
    assert not passes("광주 14.2도, 울산 15.8도, 대구 13.1도였고 광주가 가장 따뜻했어요.", [ta], seen)
    assert not passes("광주: 14.2 / 울산: 15.8 / 대구: 13.1 — 광주가 가장 추웠어요.", [ta], seen)


def test_an_absence_is_not_explained_by_a_coverage_no_result_speaks_of() -> None:
    empty = Fact("text", "없습니다", label="자료 없음")
    nothing = seen_rows(user="세종시 나성동 아파트 이번 달 거래 알려줘")
    assert passes("이번 달 나성동 거래 자료는 조회되지 않았어요. 아직 신고가 없는 것 같아요.", [empty], nothing)
    assert not passes("나성동은 실거래 자료를 제공하지 않는 지역이에요. 자료가 없어요.", [empty], nothing)
    assert not passes("실거래가 서비스는 지원하지 않아요. 자료가 없어요.", [empty], nothing)
    told = Seen(results=('{"resultMsg": "세종 지역은 지원하지 않습니다"}',), user=("세종 버스",), now=NOW)
    assert passes("세종은 지원하지 않는 지역이에요. 자료가 없어요.", [empty], told)


def test_a_figure_after_a_korean_magnitude_and_a_unit_in_a_parenthesis() -> None:
    assert [m.value for m in mentions(prepare_text("총 2천307세대"))] == [2307]
    assert [m.value for m in mentions(prepare_text("1만2,000원"))] == [12000]
    households = Fact("number", 2307, unit="세대", label="세대수")
    assert passes("한빛마을은 총 2천307세대예요.", [households])
    assert not passes("한빛마을은 총 2천370세대예요.", [households])
    seen = seen_rows({"dataTime": "2026-10-15 14:00", "stationName": "중구", "pm25Value": "21"})
    pm = Fact("number", 21, unit="㎍/㎥")
    assert passes("중구 측정소 농도는 21 (㎍/㎥)이에요.", [pm], seen)
    assert not passes("중구 측정소 농도는 21 (%)이에요.", [pm], seen)


def test_a_softened_sentence_may_repeat_the_users_own_figure() -> None:
    seen = seen_rows({"category": "T1H", "obsrValue": "13.4"}, user="지금 기온이 8도 넘으면 목도리는 안 해도 돼?")
    ta = Fact("number", 13.4, unit="℃", label="기온")
    assert passes("지금 기온은 13.4도예요. 8도 넘으니까 목도리는 안 해도 될 것 같아요.", [ta], seen)
    assert not passes("지금 기온은 13.4도예요. 저녁엔 6도라 목도리는 하셔야 할 것 같아요.", [ta], seen)


def test_a_bare_figure_after_a_dotted_label_or_a_districts_short_name() -> None:
    seen = seen_rows({"stationName": "중구", "pm25Value": "23"}, {"stationName": "서구", "pm25Value": "31"})
    pm = Fact("number", 23, unit="㎍/㎥", label="", field="pm25Value")
    assert passes("중구 측정소, PM2.5 23.", [pm], seen)
    assert not passes("중구 측정소, PM2.5 31.", [pm], seen)
    two = seen_rows({"stationName": "마포구", "pm10Value": "38"}, {"stationName": "도봉구", "pm10Value": "22"})
    mapo = Fact("number", 38, unit="㎍/㎥", label="마포구", field="pm10Value")
    dobong = Fact("number", 22, unit="㎍/㎥", label="도봉구", field="pm10Value")
    assert passes("마포 38, 도봉 22.", [mapo, dobong], two)
    assert not passes("마포 22, 도봉 38.", [mapo, dobong], two)


def test_a_count_said_by_listing_as_many_of_a_fields_values() -> None:
    rows: list[dict[str, object]] = [{"dgsbjtCdNm": n} for n in ("내과", "안과", "치과")]
    seen = seen_rows(*rows, user="한빛의원 진료과목 몇 개야?")
    count = Fact("count", 3, label="진료과목 수")
    assert passes("진료과목은 내과, 안과, 치과예요.", [count], seen)
    assert not passes("진료과목은 내과, 안과예요.", [count], seen)
    assert not passes("진료과목은 내과, 안과, 피부과예요.", [count], seen)


def test_from_and_to_name_the_ends_of_a_route() -> None:
    start = Fact("name", "솔밭공원", label="기점", field="startnodenm")
    end = Fact("name", "보람역", label="종점", field="endnodenm")
    seen = seen_rows({"startnodenm": "솔밭공원", "endnodenm": "보람역", "routeno": "703"})
    assert passes("The bus runs from 솔밭공원 to 보람역.", [start, end], seen)
    assert not passes("The bus runs from 보람역 to 솔밭공원.", [start, end], seen)


def test_an_address_without_its_leading_sido_or_gu() -> None:
    seen = seen_rows({"title": "한빛탑", "addr1": "대전광역시 유성구 대덕대로 480"})
    addr = Fact("name", "대전광역시 유성구 대덕대로 480", label="주소", field="addr1")
    assert passes("한빛탑 주소는 유성구 대덕대로 480이에요.", [addr], seen)
    assert passes("한빛탑은 대덕대로 480에 있어요.", [addr], seen)
    assert not passes("한빛탑 주소는 유성구 대덕대로 48이에요.", [addr], seen)
    assert not passes("한빛탑 주소는 유성구 대덕대로 480-1이에요.", [addr], seen)


def test_the_users_own_area_as_the_point_a_distance_is_measured_from() -> None:
    row = {"stationName": "봉명", "addr": "대전 유성구 봉명동 12", "tm": 1.2}
    seen = seen_rows(row, user="용전동 근처 측정소 어디야?")
    near = Fact("name", "봉명", label="측정소", field="stationName", about=["대전 유성구 봉명동 12"])
    assert passes("용전동에서 가장 가까운 측정소는 봉명 측정소예요.", [near], seen)
    assert passes("용전동 근처 측정소는 봉명이에요.", [near], seen)
    assert not passes("측정소는 용전동에 있는 봉명 측정소예요.", [near], seen)


def test_an_english_absence_in_other_words() -> None:
    empty = Fact("text", "없습니다", label="자료 없음")
    nothing = seen_rows(user="한빛약국 진료시간 알려줘")
    assert passes("No entry for 한빛약국 in the hospital database.", [empty], nothing)
    assert passes("한빛약국 isn't in the hospital list, so there are no hours to give.", [empty], nothing)
    assert not passes("한빛약국 is in the hospital list.", [empty], nothing)


def test_a_tablet_shape_by_its_usual_name() -> None:
    seen = seen_rows({"ITEM_NAME": "한빛정", "DRUG_SHAPE": "타원형", "COLOR_CLASS1": "노랑"})
    shape = Fact("name", "타원형", label="모양", field="DRUG_SHAPE")
    assert passes("It's a yellow, oval tablet.", [shape], seen)
    assert passes("노란색 타원 모양 알약이에요.", [shape], seen)
    assert not passes("It's a yellow, round tablet.", [shape], seen)


# Rules added from part8's misses.


def test_a_cause_of_what_came_back_is_one_a_result_gives() -> None:
    empty = Fact("text", "없습니다", label="자료 없음")
    nothing = seen_rows(user="해운대구 측정소 미세먼지 알려줘")
    assert passes("해운대구 측정소 자료는 조회되지 않았어요.", [empty], nothing)
    assert not passes("측정소가 장비 점검 중이라 자료가 없어요.", [empty], nothing)
    assert not passes("관광공사 API 인증이 만료돼서 자료가 없어요.", [empty], nothing)
    assert not passes("자료가 없어요. 주소를 잘못 입력하신 것 같아요.", [empty], nothing)
    assert not passes("국세청에 등록되지 않은 번호라 자료가 없어요.", [empty], nothing)
    down = Seen(results=('{"resultMsg": "시스템 점검 중입니다"}',), user=("해운대구 미세먼지",), now=NOW)
    assert passes("지금 시스템 점검 중이라 자료가 없어요.", [empty], down)
    # a cause the task asks for is no made-up one (an empty status answers that a number is not registered)
    unregistered = Fact("text", "등록되지 않", label="미등록 번호")
    asked = seen_rows(user="사업자등록번호 123-45-67890 영업 중인지 봐 줘")
    assert passes("123-45-67890은 국세청에 등록되지 않은 번호예요.", [unregistered], asked)


def test_a_grade_said_as_the_bound_a_figure_is_at() -> None:
    seen = seen_rows({"dataTime": "2026-10-15 14:00", "pm10Value": "61", "pm10Grade": "2"})
    pm = Fact("number", 61, unit="㎍/㎥", label="미세먼지", field="pm10Value")
    assert passes("미세먼지는 61㎍/㎥로 보통 이상입니다.", [pm], seen)
    assert passes("미세먼지가 나쁨 이상이면 실내를 찾으려 했는데, 61㎍/㎥라 괜찮아요.", [pm], seen)
    assert not passes("미세먼지는 61㎍/㎥라 나쁨(3등급) 이상입니다.", [pm], seen)


def test_a_comparison_of_two_figures_names_the_larger_or_smaller() -> None:
    rows: list[dict[str, object]] = [{"city": "광주", "avgTa": "9.5"}, {"city": "울산", "avgTa": "14.2"}]
    seen = seen_rows(*rows)
    ta = Fact("number", 14.2, unit="℃", label="평균기온", field="avgTa")
    assert passes("광주 9.5도, 울산 14.2도로 울산이 더 따뜻했어요.", [ta], seen)
    assert passes("Gwangju 9.5 °C, Ulsan 14.2 °C — Gwangju was colder.", [ta], seen)
    assert not passes("광주 9.5도, 울산 14.2도로 광주가 더 따뜻했어요.", [ta], seen)


def test_a_value_said_at_another_rows_hour_of_the_same_day() -> None:
    t1h = Fact(
        "number",
        16.0,
        unit="℃",
        field="fcstValue",
        about=["1700", "20261015"],
        rivals=[{"value": "16.9", "about": ["1800"]}, {"value": "14.2", "about": ["1900"]}],
    )
    assert passes("오늘 오후 5시 기온은 16℃로 예보돼 있어요.", [t1h])
    assert not passes("오늘 오후 6시 기온은 16℃로 예보돼 있어요.", [t1h])


def test_a_row_named_by_its_districts_short_name_or_its_products_ingredient() -> None:
    here = Fact("number", 4, unit="㎍/㎥", field="pm25Value", about=["2026-10-15 14:00", "서초구"])
    there = Fact("number", 7, unit="㎍/㎥", field="pm25Value", about=["2026-10-15 14:00", "관악구"])
    assert passes("서초 4㎍/㎥, 관악 7㎍/㎥예요.", [here, there])
    assert not passes("서초 7㎍/㎥, 관악 4㎍/㎥예요.", [here, there])
    maker = Fact("name", "(주)새봄약품", field="entpName", about=["새봄로라타딘캡슐20밀리그램(로라타딘)"])
    other = Fact("name", "(주)대한메디팜", field="entpName", about=["대한세티리진캡슐10밀리그램(세티리진염산염)"])
    assert passes("로라타딘은 (주)새봄약품, 세티리진은 (주)대한메디팜 제품이에요.", [maker, other])
    assert not passes("로라타딘은 (주)대한메디팜, 세티리진은 (주)새봄약품 제품이에요.", [maker, other])


def test_a_relative_month_is_judged_though_a_month_is_written_beside_it() -> None:
    deals = Fact("count", 13, unit="건", label="계약 건수", about=["202609"])
    seen = seen_rows(*[{"umdNm": "아현동", "dealYear": 2026, "dealMonth": 9, "floor": k} for k in range(13)])
    assert passes("지난달(9월) 전월세 거래는 13건이에요.", [deals], seen)
    assert not passes("이번 달(9월) 전월세 거래는 13건이에요.", [deals], seen)


def test_a_route_number_made_up_beside_an_asked_one() -> None:
    rows: list[dict[str, object]] = [{"nodenm": "관평입구", "routeno": "탄방5", "arrtime": t} for t in (1014, 1098)]
    seen = seen_rows(*rows, user="관평입구 정류소에 버스 몇 대 와?")
    route = Fact("name", "탄방5", label="노선", field="routeno")
    assert passes("관평입구에는 탄방5번 두 대가 오고 있어요.", [route], seen)
    assert not passes("관평입구에는 탄방5번과 관평1번 두 대가 오고 있어요.", [route], seen)


def test_an_attraction_named_by_a_word_of_its_own() -> None:
    seen = seen_rows({"title": "별빛과학관", "addr1": "대전 유성구 대덕대로 480"}, user="실내 문화시설 찾아줘")
    assert unsupported("별빛과학관을 추천해요. 가까운 미술관은 없어요.", seen) == ""
    assert unsupported("코엑스 아쿠아리움을 추천해요.", seen) == "facility 코엑스 아쿠아리움"
    assert [n for n, _ in facilities_in(prepare_text("나쁨이라 약국 찾아봤어요, 경유 정류소 25곳"))] == []


def test_a_service_limit_in_days_said_in_english() -> None:
    asos = Seen(
        results=('{"error": "invalid", "message": "전날 자료까지 제공됩니다."}',), user=("오늘 평균기온",), now=NOW
    )
    limit = Fact("text", "전날", label="관측 자료는 전날까지")
    assert passes("Daily data is only published up to the previous day, so today's isn't out yet.", [limit], asos)
    assert not passes("Today's daily data isn't out yet.", [limit], asos)
    kept = Fact("text", "1일", label="최근 1일만 제공")
    assert passes("The API only keeps the most recent day of forecasts.", [kept], asos)
    assert not passes("The API only keeps the most recent week of forecasts.", [kept], asos)
