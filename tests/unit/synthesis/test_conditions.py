"""Conditional questions (synthesis/conditions.py, issue 33): a condition is on a reading or a forecast value that
bears on what the branch asks, at a threshold people state, never on a count of an API's rows; a forecast's
deciding value says the hours it covers; the quality figures catch an extreme over rows not all seen."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from synthesis.conditions import Rule, can_decide, decide, default_rules, load_rules, threshold
from synthesis.needs import NeedError, default_needs
from synthesis.records import StepResponse
from tests.test_needs import _tool

NOWCAST = _tool("nowcast", "초단기실황", dict.fromkeys(["baseDate", "baseTime", "category", "obsrValue"], ""))
FORECAST = _tool("forecast", "단기예보", dict.fromkeys(["fcstDate", "fcstTime", "category", "fcstValue"], ""))
LISTING = _tool("listing", "병원 목록", {"dutyName": "기관명", "dutyAddr": "주소", "dutyTel1": "전화번호"})


def _obs(**values: str) -> StepResponse:
    rows = [{"baseDate": "20261207", "baseTime": "0600", "category": k, "obsrValue": v} for k, v in values.items()]
    return StepResponse(rows=len(rows), items=rows, selected=False)


def _fcst(category: str, values: list[str], rows: int) -> StepResponse:
    items = [
        {"fcstDate": "20261207", "fcstTime": f"{6 + i:02d}00", "category": category, "fcstValue": v}
        for i, v in enumerate(values)
    ]
    return StepResponse(rows=rows, items=items, selected=False)


RULE = Rule(
    "hot", "t", ("T1H", "TMP"), ">=", (25.0, 28.0, 30.0), "기온", "기온이 {t} 이상이면", {"weather.humid_now": "습도"}
)


def test_a_threshold_lies_on_either_side_of_the_value_and_both_outcomes_occur() -> None:
    rnd = random.Random(1)
    picked = [threshold(RULE, 27.0, rnd) for _ in range(200)]
    assert set(picked) == {25.0, 28.0}  # the nearest of the rule's thresholds on each side, never a made-up figure
    assert 60 < picked.count(25.0) < 140
    assert threshold(RULE, 40.0, rnd) == 30.0  # no threshold above: the condition holds
    assert threshold(RULE, 10.0, rnd) == 25.0  # none below: it does not


def test_a_reading_decides_a_branch_a_need_asks_and_a_count_never_does() -> None:
    needs = default_needs()
    got = decide(NOWCAST, _obs(T1H="29.5", REH="60"), NOWCAST, needs, set(), random.Random(3), [RULE])
    assert got is not None and got.rule.id == "hot" and float(got.reading.fact.value) == 29.5
    assert got.reading.scope == "현재" and got.held == (got.value <= 29.5)
    # rows of a set (a listing, how many there are) offer nothing to decide on
    listing = StepResponse(rows=12, items=[{"dutyName": "가", "dutyAddr": "서울"}] * 3, selected=False)
    assert decide(LISTING, listing, NOWCAST, needs, set(), random.Random(3), [RULE]) is None
    # a branch no need of the rule's answers (a listing gives no humidity): no condition for the pair
    assert decide(NOWCAST, _obs(T1H="29.5"), LISTING, needs, set(), random.Random(3), [RULE]) is None
    assert can_decide(NOWCAST, NOWCAST, needs, [RULE]) and not can_decide(LISTING, NOWCAST, needs, [RULE])


def test_a_forecast_decides_on_its_extreme_over_the_hours_shown_and_says_them() -> None:
    got = decide(FORECAST, _fcst("TMP", ["24", "27"], 800), FORECAST, default_needs(), set(), random.Random(2))
    assert got is not None
    assert got.reading.fact.label in ("최고 기온", "최저 기온") and got.reading.scope == "6시~7시 예보 기준"
    assert float(got.reading.fact.value) == (27.0 if got.rule.op == ">=" else 24.0)


def test_shipped_conditions_load_and_name_shipped_needs() -> None:
    ids = {n.id for n in default_needs()}
    rules = default_rules()
    assert rules and all(set(r.then) <= ids for r in rules), [set(r.then) - ids for r in rules]
    assert all("{t}" in r.says and "건" not in r.says for r in rules)


def test_a_bad_conditions_file_names_itself(tmp_path: Path) -> None:
    (tmp_path / "conditions").mkdir()
    (tmp_path / "conditions" / "x.yaml").write_text(
        "conditions:\n  - id: a\n    if: {asks: T1H, op: '>', at: [1], name: 기온, says: '{t}'}\n    then: {x: y}\n",
        encoding="utf-8",
    )
    with pytest.raises(NeedError, match=r"x\.yaml"):
        load_rules([tmp_path])
