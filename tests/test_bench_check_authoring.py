"""Authoring tasks from bench/TASKS.md: `kopa bench check` scores the oracle's answer and refuses a
task it fails, names the closest tool for an unknown one, refuses a task with a schema error while checking the
others and counts tasks (not problem lines); `kopa bench tools` lists the registry; a `from:` value fills an array
parameter."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bench.gold import KST, resolve_args
from bench.tasks import Task, TaskError, check_tools, load_task_report, load_tasks, unknown_tool
from cli.bench import app, check_summary
from execution.result import CallResult, Outcome

runner = CliRunner()
NOW = datetime(2026, 10, 15, 14, 20, tzinfo=KST)

GOOD: dict[str, Any] = {
    "id": "ok-zip",
    "category": "single",
    "persona": "citizen",
    "turns": ["종로구 청운로 74-11 주소의 우편번호 알려줘."],
    "tools": {"offered": ["juso_addr_link_api"]},
    "gold": [{"id": "a", "tool": "juso_addr_link_api", "args": {"keyword": {"user": "종로구 청운로 74-11"}}}],
    "facts": [{"kind": "name", "from": "a", "field": "zipNo"}],
}
MIDTA_OLD: dict[str, Any] = {
    "id": "midta-old",
    "category": "error",
    "persona": "analyst",
    "turns": ["그저께 아침 6시에 발표된 서울 중기기온 예보 자료 좀 다시 조회해줘."],
    "tools": {"offered": ["kma_get_mid_ta"], "distractors": 3},
    "gold": [
        {
            "id": "mid",
            "tool": "kma_get_mid_ta",
            "args": {
                "regId": {"const": "11B10101"},
                "tmFc": {"date": "today", "format": "%Y%m%d0600", "offset_days": -2},
            },
            "expect": "error",
        }
    ],
    "facts": [{"kind": "text", "value": "1일", "label": "최근 1일만 제공"}],
}
MAKER: dict[str, Any] = {
    "id": "maker-status",
    "category": "chain",
    "persona": "civil_servant",
    "turns": ["솔빛로라타딘서방정 만드는 제약회사가 지금 정상적으로 사업 중인지 국세청 상태 확인해줘."],
    "tools": {"offered": ["mfds_get_drb_easy_drug_list", "nts_status"], "distractors": 3},
    "gold": [
        {"id": "drug", "tool": "mfds_get_drb_easy_drug_list", "args": {"itemName": {"user": "솔빛로라타딘서방정"}}},
        {"id": "st", "tool": "nts_status", "args": {"b_no": {"from": "drug", "field": "bizrno"}}},
    ],
    "facts": [
        {"kind": "name", "from": "drug", "field": "entpName"},
        {"kind": "name", "from": "st", "field": "b_stt"},
    ],
}


def write(folder: Path, tasks: list[dict[str, Any]], name: str = "t.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(yaml.safe_dump(tasks, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return folder


def check(folder: Path) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, ["check", "--tasks", str(folder)])
    return result.exit_code, json.loads(result.stdout.strip().splitlines()[-1]), result.output


def with_(base: dict[str, Any], **over: Any) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps({**base, **over}))
    return copied


# ---------------------------------------------------------------------------------------------- 1: the oracle


def test_a_task_the_oracle_fails_is_refused_and_the_label_fixes_it(tmp_path: Path) -> None:
    unlabelled = with_(MIDTA_OLD, facts=[{"kind": "text", "value": "1일"}])
    rc, doc, out = check(write(tmp_path / "bad", [unlabelled]))
    assert rc == 1
    assert doc["refused"] == 1 and doc["valid"] == 0 and doc["refusals"] == {"oracle": 1}
    assert "refused task midta-old: oracle: the oracle's answer" in out and "text:1일" in out
    rc, doc, _ = check(write(tmp_path / "good", [MIDTA_OLD]))
    assert rc == 0 and doc["valid"] == 1 and doc["refused"] == 0


# ---------------------------------------------------------------------------------------------- 3: unknown tools


def test_an_unknown_tool_names_the_closest_one() -> None:
    registry = {"kma_ultra_srt_ncst", "kma_get_vilage_fcst", "juso_addr_link_api"}
    assert (
        unknown_tool("kma_ultra_ncst", registry) == "unknown tool 'kma_ultra_ncst'; did you mean 'kma_ultra_srt_ncst'?"
    )
    assert "did you mean" not in unknown_tool("zzzz", registry)
    t = Task.model_validate(
        with_(GOOD, tools={"offered": ["juso_addr_link_ap"]}, gold=[{**GOOD["gold"][0], "tool": "juso_addr_link_ap"}])
    )
    (err,) = check_tools([t], registry)
    assert err.endswith("task ok-zip: tools: unknown tool 'juso_addr_link_ap'; did you mean 'juso_addr_link_api'?")


def test_the_check_command_suggests_the_registered_tool(tmp_path: Path) -> None:
    typo = with_(GOOD, id="typo", tools={"offered": ["juso_addr_link_api"]}, must_not_call=["kma_ultra_ncst"])
    rc, doc, out = check(write(tmp_path, [typo]))
    assert rc == 1 and doc["invalid"] == 1 and doc["valid"] == 0
    assert "unknown tool 'kma_ultra_ncst'; did you mean 'kma_get_ultra_srt_ncst'?" in out


# ---------------------------------------------------------------------------------------------- 4: one bad task


def test_a_schema_error_refuses_its_task_and_the_others_are_checked(tmp_path: Path) -> None:
    broken = with_(GOOD, id="broken", persona="robot")
    rc, doc, out = check(write(tmp_path, [broken, GOOD]))
    assert rc != 0
    assert doc["tasks"] == 2 and doc["valid"] == 1 and doc["invalid"] == 1 and doc["refused"] == 0
    assert "invalid " in out and "task broken: persona:" in out


def test_an_unreadable_file_counts_once_and_other_files_are_checked(tmp_path: Path) -> None:
    write(tmp_path, [GOOD])
    (tmp_path / "broken.yaml").write_text("- id: [unclosed\n", encoding="utf-8")
    (tmp_path / "notalist.yaml").write_text("id: x\n", encoding="utf-8")
    rc, doc, out = check(tmp_path)
    assert rc == 1 and doc["tasks"] == 3 and doc["valid"] == 1 and doc["invalid"] == 2
    assert "broken.yaml: not valid YAML" in out and "holds a YAML list" in out


def test_the_loader_report_keeps_the_good_tasks_and_load_tasks_stays_strict(tmp_path: Path) -> None:
    write(tmp_path, [with_(GOOD, id="broken", turns=[]), GOOD, with_(GOOD)], "a.yaml")
    tasks, invalid = load_task_report(tmp_path)
    assert [t.id for t in tasks] == ["ok-zip"]
    assert [i.id for i in invalid] == ["broken", "ok-zip"]
    assert "turns" in invalid[0].message and "duplicate" in invalid[1].message
    with pytest.raises(TaskError, match="task broken: turns"):
        load_tasks(tmp_path)


def test_the_summary_counts_tasks_not_problem_lines(tmp_path: Path) -> None:
    two_unknown = with_(GOOD, id="two-unknown", must_not_call=["kma_ultra_ncst", "nts_statu"])
    two_spec = with_(
        GOOD,
        id="two-spec",
        gold=[
            {
                "id": "a",
                "tool": "juso_addr_link_api",
                "args": {
                    "keyword": {"user": "종로구 청운로 74-11"},
                    "countPerPge": {"const": 10},
                    "curPage": {"const": 1},
                },
            }
        ],
    )
    rc, doc, out = check(write(tmp_path, [two_unknown, two_spec, GOOD]))
    assert out.count("unknown tool") == 2 and out.count(": spec: ") == 2
    assert rc == 1
    assert doc["tasks"] == 3 and doc["valid"] == 1 and doc["invalid"] == 1 and doc["refused"] == 1
    assert doc["refusals"] == {"spec": 1}
    assert check_summary([], {}, ["f: task a: tools: x", "f: task a: tools: y"])["invalid"] == 1


# ---------------------------------------------------------------------------------------------- 2: bench tools


def test_bench_tools_lists_names_with_their_api() -> None:
    result = runner.invoke(app, ["tools"])
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("nts_status "))
    assert "api_odcloud_kr_api_nts_businessman_v1" in line and "사업자등록 상태조회" in line
    rows = json.loads(runner.invoke(app, ["tools", "--json"]).stdout)
    by_name = {r["name"]: r for r in rows}
    assert by_name["kopa_convert_to_kma_grid"]["api"] == "kopa-convert"
    assert by_name["kma_get_ultra_srt_ncst"]["description"]
    assert {"juso_addr_link_api", "kma_get_vilage_fcst", "nts_status"} <= set(by_name)


# ---------------------------------------------------------------------------------------------- 5: arrays


ARRAY_TOOL = {
    "type": "function",
    "function": {
        "name": "nts_status",
        "parameters": {
            "type": "object",
            "properties": {"b_no": {"type": "array", "items": {"type": "string"}}, "memo": {"type": "string"}},
        },
    },
}


def test_a_from_value_into_an_array_parameter_is_wrapped() -> None:
    t = Task.model_validate(MAKER)
    step = t.gold[1]
    results = {"drug": CallResult(Outcome.OK, [{"bizrno": "7418899539", "entpName": "솔빛제약"}])}
    assert resolve_args(step, results, NOW, ARRAY_TOOL) == {"b_no": ["7418899539"]}
    assert resolve_args(step, results, NOW) == {"b_no": "7418899539"}  # no schema: as before
    wrapped = step.model_copy(
        update={"args": {"b_no": step.args["b_no"].model_copy(update={"transform": {"kind": "wrap_list"}})}}
    )
    assert resolve_args(wrapped, results, NOW, ARRAY_TOOL) == {"b_no": ["7418899539"]}  # never twice
    memo = step.model_copy(update={"args": {"memo": step.args["b_no"]}})
    assert resolve_args(memo, results, NOW, ARRAY_TOOL) == {"memo": "7418899539"}  # a string stays a string


def test_the_check_accepts_a_from_value_into_an_array_parameter(tmp_path: Path) -> None:
    rc, doc, out = check(write(tmp_path, [MAKER]))
    assert rc == 0, out
    assert doc["valid"] == 1 and doc["refused"] == 0
