"""Training figures on a CPU (issue 13), with a tiny model built here (no downloads):

1. the well-formed tool-call rate on held-out prompts (tool sequences never seen in training) before and after
   `kopa train sft` on single-call trajectories;
2. the mean reward per step of a short `kopa train grpo` run (replay) on the same single-call curriculum, starting
   from the SFT checkpoint;
3. KOPA-Bench's single-call tasks scored through the local transformers adapter (the code path a real model takes),
   untrained vs SFT vs SFT+GRPO.

    python -m perf.train_curves [--records 160] [--sft-steps 150] [--grpo-steps 8] [--workdir .kopa/train-curves]

A random 64-wide model learns the call format, not the task: expect the format rate to rise and KOPA-Bench to stay
near zero. The figures that matter for the method come from the GPU experiment (docs/experiment.md).
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
from tests.test_training import compact
from training import datasets as D
from training.run import call_format_rate
from training.tiny import build_tiny, conversation_texts

os.environ.update({"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "TRL_EXPERIMENTAL_SILENCE": "1"})


def _invoke(app: Any, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, list(args))
    if result.exit_code != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed: {result.output[-2000:]}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def _bench(model_dir: Path, out: Path, only: str) -> float:
    result = CliRunner().invoke(bench_app, ["run", "--agent", "transformers", "--model-dir", str(model_dir),
                                            "--only", only, "--k", "1", "--out", str(out), "--max-tokens", "96"])
    if result.exit_code != 0:
        raise SystemExit(f"bench run failed: {result.output[-2000:]}")
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return float(doc["scores"]["overall"]["pass_hat_k"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=160, help="single-call trajectories to synthesise")
    ap.add_argument("--sft-steps", type=int, default=150)
    ap.add_argument("--grpo-steps", type=int, default=8)
    ap.add_argument("--heldout", type=int, default=24, help="held-out prompts for the call-format rate")
    ap.add_argument("--workdir", type=Path, default=Path(".kopa/train-curves"))
    args = ap.parse_args()
    root: Path = args.workdir
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    t0 = time.perf_counter()
    settings, transport = sandbox_mode(Settings())
    store = verified_store(root / "g.sqlite3", settings, transport)

    async def go() -> dict[str, Any]:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport)
        try:
            return await synthesize(store, settings, ex, count=args.records, shapes=("single",), extras={})
        finally:
            await ex.aclose()

    records: list[Trajectory] = [compact(r) for r in asyncio.run(go())["records"]]
    store.close()
    # held-out prompts: requests the model never saw, for tools it did see (a single-call "tool sequence" is one
    # tool, so a split by sequence would ask a 64-wide random model for tool names it never met)
    shuffled = sorted(records, key=lambda r: r.id)
    heldout, train = shuffled[: len(shuffled) // 5], shuffled[len(shuffled) // 5:]
    (root / "train.jsonl").write_text("".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in train),
                                      encoding="utf-8")
    model = build_tiny(root / "tiny", conversation_texts([D.sft_row(r) for r in records]), vocab_size=1024,
                       max_positions=2048)
    probe = heldout[: args.heldout]
    print(f"data: {len(records)} single-call trajectories, train {len(train)}, held out {len(heldout)} "
          f"(requests never trained on); {time.perf_counter() - t0:.0f} s")

    before = call_format_rate(model, probe)
    common = ["--set", "lora.enabled=false", "--set", "train.logging_steps=5", "--set", "data.eval_fraction=0.0",
              "--set", "sft.max_length=2048", "--set", "grpo.max_prompt_length=1536"]
    t1 = time.perf_counter()
    sft = _invoke(train_app, "sft", "--model", str(model), "--data", str(root / "train.jsonl"), "--out",
                  str(root / "sft"), "--steps", str(args.sft_steps), "--set", "train.learning_rate=3e-3",
                  "--set", f"train.save_steps={args.sft_steps}", *common)
    after = call_format_rate(root / "sft" / "model", probe)
    print(f"SFT {sft['steps']} steps in {time.perf_counter() - t1:.0f} s, final train loss {sft['train_loss']:.3f}")
    print(f"well-formed tool-call rate on {len(probe)} held-out prompts: before {before:.0%}  after SFT {after:.0%}")

    t2 = time.perf_counter()
    grpo = _invoke(train_app, "grpo", "--model", str(root / "sft" / "model"), "--data", str(root / "train.jsonl"),
                   "--out", str(root / "grpo"), "--steps", str(args.grpo_steps), "--set", "grpo.num_generations=4",
                   "--set", "train.per_device_train_batch_size=4", "--set", "grpo.max_completion_length=96",
                   "--set", "grpo.temperature=1.0", "--set", "grpo.max_tool_calling_iterations=2",
                   "--set", f"train.save_steps={args.grpo_steps}", "--set", "train.learning_rate=1e-4", *common,
                   "--set", "train.logging_steps=1")
    log = [json.loads(x) for x in (root / "grpo" / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    curve = [round(float(x["reward"]), 3) for x in log if "reward" in x]
    print(f"GRPO {grpo['steps']} steps in {time.perf_counter() - t2:.0f} s (replay); mean reward per logged step: "
          f"{curve}")
    if len(curve) >= 2:
        half = len(curve) // 2
        print(f"  first half {sum(curve[:half]) / half:.3f} -> second half {sum(curve[half:]) / (len(curve) - half):.3f}")

    singles = ",".join(t.id for t in load_tasks() if t.category == "single")
    scores = {name: _bench(path, root / f"bench-{name}", singles) for name, path in
              (("untrained", model), ("sft", root / "sft" / "model"), ("sft+grpo", root / "grpo" / "model"))}
    print("KOPA-Bench single-call tasks, pass^1 through the local transformers adapter: "
          + ", ".join(f"{k} {v:.0%}" for k, v in scores.items()))
    print(f"total {time.perf_counter() - t0:.0f} s; run folders under {root}")


if __name__ == "__main__":
    main()
