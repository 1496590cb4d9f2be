"""Other portals' conventions end to end on the unseen family: each convention's emulated service
(tests/unseen/portals.py, and the city portal of tests/unseen/docs/cityopen.json) is registered (and the report
says where the key goes, how it pages, where the rows and the total are), called and read (rows, total, position,
next page), its link verified by execution, and trajectories synthesised over it whose recorded results are those
rows and that total, with the view's note of its paging kind."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from execution.result import Outcome
from execution.view import view_object
from graph import envelopes
from tests.unseen.portal_harness import PortalRun, run_portals
from tests.unseen.portals import _industry
from tests.unseen.world import REGIONS, get_world

CITY_INFO = "/TideStationInfo/{START_INDEX}/{END_INDEX}"
CITY_DETAIL = "/TideStationDetail/{START_INDEX}/{END_INDEX}/{STN_ID}"
PROBES: dict[str, tuple[str, dict[str, Any]]] = {
    "xml": ("/exhibit/v1/list", {"pageNo": 2, "numOfRows": 5}),
    "xml_missing": ("/exhibit/v1/detail", {"exhbId": "EX9999"}),
    "offset": ("/v1/corps", {"offset": 10, "limit": 5}),
    "cursor_first": ("/v1/stations", {}),
    "cursor_last": ("/v1/stations", {"cursor": "c004x"}),
    "has_next": ("/v1/units", {"page": 2, "size": 3}),
    "has_next_last": ("/v1/units", {"page": 4, "size": 3}),
    "kosis": ("/openapi/statisticsData.do", {"objL1": "21"}),
    "kosis_none": ("/openapi/statisticsData.do", {"objL1": "99"}),
    "highway": ("/openapi/restinfo/restAreaList", {"numOfRows": 4, "pageNo": 1}),
    "single": ("/openapi/restinfo/restAreaDetail", {"svarCd": "200010"}),
    "highway_error": ("/openapi/restinfo/restAreaDetail", {"svarCd": "12"}),
    "city": (CITY_INFO, {"START_INDEX": 2, "END_INDEX": 4}),
    "neis": (CITY_DETAIL, {"START_INDEX": 1, "END_INDEX": 1, "STN_ID": "DT_0021"}),
    "city_missing": (CITY_DETAIL, {"START_INDEX": 1, "END_INDEX": 1, "STN_ID": "DT_9999"}),
}


@dataclass(frozen=True)
class Convention:
    name: str
    document: str
    listing: str  # the tool that answers in this convention (path ending)
    detail: str  # the tool its verified link feeds
    link: tuple[str, str]  # (source field, target parameter)
    key: tuple[str, str]  # where the key goes: (in, parameter)
    paging: str  # the paging kind the report states for `listing`
    rows: str  # the rows path the report states for `listing`
    total: str | None  # the total's path the report states for `listing`
    provider_total: Callable[[dict[str, Any]], int]  # rows the service holds for the listing's query (arguments)
    probe: str  # a call of PROBES read in this convention
    in_trajectory: str  # the tool (path ending) whose recorded steps are checked: `listing` or `detail`


W = get_world()
#: The highway detail answers its one row as an object, and refuses a malformed code on HTTP 200.
SINGLE = Convention(
    "single_row_object",
    "highway",
    "/openapi/restinfo/restAreaDetail",
    "/openapi/restinfo/restAreaDetail",
    ("svarCd", "query:svarCd"),
    ("query", "key"),
    "none",
    "list[]",
    "count",
    lambda a: 1,
    "single",
    "/openapi/restinfo/restAreaDetail",
)
CONVENTIONS = [
    Convention(
        "xml_cdata",
        "museum",
        "/exhibit/v1/list",
        "/exhibit/v1/detail",
        ("exhbId", "query:exhbId"),
        ("query", "serviceKey"),
        "page",
        "response.body.items.item[]",
        "response.body.totalCount",
        lambda a: sum(f.region.short == a.get("sidoNm", f.region.short) for f in W.facilities),
        "xml",
        "/exhibit/v1/list",
    ),
    Convention(
        "offset_limit",
        "offset",
        "/v1/corps",
        "/v1/corp",
        ("jurirno", "query:jurirno"),
        ("query", "apiKey"),
        "offset",
        "items[]",
        "totalCount",
        lambda a: sum(
            a.get("corpNm", "") in co.name and a.get("indutyNm", "") in _industry(co.name) for co in W.companies
        ),
        "offset",
        "/v1/corps",
    ),
    Convention(
        "cursor",
        "cursor",
        "/v1/stations",
        "/v1/station",
        ("stationId", "query:stationId"),
        ("query", "apiKey"),
        "cursor",
        "data[]",
        None,
        lambda a: len(W.stations),
        "cursor_first",
        "/v1/stations",
    ),
    Convention(
        "has_next_flag",
        "has_next",
        "/v1/units",
        "/v1/unit",
        ("admCd", "query:admCd"),
        ("query", "serviceKey"),
        "page",
        "content[]",
        None,
        lambda a: sum(1 for u in W.units if u.level != "읍면동"),
        "has_next",
        "/v1/units",
    ),
    Convention(
        "index_range_in_path",
        "cityopen.json",
        CITY_INFO,
        CITY_DETAIL,
        ("STN_ID", "path:STN_ID"),
        ("path", "KEY"),
        "index_range",
        "TideStationInfo.row[]",
        "TideStationInfo.list_total_count",
        lambda a: len(W.stations),
        "city",
        CITY_INFO,
    ),
    Convention(
        "neis_head_row",
        "cityopen.json",
        CITY_DETAIL,
        CITY_DETAIL,
        ("STN_ID", "path:STN_ID"),
        ("path", "KEY"),
        "index_range",
        "TideStationDetail[].row[]",
        "TideStationDetail[].head[].list_total_count",
        lambda a: 1,
        "neis",
        CITY_DETAIL,
    ),
    Convention(
        "kosis",
        "kosis",
        "/openapi/regions.do",
        "/openapi/statisticsData.do",
        ("C1", "query:objL1"),
        ("query", "apiKey"),
        "none",
        "[]",
        None,
        lambda a: len(REGIONS),
        "kosis",
        "/openapi/statisticsData.do",
    ),
    Convention(
        "highway",
        "highway",
        "/openapi/restinfo/restAreaList",
        "/openapi/restinfo/restAreaDetail",
        ("svarCd", "query:svarCd"),
        ("query", "key"),
        "page",
        "list[]",
        "count",
        lambda a: sum(a.get("svarNm", "") in f"{st.name}휴게소" for st in W.stations),
        "highway",
        "/openapi/restinfo/restAreaList",
    ),
    SINGLE,
    replace(SINGLE, name="http_200_errors", probe="highway_error"),
]


@pytest.fixture(scope="module")
def portal_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PortalRun]:
    yield run_portals(Path(tmp_path_factory.mktemp("portals")) / "g.sqlite3", PROBES)


def _steps(run: PortalRun, path: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(record, step) for every synthesised step that calls the tool at `path`."""
    name = run.tool(path).name
    return [(r, st) for r in run.records for st in r["steps"] if st["tool"] == name]


@pytest.mark.parametrize("c", CONVENTIONS, ids=[c.name for c in CONVENTIONS])
def test_each_convention_is_registered_verified_and_synthesised(portal_run: PortalRun, c: Convention) -> None:
    run = portal_run
    listing, detail = run.tool(c.listing), run.tool(c.detail)
    # registration: the report says where the key goes, how the tool pages, where its rows and total are
    said = next(u for u in run.reports[c.document] if u["tool"] == listing.name)
    assert (said["key"]["in"], said["key"]["param"]) == c.key, said["key"]
    assert said["paging"]["kind"] == c.paging, said["paging"]
    assert said["rows"]["path"] == c.rows and (said["total"] or {}).get("path") == c.total, said
    assert said["unresolved"] == [], said
    # verification: the listing's field feeds the detail, verified by calls
    source = run.tool(c.listing if c.listing != c.detail else _source_of(c))
    verified = [lk for lk in run.links if lk.status == "verified"]
    assert any(
        (lk.source_tool, lk.source_field, lk.target_tool, lk.target_param)
        == (source.name, c.link[0], detail.name, c.link[1])
        for lk in verified
    ), [(lk.source_tool, lk.source_field, lk.target_tool, lk.target_param) for lk in verified]
    # synthesis: trajectories call the tool, and their recorded results are its rows with the provider's total
    steps = _steps(run, c.in_trajectory)
    assert steps, (c.name, run.synthesis.get("discarded"))
    tool = run.tool(c.in_trajectory)
    params = [(p.name, p.type) for p in tool.params]
    for _, st in steps:
        response = st["response"]
        assert response["items"] and response["rows"] >= len(response["items"]), st
        assert all(isinstance(row, dict) and row for row in response["items"])
        # the view of the recorded step: its total, and the note of this tool's paging kind
        view = view_object(
            "ok",
            response["items"],
            total=response["rows"],
            first=response["first"],
            tool=tool,
            next_token=response["next_token"],
        )
        assert view["rows"] == response["rows"], view
        if response["next_token"]:
            assert f"call again with {envelopes.next_param(params)}=" in view["note"], view
        if response["rows"] > len(response["items"]):
            assert all(n in view["note"] for n in envelopes.paging_kind(params)[1]), view
    if c.in_trajectory == c.listing and c.listing != c.detail:
        seeded = [st for _, st in steps if st["response"]["first"] == 1]
        assert seeded, steps
        for st in seeded:
            response, expected = st["response"], c.provider_total(st["arguments"])
            if c.total:  # the provider's total for the query, never the page's rows
                assert response["rows"] == expected, (c.name, st)
            else:  # no total stated: the rows of the page, and the next page named
                assert response["rows"] == len(response["items"]) < expected, st
                assert response["next_token"], st
    for record in run.records:  # an answer's count is the total its step recorded
        final = record["steps"][-1]["response"]
        counted = [f for f in record["facts"] if f["kind"] in ("number", "count") and f.get("label") == "건수"]
        assert all(f["value"] == final["rows"] for f in counted), record


def test_a_count_answer_is_the_providers_total(portal_run: PortalRun) -> None:
    """A question how many rows a query has is answered with the total the provider states for it (the XML
    listing's totalCount per province, past the page of at most `MUSEUM_PAGE` rows), which the recorded step
    keeps."""
    listing = portal_run.tool("/exhibit/v1/list").name
    counts = [
        (r["steps"][-1], f["value"])
        for r in portal_run.records
        if [st["tool"] for st in r["steps"]] == [listing]
        for f in r["facts"]
        if f.get("label") == "건수"
    ]
    assert counts, [r["final_answer"] for r in portal_run.records]
    # a province with more exhibitions than the provider's page holds is counted by its total, not its page
    assert any(st["response"]["rows"] > len(st["response"]["items"]) for st, _ in counts), counts
    for st, value in counts:
        region = st["arguments"].get("sidoNm")
        assert value == st["response"]["rows"] == sum(f.region.short == region for f in W.facilities), st


def _source_of(c: Convention) -> str:
    return {"/openapi/restinfo/restAreaDetail": "/openapi/restinfo/restAreaList", CITY_DETAIL: CITY_INFO}[c.detail]


def test_each_convention_is_read_with_its_rows_total_position_and_next_page(portal_run: PortalRun) -> None:
    calls = portal_run.calls
    xml = calls["xml"]
    assert xml.ok and (xml.total, xml.first, len(xml.items)) == (len(W.facilities), 6, 5)
    assert all(r["exhbNm"].endswith("<상설> & 기획") for r in xml.items)  # CDATA kept as text
    assert (calls["xml_missing"].outcome, calls["xml_missing"].code) == (Outcome.EMPTY, "03")
    offset = calls["offset"]
    assert [r["jurirno"] for r in offset.items] == [co.crno for co in W.companies[10:15]]
    assert (offset.total, offset.first) == (len(W.companies), 11)
    first, last = calls["cursor_first"], calls["cursor_last"]
    assert (first.next_token, first.total) == ("c002x", None)
    assert last.ok and last.next_token == "" and not last.more  # the echoed cursor is not a next page
    more, done = calls["has_next"], calls["has_next_last"]
    assert (more.more, more.next_token, done.more, done.next_token) == (True, "3", False, "")
    kosis = calls["kosis"]
    assert kosis.ok and [r["PRD_DE"] for r in kosis.items] == ["2022", "2023", "2024"] and kosis.total is None
    none = calls["kosis_none"]
    assert (none.outcome, none.code, none.status) == (Outcome.EMPTY, "30", 200)
    highway, single, error = calls["highway"], calls["single"], calls["highway_error"]
    assert (highway.total, len(highway.items)) == (len(W.stations), 4)
    assert single.ok and single.total == 1 and single.items[0]["svarCd"] == "200010"  # one row sent as an object
    assert (error.outcome, error.status) == (Outcome.INVALID, 200) and "6자리" in error.reason
    city, neis, missing = calls["city"], calls["neis"], calls["city_missing"]
    assert (city.total, city.first, [r["STN_ID"] for r in city.items]) == (6, 2, ["DT_0018", "DT_0021", "DT_0027"])
    assert neis.ok and neis.total == 1 and neis.items[0]["MGMT_ORG"]
    assert (missing.outcome, missing.status) == (Outcome.EMPTY, 200)  # INFO-200 on HTTP 200


@pytest.mark.parametrize(
    ("path", "probe", "says"),
    [
        ("/exhibit/v1/list", "xml", "rows 6-10 of 24"),
        ("/v1/corps", "offset", "rows 11-15 of 36"),
        (CITY_INFO, "city", "rows 2-4 of 6"),
        ("/openapi/restinfo/restAreaList", "highway", "the first 4 of 6 rows"),
        ("/v1/stations", "cursor_first", 'call again with cursor="c002x"'),
        ("/v1/units", "has_next", "call again with page=3"),
    ],
)
def test_the_view_of_each_paging_kind_says_where_the_rows_are(
    portal_run: PortalRun, path: str, probe: str, says: str
) -> None:
    tool, got = portal_run.tool(path), portal_run.calls[probe]
    view = view_object("ok", got.items, total=got.total, first=got.first, tool=tool, next_token=got.next_token)
    assert says in view["note"], view["note"]
    kind, names = envelopes.paging_kind([(p.name, p.type) for p in tool.params])
    assert all(n in view["note"] for n in names) or "call again" in view["note"], (kind, view["note"])


def test_synthesis_harvests_later_pages_by_the_paging_description() -> None:
    """The arguments of a later page, by kind, as synthesis's harvest asks for them (graph.envelopes.page_args)."""
    assert envelopes.page_args([("pageNo", "integer"), ("numOfRows", "integer")], 3, 10) == {"pageNo": 3}
    assert envelopes.page_args([("offset", "integer"), ("limit", "integer")], 3, 10) == {"offset": 20, "limit": 10}
    assert envelopes.page_args([("startRow", "integer"), ("maxResults", "integer")], 2, 5) == {
        "startRow": 6,
        "maxResults": 5,
    }
    rng = [("START_INDEX", "integer"), ("END_INDEX", "integer"), ("STN_ID", "string")]
    assert envelopes.page_args(rng, 2, 5) == {"START_INDEX": 6, "END_INDEX": 10}
    assert envelopes.page_args([("cursor", "string")], 2, 5) == {}
    assert envelopes.size_param([("pageNo", "integer"), ("numOfRows", "integer")]) == "numOfRows"
    assert envelopes.size_param([("offset", "integer"), ("limit", "integer")]) == "limit"
    assert envelopes.next_param([("page", "integer"), ("size", "integer")]) == "page"
    assert envelopes.next_param([("cursor", "string")]) == "cursor"
    assert envelopes.next_param([("offset", "integer"), ("limit", "integer")]) is None
