"""The held-out-provider arm of the experiment: `data.heldout_provider` (training/datasets.py `without_provider`)
leaves no call, attempt or offer of the provider's tools in the data a run trains on, and refuses a provider the
data does not have in one line; `kopa bench compare --heldout-provider` splits every model's pass rates into the
tasks that call that provider and the others."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bench.compare import compare_all, provider_classes
from bench.run import BenchError
from bench.tasks import load_tasks
from synthesis.records import FailedAttempt, StepResponse, Trajectory, TrajectoryStep
from tests.test_compare_stats import _results
from training.datasets import DatasetError, record_providers, sft_row, without_provider


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {"type": "object"}}}


def _record(rid: str, calls: list[str], offered: list[str], **extra: Any) -> Trajectory:
    steps = [
        TrajectoryStep(
            step=i,
            tool=t,
            arguments={"q": "x"},
            provenance={"q": {"kind": "slot"}},
            response=StepResponse(rows=1, items=[{"v": 1}]),
        )
        for i, t in enumerate(calls, 1)
    ]
    return Trajectory(
        id=rid,
        request="요청",
        shape="single",
        n_steps=len(calls),
        tools=[_tool(t) for t in offered],
        distractors=[t for t in offered if t not in calls],
        steps=steps,
        final_answer="답",
        **extra,
    )


AIR, AIR2, KMA, TOUR = "airkorea_get_msrstn_list", "airkorea_get_tm_stdr_crdnt", "kma_get_mid_ta", "tour_detail_common2"
RECORDS = [
    _record("calls-it", [AIR, KMA], [AIR, KMA, TOUR]),
    _record("offers-it", [KMA], [KMA, AIR2, TOUR]),
    _record("only-it", [], [AIR, AIR2], kind="irrelevance"),
    _record(
        "tried-it",
        [KMA],
        [KMA, TOUR],
        kind="error_recovery",
        attempts=[FailedAttempt(before_step=1, tool=AIR, arguments={}, error="bad")],
    ),
    _record("without-it", [TOUR], [TOUR, KMA]),
]


def test_the_held_out_data_never_calls_or_offers_the_provider() -> None:
    kept, report = without_provider(RECORDS, "airkorea")
    assert [r.id for r in kept] == ["offers-it", "without-it"]
    assert all("airkorea" not in record_providers(r) for r in kept)
    offers = next(r for r in kept if r.id == "offers-it")
    assert [t["function"]["name"] for t in offers.tools] == [KMA, TOUR] and offers.distractors == [TOUR]
    assert kept[1] is RECORDS[4]  # a record without the provider is left as it is
    # what training renders from them: no tool spec, call or name of the provider anywhere in the SFT rows
    assert not any("airkorea" in json.dumps(sft_row(r), ensure_ascii=False) for r in kept)
    assert report == {
        "provider": "airkorea",
        "records": 5,
        "kept": 2,
        "dropped_calling": 2,
        "dropped_offering_only_it": 1,
        "offers_stripped": 1,
    }
    assert without_provider(RECORDS, "tour")[1]["dropped_calling"] == 1  # the rule is the provider's, any provider


def test_an_unknown_provider_is_refused_in_one_line() -> None:
    with pytest.raises(DatasetError) as err:
        without_provider(RECORDS, "airkorae")
    assert err.value.detail == (
        "data.heldout_provider 'airkorae' is no provider of the data's tools "
        "(they are airkorea, kma, tour: a tool name's prefix)"
    )
    with pytest.raises(DatasetError, match="nothing is left"):
        without_provider(RECORDS[:1], "kma")


def test_kopa_train_refuses_an_unknown_provider_before_loading_a_model(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from cli.train import app

    data = tmp_path / "records.jsonl"
    data.write_text("".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in RECORDS), encoding="utf-8")
    args = ["--model", str(tmp_path / "no-model"), "--data", str(data), "--out", str(tmp_path / "run")]
    result = CliRunner().invoke(app, ["sft", *args, "--set", "data.heldout_provider=nope"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "'nope' is no provider of the data's tools" in lines[0], result.output


def test_bench_tasks_split_by_the_held_out_provider() -> None:
    tasks = load_tasks()
    classes = provider_classes(tasks, "airkorea")
    assert classes["chain-air-hyehwa-037"] == "uses airkorea" and classes["clarify-air-002"] == "uses airkorea"
    assert classes["single-tour-gyeongbokgung-012"] == "other providers"
    assert {classes[t.id] for t in tasks if not t.gold} == {"no calls"}
    # a chain through another provider into airkorea counts as using it
    assert classes["chain-air-seonhwa-011"] == "uses airkorea"
    with pytest.raises(BenchError, match="no KOPA-Bench task calls a tool of provider 'airkorae'"):
        provider_classes(tasks, "airkorae")


def test_compare_reports_every_model_on_the_held_out_provider_and_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.compare as compare

    monkeypatch.setattr(compare, "compare_runs", lambda paths: "")
    kinds = ["uses p", "uses p", "other providers", "other providers", "no calls"]
    monkeypatch.setattr(compare, "provider_classes", lambda tasks, provider: {f"t{i}": k for i, k in enumerate(kinds)})
    passed = {
        "grpo-no-p-9b-s0": [1, 0, 1, 1, 1],
        "grpo-edge-9b-s0": [1, 1, 1, 0, 0],
        "grpo-edge-9b-s1": [1, 0, 1, 1, 0],
    }
    runs = [_results(tmp_path / name, name, tasks) for name, tasks in passed.items()]
    text = compare_all(runs, heldout_provider="p")
    table = text.split("## Held-out provider p", 1)[1]
    rows = {line.split(" | ")[0]: line for line in table.splitlines() if line[:2] == "| "}
    assert rows["| model (seeds pooled)"].endswith("| uses p | other providers | no calls |")
    assert rows["| grpo-no-p-9b"] == "| grpo-no-p-9b | live | 50.0% (2) | 100.0% (2) | 100.0% (1) |"
    # seeds pooled per task first: t1 0.5 -> 75 % on the provider's tasks; t3 0.5 -> 75 % on the others
    assert rows["| grpo-edge-9b"] == "| grpo-edge-9b | live | 75.0% (2) | 75.0% (2) | 0.0% (1) |"
    assert "Held-out provider" not in compare_all(runs)
