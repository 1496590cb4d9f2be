"""The order of outcomes GRPO's weighted rewards give: the outcome dominates. An answer the bench
passes earns more than any trajectory whose answer fails; the right calls with a wrong answer earn more than a
wrong call; a wrong but well-formed call more than no call or a malformed one; inventing a tool least; and on an
irrelevance prompt the honest refusal earns more than any call."""

from __future__ import annotations

import json
from typing import Any

from tests.test_rewards import FACTS, GOLD, GOOD, RESULT_1, RESULT_2, SCHEMAS, STATION, WEATHER, answer, call, tool
from training.rewards import DEFAULT_WEIGHTS, REWARDS

OFFERED = [WEATHER, STATION, "other_tool"]


def total(completion: Any, *, gold: list[dict[str, Any]] = GOLD, facts: list[dict[str, Any]] = FACTS) -> float:
    parts = {
        name: REWARDS[name](
            [[]],
            [completion],
            gold_calls=[gold],
            facts=[facts],
            offered=[OFFERED],
            tool_schemas=[SCHEMAS],
            refuted_links=[[]],
        )[0]
        for name in DEFAULT_WEIGHTS
    }
    return sum(DEFAULT_WEIGHTS[k] * v for k, v in parts.items())


GOLD_CALLS = GOOD[:-1]
OUTCOMES: dict[str, Any] = {
    "correct": GOOD,
    "right calls, wrong answer": [*GOLD_CALLS, answer("기온 예보(TMP)는 16.2도이고 가까운 측정소는 종로구입니다.")],
    "right calls, no answer": [*GOLD_CALLS, answer("")],
    "one right call, right answer": [
        call(WEATHER, base_date="20261015", nx=60, ny=127),
        tool(WEATHER, RESULT_1),
        answer("기온 예보(TMP)는 14.9도입니다."),
    ],
    "wrong call": [
        call("other_tool", q="x"),
        tool("other_tool", json.dumps({"rows": 0, "items": []})),
        answer("잘 모르겠어요."),
    ],
    "no call": [answer("기온 예보(TMP)는 14.9도이고 가까운 측정소는 종로구입니다.")],
    "malformed call": [answer('<tool_call>{"name": "kma_get_vilage_fcst", "arguments": </tool_call>')],
    "invented tool": [call("made_up", q="x"), tool("made_up", '{"error": "unknown tool"}'), answer("모르겠어요.")],
}


def test_the_outcome_dominates_and_each_step_down_scores_less() -> None:
    got = {name: round(total(c), 3) for name, c in OUTCOMES.items()}
    print("totals:", got)
    failing = [v for k, v in got.items() if k != "correct" and k != "one right call, right answer"]
    assert got["correct"] > max(failing)
    assert got["one right call, right answer"] > got["right calls, wrong answer"]  # the answer counts most
    assert got["right calls, wrong answer"] >= got["right calls, no answer"] > got["wrong call"]
    assert got["wrong call"] > got["no call"] == got["malformed call"] == 0.0
    assert got["invented tool"] < got["no call"]


def test_on_an_irrelevance_prompt_the_honest_refusal_is_best() -> None:
    refusal = [answer("죄송하지만 로또 당첨 번호는 제가 가진 도구로 조회할 수 없습니다.")]
    called = [call(WEATHER, base_date="20261015", nx=60, ny=127), tool(WEATHER, RESULT_1), answer("14.9도입니다.")]
    both = [*called[:2], call(STATION, tmX=1, tmY=2), tool(STATION, RESULT_2), answer("할 수 없습니다.")]
    best = total(refusal, gold=[], facts=[])
    assert best > 0
    assert best > total(called, gold=[], facts=[]) and best > total(both, gold=[], facts=[])
