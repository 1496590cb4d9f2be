"""A learning signal on a CPU (issue 25, item 8), with a tiny model built here (no downloads):

1. the well-formed tool-call rate (and first-tool accuracy) on held-out prompts (requests never trained on, for
   tools seen in training) before and after `kopa train sft` on single-call trajectories (`training.run.probe`);
2. a `kopa train grpo` run (replay) from the SFT checkpoint: the mean reward per step with its parts, the tool calls
   each rollout executed and the share of them that succeeded. The rewards (training.rewards) give nothing to a
   completion that executes no call, so a rising reward is a rise on completions that execute calls;
3. KOPA-Bench's single-call tasks through the local transformers adapter (the code path a real model takes),
   untrained vs SFT vs SFT+GRPO: pass^1 and the share of episodes whose first call names an offered tool.

    python -m perf.train_curves [--records 160] [--sft-steps 300] [--grpo-steps 24] [--workdir .kopa/train-curves]

Sizes, chosen so that the loop can teach within about 15 minutes on 2 cores:

* the tiny model: Qwen2 architecture, hidden size 128, 4 layers, a 2,048-token BPE vocabulary trained on the
  conversations, with every tool name one token (`training.tiny.build_tokenizer(words=...)`: Qwen2's
  pre-tokeniser cuts a tool name into up to eight pieces, too many to spell for a model this size);
* the CPU view of a record (`cpu_view`): the offered tools (the called one and its distractors) with their
  descriptions cut to 30 characters and only their required parameters, the tool result's first row; about 800
  tokens per conversation instead of 1,100-1,800. SFT rows, GRPO prompts and the held-out probes all read this
  same view (KOPA-Bench offers the registry's full specs, as it does to any model);
* SFT: learning rate 3e-3 (a randomly initialised model this small, full fine-tuning, no LoRA), batch 4, 300
  steps, conversations cut at 768 tokens (the prompt and the call fit; the tail of a long answer is cut);
  GRPO: 4 generations per prompt, 2 prompts per step, learning rate 1e-4, completions up to 96 tokens;
* one torch thread unless OMP_NUM_THREADS is set: the matrices are too small to gain from a second, and on
  shared cores a second thread stalls every step (measured: 150 SFT steps in 100 s on one, 100 in 442 s on two).

Measured with these defaults (one run, 7.5 min wall on 2 shared cores): held-out well-formed call rate 0% ->
25% after SFT (24 prompts; first tool right 25%), below the issue's 50% target. Hidden 96/3 layers at 1e-2 gave
8% after 300 steps, 128/4 at 3e-3 gave 8% after 150 steps and 8% after 500 (train loss 0.5: it memorises the
128 rows). The sandbox yields at most 160 single-call records, so more records cannot be asked for.

A model this size learns the call format and which of the offered tools a request needs, not the task: expect
the format rate to rise far more than KOPA-Bench. The figures that matter for the method come from the GPU
experiment (docs/experiment.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from bench.run import read_episodes
from bench.tasks import load_tasks
from cli.bench import app as bench_app
from cli.train import app as train_app
from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from sandbox.inprocess import sandbox_mode
from synthesis.engine import synthesize
from synthesis.records import Trajectory
from tests.support.helpers import verified_store
from training.datasets import sft_row
from training.run import load_model, load_tokenizer, offline, probe
from training.tiny import build_tiny, conversation_texts

os.environ.update({"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "TRL_EXPERIMENTAL_SILENCE": "1"})

#: The tiny model and the CPU budget (see the module docstring).
TINY = {"hidden_size": 128, "layers": 4, "vocab_size": 2048, "max_positions": 2048}
SFT_LR = 3e-3
SFT_MAX_LENGTH = 768
GRPO_LR = 1e-4


def cpu_view(r: Trajectory) -> Trajectory:
    """The record with every offered tool's description cut to 30 characters and only its required parameters
    (descriptions 20), and each step's result cut to its first row: short sequences for a CPU."""
    tools = []
    for t in r.tools:
        fn = t["function"]
        params = fn.get("parameters") or {}
        required = params.get("required", []) or []
        props = {
            k: {"type": v.get("type", "string"), "description": str(v.get("description", k))[:20]}
            for k, v in (params.get("properties") or {}).items()
            if k in required
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
    return r.model_copy(update={"tools": tools, "steps": steps})


def _invoke(app: Any, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, list(args))
    if result.exit_code != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed: {result.output[-2000:]}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def _bench(model_dir: Path, out: Path, only: str) -> dict[str, float]:
    """pass^1 over the tasks, and the share of episodes whose first call is well formed and names an offered
    tool, and names the gold one."""
    result = CliRunner().invoke(
        bench_app,
        [
            "run",
            "--agent",
            "transformers",
            "--model-dir",
            str(model_dir),
            "--only",
            only,
            "--k",
            "1",
            "--out",
            str(out),
            "--max-tokens",
            "96",
            "--max-turns",
            "2",
            "--concurrency",
            "1",
        ],
    )
    if result.exit_code != 0:
        raise SystemExit(f"bench run failed: {result.output[-2000:]}")
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    gold = {t.id: {g.tool for g in t.gold} for t in load_tasks()}
    episodes = read_episodes(out / "episodes.jsonl")
    firsts = [ep["calls"][0] if ep["calls"] else None for ep in episodes]
    n = max(1, len(episodes))
    return {
        "pass": float(doc["scores"]["overall"]["pass_hat_k"]),
        "offered_call": sum(1 for c in firsts if c and c["valid"]) / n,
        "gold_tool": sum(
            1
            for ep, c in zip(episodes, firsts, strict=True)
            if c and c["valid"] and c["tool"] in gold.get(ep["task"], set())
        )
        / n,
    }


def _probe(model_dir: Path, records: list[Trajectory]) -> dict[str, float]:
    offline()
    return probe(load_model(model_dir), load_tokenizer(model_dir), records)


def _mean(xs: list[float]) -> float:
    return sum(xs) / max(1, len(xs))


#: Options of every training run here: full fine-tuning of the tiny model, every record trained on, whole.
COMMON = [
    "--set",
    "lora.enabled=false",
    "--set",
    "data.eval_fraction=0.0",
    "--set",
    "data.length_policy=keep",
    "--set",
    f"sft.max_length={SFT_MAX_LENGTH}",
    "--set",
    "grpo.max_prompt_length=1536",
]


def _data(root: Path, n_records: int, n_heldout: int, t0: float) -> tuple[Path, list[Trajectory]]:
    """Synthesise single-call trajectories, write the training ones to train.jsonl, build the tiny model on
    their texts; returns the model and the held-out probes."""
    settings, transport = sandbox_mode(Settings())
    store = verified_store(root / "g.sqlite3", settings, transport)

    async def go() -> dict[str, Any]:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport)
        try:
            return await synthesize(store, settings, ex, count=n_records, shapes=("single",), extras={})
        finally:
            await ex.aclose()

    records: list[Trajectory] = [cpu_view(r) for r in asyncio.run(go())["records"]]
    store.close()
    # held-out prompts: requests the model never saw, for tools it did see (a single-call "tool sequence" is one
    # tool, so a split by sequence would ask a model this small for tools it never met)
    shuffled = sorted(records, key=lambda r: r.id)
    heldout, train = shuffled[: len(shuffled) // 5], shuffled[len(shuffled) // 5 :]
    (root / "train.jsonl").write_text(
        "".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in train), encoding="utf-8"
    )
    names = sorted({t["function"]["name"] for r in records for t in r.tools})
    model = build_tiny(root / "tiny", conversation_texts([sft_row(r) for r in records]), words=names, **TINY)
    print(
        f"data: {len(records)} single-call trajectories over {len(names)} tools, train {len(train)}, held out "
        f"{len(heldout)} (requests never trained on); tiny model {TINY}; {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    return model, heldout[:n_heldout]


def _sft(root: Path, model: Path, steps: int, probes: list[Trajectory]) -> None:
    """SFT of the tiny model; prints the loss curve and the held-out rates before and after."""
    before = _probe(model, probes)
    t1 = time.perf_counter()
    sft = _invoke(
        train_app,
        "sft",
        "--model",
        str(model),
        "--data",
        str(root / "train.jsonl"),
        "--out",
        str(root / "sft"),
        "--steps",
        str(steps),
        "--set",
        f"train.learning_rate={SFT_LR}",
        "--set",
        f"train.save_steps={steps}",
        "--set",
        "train.logging_steps=20",
        *COMMON,
    )
    after = _probe(root / "sft" / "model", probes)
    losses = [
        round(float(x["loss"]), 2)
        for x in (json.loads(line) for line in (root / "sft" / "log.jsonl").read_text(encoding="utf-8").splitlines())
        if "loss" in x
    ]
    print(f"SFT {sft['steps']} steps in {time.perf_counter() - t1:.0f} s; train loss every 20 steps {losses}")
    print(
        f"held-out ({len(probes)} prompts): well-formed call rate before {before['well_formed_call_rate']:.0%} "
        f"-> after SFT {after['well_formed_call_rate']:.0%}; first tool right before "
        f"{before['first_tool_right']:.0%} -> after {after['first_tool_right']:.0%}",
        flush=True,
    )


def _grpo(root: Path, steps: int, probes: list[Trajectory]) -> None:
    """GRPO (replay) from the SFT model; prints the reward curve, its parts by half, and the held-out rates."""
    t2 = time.perf_counter()
    grpo = _invoke(
        train_app,
        "grpo",
        "--model",
        str(root / "sft" / "model"),
        "--data",
        str(root / "train.jsonl"),
        "--out",
        str(root / "grpo"),
        "--steps",
        str(steps),
        "--set",
        "grpo.num_generations=4",
        "--set",
        "train.per_device_train_batch_size=8",
        "--set",
        "grpo.max_completion_length=96",
        "--set",
        "grpo.temperature=1.0",
        "--set",
        "grpo.max_tool_calling_iterations=2",
        "--set",
        f"train.save_steps={steps}",
        "--set",
        f"train.learning_rate={GRPO_LR}",
        "--set",
        "train.logging_steps=1",
        *COMMON,
    )
    rows = [json.loads(x) for x in (root / "grpo" / "rewards.jsonl").read_text(encoding="utf-8").splitlines()]
    reward = [round(float(r["reward"]), 3) for r in rows]
    calls = [round(float(r.get("calls_per_rollout") or 0.0), 2) for r in rows]
    executed = [round(float(r.get("executed_calls") or 0.0), 2) for r in rows]
    print(
        f"GRPO {grpo['steps']} steps in {time.perf_counter() - t2:.0f} s (replay), {grpo['tool_calls']} tool calls "
        f"executed; per step:\n  mean reward      {reward}\n  calls per rollout {calls}\n"
        f"  executed_calls   {executed}"
    )
    parts = sorted(k for k in rows[0] if k not in ("step", "reward", "calls_per_rollout", "tool_failures"))
    half = max(1, len(rows) // 2)
    for key in ["reward", *parts]:
        first = _mean([float(r.get(key) or 0.0) for r in rows[:half]])
        second = _mean([float(r.get(key) or 0.0) for r in rows[half:]])
        print(f"  {key:24s} first half {first:+.3f} -> second half {second:+.3f}")
    print(
        f"  calls per rollout        first half {_mean(calls[:half]):.2f} -> second half {_mean(calls[half:]):.2f} "
        "(no executed call, no reward: training.rewards)",
        flush=True,
    )
    after_grpo = _probe(root / "grpo" / "model", probes)
    print(
        f"held-out after GRPO: well-formed call rate {after_grpo['well_formed_call_rate']:.0%}, first tool right "
        f"{after_grpo['first_tool_right']:.0%}",
        flush=True,
    )


def _bench_all(root: Path, model: Path) -> None:
    """KOPA-Bench single-call tasks for the untrained, SFT and SFT+GRPO models."""
    singles = ",".join(t.id for t in load_tasks() if t.category == "single")
    t3 = time.perf_counter()
    scores = {
        name: _bench(path, root / f"bench-{name}", singles)
        for name, path in (("untrained", model), ("sft", root / "sft" / "model"), ("sft+grpo", root / "grpo" / "model"))
    }
    print(
        f"KOPA-Bench single-call tasks ({len(singles.split(','))}) through the local transformers adapter, "
        f"{time.perf_counter() - t3:.0f} s: "
        + "; ".join(
            f"{k} pass^1 {v['pass']:.0%}, first call to an offered tool {v['offered_call']:.0%}, to the gold tool "
            f"{v['gold_tool']:.0%}"
            for k, v in scores.items()
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=160, help="single-call trajectories to synthesise")
    ap.add_argument("--sft-steps", type=int, default=300)
    ap.add_argument("--grpo-steps", type=int, default=24)
    ap.add_argument("--heldout", type=int, default=24, help="held-out prompts for the call-format rate")
    ap.add_argument("--workdir", type=Path, default=Path(".kopa/train-curves"))
    args = ap.parse_args()
    if "OMP_NUM_THREADS" not in os.environ:
        import torch

        # one thread: this model's matrices are too small to gain from a second, and where the cores are shared a
        # second thread stalls the step (measured: 150 SFT steps in 100 s on one thread, 100 steps in 442 s on two)
        torch.set_num_threads(1)
    root: Path = args.workdir
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    t0, c0 = time.perf_counter(), time.process_time()
    model, probes = _data(root, args.records, args.heldout, t0)
    _sft(root, model, args.sft_steps, probes)
    _grpo(root, args.grpo_steps, probes)
    _bench_all(root, model)
    print(
        f"total {time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU in this process "
        f"(os.cpu_count()={os.cpu_count()}); run folders under {root}"
    )


if __name__ == "__main__":
    main()
