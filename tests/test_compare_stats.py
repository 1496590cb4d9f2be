"""The experiment's comparison statistics (bench/compare.py): seeds pooled as mean ± spread, and the paired bootstrap
over tasks that decides "nearly matches" (non-inferiority within a stated margin)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench.compare import MARGIN, compare_all, mean_spread, paired_bootstrap, seed_group, task_pass_rates
from bench.run import BenchError


def rates(passed: list[int]) -> dict[str, float]:
    return {f"t{i}": float(p) for i, p in enumerate(passed)}


def test_seed_group_strips_only_a_trailing_seed() -> None:
    assert seed_group("grpo-edge-9b-s2") == "grpo-edge-9b"
    assert seed_group("untuned-27b") == "untuned-27b"
    assert seed_group("model-s2-large") == "model-s2-large"


def test_mean_spread_is_the_sample_sd() -> None:
    stats = mean_spread([0.2, 0.4, 0.6])
    assert stats["n"] == 3 and stats["mean"] == pytest.approx(0.4)
    assert stats["sd"] == pytest.approx(0.2) and (stats["min"], stats["max"]) == (0.2, 0.6)
    assert mean_spread([0.5])["sd"] == 0.0


def test_equal_models_are_non_inferior_but_not_better() -> None:
    reference = rates([1, 0] * 50)
    b = paired_bootstrap(dict(reference), reference)
    assert b["difference"] == 0.0 and b["ci"] == (0.0, 0.0)
    assert b["non_inferior"] and not b["better"] and b["margin"] == MARGIN


def test_a_model_ten_points_worse_is_not_non_inferior_at_five() -> None:
    reference = rates([1] * 60 + [0] * 40)
    model = rates([1] * 50 + [0] * 50)  # the same tasks, ten of the reference's passes lost
    b = paired_bootstrap(model, reference, margin=0.05)
    assert b["difference"] == pytest.approx(-0.10)
    assert b["ci"][0] < -0.05 and not b["non_inferior"]
    assert paired_bootstrap(model, reference, margin=0.25)["non_inferior"]  # the margin decides, and is stated


def test_pairing_removes_the_task_difficulty_variance() -> None:
    """One task of 200 lost: unpaired intervals of two 50 % rates would span about ±14 points; paired, the interval
    is within a point of the observed difference, so the model is non-inferior at 5 points."""
    reference = rates([1, 0] * 100)
    model = dict(reference, t0=0.0)
    b = paired_bootstrap(model, reference, seed=3)
    assert b["difference"] == pytest.approx(-0.005)
    assert -0.02 <= b["ci"][0] <= b["ci"][1] <= 0.0 and b["non_inferior"]


def test_better_needs_the_whole_interval_above_zero() -> None:
    reference = rates([0] * 100)
    assert paired_bootstrap(rates([1] * 30 + [0] * 70), reference)["better"]


def test_only_shared_tasks_are_paired_and_none_is_an_error() -> None:
    b = paired_bootstrap({"a": 1.0, "b": 0.0, "x": 1.0}, {"a": 1.0, "b": 1.0, "y": 0.0})
    assert b["tasks"] == 2 and b["difference"] == pytest.approx(-0.5)
    with pytest.raises(BenchError):
        paired_bootstrap({"a": 1.0}, {"b": 1.0})


def _results(folder: Path, model: str, passed: list[int], *, mode: str = "live", trials: int = 1) -> Path:
    scored = [{"task": f"t{i}", "passed": bool(p), "trial": n} for i, p in enumerate(passed) for n in range(trials)]
    rate = sum(passed) / len(passed)
    doc: dict[str, Any] = {
        "run": {"agent": f"openai:{model}", "model": {"model": model}, "mode": mode, "task_set_hash": "h"},
        "scores": {"k": 1, "overall": {"pass_hat_k": rate, "pass_at_k": rate}},
        "scored": scored,
    }
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


def test_task_pass_rates_average_the_trials(tmp_path: Path) -> None:
    doc = {"scored": [{"task": "a", "passed": True}, {"task": "a", "passed": False}, {"task": "b", "passed": True}]}
    assert task_pass_rates(doc) == {"a": 0.5, "b": 1.0}


def test_compare_pools_seeds_and_tests_each_model_against_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.compare as compare

    monkeypatch.setattr(compare, "compare_runs", lambda paths: "")  # the detail tables are tested elsewhere
    runs = [
        _results(tmp_path / "a0", "grpo-edge-9b-s0", [1] * 30 + [0] * 10),
        _results(tmp_path / "a1", "grpo-edge-9b-s1", [1] * 28 + [0] * 12),
        _results(tmp_path / "ref", "untuned-27b", [1] * 28 + [0] * 12),
        _results(tmp_path / "weak", "untuned-9b", [1] * 8 + [0] * 32),
    ]
    text = compare_all(runs, reference="untuned-27b")
    assert "| grpo-edge-9b | 72.5 ± 3.5% (n=2, 70.0-75.0) | – |" in text
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| ") and "points" in line}
    assert rows["| grpo-edge-9b"].endswith("| yes |"), rows
    assert rows["| untuned-9b"].endswith("| no |"), rows
    assert "untuned-27b" not in rows
    with pytest.raises(BenchError, match="reference"):
        compare_all(runs, reference="untuned-70b")


def test_overlap_classes_split_tasks_by_what_the_training_data_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.overlap as overlap
    from bench.tasks import load_tasks

    tasks = load_tasks()
    chain = next(t for t in tasks if t.category == "chain" and len({s.tool for s in t.gold}) > 1)
    single = next(t for t in tasks if t.category == "single" and t.gold[0].tool not in {s.tool for s in chain.gold})

    def records(*sequences: list[str]) -> None:
        rows = [SimpleNamespace(steps=[SimpleNamespace(tool=tool) for tool in seq]) for seq in sequences]
        monkeypatch.setattr(overlap, "_records", lambda dataset: rows)

    records([s.tool for s in chain.gold])  # one record calls the chain's exact sequence, none the single's tool
    classes = overlap.overlap_classes(tmp_path, tasks)
    assert classes[chain.id] == "sequence seen" and classes[single.id] == "unseen"
    assert {classes[t.id] for t in tasks if not t.gold} == {"no calls"}
    records([s.tool for s in reversed(chain.gold)])  # the chain's tools in another order
    assert overlap.overlap_classes(tmp_path, [chain])[chain.id] == "tools seen"
    with pytest.raises(BenchError, match="no such dataset"):
        overlap.dataset_file(tmp_path / "none.jsonl")


def test_compare_splits_pass_rates_by_training_overlap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bench.compare as compare

    monkeypatch.setattr(compare, "compare_runs", lambda paths: "")
    classes = {"t0": "sequence seen", "t1": "sequence seen", "t2": "tools seen", "t3": "unseen", "t4": "no calls"}
    monkeypatch.setattr(compare, "overlap_classes", lambda training, tasks: classes)
    runs = [
        _results(tmp_path / "s0", "grpo-edge-9b-s0", [1, 1, 1, 0, 1]),
        _results(tmp_path / "s1", "grpo-edge-9b-s1", [1, 0, 0, 0, 1]),
        _results(tmp_path / "ref", "untuned-27b", [0, 1, 1, 1, 0]),
    ]
    text = compare_all(runs, training=tmp_path / "export")
    assert "## By overlap with the training data" in text
    rows = {line.split(" | ")[0]: line for line in text.split("## By overlap", 1)[1].splitlines() if line[:2] == "| "}
    # seeds pooled per task: t0 1.0, t1 0.5 -> 75 % over 2 sequence-seen tasks; t2 0.5; t3 0; t4 1.0
    assert rows["| grpo-edge-9b"] == "| grpo-edge-9b | live | 75.0% (2) | 50.0% (1) | 0.0% (1) | 100.0% (1) |"
    assert rows["| untuned-27b"] == "| untuned-27b | live | 50.0% (2) | 100.0% (1) | 100.0% (1) | 0.0% (1) |"
    assert "By overlap" not in compare_all(runs)
