"""GRPO health (training/run.py `grpo_health`): a run whose every logged step had no reward spread within any group
(trl's frac_reward_zero_std = 1: every advantage 0) learnt nothing, and its report.md says so first."""

from __future__ import annotations

import json
from pathlib import Path

from training.run import grpo_health, health_warnings, write_report


def test_a_run_without_reward_spread_learnt_nothing() -> None:
    log = [{"step": s, "reward": 0.0, "reward_std": 0.0, "frac_reward_zero_std": 1.0} for s in (1, 2, 3)]
    health = grpo_health([{"step": 0, "loss": 1.0}, *log])
    assert health["learnt_nothing"] is True and health["steps_logged"] == 3
    assert health["steps_without_reward_spread"] == 3 and "learnt nothing" in health["warning"]


def test_one_step_with_spread_is_a_run_that_learnt() -> None:
    log = [
        {"step": 1, "reward_std": 0.0, "frac_reward_zero_std": 1.0},
        {"step": 2, "reward_std": 0.5, "frac_reward_zero_std": 0.5},
    ]
    health = grpo_health(log)
    assert health["learnt_nothing"] is False and "warning" not in health
    assert health["frac_reward_zero_std_mean"] == 0.75 and health["reward_std_mean"] == 0.25
    assert health["steps_without_reward_spread"] == 1


def test_no_logged_step_is_unknown_not_healthy() -> None:
    assert grpo_health([{"step": 1, "loss": 0.3}]) == {"steps_logged": 0, "learnt_nothing": None}


def test_the_report_warns_before_anything_else(tmp_path: Path) -> None:
    log = [{"step": 1, "reward": 0.0, "reward_std": 0.0, "frac_reward_zero_std": 1.0}]
    (tmp_path / "log.jsonl").write_text("".join(f"{json.dumps(e)}\n" for e in log), encoding="utf-8")
    text = write_report(tmp_path, "grpo", {"kind": "grpo", "health": grpo_health(log)}).read_text(encoding="utf-8")
    assert text.splitlines()[2].startswith("**Warning:** GRPO learnt nothing")
    assert "| frac_reward_zero_std | 1.0000 | 1.0000 |" in text
    healthy = write_report(tmp_path, "grpo", {"kind": "grpo", "health": {"learnt_nothing": False}})
    assert "Warning" not in healthy.read_text(encoding="utf-8")


def test_a_run_whose_rollouts_hit_the_budget_says_so_and_a_few_cut_do_not() -> None:
    """trl's completions/clipped_ratio (rollouts cut at max_completion_length): the mean and worst share per logged
    step; above 10 % a warning names the budget, and report.md carries it after the learnt-nothing warning."""
    log = [
        {"step": 1, "reward_std": 0.5, "frac_reward_zero_std": 0.5, "completions/clipped_ratio": 0.25},
        {"step": 2, "reward_std": 0.5, "frac_reward_zero_std": 0.5, "completions/clipped_ratio": 0.0},
    ]
    health = grpo_health(log, 1024)
    assert health["clipped_ratio_mean"] == 0.125 and health["clipped_ratio_max"] == 0.25
    assert health["clipped_warning"].startswith("12% of GRPO rollouts (mean of 2 logged steps, worst 25%) hit")
    assert "grpo.max_completion_length 1024 tokens" in health["clipped_warning"]
    assert health_warnings(health) == [health["clipped_warning"]]
    few = grpo_health([{**log[0], "completions/clipped_ratio": 0.1}, log[1]], 1024)
    assert few["clipped_ratio_mean"] == 0.05 and "clipped_warning" not in few and health_warnings(few) == []
    assert "clipped_ratio_mean" not in grpo_health([{"step": 1, "frac_reward_zero_std": 0.5}])
    # without reward figures the share is still reported
    only = grpo_health([{"step": 1, "completions/clipped_ratio": 1.0}])
    assert only["steps_logged"] == 0 and only["clipped_ratio_mean"] == 1.0 and "clipped_warning" in only


def test_the_report_carries_both_warnings(tmp_path: Path) -> None:
    log = [{"step": 1, "reward": 0.0, "reward_std": 0.0, "frac_reward_zero_std": 1.0, "completions/clipped_ratio": 0.5}]
    (tmp_path / "log.jsonl").write_text("".join(f"{json.dumps(e)}\n" for e in log), encoding="utf-8")
    report = write_report(tmp_path, "grpo", {"kind": "grpo", "health": grpo_health(log, 6144)})
    text = report.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[2].startswith("**Warning:** GRPO learnt nothing") and lines[3] == ""
    assert lines[4].startswith("**Warning:** 50% of GRPO rollouts") and "6144 tokens" in lines[4]
    assert "| completions/clipped_ratio | 0.5000 | 0.5000 |" in text
