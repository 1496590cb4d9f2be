"""The total a provider states reaches the model: read off every common envelope (never off a row), checked
against the rows sent, and shown by the one view with the page's position and the narrowing note."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from execution.judge import judge
from execution.view import tool_view, view_object
from graph.envelopes import detect_items, detect_paging

ROWS = [{"stationName": f"s{i}", "pm10Value": str(20 + i)} for i in range(10)]


def _paging(doc: Any) -> tuple[int | None, int, int]:
    found = detect_items(doc)
    assert found is not None
    return detect_paging(doc, found[1])


@pytest.mark.parametrize(
    ("doc", "want"),
    [
        (  # data.go.kr's gateway JSON
            {
                "response": {
                    "header": {"resultCode": "00", "resultMsg": "NORMAL SERVICE."},
                    "body": {"items": {"item": ROWS}, "numOfRows": 10, "pageNo": 3, "totalCount": 27},
                }
            },
            (27, 3, 10),
        ),
        (  # juso: counts as text in `common`
            {"results": {"common": {"totalCount": "46", "currentPage": "1", "countPerPage": "10"}, "juso": ROWS}},
            (46, 1, 10),
        ),
        (  # odcloud: the filtered count wins over the table's
            {"page": 1, "perPage": 10, "totalCount": 900, "matchCount": 12, "currentCount": 10, "data": ROWS},
            (12, 1, 10),
        ),
        (  # NEIS / standard-code style head list
            {"svc": [{"head": [{"list_total_count": 31}, {"RESULT": {"CODE": "INFO-000"}}]}, {"row": ROWS}]},
            (31, 0, 0),
        ),
        (  # a portal's flat envelope
            {"code": "SUCCESS", "count": 55, "list": ROWS},
            (55, 0, 0),
        ),
        (  # nothing stated
            {"items": ROWS},
            (None, 0, 0),
        ),
    ],
)
def test_totals_are_read_off_every_common_envelope(doc: Any, want: tuple[int | None, int, int]) -> None:
    assert _paging(doc) == want


def test_a_count_inside_a_row_or_below_the_rows_sent_is_no_total() -> None:
    rows = [{"name": "a", "totalCount": 999}, {"name": "b", "totalCount": 999}]
    assert _paging({"body": {"items": rows}}) == (None, 0, 0)
    assert _paging({"body": {"items": ROWS, "totalCount": 3}})[0] is None


def _judged(page: int) -> tuple[int | None, int]:
    doc = {
        "response": {
            "header": {"resultCode": "00", "resultMsg": "OK"},
            "body": {"items": {"item": ROWS}, "numOfRows": 10, "pageNo": page, "totalCount": 27},
        }
    }
    got = judge(
        200,
        orjson.dumps(doc),
        "application/json",
        envelope="datagokr",
        items_path="response.body.items.item[]",
        declared_fields={"stationName"},
    )
    assert got.ok
    return got.total, got.first


def test_the_judge_carries_the_total_and_the_page_position() -> None:
    assert _judged(2) == (27, 11)
    # a page echo that cannot hold the rows sent (page 9 of 27 rows by 10) is no evidence
    assert _judged(9) == (None, 1)


def test_the_view_states_the_total_and_which_rows_are_shown() -> None:
    tool = {"type": "object", "properties": {"sidoName": {}, "pageNo": {}, "numOfRows": {}}}
    doc = json.loads(tool_view("ok", ROWS, total=27, tool=tool))
    assert doc["rows"] == 27 and doc["shown"] == 10
    assert "first 10 of 27" in doc["note"] and "pageNo" in doc["note"]
    later = view_object("ok", ROWS, total=27, first=11, tool=tool)
    assert later["first"] == 11 and "rows 11-20 of 27" in later["note"]
    # no total stated: the rows received are the count, and no page position is claimed
    plain = view_object("ok", ROWS, first=11, tool=tool)
    assert plain["rows"] == 10 and "first" not in plain and "note" not in plain
