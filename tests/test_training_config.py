"""LoRA targets read from the model (every linear layer of the family), adapters saved where vLLM serves them, and
the shipped example configs load as the README gives them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from training.config import ConfigError, linear_targets, load_config, peft_config

ROOT = Path(__file__).resolve().parents[1]


def _qwen35_tiny() -> Any:
    """A tiny Qwen3.5 text model: three linear-attention (Gated DeltaNet) layers and one full-attention layer."""
    from transformers import Qwen3_5TextConfig
    from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5ForCausalLM

    cfg = Qwen3_5TextConfig(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        linear_num_key_heads=2,
        linear_num_value_heads=4,
        linear_key_head_dim=16,
        linear_value_head_dim=16,
    )
    assert list(cfg.layer_types or []).count("linear_attention") == 3
    return Qwen3_5ForCausalLM(cfg)


def test_auto_targets_adapt_every_layer_of_a_hybrid_family() -> None:
    from peft import get_peft_model

    model = _qwen35_tiny()
    targets = linear_targets(model)
    # the fixed list of attention projections used before would have missed these
    assert {"in_proj_qkv", "in_proj_z", "in_proj_a", "in_proj_b", "out_proj"} <= set(targets)
    assert {"gate_proj", "up_proj", "down_proj"} <= set(targets)
    assert "lm_head" not in targets
    cfg = load_config(None, ["lora.enabled=true"], model=Path("m"), output=Path("o"))
    peft_model = get_peft_model(model, peft_config(cfg, model))
    adapted_layers = {
        name.split(".layers.")[1].split(".")[0]
        for name, _ in peft_model.named_modules()
        if ".layers." in name and name.endswith("lora_A")
    }
    assert adapted_layers == {"0", "1", "2", "3"}
    mlp = [n for n, _ in peft_model.named_modules() if ".mlp." in n and n.endswith("lora_A")]
    assert len(mlp) == 4 * 3


def test_auto_targets_need_the_model_and_a_list_is_kept() -> None:
    cfg = load_config(None, ["lora.enabled=true"], model=Path("m"), output=Path("o"))
    with pytest.raises(ConfigError, match="needs the model"):
        peft_config(cfg)
    listed = load_config(None, ["lora.target_modules=[q_proj, v_proj]"], model=Path("m"), output=Path("o"))
    assert sorted(peft_config(listed).target_modules) == ["q_proj", "v_proj"]
    with pytest.raises(ConfigError, match="target_modules"):
        load_config(None, ["lora.target_modules=everything"], model=Path("m"), output=Path("o"))


@pytest.mark.parametrize("path", sorted((ROOT / "configs").rglob("*.yaml")), ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_configs_load(path: Path) -> None:
    cfg = load_config(path)
    assert cfg.model and cfg.output
    if "grpo" in path.name:
        per_step = cfg.train.per_device_train_batch_size * cfg.train.gradient_accumulation_steps
        assert per_step % cfg.grpo.num_generations == 0
