"""Link rules for what real APIs share (dates, place names, code tables), on made-up services.

Dates in other forms and parts (a year field into a year parameter, an unpadded month zero-padded, a forecast queried
by one optional date), a date parameter's sources ranked within a budget, full 시도/시군구 names into parameters
that only show their form in an example, a lettered short code into a partial-match filter, codes listed in a
parameter's documented table, and two code systems that coincide on some regions or levels told apart by values
where they differ."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request

from execution.result import CallResult, Outcome
from graph import date_links, meaning, transforms
from graph.candidates import derive_candidates
from graph.concepts import filtered_norm, value_concepts
from graph.models import FieldRecord, LinkRecord, ParamRecord, ToolRecord
from tests.support.made_up import query_param, response_schema, verify_made_up
from verification.trials import (
    LEVELS_REASON,
    Trial,
    fine_level,
    level_alternative,
    levels_coincide,
    undocumented,
)


def _tool(
    name: str,
    fields: list[tuple[str, str]],
    params: list[ParamRecord] | None = None,
    *,
    api: str | None = None,
    summary: str = "",
    description: str = "",
) -> ToolRecord:
    return ToolRecord(
        name=name,
        api_id=api or name,
        op_key=f"GET /{name}",
        method="GET",
        url=f"https://rules.unseen.example/{name}",
        summary=summary,
        description=description,
        fields=[FieldRecord(name=f, path=f, description=d) for f, d in fields],
        params=params or [],
    )


def _links(tools: list[ToolRecord], samples: dict[str, list[dict[str, str]]]) -> dict[tuple[str, str, str, str], Any]:
    return {
        (lk.source_tool, lk.source_field, lk.target_tool, lk.target_param.split(":", 1)[1]): lk.transform
        for lk in derive_candidates(tools, samples)
    }


# ---------------------------------------------------------------- dates: parts, budgets, a query by one date


def test_a_date_part_is_read_off_the_name_before_the_description() -> None:
    # "그 해 전체" names a year, but the parameter is a month
    assert meaning.date_format("월 (2자리, 생략 시 그 해 전체 연도)", None, "^[0-9]{2}$", [], "reqMonth") == "MM"
    assert meaning.date_format("연도 (4자리)", None, None, [], "reqYear") == "YYYY"
    assert meaning.date_part("tradeMonth", "거래월", ["3", "11"]) == "MM"
    assert meaning.date_part("tradeYear", "거래년도", ["2025", "2024"]) == "YYYY"
    assert meaning.date_part("openYr", "개관 연도", ["1998"]) == "YYYY"
    assert meaning.date_part("tradeMonth", "거래월", ["13"]) is None  # no month
    assert meaning.date_part("rainMm", "강수량 (mm)", ["3"]) is None  # mm is no month
    assert date_links.part_transform("MM", "MM", ["3", "11"]) == {"kind": "zfill", "width": 2}
    assert date_links.part_transform("MM", "MM", ["03", "11"]) == {"kind": "identity"}
    assert date_links.part_transform("YYYY", "MM", ["2025"]) is None


def _calendar(name: str = "moon_phase", api: str | None = None) -> ToolRecord:
    return _tool(
        name,
        [("phase", "월령")],
        [
            ParamRecord(name="reqYear", description="연도 (4자리)", pattern="^[0-9]{4}$", required=True),
            ParamRecord(name="reqMonth", description="월 (2자리)", pattern="^[0-9]{2}$", required=True),
        ],
        api=api,
    )


def test_year_and_month_fields_feed_the_parameters_of_their_part() -> None:
    deals = _tool("land_deals", [("tradeYear", "거래년도"), ("tradeMonth", "거래월"), ("price", "거래가")])
    samples = {"land_deals": [{"tradeYear": "2025", "tradeMonth": "3", "price": "100"}, {"tradeMonth": "11"}]}
    links = _links([deals, _calendar()], samples)
    assert links[("land_deals", "tradeYear", "moon_phase", "reqYear")] == {"kind": "identity"}
    assert links[("land_deals", "tradeMonth", "moon_phase", "reqMonth")] == {"kind": "zfill", "width": 2}
    assert ("land_deals", "tradeYear", "moon_phase", "reqMonth") not in links
    assert ("land_deals", "tradeMonth", "moon_phase", "reqYear") not in links


def test_a_date_parameters_sources_keep_its_own_service_first_and_a_records_own_dates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(date_links, "MAX_DATE_SOURCES", 3)
    tools = [_calendar(api="astro")]
    samples: dict[str, list[dict[str, str]]] = {}
    # other services: four with a record's own date, one whose only date is when the data was changed
    for i, (fld, desc) in enumerate(
        [
            ("chgDt", "최종수정일자"),
            ("openDe", "개관일자"),
            ("fndDe", "설립일자"),
            ("evtDe", "행사일자"),
            ("bgDe", "착공일자"),
        ]
    ):
        tools.append(_tool(f"a{i}_list", [(fld, desc)], api=f"a{i}"))
        samples[f"a{i}_list"] = [{fld: "20240105"}]
    tools.append(_tool("z_feasts", [("feastDe", "명절 날짜")], api="astro"))  # the calendar's own service
    samples["z_feasts"] = [{"feastDe": "20250129"}]
    sources = {s for s, _, t, p in _links(tools, samples) if t == "moon_phase" and p == "reqYear"}
    assert "z_feasts" in sources and "a0_list" not in sources and len(sources) == 3


def test_a_tool_queried_by_one_optional_date_takes_dates_of_other_services() -> None:
    forecast = _tool(
        "pollen_forecast",
        [("grade", "등급")],
        [
            ParamRecord(name="srchDate", description="발표일 (YYYY-MM-DD), 조회 날짜"),
            ParamRecord(name="plantCode", description="식물 코드"),
        ],
        summary="꽃가루 예보",
        description="발표일로 예보를 조회합니다. 발표일을 생략하면 최근 일주일을 조회합니다.",
    )
    prices = _tool(
        "fish_prices",
        [("price", "가격")],
        [
            ParamRecord(name="baseDt", description="기준일자 (YYYYMMDD)"),
            ParamRecord(name="startDt", description="시작일자 (YYYYMMDD)"),
            ParamRecord(name="fishNm", description="어종명"),
        ],
        description="기준일자, 어종명으로 가격을 조회합니다.",
    )
    events = _tool("festivals", [("evtDe", "행사일자"), ("title", "행사명")])
    samples = {"festivals": [{"evtDe": "20251003", "title": "가"}, {"evtDe": "20251009", "title": "나"}]}
    links = _links([forecast, prices, events], samples)
    assert links[("festivals", "evtDe", "pollen_forecast", "srchDate")] == {
        "kind": "date",
        "src": "YYYYMMDD",
        "dst": "YYYY-MM-DD",
    }
    # a reference date among a search's other filters is no query by one date: a festival day is no price day
    assert not [k for k in links if k[2] == "fish_prices"]


# ---------------------------------------------------------------- names of places, shown by values


def test_value_concepts_read_full_province_and_district_names() -> None:
    assert value_concepts(["부산광역시", "대구광역시"]) == {"sido_full"}
    assert value_concepts(["해운대구", "수원시 팔달구"]) == {"sgg_full"}
    assert value_concepts(["부산"]) == set()  # the short form is another form
    assert value_concepts(["부산광역시 해운대구"]) == set()
    assert value_concepts(["해양수산부"]) == set()


def test_full_place_names_feed_parameters_whose_example_shows_that_form() -> None:
    clinics = _tool(
        "clinic_list",
        [("hospNm", "기관명")],
        [
            ParamRecord(name="P1", description="주소(광역)", example="대구광역시"),
            ParamRecord(name="P2", description="주소(기초) 예: 수성구"),
        ],
    )
    parks = _tool("park_list", [("ctpv", "광역"), ("sgg", "기초"), ("ctpvShort", "광역 약칭"), ("addr", "주소")])
    samples = {
        "park_list": [
            {"ctpv": "부산광역시", "sgg": "해운대구", "ctpvShort": "부산", "addr": "부산광역시 해운대구 1"},
            {"ctpv": "울산광역시", "sgg": "남구", "ctpvShort": "울산", "addr": "울산광역시 남구 2"},
        ]
    }
    links = _links([clinics, parks], samples)
    assert links[("park_list", "ctpv", "clinic_list", "P1")] == {"kind": "identity"}
    assert links[("park_list", "sgg", "clinic_list", "P2")] == {"kind": "identity"}
    assert ("park_list", "ctpvShort", "clinic_list", "P1") not in links
    assert ("park_list", "addr", "clinic_list", "P2") not in links


# ---------------------------------------------------------------- a lettered short code into a partial-match filter


def test_a_lettered_code_feeds_a_partial_match_filter_in_the_form_its_tool_lists() -> None:
    assert filtered_norm("likeTickerCd") == "tickercd" and filtered_norm("likely") is None
    assert meaning.common_prefix(["K123456", "K234567"]) == "K"
    assert meaning.common_prefix(["K123456", "Q234567"]) is None
    listing = _tool(
        "bond_listing",
        [("tickerCd", "단축코드 (K + 6자리)"), ("isuNm", "종목명")],
        [ParamRecord(name="likeTickerCd", description="코드 부분 검색")],
    )
    quotes = _tool(
        "bond_quotes",
        [("tickerCd", "단축코드 (6자리)"), ("clsPrc", "종가")],
        [ParamRecord(name="likeTickerCd", description="코드 부분 검색")],
    )
    samples = {
        "bond_listing": [{"tickerCd": "K123456", "isuNm": "가"}, {"tickerCd": "K234567", "isuNm": "나"}],
        "bond_quotes": [{"tickerCd": "123456", "clsPrc": "1"}, {"tickerCd": "234567", "clsPrc": "2"}],
    }
    links = _links([listing, quotes], samples)
    # the quotes list the code without its letter: the letter is dropped
    assert links[("bond_listing", "tickerCd", "bond_quotes", "likeTickerCd")] == {"kind": "slice", "start": 1}
    # six digits are contained in the lettered code the listing searches
    assert links[("bond_quotes", "tickerCd", "bond_listing", "likeTickerCd")] == {"kind": "identity"}


# ---------------------------------------------------------------- a parameter's documented table of codes

_ZONES = "권역코드 (31: 수도권, 32: 강원권, 33: 충청권, 34: 호남권, 35: 영남권)"


def test_a_documented_code_table_is_read_whole_or_not_at_all() -> None:
    assert meaning.code_table(_ZONES) == {
        "31": "수도권",
        "32": "강원권",
        "33": "충청권",
        "34": "호남권",
        "35": "영남권",
    }
    assert meaning.code_table("구분 (A: 가, B: 나, C: 다 ...)") is None  # the list goes on
    assert meaning.code_table("구분 (A: 가, B: 나 등)") is None
    assert meaning.code_table("요일 (월~금: 1~5)") is None
    assert meaning.code_table("종류 (7: 국가등록유산, 8: 기타)") == {"7": "국가등록유산", "8": "기타"}


def test_codes_all_listed_in_a_parameters_table_are_proposed_whatever_the_names() -> None:
    target = _tool("river_levels", [("lvl", "수위")], [ParamRecord(name="areaCd", description=_ZONES)])
    ok = _tool("bus_cities", [("routeRegion", "노선 지역")])
    off = _tool("ferry_ports", [("portRegion", "항만 지역")])
    samples = {
        "bus_cities": [{"routeRegion": "31"}, {"routeRegion": "34"}],
        "ferry_ports": [{"portRegion": "31"}, {"portRegion": "99"}],
    }
    links = _links([target, ok, off], samples)
    assert links[("bus_cities", "routeRegion", "river_levels", "areaCd")] == {"kind": "identity"}
    assert ("ferry_ports", "portRegion", "river_levels", "areaCd") not in links


def _trial(value: str, param: str, ok: bool, *, transform: dict[str, Any] | None = None) -> Trial:
    sent = transforms.apply(transform or {"kind": "identity"}, value)
    result = CallResult(Outcome.OK, items=[{"x": value}]) if ok else CallResult(Outcome.EMPTY)
    return Trial(value, {param: sent}, result, {"code": value}, [], "code")


def _link(param: str, transform: dict[str, Any] | None = None) -> LinkRecord:
    return LinkRecord(
        id="lk_test",
        source_tool="src",
        source_field="code",
        target_tool="dst",
        target_param=f"query:{param}",
        transform=transform or {"kind": "identity"},
        score=0.9,
    )


def test_a_value_outside_the_targets_table_that_fails_refutes_a_coinciding_code() -> None:
    codes = frozenset(meaning.code_table(_ZONES) or ())
    trials = [_trial("36", "areaCd", False), _trial("31", "areaCd", True)]
    why = undocumented(_link("areaCd"), trials, codes)
    assert why and "36" in why and "31" in why
    assert undocumented(_link("areaCd"), [_trial("31", "areaCd", True), _trial("34", "areaCd", False)], codes) is None
    assert undocumented(_link("areaCd"), trials, frozenset()) is None


def test_codes_that_agree_at_coarser_levels_only_are_refuted_and_their_district_level_is_tried() -> None:
    trials = [
        _trial("2611010100", "zone", False),
        _trial("2611000000", "zone", True),
        _trial("2600000000", "zone", True),
    ]
    assert fine_level(trials)
    assert levels_coincide(_link("zone"), trials) is None  # one dong without data decides nothing
    trials.append(_trial("2611010200", "zone", False))
    why = levels_coincide(_link("zone"), trials)
    assert why and why.startswith(LEVELS_REASON)
    # a dong code that works: the codes agree there too
    assert levels_coincide(_link("zone"), [*trials, _trial("2614010100", "zone", True)]) is None
    refuted = _link("zone").model_copy(update={"status": "refuted", "reason": why})
    alt = level_alternative(refuted)
    assert alt is not None and alt.transform == {"kind": "sgg_level"} and alt.id != refuted.id
    assert transforms.apply(alt.transform, "2611010100") == "2611000000"
    with pytest.raises(transforms.TransformError):
        transforms.apply(alt.transform, "26110")


# ---------------------------------------------------------------- end to end, on a made-up service

HOST = "rules.unseen.example"
REGIONS = [
    ("1100000000", "서울특별시"),
    ("1111000000", "서울특별시 종로구"),
    ("1111010100", "서울특별시 종로구 청운동"),
    ("1111010200", "서울특별시 종로구 신교동"),
    ("2600000000", "부산광역시"),
    ("2611000000", "부산광역시 중구"),
    ("2611010100", "부산광역시 중구 영주동"),
    ("2611010200", "부산광역시 중구 대청동"),
]
#: The index's own codes: the legal codes of 시도 and 시군구, its own below (as 행정동 codes are).
INDEX_CODES = {c for c, _ in REGIONS if c.endswith("00000")} | {"1111051500", "2611053000"}
#: The heritage list's own province numbering: 서울 coincides with the legal code, 부산 does not.
HERITAGE = {"11": ["궁궐"], "31": ["산성"]}


def _document() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "규칙 시험 서비스", "version": "1"},
        "servers": [{"url": f"https://{HOST}/svc"}],
        "paths": {
            "/regions": {
                "get": {
                    "operationId": "listRegions",
                    "summary": "지역 목록",
                    "responses": response_schema(
                        {"regionCode": "법정동코드 (10자리)", "regionName": "지역명", "provCd": "법정동 시도코드"}
                    ),
                }
            },
            "/index": {
                "get": {
                    "operationId": "getAirIndex",
                    "summary": "대기 지수 조회",
                    "parameters": [
                        query_param("zone", "지점 (행정구역코드 10자리)", required=True, example="1111000000"),
                    ],
                    "responses": response_schema({"zone": "지점", "value": "지수"}),
                }
            },
            "/heritage": {
                "get": {
                    "operationId": "listHeritage",
                    "summary": "유산 목록 조회",
                    "parameters": [query_param("provCode", "시도코드 (11: 서울, 31: 부산, 32: 대구, 33: 광주)")],
                    "responses": response_schema({"heritageNm": "유산명", "provCode": "시도코드"}),
                }
            },
            "/daily": {
                "get": {
                    "operationId": "listDaily",
                    "summary": "관측소 일자료 조회",
                    "parameters": [query_param("stnName", "관측소명", example="가람")],
                    "responses": response_schema({"stnName": "관측소명", "obsDate": "관측일 (YYYY-MM-DD)"}),
                }
            },
            "/monthly": {
                "get": {
                    "operationId": "listMonthly",
                    "summary": "관측소 월자료 조회",
                    "parameters": [
                        query_param("stnName", "관측소명", required=True, example="가람"),
                        query_param("fromMonth", "조회 시작월 (YYYYMM)", required=True, example="202601"),
                        query_param("toMonth", "조회 종료월 (YYYYMM)", required=True, example="202603"),
                    ],
                    "responses": response_schema({"stnName": "관측소명", "obsMonth": "관측월 (YYYY-MM)"}),
                }
            },
        },
    }


def _app() -> Any:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    def data(rows: list[dict[str, str]]) -> dict[str, Any]:
        return {"result": {"data": rows}}

    @app.get("/svc/regions")
    def regions() -> dict[str, Any]:
        return data([{"regionCode": c, "regionName": n, "provCd": c[:2]} for c, n in REGIONS])

    @app.get("/svc/index")
    def index(request: Request) -> dict[str, Any]:
        zone = request.query_params.get("zone", "")
        return data([{"zone": zone, "value": str(int(zone[:5]) % 7)}] if zone in INDEX_CODES else [])

    @app.get("/svc/heritage")
    def heritage(request: Request) -> dict[str, Any]:
        code = request.query_params.get("provCode")
        picked = {code: HERITAGE.get(code or "", [])} if code else HERITAGE
        return data([{"heritageNm": n, "provCode": c} for c, names in sorted(picked.items()) for n in names])

    @app.get("/svc/daily")
    def daily() -> dict[str, Any]:
        return data([{"stnName": s, "obsDate": f"2026-10-0{d}"} for s in ("가람", "나루") for d in (1, 2)])

    @app.get("/svc/monthly")
    def monthly(request: Request) -> dict[str, Any]:
        q = request.query_params
        first, last = q.get("fromMonth", ""), q.get("toMonth", "")
        # months are published once complete: nothing yet for the current month (2026-10)
        months = [f"2026{m:02d}" for m in range(1, 10) if first <= f"2026{m:02d}" <= last]
        return data([{"stnName": q.get("stnName", ""), "obsMonth": f"{m[:4]}-{m[4:]}"} for m in months])

    return app


def _verified_on_the_service(tmp_path: Path) -> dict[tuple[str, str, str], LinkRecord]:
    out: dict[tuple[str, str, str], LinkRecord] = {}
    for lk in verify_made_up(tmp_path, HOST, _document(), _app()):
        key = (lk.source_field, lk.target_param.split(":", 1)[1], lk.transform.get("kind", "identity"))
        out[(lk.source_tool.rsplit("_", 1)[-1] + "." + key[0], key[1], key[2])] = lk
    return out


def test_on_a_service_coinciding_codes_are_refuted_and_the_levels_and_ranges_that_hold_verified(
    tmp_path: Path,
) -> None:
    links = _verified_on_the_service(tmp_path)
    # legal codes agree with the index's at 시도 and 시군구 only: as is refuted, at the 시군구 level verified
    same = links[("regions.regionCode", "zone", "identity")]
    assert same.status == "refuted" and same.reason.startswith(LEVELS_REASON), same.reason
    district = links[("regions.regionCode", "zone", "sgg_level")]
    assert district.status == "verified", district.reason
    # 11 is 서울 in both numberings, 26 is no code the heritage list documents
    prov = links[("regions.provCd", "provCode", "identity")]
    assert prov.status == "refuted" and "no code the target's document lists" in prov.reason, prov.reason
    # a month range whose end comes from a day of the current month: its start keeps the documented value
    end = links[("daily.obsDate", "toMonth", "date")]
    assert end.status == "verified", end.reason
