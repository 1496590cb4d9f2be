"""graph/transforms.py beyond the known points of test_transforms_candidates: how a value is read (identity), casts,
the 시군구 level of a region code, what each transform is called in evidence, and the values each refuses."""

from __future__ import annotations

import pytest

from graph.transforms import IDENTITY, SIDO_LONG, TransformError, apply, describe


@pytest.mark.parametrize(("value", "sent"), [(60.0, "60"), (60.5, "60.5"), (" 11110 ", "11110"), (7, "7")])
def test_identity_sends_the_value_as_text(value: object, sent: str) -> None:
    assert apply(IDENTITY, value) == sent
    assert apply({}, value) == sent  # a link without a kind is identity


def test_casts() -> None:
    assert apply({"kind": "cast", "to": "int"}, "60.9") == "60"
    assert apply({"kind": "cast", "to": "float"}, "60") == "60.0"


def test_the_sgg_level_keeps_the_first_five_digits_of_a_region_code() -> None:
    assert apply({"kind": "sgg_level"}, "2611010100") == "2611000000"
    assert apply({"kind": "sgg_level"}, 1111010100) == "1111000000"


def test_the_current_name_of_a_renamed_province() -> None:
    assert SIDO_LONG["강원"] == "강원특별자치도" and SIDO_LONG["전북"] == "전북특별자치도"
    assert "강원도" not in SIDO_LONG.values()


@pytest.mark.parametrize(
    ("t", "value", "why"),
    [
        (IDENTITY, None, "no value"),
        ({"kind": "cast", "to": "int"}, "inf", "not a number"),  # int(inf) overflows
        ({"kind": "cast", "to": "int"}, "abc", "not a number"),
        ({"kind": "zfill", "width": 5}, "12a", "cannot be zero-padded"),
        ({"kind": "sgg_level"}, "26110", "not a 10-digit region code"),
        ({"kind": "date", "src": "YYYYMMDD", "dst": "YYYY"}, "20261301", "is not YYYYMMDD"),
        ({"kind": "coord", "src": "WGS84", "dst": "TM", "axis": "x", "pair": "lat"}, "12,5", "missing"),
        ({"kind": "rot13"}, "a", "unknown transform kind"),
    ],
)
def test_unfit_values_are_refused_with_the_reason(t: dict[str, object], value: object, why: str) -> None:
    with pytest.raises(TransformError, match=why):
        apply(t, value)


def test_a_coordinate_must_be_a_number_inside_its_system() -> None:
    t = {"kind": "coord", "src": "WGS84", "dst": "KMA_GRID", "axis": "x", "pair": "lat"}
    with pytest.raises(TransformError, match="not a coordinate"):
        apply(t, "126.9E0", {"lat": "37.5"})
    with pytest.raises(TransformError, match="not a WGS84 coordinate"):
        apply(t, "226.9", {"lat": "37.5"})
    with pytest.raises(TransformError, match="has no KMA grid cell"):
        apply({**t, "axis": "y", "pair": "lon"}, "-90", {"lon": "126.9"})


@pytest.mark.parametrize(
    ("t", "text"),
    [
        ({"kind": "slice", "start": 0, "end": 5}, "[0:5]"),
        ({"kind": "slice", "start": 5}, "[5:]"),
        ({"kind": "zfill", "width": 4}, "zero-pad 4"),
        ({"kind": "coord", "src": "WGS84", "dst": "KMA_GRID", "axis": "x", "pair": "lat"}, "WGS84->KMA_GRID.x"),
        ({"kind": "map", "table": "sido_short"}, "map sido_short"),
        ({"kind": "date", "src": "YYYYMMDD", "dst": "YYYYMM"}, "YYYYMMDD->YYYYMM"),
        ({"kind": "sgg_level"}, "시군구 level"),
        ({}, "identity"),
        ({"kind": "wrap_list"}, "wrap_list"),
    ],
)
def test_describe_names_each_transform_in_evidence(t: dict[str, object], text: str) -> None:
    assert describe(t) == text
