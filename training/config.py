"""The YAML config of `kopa train sft|grpo`, mapped onto trl's `SFTConfig` / `GRPOConfig` (documented fields only).

```yaml
model: .kopa/tiny            # a local model directory (never downloaded)
output: .kopa/runs/sft-1     # the run folder
data:
  records: .kopa/demo/export # records.jsonl or an export folder
  eval_fraction: 0.1         # split by tool sequence
  split_seed: 0
  limit: null                # use only the first N records
  length_policy: error       # rows over the max length: error | drop | keep
  benchmark: null            # a JSONL of benchmark tasks, for the overlap count in the manifest
  graph: null                # embedded graph file (kopa demo's graph.sqlite3): refuted links, live tools;
                             # null: the configured store when it is Neo4j, else none
  verification: true         # false: the graph gives live tools only, no refuted links (no verification signal:
                             # the ablation's synthesise-then-filter arm)
  heldout_provider: null     # a provider (tool-name prefix, e.g. airkorea) the run never sees: records calling its
                             # tools are dropped, the others stop offering them (the held-out-provider arm)
lora: {enabled: true, r: 16, alpha: 32, dropout: 0.05, target_modules: auto}
                             # auto: every linear layer of the model but the output head (read from its modules,
                             # so hybrid families such as Qwen3.5's linear-attention layers are covered), or a list
train:                       # common TrainingArguments
  learning_rate: 1.0e-5
  max_steps: 200
  per_device_train_batch_size: 4
  gradient_accumulation_steps: 1
  logging_steps: 5
  save_steps: 50             # checkpoints under <output>/checkpoints
  save_total_limit: 3
  resume: false              # true: the latest checkpoint; or a checkpoint path
  bf16: null                 # null: on when a GPU supports it
  seed: 0
  report_to: auto            # auto: tensorboard where it is installed (events in <output>/tensorboard), else none;
                             # or none, tensorboard, wandb, ... (transformers' integrations)
sft: {max_length: 4096}
chat:
  enable_thinking: null      # thinking templates (Qwen3/3.5): false renders the generation prompt with an empty
                             # think block, as SFT rows carry none; serve with the same setting (docs/experiment.md)
eval:                        # evaluation on the held-out split (by tool sequence) while training
  every_steps: 0             # 0: only before and after training
  records: 8                 # held-out records probed each time (greedy): well-formed call rate, first tool right
grpo:
  num_generations: 4         # group size (batch × grad-accum must be a multiple)
  max_completion_length: 512 # all turns, tool results included
  max_prompt_length: 4096    # reported against (GRPO itself does not truncate prompts)
  max_tool_calling_iterations: 4
  temperature: 1.0
  beta: 0.0
  generation: generate       # generate (plain transformers, CPU) | vllm_colocate | vllm_server
  vllm_server_base_url: null
  vllm_gpu_memory_utilization: 0.3
  vllm_enable_sleep_mode: false  # vllm_colocate: vLLM frees its weights and KV cache while the policy trains (an
                                 # 80 GB card), at the cost of waking it (weights back from CPU) every generation
  environment: replay        # replay (recorded responses) | live (the execution layer)
  sandbox: false             # live against an in-process sandbox (kopa train only)
  max_calls: 6               # tool calls per rollout
  view_rows: null            # rows of each tool result a rollout shows: null = the one view (20, as the SFT rows
                             # and KOPA-Bench show it); fewer only where the records were cut alike (the CPU run)
  rewards: {right_tools: 1.0, ...}   # weights merged onto training.rewards.DEFAULT_WEIGHTS; 0 disables one;
                                     # an unknown name is an error
```

Overrides from the command line are dotted `key=value` pairs (`train.max_steps=3`, `lora.enabled=false`), values
parsed as YAML.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import KopaError
from execution.view import BUDGET, Budget
from training.rewards import DEFAULT_WEIGHTS


class ConfigError(KopaError):
    """A training config that cannot be read or validated."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DataConfig(_Section):
    records: Path = Path(".kopa/demo/export")
    eval_fraction: float = Field(0.1, ge=0.0, lt=1.0)
    split_seed: int = 0
    limit: int | None = Field(None, ge=1)
    length_policy: Literal["error", "drop", "keep"] = "error"
    benchmark: Path | None = None
    graph: Path | None = None
    verification: bool = True
    heldout_provider: str | None = None


class LoraConfig(_Section):
    enabled: bool = True
    r: int = Field(16, ge=1)
    alpha: int = Field(32, ge=1)
    dropout: float = Field(0.05, ge=0.0, lt=1.0)
    target_modules: Literal["auto"] | list[str] = "auto"


class TrainConfig(_Section):
    learning_rate: float = Field(1e-5, gt=0)
    max_steps: int = Field(200, ge=1)
    per_device_train_batch_size: int = Field(4, ge=1)
    gradient_accumulation_steps: int = Field(1, ge=1)
    logging_steps: int = Field(5, ge=1)
    save_steps: int = Field(50, ge=1)
    save_total_limit: int | None = 3
    resume: bool | str = False
    bf16: bool | None = None
    gradient_checkpointing: bool = False
    seed: int = 0
    report_to: str | list[str] = "auto"


class SftConfig(_Section):
    max_length: int = Field(4096, ge=16)


class ChatConfig(_Section):
    enable_thinking: bool | None = None


class EvalConfig(_Section):
    every_steps: int = Field(0, ge=0)
    records: int = Field(8, ge=1)
    max_new_tokens: int = Field(96, ge=8)


class GrpoConfig(_Section):
    num_generations: int = Field(4, ge=2)
    max_completion_length: int = Field(512, ge=8)
    max_prompt_length: int = Field(4096, ge=16)
    max_tool_calling_iterations: int = Field(4, ge=1)
    temperature: float = Field(1.0, gt=0)
    beta: float = Field(0.0, ge=0)
    generation: Literal["generate", "vllm_colocate", "vllm_server"] = "generate"
    vllm_server_base_url: str | None = None
    vllm_gpu_memory_utilization: float = Field(0.3, gt=0, le=1)
    vllm_enable_sleep_mode: bool = False
    environment: Literal["replay", "live"] = "replay"
    sandbox: bool = False
    max_calls: int = Field(6, ge=1)
    view_rows: int | None = Field(None, ge=1, le=BUDGET.rows)
    rewards: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    #: truncated completions carry no loss (trl's `mask_truncated_completions`): a rollout cut before its answer
    #: teaches nothing about the answer
    mask_truncated: bool = True
    #: the share of GRPO prompts that are records without calls (irrelevance: the honest refusal is their best
    #: outcome), drawn from the training split up to what it holds
    abstain_share: float = Field(0.15, ge=0, le=0.5)

    def view_budget(self) -> Budget:
        """The budget rollouts render tool results with: the one view (execution.view.BUDGET) of the SFT rows and
        KOPA-Bench, or fewer rows where the training records were cut the same way (`view_rows`)."""
        return BUDGET if self.view_rows is None else replace(BUDGET, rows=self.view_rows)

    @field_validator("rewards", mode="before")
    @classmethod
    def _merge_rewards(cls, v: Any) -> Any:
        """Weights named in a config are merged onto the defaults (naming one never switches off the others);
        an unknown name is refused."""
        if v is None:
            return dict(DEFAULT_WEIGHTS)
        if not isinstance(v, dict):
            raise ValueError("grpo.rewards must map reward names to weights")
        unknown = sorted(set(v) - set(DEFAULT_WEIGHTS))
        if unknown:
            raise ValueError(f"unknown rewards {unknown} (known: {', '.join(DEFAULT_WEIGHTS)})")
        return {**DEFAULT_WEIGHTS, **v}


class RunConfig(_Section):
    model: Path
    output: Path
    data: DataConfig = Field(default_factory=DataConfig)
    lora: LoraConfig = Field(default_factory=LoraConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    sft: SftConfig = Field(default_factory=SftConfig)
    grpo: GrpoConfig = Field(default_factory=GrpoConfig)
    chat: ChatConfig = Field(default_factory=ChatConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def _set(doc: dict[str, Any], dotted: str, value: Any) -> None:
    keys = dotted.split(".")
    node = doc
    for k in keys[:-1]:
        child = node.setdefault(k, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {dotted}: {k} is not a section")
        node = child
    node[keys[-1]] = value


def load_config(path: Path | None, overrides: list[str] | None = None, **direct: Any) -> RunConfig:
    """A validated config from a YAML file, `key=value` overrides, then direct values (None ones ignored)."""
    doc: dict[str, Any] = {}
    if path is not None:
        if not path.exists():
            raise ConfigError(f"config file {path} does not exist")
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path} must hold a mapping")
        doc = loaded
    for item in overrides or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"override {item!r} is not key=value")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw
        _set(doc, key.strip(), value)
    for key, value in direct.items():
        if value is not None:
            _set(doc, key, str(value) if isinstance(value, Path) else value)
    try:
        cfg = RunConfig.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"config {where}: {str(first['msg']).removeprefix('Value error, ')}") from None
    unknown = set(cfg.grpo.rewards) - set(DEFAULT_WEIGHTS)
    if unknown:
        raise ConfigError(f"grpo.rewards: unknown rewards {sorted(unknown)} (known: {', '.join(DEFAULT_WEIGHTS)})")
    if cfg.grpo.generation == "vllm_server" and not cfg.grpo.vllm_server_base_url:
        raise ConfigError("grpo.generation vllm_server needs grpo.vllm_server_base_url")
    return cfg


def report_to(setting: str | list[str]) -> list[str]:
    """The trainer's `report_to`: `auto` is tensorboard where the package is installed, else nothing."""
    if setting == "auto":
        return ["tensorboard"] if importlib.util.find_spec("tensorboard") is not None else []
    names = [setting] if isinstance(setting, str) else list(setting)
    return [n for n in names if n != "none"]


def _common(cfg: RunConfig, use_cpu: bool) -> dict[str, Any]:
    t = cfg.train
    reporters = report_to(t.report_to)
    if "tensorboard" in reporters:  # transformers reads its folder from the environment only
        os.environ.setdefault("TENSORBOARD_LOGGING_DIR", str(cfg.output / "tensorboard"))
    bf16 = (not use_cpu) if t.bf16 is None else t.bf16
    return {
        "output_dir": str(cfg.output / "checkpoints"),
        "learning_rate": t.learning_rate,
        "max_steps": t.max_steps,
        "per_device_train_batch_size": t.per_device_train_batch_size,
        "gradient_accumulation_steps": t.gradient_accumulation_steps,
        "logging_steps": t.logging_steps,
        "save_strategy": "steps",
        "save_steps": t.save_steps,
        "save_total_limit": t.save_total_limit,
        "bf16": bf16,
        "use_cpu": use_cpu,
        "seed": t.seed,
        "report_to": reporters or "none",
        "disable_tqdm": not sys.stderr.isatty(),  # progress bars on a terminal only, not in logs
        "gradient_checkpointing": t.gradient_checkpointing,
    }


def sft_args(cfg: RunConfig, *, use_cpu: bool) -> Any:
    """`trl.SFTConfig` for this run (assistant-only loss on conversations with tools)."""
    from trl.trainer.sft_config import SFTConfig

    return SFTConfig(**_common(cfg, use_cpu), max_length=cfg.sft.max_length, assistant_only_loss=True)


def grpo_args(cfg: RunConfig, *, use_cpu: bool, reward_weights: list[float]) -> Any:
    """`trl.GRPOConfig` for this run; the generation backend maps onto `use_vllm` / `vllm_mode`."""
    from trl.trainer.grpo_config import GRPOConfig

    g = cfg.grpo
    extra: dict[str, Any] = {}
    if g.generation != "generate":
        extra = {
            "use_vllm": True,
            "vllm_mode": "colocate" if g.generation == "vllm_colocate" else "server",
            "vllm_gpu_memory_utilization": g.vllm_gpu_memory_utilization,
            "vllm_max_model_length": g.max_prompt_length + g.max_completion_length,
        }
        if g.generation == "vllm_colocate":
            extra["vllm_enable_sleep_mode"] = g.vllm_enable_sleep_mode
        if g.vllm_server_base_url:
            extra["vllm_server_base_url"] = g.vllm_server_base_url
    if cfg.chat.enable_thinking is not None:
        extra["chat_template_kwargs"] = {"enable_thinking": cfg.chat.enable_thinking}
    return GRPOConfig(
        **_common(cfg, use_cpu),
        num_generations=g.num_generations,
        max_completion_length=g.max_completion_length,
        max_tool_calling_iterations=g.max_tool_calling_iterations,
        temperature=g.temperature,
        beta=g.beta,
        reward_weights=reward_weights,
        mask_truncated_completions=g.mask_truncated,
        log_completions=False,
        **extra,
    )


#: Linear layers LoRA never adapts: the output head (tied to the embeddings in small models) and routers.
_NOT_ADAPTED = ("lm_head", "score", "gate", "router")


def linear_targets(model: Any) -> list[str]:
    """The names (last path component) of every linear layer of `model` but the output head and MoE routers:
    attention, linear attention and MLP alike, whatever the family calls them."""
    import torch

    names: set[str] = set()
    for path, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):
            leaf = path.rsplit(".", 1)[-1]
            if leaf not in _NOT_ADAPTED:
                names.add(leaf)
    if not names:
        raise ConfigError("lora.target_modules auto: the model has no linear layers to adapt")
    return sorted(names)


def peft_config(cfg: RunConfig, model: Any = None) -> Any:
    """The LoRA config of a run; `target_modules: auto` needs the loaded `model` to read its linear layers."""
    if not cfg.lora.enabled:
        return None
    from peft import LoraConfig as PeftLora

    targets = cfg.lora.target_modules
    if targets == "auto":
        if model is None:
            raise ConfigError("lora.target_modules auto needs the model to read its linear layers from")
        targets = linear_targets(model)
    return PeftLora(
        r=cfg.lora.r,
        lora_alpha=cfg.lora.alpha,
        lora_dropout=cfg.lora.dropout,
        target_modules=targets,
        task_type="CAUSAL_LM",
    )
