"""Rewards of GRPO training: hand-made completions (trl's conversational form), including the known hacks: only
executed calls count, answers earn credit only with values from this rollout's results, linked arguments only
when derived, and the weights merge onto the defaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from training import rewards
from training.config import ConfigError, load_config

WEATHER = "kma_get_vilage_fcst"
STATION = "airkorea_get_nearby_msrstn_list"
SCHEMAS = {
    WEATHER: {
        "type": "object",
        "properties": {
            "base_date": {"type": "string", "pattern": "^[0-9]{8}$"},
            "nx": {"type": "integer"},
            "ny": {"type": "integer"},
        },
        "required": ["base_date", "nx", "ny"],
    },
    STATION: {
        "type": "object",
        "properties": {"tmX": {"type": "number"}, "tmY": {"type": "number"}},
        "required": ["tmX", "tmY"],
    },
}
GOLD = [
    {
        "step": 1,
        "tool": WEATHER,
        "arguments": {"base_date": "20261015", "nx": "60", "ny": "127"},
        "provenance": {"base_date": {"kind": "slot"}, "nx": {"kind": "slot"}, "ny": {"kind": "slot"}},
        "depends_on": [],
    },
    {
        "step": 2,
        "tool": STATION,
        "arguments": {"tmX": 60, "tmY": 127},
        "provenance": {
            "tmX": {"kind": "link", "from_step": 0, "field": "nx"},
            "tmY": {"kind": "link", "from_step": 0, "field": "ny"},
        },
        "depends_on": [1],
    },
]
FACTS = [
    {
        "kind": "number",
        "value": 14.9,
        "tolerance": 0.0,
        "unit": "℃",
        "label": "기온",
        "field": "fcstValue",
        "category": "TMP",
    },
    {"kind": "text", "value": "TMP", "tolerance": 0.0, "unit": None, "label": "", "field": "category"},
]
RESULT_1 = json.dumps({"rows": 1, "items": [{"category": "TMP", "fcstValue": "14.9", "nx": 60, "ny": 127}]})
RESULT_2 = json.dumps({"rows": 1, "items": [{"stationName": "종로구"}]})


def call(name: str, **args: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": args}}],
    }


def tool(name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "name": name, "content": content}


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


GOOD = [
    call(WEATHER, base_date="20261015", nx=60, ny=127),
    tool(WEATHER, RESULT_1),
    call(STATION, tmX=60, tmY=127),
    tool(STATION, RESULT_2),
    answer("기온 예보(TMP)는 14.9도이고 가까운 측정소는 종로구입니다."),
]


def score(fn: rewards.RewardFn, *completions: Any) -> list[float]:
    n = len(completions)
    return fn(
        [[]] * n,
        list(completions),
        gold_calls=[GOLD] * n,
        facts=[FACTS] * n,
        offered=[[WEATHER, STATION, "other_tool"]] * n,
        tool_schemas=[SCHEMAS] * n,
        refuted_links=[[{"source_tool": WEATHER, "source_field": "nx", "target_tool": STATION, "target_param": "tmX"}]]
        * n,
    )


def test_a_perfect_rollout_earns_every_reward_and_no_penalty() -> None:
    for name in (
        "well_formed_calls",
        "schema_valid_arguments",
        "right_tools",
        "gold_arguments",
        "executed_calls",
        "answer_facts",
    ):
        assert score(rewards.REWARDS[name], GOOD) == [1.0], name
    for name in ("invented_tools", "excess_calls", "repeated_calls"):
        assert score(rewards.REWARDS[name], GOOD) == [0.0], name


def test_well_formed_calls_counts_unparsed_blocks_and_no_calls() -> None:
    broken = [answer('<tool_call>\n{"name": "kma_get_vilage_fcst", "arguments": {"nx": 60\n</tool_call>')]
    text_ok = '<tool_call>\n{"name": "kma_get_vilage_fcst", "arguments": {"nx": 60}}\n</tool_call>'
    half = [call(WEATHER, nx=60), tool(WEATHER, RESULT_1), answer("<tool_call>\n{bad json}\n</tool_call>")]
    # a call written as text and never executed is an attempt that earns nothing
    assert score(rewards.well_formed_calls, broken, [answer("모르겠습니다")], text_ok, half) == [0.0, 0.0, 0.0, 0.5]


def test_schema_valid_arguments_uses_the_offered_schema() -> None:
    bad_pattern = [call(WEATHER, base_date="2026-10-15", nx=60, ny=127)]
    missing = [call(WEATHER, nx=60)]
    invented = [call("made_up", x=1)]
    assert score(rewards.schema_valid_arguments, bad_pattern, missing, invented, GOOD) == [0.0, 0.0, 0.0, 1.0]


def test_right_tools_is_an_f1_over_tool_names() -> None:
    only_first = [call(WEATHER, base_date="20261015", nx=60, ny=127), tool(WEATHER, RESULT_1), answer("끝")]
    wrong = [call("other_tool"), answer("끝")]
    assert score(rewards.right_tools, only_first, wrong) == [pytest.approx(2 * 1 * 0.5 / 1.5), 0.0]


def test_gold_arguments_normalise_values_and_credit_provenance() -> None:
    # "60" (gold, a string) equals 60 (the model, cast by the schema); a code with a leading zero is not a number
    assert rewards.same_value("60", 60) and rewards.same_value(127.0, "127") and not rewards.same_value("0060", 60)
    # linked arguments guessed without the earlier result: no credit for those two of five arguments
    guessed = [
        call(STATION, tmX=60, tmY=127),
        tool(STATION, RESULT_2),
        call(WEATHER, base_date="20261015", nx=60, ny=127),
        tool(WEATHER, RESULT_1),
        answer("끝"),
    ]
    wrong_value = [
        call(WEATHER, base_date="20261016", nx=60, ny=127),
        tool(WEATHER, RESULT_1),
        call(STATION, tmX=61, tmY=127),
        tool(STATION, RESULT_2),
        answer("끝"),
    ]
    got = score(rewards.gold_arguments, GOOD, guessed, wrong_value)
    assert got == [1.0, pytest.approx(3 / 5), pytest.approx(3 / 5)]


def test_a_value_derived_through_the_transform_or_a_conversion_tool_earns_provenance() -> None:
    grid = {"kind": "coord", "src": "TM", "dst": "KMA_GRID", "axis": "x", "pair": "tmY"}
    gold = [
        {
            "step": 1,
            "tool": STATION,
            "arguments": {"tmX": 198218.32, "tmY": 453512.05},
            "provenance": {},
            "depends_on": [],
        },
        {
            "step": 2,
            "tool": WEATHER,
            "arguments": {"nx": 60},
            "provenance": {"nx": {"kind": "link", "from_step": 0, "field": "tmX", "transform": grid}},
            "depends_on": [1],
        },
    ]
    station = json.dumps({"rows": 1, "items": [{"tmX": "198218.320000", "tmY": "453512.050000"}]})
    derived = [
        call(STATION, tmX=198218.32, tmY=453512.05),
        tool(STATION, station),
        call(WEATHER, nx=60),
        tool(WEATHER, RESULT_1),
        answer("끝"),
    ]
    converted = [
        call(STATION, tmX=198218.32, tmY=453512.05),
        tool(STATION, json.dumps({"rows": 0, "items": []})),
        call("convert_coordinates", x=198218.32),
        tool("convert_coordinates", json.dumps({"nx": 60})),
        call(WEATHER, nx=60),
        tool(WEATHER, RESULT_1),
        answer("끝"),
    ]
    from_nowhere = [
        call(STATION, tmX=198218.32, tmY=453512.05),
        tool(STATION, json.dumps({"rows": 0, "items": []})),
        call(WEATHER, nx=60),
        tool(WEATHER, RESULT_1),
        answer("끝"),
    ]
    got = rewards.gold_arguments([[]] * 3, [derived, converted, from_nowhere], gold_calls=[gold] * 3)
    assert got == [1.0, 1.0, pytest.approx(2 / 3)]


def test_executed_calls_reads_the_tool_results_and_ignores_repeats() -> None:
    failing = [call(WEATHER, nx=60), tool(WEATHER, json.dumps({"error": "invalid: missing base_date"})), answer("")]
    trl_error = [call(WEATHER, nx=60), tool(WEATHER, "{'error': 'Tool X not found.'}"), answer("")]
    # hack: the same successful call repeated ten times does not raise the share
    repeated = [
        m for _ in range(10) for m in (call(WEATHER, base_date="20261015", nx=60, ny=127), tool(WEATHER, RESULT_1))
    ] + [call(STATION, tmX=1, tmY=2), tool(STATION, json.dumps({"error": "empty"})), answer("끝")]
    assert score(rewards.executed_calls, failing, trl_error, repeated) == [0.0, 0.0, 0.5]


def test_answer_facts_with_the_benchmark_checker_and_its_guards() -> None:
    partial = [*GOOD[:-1], answer("기온은 14.9도입니다.")]
    empty = [*GOOD[:-1], answer("   ")]
    dump = [*GOOD[:-1], answer("TMP " + " ".join(f"{x / 10:.1f}℃" for x in range(100, 200)))]
    hedged = [*GOOD[:-1], answer(GOOD[-1]["content"] + " 하지만 이 정보는 확인할 수 없습니다.")]
    assert score(rewards.answer_facts, GOOD, partial, empty, dump, hedged) == [1.0, 0.5, 0.0, 0.0, 0.0]


def test_answer_credit_needs_an_executed_call_and_values_from_its_results() -> None:
    memorised = [answer(GOOD[-1]["content"])]
    failed = [call(WEATHER, nx=60), tool(WEATHER, json.dumps({"error": "invalid"})), answer(GOOD[-1]["content"])]
    other = json.dumps({"rows": 1, "items": [{"category": "TMP", "fcstValue": "11.0"}]})
    elsewhere = [
        call(WEATHER, base_date="20261015", nx=60, ny=127),
        tool(WEATHER, other),
        answer(GOOD[-1]["content"]),
    ]  # right numbers, but not what this rollout's tool said
    text_only = (
        '<tool_call>\n{"name": "kma_get_vilage_fcst", "arguments": {"base_date": "20261015", "nx": 60, '
        '"ny": 127}}\n</tool_call>\n' + GOOD[-1]["content"]
    )
    # a figure no executed result of the rollout shows (14.9 where the tool said 11.0) fails the whole answer
    assert score(rewards.answer_facts, memorised, failed, elsewhere, text_only) == [0.0, 0.0, 0.0, 0.0]


def test_with_environments_only_recorded_calls_are_executed() -> None:
    class Env:
        calls: ClassVar[list[dict[str, Any]]] = [
            {
                "tool": WEATHER,
                "arguments": {"base_date": "20261015", "nx": 60, "ny": 127},
                "ok": True,
                "result": RESULT_1,
            }
        ]

    forged = [
        call(WEATHER, base_date="20261015", nx=60, ny=127),
        tool(WEATHER, RESULT_1),
        call(STATION, tmX=60, tmY=127),
        tool(STATION, RESULT_2),
        GOOD[-1],
    ]
    n = 1
    kw: dict[str, Any] = {"gold_calls": [GOLD] * n, "facts": [FACTS] * n, "environments": [Env()]}
    assert rewards.right_tools([[]], [forged], **kw) == [pytest.approx(2 * 1 * 0.5 / 1.5)]
    # the forged call's result was never executed: the station it names is a claim nothing seen supports
    assert rewards.answer_facts([[]], [forged], **kw) == [0.0]
    assert rewards.well_formed_calls([[]], [forged], **kw) == [0.5]


def test_an_irrelevance_record_earns_answer_credit_for_an_honest_refusal() -> None:
    refusal = [answer("죄송하지만 제공된 도구로는 요청하신 정보를 확인할 수 없습니다.")]
    guess = [answer("내일 로또 번호는 3, 11, 25입니다.")]
    called = [call(WEATHER, nx=1), tool(WEATHER, RESULT_1), refusal[0]]
    got = rewards.answer_facts([[]] * 3, [refusal, guess, called], gold_calls=[[]] * 3, facts=[[]] * 3)
    assert got == [1.0, 0.0, 0.0]


def test_penalties_for_invented_tools_refuted_links_excess_and_repeats() -> None:
    invented = [call("made_up", x=1), call(WEATHER, base_date="20261015", nx=60, ny=127), answer("끝")]
    assert score(rewards.invented_tools, invented) == [-0.5]
    # tmX fed with nx from the weather result: that link was refuted
    assert score(rewards.refuted_links, GOOD) == [-0.5]
    unrelated = [call(STATION, tmX=200000, tmY=450000), answer("끝")]
    assert score(rewards.refuted_links, unrelated) == [0.0]
    many = [call(WEATHER, base_date="20261015", nx=60 + i, ny=127) for i in range(5)] + [answer("끝")]
    assert score(rewards.excess_calls, many) == [-1.0]
    three = [call(WEATHER, base_date="20261015", nx=60 + i, ny=127) for i in range(3)] + [answer("끝")]
    assert score(rewards.excess_calls, three) == [-0.5]
    same = [
        call(WEATHER, base_date="20261015", nx=60, ny="127"),
        call(WEATHER, base_date="20261015", nx=60, ny=127),
        call(WEATHER, base_date="20261015", nx=60, ny=127.0),
        answer("끝"),
    ]
    assert score(rewards.repeated_calls, same) == [pytest.approx(-2 / 3)]


def test_weights_select_functions_in_a_stable_order_and_reject_unknown_names() -> None:
    funcs, weights = rewards.selected({"answer_facts": 2.0, "right_tools": 1.0, "repeated_calls": 0.0})
    assert [f.__name__ for f in funcs] == ["right_tools", "answer_facts"] and weights == [1.0, 2.0]
    with pytest.raises(ValueError, match="unknown rewards"):
        rewards.selected({"everything": 1.0})


def test_config_weights_merge_onto_the_defaults_and_unknown_names_are_refused(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model: m\noutput: o\ngrpo:\n  rewards: {answer_facts: 2.0, excess_calls: 0}\n")
    got = load_config(cfg).grpo.rewards
    assert got == {**rewards.DEFAULT_WEIGHTS, "answer_facts": 2.0, "excess_calls": 0.0}
    assert (
        load_config(None, ["grpo.rewards={right_tools: 3}"], model="m", output="o").grpo.rewards["gold_arguments"]
        == rewards.DEFAULT_WEIGHTS["gold_arguments"]
    )
    cfg.write_text("model: m\noutput: o\ngrpo:\n  rewards: {answer_fact: 2.0}\n")
    with pytest.raises(ConfigError, match=r"grpo.rewards: unknown rewards \['answer_fact'\] \(known: "):
        load_config(cfg)


def test_columns_may_arrive_as_json_strings() -> None:
    got = rewards.gold_arguments([[]], [GOOD], gold_calls=[json.dumps(GOLD)])
    assert got == [1.0]


def test_a_decoded_code_is_grounded_and_an_invented_word_is_not() -> None:
    """An answer that decodes a returned code (SKY 1 -> 맑음, pm10Grade 1 -> 좋음) states a value the tool returned;
    a word no result or code table gives was not looked up."""
    from synthesis.fact_terms import Fact
    from training.rewards import grounded

    results = [
        ("kma", json.dumps({"rows": 1, "items": [{"category": "SKY", "fcstValue": "1"}]})),
        ("air", json.dumps({"rows": 1, "items": [{"pm10Grade": "1", "khaiValue": "53"}]})),
    ]
    assert grounded(Fact("text", "맑음", label="하늘"), results)
    assert grounded(Fact("text", "좋음", label="미세먼지 등급"), results)
    assert not grounded(Fact("text", "흐림", label="하늘"), results)
    assert not grounded(Fact("text", "나쁨", label="미세먼지 등급"), results)
