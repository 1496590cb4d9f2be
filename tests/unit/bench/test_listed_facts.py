"""`row: all` facts: a question that asks for a list ("진료과목이 뭐가 있어?") is answered by naming every item, so the
gold states one fact per distinct value, none the rival of another, and refuses a list it did not receive whole."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bench.gold import GoldError, compute_facts
from bench.tasks import Task
from execution.result import CallResult, Outcome
from synthesis.facts import check_answer

ROWS = [
    {"ykiho": "H1", "dgsbjtCdNm": "내과", "dgsbjtCd": "01"},
    {"ykiho": "H1", "dgsbjtCdNm": "안과", "dgsbjtCd": "12"},
    {"ykiho": "H1", "dgsbjtCdNm": "내과", "dgsbjtCd": "01"},  # a repeated row names the item once
    {"ykiho": "H1", "dgsbjtCdNm": "피부과", "dgsbjtCd": "14"},
]


def task(row: object = "all", kind: str = "name") -> Task:
    return Task.model_validate(
        {
            "id": "single-subjects-001",
            "category": "single",
            "persona": "citizen",
            "turns": ["서지우병원 진료과목이 뭐가 있어?"],
            "tools": {"offered": ["subj"]},
            "gold": [{"id": "subj", "tool": "subj", "args": {"yadmNm": {"user": "서지우병원"}}}],
            "facts": [{"kind": kind, "from": "subj", "field": "dgsbjtCdNm", "row": row}],
        }
    )


def test_every_distinct_item_is_a_fact_and_none_is_another_ones_rival() -> None:
    facts = compute_facts(task(), {"subj": CallResult(Outcome.OK, ROWS, total=4)})
    assert [f.value for f in facts] == ["내과", "안과", "피부과"]
    assert all(f.rivals == [] for f in facts)
    whole = check_answer("진료과목은 내과, 안과, 피부과 세 가지예요.", facts)
    part = check_answer("진료과목은 내과와 안과예요.", facts)
    assert whole.hits == whole.total == 3
    assert part.hits == 2 and part.missing


def test_one_row_still_names_one_item_with_the_others_as_rivals() -> None:
    (fact,) = compute_facts(task(row=0), {"subj": CallResult(Outcome.OK, ROWS, total=4)})
    assert fact.value == "내과" and {r["value"] for r in fact.rivals} == {"안과", "피부과"}


def test_a_list_not_received_whole_is_refused() -> None:
    with pytest.raises(GoldError, match="needs every row"):
        compute_facts(task(), {"subj": CallResult(Outcome.OK, ROWS, total=40)})


def test_all_rows_of_a_number_is_not_a_list_fact() -> None:
    with pytest.raises(ValidationError, match="row: all"):
        task(kind="number")
