"""Training on trajectories: datasets (split by tool sequence, Json features, length reports), the tool
environment (live through the execution layer against an in-process sandbox, and replay), and `kopa train sft`
and `kopa train grpo` end to end on a tiny model built here (CPU, no downloads)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.train import app
from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from sandbox.inprocess import sandbox_mode
from sandbox.keys import DEMO_KEY
from synthesis.engine import synthesize
from synthesis.export import sequence_key
from synthesis.records import SynthesisResult, Trajectory
from tests.support.helpers import copy_store
from training import datasets
from training.environment import LiveBackend, ReplayBackend, environment_factories, secret_values
from training.rewards import REWARDS
from training.tiny import build_tiny, check_template, conversation_texts, load_tokenizer

if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    import trl  # noqa: F401  (under CI the train extra is installed: a missing trl fails here instead of skipping)
else:
    pytest.importorskip("trl")
os.environ.update({"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "TRL_EXPERIMENTAL_SILENCE": "1"})


def compact(r: Trajectory) -> Trajectory:
    """The record with only its chain's tools and one-line descriptions (short sequences for a CPU test)."""
    chain = {s.tool for s in r.steps}
    tools = []
    for t in r.tools:
        if t["function"]["name"] not in chain:
            continue
        fn = t["function"]
        params = fn["parameters"]
        props = {
            k: {"type": v.get("type", "string"), "description": str(v.get("description", k))[:20]}
            for k, v in params.get("properties", {}).items()
            if k in params.get("required", [])
        }
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": fn["name"],
                    "description": fn["description"][:30],
                    "parameters": {"type": "object", "properties": props, "required": list(props)},
                },
            }
        )
    steps = [
        s.model_copy(update={"response": s.response.model_copy(update={"items": s.response.items[:1]})})
        for s in r.steps
    ]
    return r.model_copy(update={"tools": tools, "steps": steps, "distractors": []})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, verified_catalog: Path) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("train")
    settings, transport = sandbox_mode(Settings())
    store = copy_store(verified_catalog, root / "g.sqlite3")

    async def go() -> SynthesisResult:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport)
        try:
            return await synthesize(store, settings, ex, count=24, shapes=("single",), extras={})
        finally:
            await ex.aclose()

    records = [compact(r) for r in asyncio.run(go())["records"]]
    (root / "records.jsonl").write_text(
        "".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    rows = [datasets.sft_row(r) for r in records]
    model = build_tiny(root / "tiny", conversation_texts(rows), vocab_size=1024, max_positions=2048)
    yield {
        "root": root,
        "records": records,
        "store": store,
        "settings": settings,
        "transport": transport,
        "model": model,
    }
    store.close()


def test_the_tiny_tokenizer_is_trained_on_the_text_the_model_reads(world: dict[str, Any]) -> None:
    """The tokenizer learns the rendered conversations, the chat template's fixed tool instructions included: they
    come out in a few word-sized tokens, not one token a character (about 200 tokens of every prompt)."""
    tok = load_tokenizer(world["model"])
    row = datasets.sft_row(world["records"][0])
    text = str(tok.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False))
    instructions = text[text.index("# Tools") : text.index("<tools>\n")]
    assert "You may call one or more functions" in instructions
    assert len(tok(instructions)["input_ids"]) < len(instructions) / 3


def test_datasets_split_by_sequence_keep_keys_and_report_lengths(world: dict[str, Any]) -> None:
    records: list[Trajectory] = world["records"]
    train, evaluation = datasets.split_by_sequence(records, 0.3, seed=1)
    assert train and evaluation and len(train) + len(evaluation) == len(records)
    assert not {sequence_key(r) for r in train} & {sequence_key(r) for r in evaluation}
    assert datasets.split_by_sequence(records, 0.3, seed=1) == (train, evaluation)
    ds = datasets.to_dataset([datasets.grpo_row(r) for r in train], "grpo")
    first = ds[0]
    calls = first["gold_calls"]
    assert calls == datasets.gold_calls(train[0]) and first["trajectory_id"] == train[0].id
    assert "tool_calls" not in first["prompt"][1] and set(calls[0]["arguments"]) == set(train[0].steps[0].arguments)
    sft = datasets.to_dataset([datasets.sft_row(r) for r in train], "sft")
    assert all("name" not in m for m in sft[0]["messages"] if m["role"] != "tool")
    # facts: what the recorded answer states, checked by the benchmark's checker
    assert any(datasets.facts_of(r) for r in records)
    # the recorded rollout (its calls, their results, the answer) earns the answer reward; the bare answer, with
    # no executed call behind it, earns nothing
    # a record about one row (compact() keeps one row per step, so a list answer's other names are cut away)
    one = next((r for r in train if r.question is not None and r.question.asks == ["row"]), train[0])
    rollout = [m for m in datasets.sft_row(one)["messages"] if m["role"] not in ("system", "user")]
    facts = [datasets.facts_of(one)]
    assert REWARDS["answer_facts"]([[]], [rollout], facts=facts) == [1.0] or not facts[0]
    assert REWARDS["answer_facts"]([[]], [[{"role": "assistant", "content": train[0].final_answer}]], facts=facts) == [
        0.0
    ]
    tok = load_tokenizer(world["model"])
    assert check_template(tok) == {"tool_calling": True, "prefix_preserving": True}
    by_id = {r.id: r for r in records}
    kept, report = datasets.measure([datasets.sft_row(r) for r in train], by_id, tok, "sft", 4096)
    assert len(kept) == len(train) and report.longest < 4096 and not report.over
    with pytest.raises(datasets.DatasetError, match="exceed 16 tokens"):
        datasets.measure([datasets.sft_row(r) for r in train], by_id, tok, "sft", 16)
    dropped, report = datasets.measure([datasets.sft_row(r) for r in train], by_id, tok, "sft", 16, "drop")
    assert dropped == [] and len(report.over) == len(train)


def test_environment_executes_live_and_replays(world: dict[str, Any]) -> None:
    records: list[Trajectory] = world["records"]
    store: EmbeddedStore = world["store"]
    settings: Settings = world["settings"]
    apis = store.list_apis(limit=100)[0]
    live = LiveBackend(
        settings,
        {t.name: t for t in store.all_tools()},
        {a.id: a for a in apis},
        transport=world["transport"],
        economy=MemoryEconomy(),
    )
    rec = records[0]
    step = rec.steps[0]
    try:
        classes, counter = environment_factories(records, live, max_calls=2, secrets=secret_values(settings, apis))
        env = classes[datasets.toolset_key(rec)]()
        env.reset(trajectory_id=rec.id)
        out = getattr(env, step.tool)(**step.arguments)
        doc = json.loads(out)
        assert doc["rows"] == step.response.rows and DEMO_KEY not in out
        assert json.loads(getattr(env, step.tool)(**{**step.arguments, "unknown": "x"})) != {}
        assert "limit of 2" in json.loads(getattr(env, step.tool)(**step.arguments))["error"]
        assert counter[step.tool] == 2 and next(c["ok"] for c in env.calls) is True
    finally:
        live.close()
    replay = ReplayBackend(records)
    classes, _ = environment_factories(records, replay)
    env = classes[datasets.toolset_key(rec)]()
    env.reset(trajectory_id=rec.id)
    assert json.loads(getattr(env, step.tool)(**step.arguments))["items"] == step.response.items
    assert "replay" in json.loads(getattr(env, step.tool)(**{k: "0" for k in step.arguments}))["error"]


def _invoke(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
def test_kopa_train_sft_then_grpo_replay_and_live(world: dict[str, Any]) -> None:
    root: Path = world["root"]
    data = str(root / "records.jsonl")
    common = [
        "--set",
        "lora.enabled=false",
        "--set",
        "train.logging_steps=1",
        "--set",
        "data.eval_fraction=0.2",
        "--set",
        "sft.max_length=2048",
        "--set",
        "grpo.max_prompt_length=1536",
    ]
    sft = _invoke(
        "sft",
        "--model",
        str(world["model"]),
        "--data",
        data,
        "--out",
        str(root / "sft"),
        "--steps",
        "6",
        "--set",
        "train.learning_rate=3e-3",
        "--set",
        "train.save_steps=3",
        *common,
    )
    run = root / "sft"
    assert sft["steps"] == 6 and sft["train_loss"] > 0
    for name in (
        "config.yaml",
        "manifest.json",
        "report.md",
        "curves.png",
        "model/config.json",
        "checkpoints/checkpoint-6",
    ):
        assert (run / name).exists(), name
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["sequence_overlap"] == 0 and manifest["train"] + manifest["eval"] == len(world["records"])
    losses = [x["loss"] for x in D_log(run) if "loss" in x]
    # one step's loss is one batch's: the halves' means say whether training lowered it, whatever the batches
    assert len(losses) == 6 and sum(losses[3:]) < sum(losses[:3]), losses

    grpo_common = [
        "--steps",
        "2",
        "--set",
        "grpo.num_generations=4",
        "--set",
        "train.per_device_train_batch_size=4",
        "--set",
        "grpo.max_completion_length=96",
        "--set",
        "grpo.temperature=1.2",
        "--set",
        "grpo.max_tool_calling_iterations=2",
        "--set",
        "train.save_steps=2",
        *common,
    ]
    replay = _invoke("grpo", "--model", str(run / "model"), "--data", data, "--out", str(root / "grpo"), *grpo_common)
    assert replay["steps"] == 2 and replay["rewards_logged"] >= 1
    comps = [json.loads(x) for x in (root / "grpo" / "rewards.jsonl").read_text().splitlines()]
    weighted = {n for n in REWARDS if n not in ("refuted_links",)}
    assert weighted <= set(comps[0]), set(comps[0])
    assert json.loads((root / "grpo" / "tool_calls.json").read_text())["calls_per_rollout"]
    # trl's share of rollouts cut at the completion budget reaches the summary (96 tokens cut most of them)
    assert 0 <= replay["health"]["clipped_ratio_mean"] <= replay["health"]["clipped_ratio_max"] <= 1
    assert all("clipped_ratio" in c for c in comps)

    live = _invoke(
        "grpo",
        "--model",
        str(run / "model"),
        "--data",
        data,
        "--out",
        str(root / "grpo-live"),
        "--set",
        "grpo.environment=live",
        "--set",
        "grpo.sandbox=true",
        "--set",
        f"data.graph={root / 'g.sqlite3'}",
        *grpo_common,
    )
    assert live["environment"] == "live" and live["steps"] == 2
    assert (root / "grpo-live" / "report.md").exists()


def D_log(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "log.jsonl").read_text().splitlines()]


def test_bad_config_is_one_line_with_a_reason(tmp_path: Path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("model: x\noutput: y\ntrain: {max_steps: 0}\n")
    result = CliRunner().invoke(app, ["sft", "--config", str(bad)])
    assert result.exit_code == 2 and "train.max_steps" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(
        app, ["grpo", "--model", str(tmp_path), "--out", str(tmp_path / "o"), "--data", str(tmp_path / "none.jsonl")]
    )
    assert result.exit_code == 2 and "no trajectory records" in result.output
