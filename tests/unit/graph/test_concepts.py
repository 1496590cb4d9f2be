"""graph/concepts.py, the signals read off one name, description or value: normalised names and partial-match
filters, value shapes and concepts, who supplies a parameter (`param_role`), the pairs that come from one row, the
unit a description states and the label of an answering field, the coordinate system values are in."""

from __future__ import annotations

import pytest

from graph.concepts import (
    answer_label,
    concepts_of,
    crs_from_values,
    field_unit,
    filtered_norm,
    norm,
    pair_group,
    param_role,
    stem,
    tokens,
    value_concepts,
    value_shape,
)


def test_norm_keeps_lowercase_letters_digits_and_hangul_only() -> None:
    assert norm("LAWD_CD") == "lawdcd"
    assert norm("시군구 코드(5)") == "시군구코드5"


@pytest.mark.parametrize(
    ("name", "filtered"),
    [("likeItemCd", "itemcd"), ("like_corp_nm", "corpnm"), ("likely", None), ("itemCd", None), ("like", None)],
)
def test_a_partial_match_filter_names_the_field_it_searches(name: str, filtered: str | None) -> None:
    assert filtered_norm(name) == filtered


def test_tokens_split_camel_case_and_drop_short_words() -> None:
    assert tokens("getVilageFcst_baseDate") == {"get", "vilage", "fcst", "base", "date"}
    assert tokens("nx") == set()


def test_the_stem_drops_the_axis_of_a_coordinate_name() -> None:
    assert stem("gpsLati") == stem("gpsLong") == "gps"
    assert stem("tmX") == stem("tmY") == "tm"
    assert stem("xPos") == stem("yPos") == "pos"
    assert stem("LAWD_CD") == "lawd_cd"


@pytest.mark.parametrize(
    ("value", "shape"),
    [("", "empty"), (" 1100 ", "digits4"), ("37.56", "float"), ("A123", "alnum"), ("서울", "hangul"), ("a-b", "text")],
)
def test_value_shapes(value: str, shape: str) -> None:
    assert value_shape(value) == shape


def test_concepts_come_from_the_name_the_description_and_whole_short_names() -> None:
    assert concepts_of("LAWD_CD", "지역코드") == {"sgg_code"}
    assert concepts_of("bun", "") == {"jibun_main"}  # a short name is a concept only as a whole name
    assert "jibun_main" not in concepts_of("bunji_text", "")
    assert concepts_of("sidoName", "") == {"sido_name"}


def test_value_concepts_read_place_names() -> None:
    assert value_concepts(["서울특별시", "부산광역시"]) == {"sido_full"}
    assert value_concepts(["종로구", "해운대구"]) == {"sgg_full"}
    assert value_concepts(["abc"]) == set()


@pytest.mark.parametrize(
    ("name", "description", "extra", "role"),
    [
        ("baseDate", "", {}, "clock"),  # a forecast's issue date follows from now
        ("base_date", "", {"has_default": True}, "clock"),
        ("stationName", "측정소 이름", {}, "user"),
        ("keyword", "", {}, "user"),
        ("nx", "예보지점 X 좌표", {}, "code"),
        ("routeId", "노선ID", {}, "code"),
        ("ctprvnCd", "시도코드", {}, "code"),
        ("pageNo", "", {"has_default": True}, "constant"),
        ("dataType", "", {"enum": ["JSON", "XML"]}, "constant"),
        ("sidoName", "", {"enum": ["서울", "부산"]}, "user"),  # an enumeration of names a person says
        ("LAWD_CD", "", {"non_linkable": True}, "constant"),
        ("x", "", {"override": "user"}, "user"),  # the document's x-kopa-role
        ("x", "", {"override": "nonsense"}, "code"),
    ],
)
def test_who_supplies_a_parameter(name: str, description: str, extra: dict[str, object], role: str) -> None:
    assert param_role(name, description, **extra) == role  # type: ignore[arg-type]


def test_pair_groups_are_parameters_of_one_row() -> None:
    assert pair_group("tmX") == frozenset({"tmX", "tmY"})
    assert pair_group("bun") == frozenset({"sigunguCd", "bjdongCd", "bun", "ji", "platGbCd"})
    assert pair_group("tm") is None


@pytest.mark.parametrize(
    ("description", "unit"),
    [
        ("미세먼지 농도 (㎍/㎥, 결측 '-')", "㎍/㎥"),
        ("거래금액(만원)", "만원"),
        ("이름 (국문)", ""),  # a parenthesis without a unit
        ("값 (아주아주긴설명단위m/s)", ""),  # too long to be a unit
    ],
)
def test_the_unit_a_description_states(description: str, unit: str) -> None:
    assert field_unit(description) == unit


def test_an_answering_field_is_labelled_in_korean() -> None:
    assert answer_label("pm10Value") == answer_label("PM10_VALUE") == "미세먼지(PM10)"
    assert answer_label("minTaMin", "최저기온 (℃)") == "최저기온"  # no label of its own: the description's
    assert answer_label("minTaMin") == "minTaMin"
    assert answer_label("rnum", "순번") is None


@pytest.mark.parametrize(
    ("values", "crs"),
    [
        (["126.97", "127.1"], "WGS84"),
        (["37.5", "36.1"], "WGS84"),
        (["953901.1", "1952032.0"], "UTMK"),
        (["198056.3"], "TM"),
        (["5"], None),
    ],
)
def test_the_coordinate_system_values_are_in(values: list[str], crs: str | None) -> None:
    assert crs_from_values(values) == crs
