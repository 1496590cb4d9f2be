"""Transforms (checked against known points), signals, and candidate derivation: coverage of the ground truth
and sub-quadratic blocking."""

from __future__ import annotations

import pytest

from core.geo import convert
from graph import transforms
from graph.candidates import derive_candidates
from graph.concepts import crs_from_values, signals
from graph.models import FieldRecord, ParamRecord, ToolRecord


@pytest.mark.parametrize(
    "t,value,row,expected",
    [
        ({"kind": "slice", "start": 0, "end": 5}, "1171010100", {}, "11710"),
        ({"kind": "slice", "start": 5, "end": 10}, "1171010100", {}, "10100"),
        ({"kind": "zfill", "width": 4}, "12", {}, "0012"),
        ({"kind": "map", "table": "sido_short"}, "서울특별시", {}, "서울"),
        ({"kind": "wrap_list"}, "1248100998", {}, ["1248100998"]),
        ({"kind": "date", "src": "YYYYMMDD", "dst": "YYYYMM"}, "20261015", {}, "202610"),
        ({"kind": "date", "src": "YYYYMMDDHH", "dst": "YYYYMMDD"}, "2026101514", {}, "20261015"),
        ({"kind": "date", "src": "YYYY-MM-DD", "dst": "YYYY"}, "1991-07-02", {}, "1991"),
        ({"kind": "date", "src": "YYYY-MM-DD", "dst": "MM"}, "1991-07-02", {}, "07"),
        ({"kind": "date", "src": "YYYY-MM-DD HH:MM", "dst": "DD"}, "2026-10-15 14:00", {}, "15"),
        ({"kind": "date", "src": "YYYYMM", "dst": "YYYY-MM"}, "202609", {}, "2026-09"),
        ({"kind": "map", "table": "sido_long"}, "강원", {}, "강원특별자치도"),
        ({"kind": "cast", "to": "int"}, "60.0", {}, "60"),
        (
            {"kind": "coord", "src": "WGS84", "dst": "KMA_GRID", "axis": "x", "pair": "lat"},
            "126.9780",
            {"lat": "37.5665"},
            "60",
        ),
        (
            {"kind": "coord", "src": "WGS84", "dst": "KMA_GRID", "axis": "y", "pair": "lon"},
            "37.5665",
            {"lon": "126.9780"},
            "127",
        ),
        (
            {"kind": "coord", "src": "UTMK", "dst": "KMA_GRID", "axis": "x", "pair": "y"},
            "953901.17",
            {"y": "1952032.08"},
            "60",
        ),
        (
            {"kind": "coord", "src": "WGS84", "dst": "TM", "axis": "x", "pair": "lat"},
            "126.9780",
            {"lat": "37.5665"},
            "198056.366737",
        ),
    ],
)
def test_transforms(t: transforms.Transform, value: str, row: dict[str, str], expected: object) -> None:
    assert transforms.apply(t, value, row) == expected


@pytest.mark.parametrize(
    "t,value,row",
    [
        ({"kind": "slice", "start": 0, "end": 5}, "123", {}),
        ({"kind": "zfill", "width": 4}, "12345", {}),
        ({"kind": "map", "table": "sido_short"}, "서울", {}),
        ({"kind": "coord", "src": "WGS84", "dst": "KMA_GRID", "axis": "x", "pair": "lat"}, "126.97", {}),
        ({"kind": "coord", "src": "WGS84", "dst": "TM", "axis": "x", "pair": "lat"}, "953901", {"lat": "1952032"}),
        ({"kind": "date", "src": "YYYYMMDD", "dst": "YYYYMM"}, "2026-10", {}),
        ({"kind": "date", "src": "YYYYMMDDHH", "dst": "YYYYMMDD"}, "20261015", {}),
        ({"kind": "map", "table": "sido_long"}, "서울특별시", {}),
    ],
)
def test_transforms_refuse_unfit_values(t: transforms.Transform, value: str, row: dict[str, str]) -> None:
    with pytest.raises(transforms.TransformError):
        transforms.apply(t, value, row)


def test_known_points_round_trip() -> None:
    x, y = convert(126.9780, 37.5665, "WGS84", "UTMK")
    assert (round(x, 2), round(y, 2)) == (953901.17, 1952032.08)
    lon, lat = convert(203338.99, 444208.20, "TM", "WGS84")
    assert abs(lat - 37.50) < 0.01 and abs(lon - 127.035) < 0.01


def test_signals_read_korean_descriptions() -> None:
    s = signals("LAWD_CD", "지역코드 (법정동코드 10자리 중 앞 5자리)", pattern="^[0-9]{5}$")
    assert {"bjd_code", "sgg_code"} <= s.concepts and s.length == 5 and s.head == 5
    e = signals("entX", "X좌표 (UTM-K, EPSG:5179, 미터)")
    assert (e.crs, e.axis, e.stem) == ("UTMK", "x", "ent")
    g = signals("gpsLati", "WGS84 위도 좌표")
    assert (g.crs, g.axis, g.stem) == ("WGS84", "y", "gps")
    assert crs_from_values(["126.97", "127.01"]) == "WGS84"
    assert crs_from_values(["953901.1", "960000"]) == "UTMK"
    assert crs_from_values(["198056.3", "203338.9"]) == "TM"


def _tool(name: str, fields: list[tuple[str, str]], params: list[tuple[str, str, str | None]]) -> ToolRecord:
    return ToolRecord(
        name=name,
        api_id="a",
        op_key=name,
        method="GET",
        url=f"https://x/{name}",
        fields=[FieldRecord(name=f, path=f, description=d) for f, d in fields],
        params=[ParamRecord(name=p, description=d, pattern=pat, required=True) for p, d, pat in params],
    )


def test_a_slice_is_chosen_from_observed_values_and_the_description() -> None:
    src = _tool("regions", [("region_cd", "법정동코드 (10자리)")], [])
    dst = _tool("deals", [], [("LAWD_CD", "지역코드 (법정동코드 앞 5자리)", "^[0-9]{5}$")])
    links = derive_candidates([src, dst], {"regions": [{"region_cd": "1111010100"}, {"region_cd": "1168010300"}]})
    assert [(lk.source_field, lk.target_param, lk.transform) for lk in links] == [
        ("region_cd", "query:LAWD_CD", {"kind": "slice", "start": 0, "end": 5})
    ]


def _synthetic(n: int) -> list[ToolRecord]:
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
        "mike",
        "november",
        "oscar",
        "papa",
        "quebec",
        "romeo",
        "sierra",
        "tango",
    ]
    tools = []
    for i in range(n):
        a, b, c = words[i % 20], words[(i * 7) % 20], words[(i * 13) % 20]
        tools.append(
            _tool(
                f"t{i}",
                [(f"{a}Code{i % 50}", "코드"), (f"{b}Name", "이름")],
                [(f"{c}Code{(i + 1) % 50}", "코드", None), (f"{a}Id{i % 40}", "식별자", None)],
            )
        )
    return tools


def test_blocking_keeps_comparisons_sub_quadratic() -> None:
    small: dict[str, int] = {}
    large: dict[str, int] = {}
    derive_candidates(_synthetic(1000), {}, stats=small)
    derive_candidates(_synthetic(4000), {}, stats=large)
    # four times the tools: a quadratic method would compare sixteen times as much
    assert large["comparisons"] / small["comparisons"] < 6, (small, large)
    assert large["comparisons"] < large["fields"] * large["params"] / 10


def test_date_formats_are_read_off_descriptions_names_and_values() -> None:
    from graph.candidates import date_transform
    from graph.meaning import date_format, is_date

    assert date_format("행사 연월 (YYYYMM 형식)", None, None, [], "eventYm") == "YYYYMM"
    assert date_format("행사 시작 일시 (YYYYMMDDHH)", None, None, [], "eventBgngDt") == "YYYYMMDDHH"
    assert date_format("연도 (YYYY, 예: 2026)", None, None, [], "solYear") == "YYYY"
    assert date_format("월 (MM, 예: 10). 없으면 연간 전체", None, None, [], "solMonth") == "MM"
    assert date_format("개관일자", None, None, ["2020-03-30", "1991-07-02"], "opnDe") == "YYYY-MM-DD"
    assert date_format("관측일시", None, None, ["2026-10-15 14:00"], "obs_dtm") == "YYYY-MM-DD HH:MM"
    assert date_format("기준연월", None, None, ["202609"], "stdrYm") == "YYYYMM"
    # a six-digit code is no month unless the field is named or described as a date
    assert date_format("코드", None, None, ["202609"], "code") is None
    assert not is_date("symbol", "") and is_date("stdrYm", "")
    assert date_transform("YYYY-MM-DD", "YYYYMM") == {"kind": "date", "src": "YYYY-MM-DD", "dst": "YYYYMM"}
    assert date_transform("YYYYMM", "YYYYMMDD") is None  # a month is no day
    assert date_transform("YYYYMMDD", "YYYYMMDD") == {"kind": "identity"}


def _trial(
    value: str,
    inputs: dict[str, str],
    rows: list[dict[str, str]],
    row: dict[str, str],
    pool: list[dict[str, str]],
    field: str,
) -> object:
    from execution.result import CallResult, Outcome
    from verification.trials import Trial

    return Trial(value, inputs, CallResult(Outcome.OK, items=rows), row, pool, field)


def test_a_grid_value_landing_in_the_other_coordinate_is_refuted() -> None:
    from graph.models import LinkRecord
    from verification.trials import swapped as _swapped

    link = LinkRecord(id="x", source_tool="a", source_field="ny", target_tool="b", target_param="query:nx")
    row = {"nx": "60", "ny": "127"}
    answer = [{"category": "TMP", "nx": "127", "ny": "127"}, {"category": "SKY", "nx": "127", "ny": "127"}]
    swapped = _trial("127", {"nx": "127", "ny": "127", "base_date": "20261015"}, answer, row, [row], "ny")
    assert _swapped(link, swapped)  # type: ignore[arg-type]
    right = LinkRecord(id="y", source_tool="a", source_field="nx", target_tool="b", target_param="query:nx")
    ok = _trial("60", {"nx": "60", "ny": "127"}, [{"nx": "60", "ny": "127"}], row, [row], "nx")
    assert _swapped(right, ok) is None  # type: ignore[arg-type]


def test_codes_that_coincide_for_one_province_are_refuted_by_the_names_they_bring_back() -> None:
    from graph.models import LinkRecord
    from verification.trials import coincides as _coincides

    link = LinkRecord(id="x", source_tool="a", source_field="ctprvnCd", target_tool="b", target_param="query:ctprvnCd")
    pool = [
        {"ctprvnCd": "11", "ctprvnNm": "서울특별시"},
        {"ctprvnCd": "26", "ctprvnNm": "부산광역시"},
        {"ctprvnCd": "51", "ctprvnNm": "강원특별자치도"},
    ]
    seoul = _trial(
        "11", {"ctprvnCd": "11"}, [{"ctprvnCd": "11", "ctprvnNm": "서울특별시", "n": "1"}], pool[0], pool, "ctprvnCd"
    )
    busan = _trial(
        "26", {"ctprvnCd": "26"}, [{"ctprvnCd": "26", "ctprvnNm": "울산광역시", "n": "2"}], pool[1], pool, "ctprvnCd"
    )
    assert _coincides(link, [seoul, busan])  # type: ignore[list-item]
    # the same code system: the names agree for every province
    same = _trial(
        "26", {"ctprvnCd": "26"}, [{"ctprvnCd": "26", "ctprvnNm": "부산광역시", "n": "2"}], pool[1], pool, "ctprvnCd"
    )
    assert _coincides(link, [seoul, same]) is None  # type: ignore[list-item]
