"""The one view of a tool result (execution/view.py): budget, order, note, idempotence."""

from __future__ import annotations

import json
from typing import Any

from execution.view import BUDGET, Budget, narrowing, tool_view, view_object, visible

SPEC: dict[str, Any] = {"type": "function", "function": {"name": "kma_get_vilage_fcst", "description": "forecast",
                        "parameters": {"type": "object", "required": ["base_date", "base_time", "nx", "ny"],
                                       "properties": {"pageNo": {"type": "integer"}, "numOfRows": {"type": "integer"},
                                                      "dataType": {"type": "string", "enum": ["JSON", "XML"]},
                                                      "base_date": {"type": "string"}, "base_time": {"type": "string"},
                                                      "nx": {"type": "integer"}, "ny": {"type": "integer"}}}}}


def forecast_rows(n: int) -> list[dict[str, Any]]:
    cats = ["TMP", "UUU", "VVV", "VEC", "WSD", "SKY", "PTY", "POP", "WAV", "PCP", "REH", "SNO"]
    return [{"baseDate": "20261015", "baseTime": "1100", "category": cats[i % 12], "fcstDate": "20261015",
             "fcstTime": f"{12 + i // 12:02d}00", "fcstValue": str(i), "nx": 60, "ny": 127} for i in range(n)]


def test_first_rows_in_order_with_total_and_a_note_naming_filters_and_paging() -> None:
    rows = forecast_rows(823)
    doc = json.loads(tool_view("ok", rows, tool=SPEC))
    assert doc["rows"] == 823 and doc["shown"] == BUDGET.rows
    assert doc["items"] == rows[: BUDGET.rows]  # the provider's order, from the first row
    assert "823" in doc["note"] and "pageNo" in doc["note"] and "numOfRows" in doc["note"]
    assert "base_time" in doc["note"] and "dataType" not in doc["note"]
    assert narrowing(SPEC) == (["base_date", "base_time", "nx", "ny"], ["pageNo", "numOfRows"])


def test_small_answers_are_whole_and_have_no_note() -> None:
    rows = forecast_rows(12)
    doc = json.loads(tool_view("ok", rows, tool=SPEC))
    assert doc == {"rows": 12, "shown": 12, "items": rows}


def test_budget_cuts_values_fields_and_message_size() -> None:
    wide = [{f"f{j}": "가" * 1000 for j in range(40)} for _ in range(5)]
    doc = view_object("ok", wide, tool=SPEC)
    assert all(len(r) == BUDGET.fields for r in doc["items"])
    assert all(len(v) == BUDGET.value_chars and v.endswith("…") for r in doc["items"] for v in r.values())
    assert doc["shown"] == 1  # one 32-field row of 300-character values is over the message cap on its own
    trades = [{f"k{j}": f"value-{i}-{j}" for j in range(32)} for i in range(50)]
    text = tool_view("ok", trades, tool=SPEC)
    assert len(text) <= BUDGET.message_chars
    assert json.loads(text)["shown"] < BUDGET.rows  # the character cap binds before the row cap


def test_visible_rows_and_total_render_the_same_text() -> None:
    for rows in (forecast_rows(823), forecast_rows(5), [{f"k{j}": "x" * 400 for j in range(40)} for _ in range(30)]):
        shown = visible(rows, tool=SPEC)
        assert tool_view("ok", shown, total=len(rows), tool=SPEC) == tool_view("ok", rows, tool=SPEC)


def test_empty_and_errors() -> None:
    assert json.loads(tool_view("empty", reason="NO_DATA")) == {"rows": 0, "items": [], "message": "NO_DATA"}
    assert json.loads(tool_view("ok", [])) == {"rows": 0, "items": [], "message": "no data"}
    assert json.loads(tool_view("invalid", reason="SERVICE_KEY_IS_NOT_REGISTERED")) == {
        "error": "invalid", "message": "SERVICE_KEY_IS_NOT_REGISTERED"}


def test_a_tool_without_paging_says_so() -> None:
    spec = {"function": {"name": "x", "parameters": {"properties": {}}}}
    doc = view_object("ok", forecast_rows(30), tool=spec, budget=Budget(rows=5))
    assert doc["shown"] == 5 and "no filter or paging" in doc["note"]
