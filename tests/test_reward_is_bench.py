"""The GRPO answer reward is the benchmark's judge: every KOPA-Bench task's oracle trajectory,
written as the conversational completion trl hands the reward (its calls, their results, its final answer; the
system prompt with the clock and the user's turns), earns full answer credit with the task's own facts, and an
answer the benchmark fails earns none. Runs against the in-process sandbox, as `kopa bench` does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.episode import system_prompt
from bench.judge_eval import decide
from bench.tasks import Task
from training import rewards


@pytest.fixture(scope="module")
def oracle(oracle_bench: dict[str, Any]) -> dict[str, Any]:
    """The oracle episodes of every task: the session's, computed once for every test that judges answers in them."""
    return oracle_bench


def _completion(ep: dict[str, Any], answer: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for turn in ep["turns"]:
        calls = turn.get("tool_calls") or []
        if calls:
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                        for c in calls
                    ],
                }
            )
            out += [{"role": "tool", "name": r["tool"], "content": r["content"]} for r in turn.get("results", [])]
    out.append({"role": "assistant", "content": answer})
    return out


def _credit(task: Task, gold: dict[str, Any], ep: dict[str, Any], now: Any, answer: str) -> float:
    prompt = [{"role": "system", "content": system_prompt(now)}] + [{"role": "user", "content": t} for t in task.turns]
    facts = [{k: v for k, v in f.items()} for f in gold.get("facts", [])]
    calls = [{"tool": c["tool"], "arguments": c.get("args") or c.get("arguments") or {}} for c in gold["calls"]]
    got = rewards.answer_facts([prompt], [_completion(ep, answer)], facts=[json.dumps(facts)], gold_calls=[calls])
    return got[0]


def test_every_oracle_trajectory_earns_full_answer_credit(oracle: dict[str, Any]) -> None:
    short: list[tuple[str, float]] = []
    scored = 0
    for task in oracle["tasks"]:
        if task.id not in oracle["episodes"]:
            continue
        ep = oracle["episodes"][task.id]
        credit = _credit(task, oracle["gold"][task.id], ep, oracle["now"], ep["final_answer"])
        scored += 1
        if credit < 1.0:
            short.append((task.id, credit))
    assert scored == len(oracle["tasks"]) == 145
    assert not short, short


def test_an_answer_the_benchmark_fails_earns_no_credit(oracle: dict[str, Any]) -> None:
    """Wrong answers of the judge's corpus kinds, on tasks of every category with facts: the bench fails them and so
    does the reward (a retraction, a hedge, a range, another value)."""
    checked = 0
    for task in oracle["tasks"]:
        ep = oracle["episodes"].get(task.id)
        gold = oracle["gold"].get(task.id)
        if not ep or not gold or not gold.get("facts") or task.category == "irrelevance":
            continue
        final = ep["final_answer"]
        for wrong in (f"{final} 아, 잘못 말씀드렸어요. 다시 확인해 보니 틀렸네요.", f"{final} 확실하지는 않아요."):
            ok, _ = decide(task, gold, ep, wrong, tools=oracle["tools"], now=oracle["now"])
            assert not ok, (task.id, wrong)
            assert _credit(task, gold, ep, oracle["now"], wrong) == 0.0, (task.id, wrong)
            checked += 1
    assert checked >= 200
