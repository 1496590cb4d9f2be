"""What a user of `kopa train` expects: a model card in `model/` and `adapter/`, `train.report_to`
(tensorboard where installed), and fresh logs unless the run resumes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from training.card import serving_parsers, write_model_cards
from training.config import load_config, report_to
from training.run import _start
from training.tiny import chat_template


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "grpo-9b"
    cfg = load_config(None, ["chat.enable_thinking=false"], model=tmp_path / "base", output=run)
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "README.md").write_text("---\nlicense: apache-2.0\n---\n# base\n")
    _start(cfg)
    manifest = {"source": "edge/export", "sha256": "ab" * 32, "records": 16, "train": 12, "eval": 4}
    (run / "manifest.json").write_text(json.dumps(manifest))
    for name in ("model", "adapter"):
        (run / name).mkdir()
        (run / name / "chat_template.jinja").write_text(chat_template("qwen3.5"))
    return run


def test_the_model_card_states_base_data_config_rewards_figures_serving_and_licence(tmp_path: Path) -> None:
    run = _run(tmp_path)
    summary: dict[str, Any] = {
        "steps": 3,
        "device": "cpu",
        "tool_calls": 7,
        "first_reward": 0.5,
        "last_reward": 1.25,
        "health": {"frac_reward_zero_std_mean": 0.5},
        "held_out": {
            "before": {"well_formed_call_rate": 0.0, "first_tool_right": 0.0},
            "after": {"well_formed_call_rate": 0.75, "first_tool_right": 0.5, "probed": 4},
            "points": 2,
        },
    }
    written = write_model_cards(run, "grpo", summary)
    assert written == [run / "model" / "README.md", run / "adapter" / "README.md"]
    model, adapter = (p.read_text() for p in written)
    front = yaml.safe_load(model.split("---")[1])
    assert front["base_model"] == str(tmp_path / "base") and front["license"] == "apache-2.0"
    assert front["library_name"] == "transformers" and yaml.safe_load(adapter.split("---")[1])["library_name"] == "peft"
    for text in (model, adapter):
        assert '"sha256": "' + "ab" * 32 in text and '"records": 16' in text and '"train": 12' in text
        assert "| well-formed call rate | 0% | 75% |" in text and "| first tool right | 0% | 50% |" in text
        assert "| answer_facts |" in text and "7 tool calls executed" in text
        assert "--tool-call-parser qwen3_coder" in text and "--reasoning-parser qwen3" in text
        assert '{"enable_thinking": false}' in text
        assert "learning_rate:" in text  # the config, whole
    assert "--enable-lora" in adapter and "--enable-lora" not in model


def test_a_hermes_family_is_served_with_the_hermes_parser() -> None:
    assert serving_parsers(chat_template("qwen3"))["tool_call_parser"] == "hermes"
    assert serving_parsers(chat_template("qwen2.5")) == {"tool_call_parser": "hermes", "reasoning_parser": None}


def test_report_to_is_tensorboard_where_installed_else_none(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_config(None, [], model="m", output="o").train.report_to == "auto"
    installed = importlib.util.find_spec("tensorboard") is not None
    assert report_to("auto") == (["tensorboard"] if installed else [])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object() if name == "tensorboard" else None)
    assert report_to("auto") == ["tensorboard"]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert report_to("auto") == []
    assert report_to("none") == [] and report_to(["wandb", "tensorboard"]) == ["wandb", "tensorboard"]
    cfg = load_config(None, ["train.report_to=none"], model="m", output="o")
    assert cfg.train.report_to == "none"


def test_a_fresh_run_starts_its_logs_anew_and_a_resumed_one_keeps_them(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for name in ("log.jsonl", "eval.jsonl"):
        (run / name).write_text('{"step": 1}\n')
    _start(load_config(None, [], model="m", output=run))
    assert not (run / "log.jsonl").exists() and not (run / "eval.jsonl").exists()
    (run / "log.jsonl").write_text('{"step": 1}\n')
    (run / "checkpoints" / "checkpoint-1").mkdir(parents=True)
    _start(load_config(None, ["train.resume=true"], model="m", output=run))
    assert (run / "log.jsonl").read_text() == '{"step": 1}\n'
