"""`kopa bench check` refuses tasks a model cannot do from what it sees, or could pass without doing: one small
synthetic task per defect class (bench/check.py), checked against hand-made gold responses, and the shipped set."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bench.check import check_task
from bench.gold import GoldCall, GoldResult, compute_facts
from bench.tasks import Task, load_tasks
from cli.bench import app
from execution.result import CallResult, Outcome
from execution.view import BUDGET

runner = CliRunner()


def spec(name: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": name,
            "parameters": {"type": "object", "properties": props, "required": required},
        },
    }


TOOLS: dict[str, Any] = {
    "addr": spec(
        "addr",
        {"keyword": {"type": "string"}, "currentPage": {"type": "integer"}, "countPerPage": {"type": "integer"}},
        ["keyword"],
    ),
    "fcst": spec(
        "fcst",
        {
            "base_date": {"type": "string"},
            "base_time": {"type": "string", "enum": ["0200", "1100"]},
            "nx": {"type": "integer"},
            "ny": {"type": "integer"},
            "pageNo": {"type": "integer"},
            "numOfRows": {"type": "integer"},
        },
        ["base_date", "base_time", "nx", "ny"],
    ),
}
ADDR_ROWS = [
    {"roadAddr": f"서울특별시 종로구 신교로 {i}", "bdNm": f"청운빌딩{i}", "nx": 60, "ny": 127, "sggNm": "종로구"}
    for i in range(3)
]
FCST_ROWS = [
    {"category": c, "fcstTime": f"{h:02d}00", "fcstValue": str(10 + h)}
    for h in range(24)
    for c in ("TMP", "POP", "SKY")
]


def task(**over: Any) -> Task:
    base: dict[str, Any] = {
        "id": "t-1",
        "category": "chain",
        "persona": "citizen",
        "turns": ["종로구 신교로 근처 오늘 밤 기온 알려줘."],
        "tools": {"offered": ["addr", "fcst"]},
        "gold": [
            {"id": "a", "tool": "addr", "args": {"keyword": {"user": "종로구 신교로"}}},
            {
                "id": "f",
                "tool": "fcst",
                "args": {
                    "base_date": {"const": "20261015"},
                    "base_time": {"const": "1100"},
                    "nx": {"from": "a", "field": "nx"},
                    "ny": {"from": "a", "field": "ny"},
                },
            },
        ],
        "facts": [
            {
                "kind": "number",
                "from": "f",
                "field": "fcstValue",
                "unit": "℃",
                "row": {"where": {"category": "TMP", "fcstTime": "0300"}},
            }
        ],
    }
    base.update(over)
    return Task.model_validate(base)


def gold(t: Task, rows: dict[str, list[dict[str, Any]]] | None = None) -> GoldResult:
    data = rows or {"a": ADDR_ROWS, "f": FCST_ROWS}
    results = {s.id: CallResult(Outcome.OK, data[s.id]) for s in t.gold if s.id in data}
    out = GoldResult(t.id, [GoldCall(s.id, s.tool, {}, results[s.id]) for s in t.gold if s.id in results])
    out.facts = compute_facts(t, results)
    return out


def problems(t: Task, rows: dict[str, list[dict[str, Any]]] | None = None) -> list[str]:
    return check_task(t, gold(t, rows), TOOLS).problems


def test_a_sound_task_passes() -> None:
    assert problems(task()) == []


def test_a_fact_outside_the_view_is_refused_and_paging_makes_it_visible() -> None:
    late = {
        "kind": "number",
        "from": "f",
        "field": "fcstValue",
        "unit": "℃",
        "row": {"where": {"category": "TMP", "fcstTime": "2100"}},
    }
    out = problems(task(facts=[late]))
    assert len(out) == 1 and "view:" in out[0] and f"the first {BUDGET.rows}" in out[0] and "row 64 of 72" in out[0]
    # the gold program pages like a careful agent: the page holding hour 21 is what the call answers
    paged = [r for r in FCST_ROWS if r["fcstTime"] >= "1800"]
    assert problems(task(facts=[late]), {"a": ADDR_ROWS, "f": paged}) == []


def test_a_linked_argument_or_condition_outside_the_view_is_refused() -> None:
    many = [{"roadAddr": f"주소 {i}", "nx": 50 + i, "ny": 120} for i in range(40)]
    t = task()
    far = t.model_copy(
        update={
            "gold": [
                t.gold[0],
                t.gold[1].model_copy(
                    update={"args": {**t.gold[1].args, "nx": t.gold[1].args["nx"].model_copy(update={"row": 30})}}
                ),
            ]
        }
    )
    out = problems(far, {"a": many, "f": FCST_ROWS})
    assert any("argument 'nx'" in p and "view:" in p for p in out)
    cond = task(
        category="conditional",
        gold=[
            *task().model_dump(by_alias=True)["gold"][:1],
            {
                "id": "f",
                "tool": "fcst",
                "when": {"from": "a", "field": "nx", "row": 35, "op": ">=", "value": 60},
                "args": {
                    "base_date": {"const": "20261015"},
                    "base_time": {"const": "1100"},
                    "nx": {"from": "a", "field": "nx"},
                    "ny": {"from": "a", "field": "ny"},
                },
            },
        ],
    )
    assert any("when" in p and "view:" in p for p in problems(cond, {"a": many, "f": FCST_ROWS}))


def test_a_field_cut_out_of_the_view_is_refused() -> None:
    long_rows = [{"title": "가" * (BUDGET.value_chars + 50), "nx": 60, "ny": 127}]
    t = task(facts=[{"kind": "text", "from": "a", "field": "title"}])
    assert any("field 'title'" in p and "view:" in p for p in problems(t, {"a": long_rows, "f": FCST_ROWS}))


def test_an_ambiguous_where_is_refused() -> None:
    t = task(facts=[{"kind": "number", "from": "f", "field": "fcstValue", "row": {"where": {"category": "TMP"}}}])
    out = problems(t)
    assert any(p.startswith("task t-1: where:") and "matches 24 rows" in p for p in out)


def test_arguments_outside_the_spec_or_missing_required_ones_are_refused() -> None:
    d = task().model_dump(by_alias=True)
    d["gold"][1]["args"]["base_tme"] = d["gold"][1]["args"].pop("base_time")  # misspelled
    out = problems(task(gold=d["gold"]))
    assert any("sends 'base_tme'" in p for p in out) and any(
        "misses the required argument 'base_time'" in p for p in out
    )
    d = task().model_dump(by_alias=True)
    d["gold"][1]["args"]["base_time"] = {"const": "1300"}  # not an issue time the spec documents
    assert any("is not one of" in p for p in problems(task(gold=d["gold"])))


def test_trivial_or_echoed_text_facts_and_constant_answers_are_refused() -> None:
    short = task(category="error", facts=[{"kind": "text", "value": "없"}])
    assert any("trivially short" in p for p in problems(short))
    echoed = task(facts=[{"kind": "name", "from": "a", "field": "sggNm"}])  # 종로구 is in the request
    assert any("already in the request" in p for p in problems(echoed))
    # a number the request already states as a value (not as a threshold, which states no value): echoing the
    # request passes it
    echo = task(
        turns=["종로구 신교로 근처 오늘 밤 기온이 15도라던데 맞는지 알려줘."],
        facts=[{"kind": "number", "value": 15, "label": "기온"}],
    )
    assert any(p.startswith("task t-1: constant:") for p in problems(echo))
    # an unlabelled small count is not passed by a run of numbers: the strict judge wants its label in context
    count = task(facts=[{"kind": "count", "from": "a"}])
    assert not any(p.startswith("task t-1: constant:") for p in problems(count))
    grounded = task(facts=[{"kind": "count", "from": "a"}, {"kind": "name", "from": "a", "field": "bdNm"}])
    assert problems(grounded) == []


def test_an_irrelevance_task_a_model_can_do_itself_is_refused() -> None:
    for text in (
        "이 문장을 영어로 번역해줘: '대기질이 개선되었습니다.'",
        "1234 × 56 은 얼마야?",
        "봄에 대한 시를 써 줘.",
    ):
        t = task(category="irrelevance", turns=[text], gold=[], facts=[])
        assert any("irrelevance:" in p for p in problems(t, {})), text
    t = task(category="irrelevance", turns=["이번 주말 잠실야구장 프로야구 경기 일정 알려줘."], gold=[], facts=[])
    assert problems(t, {}) == []


def test_a_projection_outside_a_conversion_tool_is_refused() -> None:
    d = task().model_dump(by_alias=True)
    d["gold"][1]["args"]["nx"] = {
        "from": "a",
        "field": "nx",
        "transform": {"kind": "coord", "src": "UTMK", "dst": "KMA_GRID", "axis": "x", "pair": "ny"},
    }
    out = check_task(task(gold=d["gold"]), gold(task()), TOOLS).problems
    assert any("projection:" in p and "kopa_convert" in p for p in out)


def test_check_command_refuses_a_defective_task_against_the_sandbox(tmp_path: Any) -> None:
    bad = [
        {
            "id": "fx-typo",
            "category": "single",
            "persona": "citizen",
            "turns": ["종로구 청운로 74-11 주소의 우편번호 알려줘."],
            "tools": {"offered": ["juso_addr_link_api"]},
            "gold": [
                {
                    "id": "a",
                    "tool": "juso_addr_link_api",
                    "args": {"keyword": {"user": "종로구 청운로 74-11"}, "countPerPge": {"const": 10}},
                }
            ],
            "facts": [{"kind": "text", "from": "a", "field": "zipNo"}],
        }
    ]
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(bad, allow_unicode=True), encoding="utf-8")
    result = runner.invoke(app, ["check", "--tasks", str(tmp_path)])
    assert result.exit_code == 1
    assert "fx-typo: spec: step 'a' (juso_addr_link_api) sends 'countPerPge'" in result.output
    doc = json.loads(result.stdout.strip().splitlines()[-1])
    assert doc["refused"] == 1 and doc["refusals"] == {"spec": 1}


@pytest.mark.parametrize("minimum", [60])
def test_the_shipped_tasks_are_solvable_by_construction(minimum: int) -> None:
    result = runner.invoke(app, ["check"])
    assert result.exit_code == 0, result.output[-2000:]
    doc = json.loads(result.stdout.strip().splitlines()[-1])
    shipped = len(load_tasks())
    assert doc["tasks"] == doc["valid"] == shipped and doc["refused"] == 0 and doc["three_plus_calls"] >= minimum
    assert set(doc["by_category"]) == {
        "single",
        "chain",
        "fan_in",
        "parallel",
        "conditional",
        "error",
        "clarification",
        "irrelevance",
    }
