"""A provider's paging names have one home, `graph.envelopes.PAGE_PAIRS`: a made-up portal pair (`pg` page number,
`cnt` page size) added there at test time, as a contributor adds one line, is paging to every engine that asks (the
sampling filters and page size, the parameters never linked, the canonical call's first page, the paging kind, the
registration report, the echoed page in an answer and the view's note). Each check first shows the pair read as
data without the entry, so none passes by accident."""

from __future__ import annotations

from typing import Any

import pytest

from core.settings import Settings
from execution import canonical, sampling, seeds
from execution.view import narrowing, note
from graph import envelopes
from graph.candidates import derive_candidates
from graph.link_scoring import NON_LINKABLE
from graph.models import FieldRecord, ParamRecord, ToolRecord
from graph.openapi_report import paging_report

PAIR = envelopes.PagePair("pg", "cnt")


def _tool(name: str, fields: list[str], params: list[ParamRecord]) -> ToolRecord:
    schema = {"type": "object", "properties": {p.name: {"type": p.type} for p in params}}
    return ToolRecord(
        name=name,
        api_id=name,
        op_key=f"GET /{name}",
        method="GET",
        url=f"https://paging.unseen.example/{name}",
        fields=[FieldRecord(name=f, path=f) for f in fields],
        params=params,
        json_schema=schema,
    )


LISTING = _tool(
    "stations",
    ["stationName"],
    [
        ParamRecord(name="pg", type="integer"),
        ParamRecord(name="cnt", type="integer"),
        ParamRecord(name="stationName", description="측정소 이름"),
    ],
)
#: A tool whose rows carry fields named as the pair: a paging parameter is never the target of a data link.
PAGES = _tool("pages", ["pg", "cnt"], [])
SAMPLES = {"pages": [{"pg": str(i), "cnt": "10"} for i in range(1, 6)]}
ANSWER: dict[str, Any] = {"head": {"pg": 2, "cnt": 10, "totalCount": 35}, "rows": [{"stationName": "종로구"}]}


def _typed() -> list[tuple[str, str]]:
    return [(p.name, p.type) for p in LISTING.params]


def _read() -> dict[str, Any]:
    """What each engine makes of the listing's `pg` and `cnt`."""
    rows = ANSWER["rows"]
    return {
        "sampling filters": [p.name for p in sampling.filters(LISTING)],
        "sampling page size": seeds.profile_args(LISTING, Settings())[0].get("cnt"),
        "never linked": ["pg" in NON_LINKABLE, "cnt" in NON_LINKABLE],
        "links into the pair": [lk.target_param for lk in derive_candidates([PAGES, LISTING], SAMPLES)],
        "canonical pair": canonical.tool_spec(LISTING).paging,
        "first page omitted": canonical.canonical_call(LISTING, {"pg": "1", "stationName": "종로구"}),
        "page window": canonical.page_window(LISTING, {"pg": "3", "cnt": "10"}),
        "paging kind": envelopes.paging_kind(_typed()),
        "report": paging_report(LISTING)["kind"],
        "echoed page": envelopes.detect_paging(ANSWER, rows),
        "next page": envelopes.next_page(_typed(), {"pg": 2}),
        "view narrowing": narrowing(LISTING),
        "view note": note(35, 10, LISTING, next_token="3"),
    }


def test_without_the_entry_the_pair_reads_as_data() -> None:
    read = _read()
    assert read["sampling filters"] == ["pg", "cnt", "stationName"]
    assert read["sampling page size"] is None
    assert read["never linked"] == [False, False]
    assert sorted(read["links into the pair"]) == ["query:cnt", "query:pg"]
    assert read["canonical pair"] is None
    assert read["first page omitted"] == {"pg": "1", "stationName": "종로구"}
    assert read["page window"] is None
    assert read["paging kind"] == ("none", [])
    assert read["report"] == "none"
    assert read["echoed page"] == (35, 0, 0)
    assert read["next page"] == ""
    assert read["view narrowing"] == (["pg", "cnt", "stationName"], [])
    assert "page through" not in read["view note"] and "call again" not in read["view note"]


def test_one_entry_in_the_profile_makes_the_pair_paging_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envelopes, "PAGE_PAIRS", (*envelopes.PAGE_PAIRS, PAIR))
    read = _read()
    assert read["sampling filters"] == ["stationName"]
    assert read["sampling page size"] == seeds.SAMPLE_ROWS
    assert read["never linked"] == [True, True]
    assert read["links into the pair"] == []
    assert read["canonical pair"] == ("pg", "cnt")
    assert read["first page omitted"] == {"stationName": "종로구"}  # a portal's pages count from 1
    assert read["page window"] == (20, 10)
    assert read["paging kind"] == ("page", ["pg", "cnt"])
    assert read["report"] == "page"
    assert read["echoed page"] == (35, 2, 10)
    assert read["next page"] == "3"
    assert read["view narrowing"] == (["stationName"], ["pg", "cnt"])
    assert "or page through it (pg, cnt)" in read["view note"]
    assert "call again with pg=3" in read["view note"]


def test_a_generic_pair_pages_but_neither_defaults_its_first_page_nor_grows_its_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A spelling unrelated APIs share (`generic`) is paging to every reader, yet its first page is not assumed to
    be 1 (Spring Data counts from 0) and its size is left at the provider's default (Kakao stops at 15)."""
    monkeypatch.setattr(envelopes, "PAGE_PAIRS", (*envelopes.PAGE_PAIRS, PAIR._replace(generic=True)))
    read = _read()
    assert read["sampling filters"] == ["stationName"] and read["never linked"] == [True, True]
    assert read["paging kind"] == ("page", ["pg", "cnt"])
    assert read["sampling page size"] is None
    assert read["canonical pair"] is None and read["first page omitted"] == {"pg": "1", "stationName": "종로구"}


def test_the_portal_pairs_keep_their_readings() -> None:
    """The pairs the gateways use, in any case, as the engines read them before the names had one home."""
    assert envelopes.page_names() == ("pageno", "currentpage", "page", "pageindex", "page_no")
    assert envelopes.size_names() == ("numofrows", "countperpage", "perpage", "pagesize", "page_size", "size")
    assert envelopes.portal_pair({"pageNo", "numOfRows", "x"}) == ("pageNo", "numOfRows")
    assert envelopes.portal_pair({"currentPage", "countPerPage"}) == ("currentPage", "countPerPage")
    assert envelopes.portal_pair({"page", "size"}) is None  # generic: the first page varies
    assert {n: n in seeds.PAGE_SIZE_PARAMS for n in ("numOfRows", "countPerPage", "perPage", "size", "limit")} == {
        "numOfRows": True,
        "countPerPage": True,
        "perPage": True,
        "size": False,
        "limit": False,
    }
    linked = ("pageNo", "numOfRows", "START_INDEX", "endIdx", "offset", "cursor", "dataType", "MobileOS")
    assert all(n in NON_LINKABLE for n in linked)
    assert not any(n in NON_LINKABLE for n in ("stationName", "start", "sidoName"))


def test_a_cursor_name_added_to_its_tuple_is_paging_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other kinds have their one tuple each: a provider's cursor parameter (`pos`) added to `CURSOR_NAMES`."""
    tool = _tool("feed", ["title"], [ParamRecord(name="pos"), ParamRecord(name="keyword")])
    typed = [(p.name, p.type) for p in tool.params]
    assert [p.name for p in sampling.filters(tool)] == ["pos", "keyword"] and "pos" not in NON_LINKABLE
    monkeypatch.setattr(envelopes, "CURSOR_NAMES", (*envelopes.CURSOR_NAMES, "pos"))
    assert [p.name for p in sampling.filters(tool)] == ["keyword"] and "pos" in NON_LINKABLE
    assert envelopes.paging_kind(typed) == ("cursor", ["pos"])
    assert narrowing(tool) == (["keyword"], ["pos"])
    assert 'call again with pos="c2"' in note(35, 10, tool, next_token="c2")
