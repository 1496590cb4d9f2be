"""SFT and GRPO runs: one folder per run.

```
<output>/config.yaml        the validated config
<output>/manifest.json      dataset: source hash, counts, split by tool sequence, token lengths, benchmark overlap
<output>/checkpoints/       trainer checkpoints (resume from here)
<output>/model/             the final model + tokenizer (LoRA merged), loadable by `from_pretrained`
<output>/adapter/           LoRA runs: the adapter alone (what `vllm serve BASE --enable-lora --lora-modules
                            NAME=<output>/adapter` serves), with the tokenizer
<output>/log.jsonl          every trainer log line (loss, learning rate, rewards/<name>/mean, tools/*)
<output>/rewards.jsonl      GRPO: the reward components per logged step
<output>/tool_calls.json    GRPO: executed calls per tool, calls per rollout
<output>/eval.jsonl         held-out probes before, during (eval.every_steps) and after training: well-formed
                            call rate and first-tool accuracy on the eval split
<output>/report.md          summary + curves.png (loss, reward components); GRPO: its health first (warnings when
                            it learnt nothing or over 10 % of the rollouts hit grpo.max_completion_length)
```

trl, torch, transformers, peft and matplotlib are imported inside the functions (the `train` extra).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from core.errors import KopaError
from execution.tool_calls import TextCall, parse_tool_calls, strip_think
from graph.models import LinkRecord
from synthesis.records import Trajectory
from training.card import write_model_cards
from training.config import RunConfig, grpo_args, peft_config, sft_args
from training.datasets import (
    abstention_records,
    grpo_row,
    grpo_rows,
    load_records,
    manifest,
    measure,
    sft_row,
    split_by_sequence,
    to_dataset,
    without_provider,
)
from training.environment import Backend, ReplayBackend, environment_factories
from training.rewards import selected

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "VLLM_NO_USAGE_STATS": "1",  # vLLM (colocated GRPO generation) reports usage stats unless told not to
    "DO_NOT_TRACK": "1",
    "TRL_EXPERIMENTAL_SILENCE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


class TrainingError(KopaError):
    """A run that cannot start or finish as configured."""


def offline() -> None:
    """Never reach a model hub: no downloads, no telemetry."""
    for k, v in OFFLINE_ENV.items():
        os.environ.setdefault(k, v)


def _use_cpu() -> bool:
    import torch

    return not torch.cuda.is_available()


def load_tokenizer(model_dir: Path) -> Any:
    from transformers import PreTrainedTokenizerFast

    if not (model_dir / "tokenizer.json").exists():
        raise TrainingError(f"{model_dir} has no tokenizer.json (a local model directory is required)")
    return PreTrainedTokenizerFast.from_pretrained(str(model_dir))


def load_model(model_dir: Path) -> Any:
    from transformers import AutoModelForCausalLM

    if not (model_dir / "config.json").exists():
        raise TrainingError(
            f"{model_dir} is not a model directory (no config.json); build one with "
            "`kopa train tiny` or point model: at a local checkpoint"
        )
    return AutoModelForCausalLM.from_pretrained(str(model_dir))


def _records(cfg: RunConfig) -> tuple[list[Trajectory], list[Trajectory], list[Trajectory]]:
    records = load_records(cfg.data.records)
    if cfg.data.heldout_provider:
        records, held = without_provider(records, cfg.data.heldout_provider)
        sys.stderr.write(f"held-out provider: {json.dumps(held)}\n")
    if cfg.data.limit:
        records = records[: cfg.data.limit]
    train, evaluation = split_by_sequence(records, cfg.data.eval_fraction, cfg.data.split_seed)
    if not train:
        raise TrainingError("the training split is empty: lower data.eval_fraction or add records")
    return records, train, evaluation


def _resume(cfg: RunConfig) -> bool | str | None:
    r = cfg.train.resume
    if r is False:
        return None
    ckpts = cfg.output / "checkpoints"
    if r is True:
        if not any(ckpts.glob("checkpoint-*")):
            raise TrainingError(f"train.resume is true but {ckpts} holds no checkpoint")
        return True
    if not Path(r).exists():
        raise TrainingError(f"train.resume: checkpoint {r} does not exist")
    return str(r)


#: the run's appended logs: a fresh run starts them anew, a resumed one continues them
APPENDED = ("log.jsonl", "eval.jsonl")


def _start(cfg: RunConfig) -> None:
    offline()
    if cfg.output.exists() and any(cfg.output.glob("checkpoints/checkpoint-*")) and cfg.train.resume is False:
        raise TrainingError(f"{cfg.output} already holds checkpoints: set train.resume=true or use another output")
    cfg.output.mkdir(parents=True, exist_ok=True)
    if cfg.train.resume is False:  # an earlier run's lines would pass for this run's
        for name in APPENDED:
            (cfg.output / name).unlink(missing_ok=True)
    (cfg.output / "config.yaml").write_text(
        yaml.safe_dump(cfg.dump(), allow_unicode=True, sort_keys=False), encoding="utf-8"
    )


def _log_callback(path: Path) -> Any:
    from transformers import TrainerCallback

    class JsonlLog(TrainerCallback):
        def on_log(
            self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any
        ) -> None:
            if logs:
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"step": state.global_step, **logs}, default=float) + "\n")

    return JsonlLog()


def _save_final(trainer: Any, tok: Any, out: Path, lora: bool) -> Path:
    model = trainer.model
    if lora:
        adapter = out.parent / "adapter"
        model.save_pretrained(str(adapter))
        tok.save_pretrained(str(adapter))
        model = model.merge_and_unload()
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    return out


def read_log(run: Path) -> list[dict[str, Any]]:
    path = run / "log.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_report(run: Path, kind: str, summary: dict[str, Any]) -> Path:
    """report.md with curves.png: the loss and, for GRPO, the mean reward and each component per logged step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    log = [x for x in read_log(run) if "loss" in x or "reward" in x]
    series: dict[str, list[tuple[int, float]]] = {}
    for entry in log:
        for k, v in entry.items():
            wanted = k in ("loss", "reward", "tools/call_frequency", "frac_reward_zero_std", CLIPPED) or (
                k.startswith("rewards/") and k.endswith("/mean")
            )
            if wanted and isinstance(v, int | float):
                series.setdefault(k, []).append((int(entry["step"]), float(v)))
    for entry in read_eval(run):
        for k in ("well_formed_call_rate", "first_tool_right"):
            series.setdefault(f"held-out {k}", []).append((int(entry["step"]), float(entry[k])))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for k, pts in series.items():
        ax = axes[0] if k in ("loss", "reward", "tools/call_frequency") or k.startswith("held-out") else axes[1]
        ax.plot(
            [p[0] for p in pts], [p[1] for p in pts], marker=".", label=k.removeprefix("rewards/").removesuffix("/mean")
        )
    axes[0].set_title(f"{kind}: loss / mean reward / calls per rollout")
    axes[1].set_title("reward components (mean)")
    for ax in axes:
        ax.set_xlabel("step")
        if ax.lines:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(run / "curves.png", dpi=110)
    plt.close(fig)
    warnings = health_warnings(summary.get("health") or {})
    lines = [
        f"# {kind.upper()} run",
        "",
        *[line for w in warnings for line in (f"**Warning:** {w}.", "")],
        "```json",
        json.dumps(summary, ensure_ascii=False, indent=1),
        "```",
        "",
        "![curves](curves.png)",
        "",
    ]
    if series:
        lines += ["| series | first | last |", "|---|---|---|"]
        lines += [f"| {k} | {v[0][1]:.4f} | {v[-1][1]:.4f} |" for k, v in series.items()]
    (run / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run / "report.md"


# ---------------------------------------------------------------------------------------------- evaluation


def _calls(text: str, tools: Sequence[dict[str, Any]] | None) -> list[TextCall]:
    return parse_tool_calls(strip_think(text), tools)[1]


def well_formed(text: str, offered: Sequence[str], tools: Sequence[dict[str, Any]] | None = None) -> bool:
    """A completion text holds at least one complete `<tool_call>` block (Hermes JSON or Qwen3.5 XML, read by
    `execution.tool_calls`) and every block it holds reads as a call to an offered tool."""
    calls = _calls(text, tools)
    return bool(calls) and all(c.ok and c.name in offered for c in calls)


def first_tool_right(
    text: str, offered: Sequence[str], gold: str, tools: Sequence[dict[str, Any]] | None = None
) -> bool:
    """The completion is well formed and its first call names the gold first tool."""
    calls = _calls(text, tools)
    return well_formed(text, offered, tools) and calls[0].name == gold


def probe(
    model: Any,
    tok: Any,
    records: Sequence[Trajectory],
    *,
    max_new_tokens: int = 96,
    chat_kwargs: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Greedy first turns on held-out prompts (system + request + the record's tools): the share that emit a
    well-formed call to an offered tool, and the share whose first call names the record's first gold tool."""
    import torch

    was_training = model.training
    model.eval()
    formed = right = 0
    try:
        for r in records:
            row = grpo_row(r)
            text = tok.apply_chat_template(
                row["prompt"], tools=r.tools, tokenize=False, add_generation_prompt=True, **(chat_kwargs or {})
            )
            ids = tok(str(text), return_tensors="pt", add_special_tokens=False).to(model.device)
            with torch.no_grad():
                out = model.generate(
                    **ids,
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    eos_token_id=tok.eos_token_id,
                    pad_token_id=tok.pad_token_id,
                )
            completion = tok.decode(out[0][ids["input_ids"].shape[1] :], skip_special_tokens=False)
            formed += well_formed(completion, row["offered"], r.tools)
            right += bool(r.steps) and first_tool_right(completion, row["offered"], r.steps[0].tool, r.tools)
    finally:
        model.train(was_training)
    n = max(1, len(records))
    return {"well_formed_call_rate": formed / n, "first_tool_right": right / n, "probed": len(records)}


def _chat_kwargs(cfg: RunConfig) -> dict[str, Any]:
    return {} if cfg.chat.enable_thinking is None else {"enable_thinking": cfg.chat.enable_thinking}


def _eval_callback(cfg: RunConfig, tok: Any, evaluation: Sequence[Trajectory]) -> Any:
    """Probe the held-out split every `eval.every_steps` steps and at the end, into eval.jsonl."""
    from transformers import TrainerCallback

    probes = [r for r in evaluation if r.steps][: cfg.eval.records]
    path = cfg.output / "eval.jsonl"

    def write(step: int, model: Any) -> None:
        if not probes or model is None:
            return
        figures = probe(model, tok, probes, max_new_tokens=cfg.eval.max_new_tokens, chat_kwargs=_chat_kwargs(cfg))
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"step": step, **figures}) + "\n")

    class HeldOut(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            write(state.global_step, kwargs.get("model"))

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            every = cfg.eval.every_steps
            if every and state.global_step % every == 0 and state.global_step < state.max_steps:
                write(state.global_step, kwargs.get("model"))

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            write(state.global_step, kwargs.get("model"))

    return HeldOut()


def _held_out(run: Path) -> dict[str, Any] | None:
    probes = read_eval(run)
    return {"before": probes[0], "after": probes[-1], "points": len(probes)} if probes else None


def read_eval(run: Path) -> list[dict[str, Any]]:
    path = run / "eval.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ---------------------------------------------------------------------------------------------- SFT


def run_sft(cfg: RunConfig) -> dict[str, Any]:
    """Supervised warm-up on the trajectories' conversations (assistant-only loss)."""
    _start(cfg)
    from trl.trainer.sft_trainer import SFTTrainer

    records, train, evaluation = _records(cfg)
    tok = load_tokenizer(cfg.model)
    by_id = {r.id: r for r in records}
    rows, lengths = measure([sft_row(r) for r in train], by_id, tok, "sft", cfg.sft.max_length, cfg.data.length_policy)
    print_warnings(lengths.warnings())
    eval_rows, eval_len = (
        measure([sft_row(r) for r in evaluation], by_id, tok, "sft", cfg.sft.max_length, "keep")
        if evaluation
        else ([], None)
    )
    man = manifest(
        records,
        train,
        evaluation,
        source=cfg.data.records,
        eval_fraction=cfg.data.eval_fraction,
        seed=cfg.data.split_seed,
        lengths=[lengths, *([eval_len] if eval_len else [])],
        bench=cfg.data.benchmark,
    )
    man["used_train_rows"] = len(rows)
    (cfg.output / "manifest.json").write_text(json.dumps(man, ensure_ascii=False, indent=1), encoding="utf-8")
    use_cpu = _use_cpu()
    model = load_model(cfg.model)
    trainer = SFTTrainer(
        model=model,
        args=sft_args(cfg, use_cpu=use_cpu),
        train_dataset=to_dataset(rows, "sft"),
        processing_class=tok,
        peft_config=peft_config(cfg, model),
        callbacks=[_log_callback(cfg.output / "log.jsonl"), _eval_callback(cfg, tok, evaluation)],
    )
    started = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=_resume(cfg))
    model_dir = _save_final(trainer, tok, cfg.output / "model", cfg.lora.enabled)
    summary = {
        "kind": "sft",
        "steps": result.global_step,
        "train_loss": round(float(result.training_loss), 4),
        "seconds": round(time.perf_counter() - started, 1),
        "train_rows": len(rows),
        "eval_rows": len(eval_rows),
        "model": str(model_dir),
        "device": "cpu" if use_cpu else "cuda",
    }
    summary["held_out"] = _held_out(cfg.output)
    write_report(cfg.output, "sft", summary)
    write_model_cards(cfg.output, "sft", summary)
    return summary


# ---------------------------------------------------------------------------------------------- GRPO


def run_grpo(
    cfg: RunConfig, backend: Backend | None = None, *, secrets: Sequence[str] = (), refuted: Sequence[LinkRecord] = ()
) -> dict[str, Any]:
    """GRPO over prompt-only rows with each record's own tools executed by `backend` (replay by default);
    `refuted` links (from the graph) feed the refuted-link penalty."""
    g = cfg.grpo
    if (cfg.train.per_device_train_batch_size * cfg.train.gradient_accumulation_steps) % g.num_generations:
        raise TrainingError(
            "train.per_device_train_batch_size × gradient_accumulation_steps must be a multiple of "
            f"grpo.num_generations ({g.num_generations})"
        )
    _start(cfg)
    from trl.trainer.grpo_trainer import GRPOTrainer

    records, train, evaluation = _records(cfg)
    tok = load_tokenizer(cfg.model)
    by_id = {r.id: r for r in records}
    # GRPO rewards grade calls against the gold ones; records without calls (irrelevance samples) join at
    # `grpo.abstain_share` of the prompts, where the honest refusal is the best outcome
    with_calls = [r for r in train if r.steps]
    if not with_calls:
        raise TrainingError("no training record has a tool call to learn from")
    abstain = abstention_records(train)
    wanted = round(g.abstain_share * len(with_calls) / (1 - g.abstain_share)) if g.abstain_share < 1 else 0
    with_calls += abstain[:wanted]
    candidates, facts_report = grpo_rows(with_calls, refuted)
    if not candidates:
        raise TrainingError("every training record's facts are passed by a guess: no GRPO row left")
    rows, lengths = measure(
        candidates, by_id, tok, "grpo", g.max_prompt_length, cfg.data.length_policy, g.max_completion_length
    )
    print_warnings(lengths.warnings())
    man = manifest(
        records,
        train,
        evaluation,
        source=cfg.data.records,
        eval_fraction=cfg.data.eval_fraction,
        seed=cfg.data.split_seed,
        lengths=[lengths],
        bench=cfg.data.benchmark,
    )
    man["used_train_rows"] = len(rows)
    man["without_calls"] = len(train) - len([r for r in train if r.steps])
    man["abstain_rows"] = len([r for r in with_calls if not r.steps])
    man["facts"] = facts_report.to_json()
    man["environment"] = g.environment
    (cfg.output / "manifest.json").write_text(json.dumps(man, ensure_ascii=False, indent=1), encoding="utf-8")
    model = load_model(cfg.model)
    _check_positions(model, lengths.longest, g.max_completion_length)
    backend = backend or ReplayBackend(records, budget=g.view_budget())
    factories, counter = environment_factories(with_calls, backend, max_calls=g.max_calls, secrets=secrets)
    funcs, weights = selected(g.rewards)
    use_cpu = _use_cpu()
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=list[Any](funcs),
        args=grpo_args(cfg, use_cpu=use_cpu, reward_weights=weights),
        train_dataset=to_dataset(rows, "grpo"),
        processing_class=tok,
        peft_config=peft_config(cfg, model),
        environment_factory=dict(factories),
        callbacks=[_log_callback(cfg.output / "log.jsonl"), _eval_callback(cfg, tok, evaluation)],
    )
    started = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=_resume(cfg))
    model_dir = _save_final(trainer, tok, cfg.output / "model", cfg.lora.enabled)
    components, calls = _write_grpo_logs(cfg.output, counter)
    rewards = [c["reward"] for c in components if c["reward"] is not None]
    summary = {
        "kind": "grpo",
        "steps": result.global_step,
        "seconds": round(time.perf_counter() - started, 1),
        "train_rows": len(rows),
        "environment": g.environment,
        "rewards_logged": len(components),
        "first_reward": rewards[0] if rewards else None,
        "last_reward": rewards[-1] if rewards else None,
        "tool_calls": calls["total"],
        "model": str(model_dir),
        "device": "cpu" if use_cpu else "cuda",
        "health": {**grpo_health(read_log(cfg.output), g.max_completion_length), **_executed(calls["total"])},
    }
    summary["held_out"] = _held_out(cfg.output)
    print_warnings([f"warning: {w}" for w in health_warnings(summary["health"])])
    write_report(cfg.output, "grpo", summary)
    write_model_cards(cfg.output, "grpo", summary)
    return summary


#: trl's share of the step's rollouts that ended without EOS: cut at max_completion_length
CLIPPED = "completions/clipped_ratio"
#: above this mean share of cut rollouts a run warns: their tool results or answers were never seen
CLIPPED_WARN = 0.10


def grpo_health(log: Sequence[dict[str, Any]], max_completion_length: int | None = None) -> dict[str, Any]:
    """Whether GRPO had anything to learn from, by trl's `frac_reward_zero_std` (the share of prompt groups whose
    generations all earned the same reward: zero advantage, zero gradient) and the reward spread per step. A run in
    which every logged step had no group with a reward spread learnt nothing, whatever its loss says. With it, the
    share of rollouts cut at the completion budget (trl's `completions/clipped_ratio`), warned above 10 %."""
    clipped = _clipped(log, max_completion_length)
    steps = [e for e in log if isinstance(e.get("frac_reward_zero_std"), int | float)]
    if not steps:
        return {"steps_logged": 0, "learnt_nothing": None, **clipped}
    zero = [float(e["frac_reward_zero_std"]) for e in steps]
    spread = [float(e["reward_std"]) for e in steps if isinstance(e.get("reward_std"), int | float)]
    nothing = all(z >= 1.0 for z in zero)
    health: dict[str, Any] = {
        "steps_logged": len(steps),
        "frac_reward_zero_std_mean": round(sum(zero) / len(zero), 4),
        "steps_without_reward_spread": sum(1 for z in zero if z >= 1.0),
        "reward_std_mean": round(sum(spread) / len(spread), 4) if spread else None,
        "learnt_nothing": nothing,
    }
    if nothing:
        health["warning"] = (
            f"GRPO learnt nothing: in all {len(steps)} logged steps every group's generations earned the same reward "
            "(frac_reward_zero_std = 1), so every advantage was 0; raise grpo.temperature or grpo.num_generations, "
            "warm the model up with more SFT, or check that the rewards can tell its completions apart"
        )
    return {**health, **clipped}


def _clipped(log: Sequence[dict[str, Any]], max_completion_length: int | None) -> dict[str, Any]:
    """The mean and worst share of rollouts per logged step that hit the completion budget, and a warning when the
    mean is above CLIPPED_WARN; nothing when trl logged no share."""
    shares = [float(e[CLIPPED]) for e in log if isinstance(e.get(CLIPPED), int | float)]
    if not shares:
        return {}
    mean = sum(shares) / len(shares)
    out: dict[str, Any] = {"clipped_ratio_mean": round(mean, 4), "clipped_ratio_max": round(max(shares), 4)}
    if mean > CLIPPED_WARN:
        budget = f" {max_completion_length} tokens" if max_completion_length else ""
        out["clipped_warning"] = (
            f"{mean:.0%} of GRPO rollouts (mean of {len(shares)} logged steps, worst {max(shares):.0%}) hit "
            f"grpo.max_completion_length{budget} before their end: the tool results or answers past it were never "
            "seen (and with grpo.mask_truncated their loss is dropped); raise grpo.max_completion_length "
            "(`kopa train check --data` measures the recorded completions) or lower grpo.max_tool_calling_iterations"
        )
    return out


def _executed(total: int) -> dict[str, Any]:
    """The tool calls GRPO's rollouts executed, with a warning when there were none: the tools were never run and
    every reward for calls and answers was the same 0."""
    out: dict[str, Any] = {"executed_tool_calls": total}
    if not total:
        out["calls_warning"] = (
            "GRPO's rollouts executed no tool call: no completion held a well-formed call to an offered tool; warm "
            "the model up with more SFT"
        )
    return out


def health_warnings(health: dict[str, Any]) -> list[str]:
    """The run's health warnings, the one that says it learnt nothing first."""
    return [w for w in (health.get("warning"), health.get("calls_warning"), health.get("clipped_warning")) if w]


def _write_grpo_logs(output: Path, counter: Counter[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The reward components per logged step (rewards.jsonl) and the executed tool calls (tool_calls.json)."""
    log = read_log(output)
    components = [
        {
            "step": e["step"],
            "reward": e.get("reward"),
            **{k.split("/")[1]: v for k, v in e.items() if k.startswith("rewards/") and k.endswith("/mean")},
            "calls_per_rollout": e.get("tools/call_frequency"),
            "tool_failures": e.get("tools/failure_frequency"),
            "frac_reward_zero_std": e.get("frac_reward_zero_std"),
            "clipped_ratio": e.get(CLIPPED),
        }
        for e in log
        if "reward" in e
    ]
    (output / "rewards.jsonl").write_text("".join(json.dumps(c) + "\n" for c in components), encoding="utf-8")
    calls = {
        "per_tool": dict(counter.most_common()),
        "total": sum(counter.values()),
        "calls_per_rollout": [c["calls_per_rollout"] for c in components],
    }
    (output / "tool_calls.json").write_text(json.dumps(calls, ensure_ascii=False, indent=1), encoding="utf-8")
    return components, calls


def print_warnings(lines: list[str]) -> None:
    """Warnings a run prints before it trains (stderr; the manifest carries the figures)."""
    for line in lines:
        sys.stderr.write(line + "\n")


def _check_positions(model: Any, longest: int, max_completion_length: int) -> None:
    """Refuse a run whose longest prompt plus the completion budget exceeds the model's positions."""
    limit = getattr(model.config, "max_position_embeddings", None)
    if limit and longest + max_completion_length > limit:
        raise TrainingError(
            f"prompt ({longest} tokens) + grpo.max_completion_length "
            f"({max_completion_length}) exceeds the model's {limit} positions"
        )
