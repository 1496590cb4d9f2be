"""A row count in an answer is grounded by the total of a response it is of, never by an equal figure elsewhere."""

from __future__ import annotations

import json

from synthesis.fact_terms import Fact
from training.rewards import Evidence


def _result(tool: str, rows: int, items: list[dict[str, int]]) -> tuple[str, str]:
    return tool, json.dumps({"rows": rows, "shown": len(items), "items": items})


def test_a_total_is_grounded_only_by_the_total_of_a_tool_it_is_of() -> None:
    evidence = Evidence.of([_result("cities", 2, [{"code": 1}, {"code": 2}]), _result("taboos", 5, [])])
    total = Fact("number", 2.0, unit="건", label="건수")
    assert evidence.grounds(total)  # no tools named: any response's total
    assert not evidence.grounds(total, frozenset({"taboos"}))  # the city list's two rows are not two taboos
    assert evidence.grounds(Fact("number", 5.0, unit="건", label="건수"), frozenset({"taboos"}))


def test_a_figure_equal_to_the_total_is_not_the_total() -> None:
    evidence = Evidence.of([_result("taboos", 1, [{"n": 2}])])
    assert not evidence.grounds(Fact("number", 2.0, unit="건", label="건수"), frozenset({"taboos"}))
    assert evidence.grounds(Fact("number", 2.0, label="n"))  # an ordinary figure is grounded by the value
