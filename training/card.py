"""The model card (README.md) of a run's `model/` and `adapter/`: what a user of a tuned checkpoint expects to find
next to it, in place of trl's generic "fine-tuned version of [None]".

Its YAML front matter is what the Hugging Face Hub reads (`base_model`, `library_name`, `license`, `tags`); its body
states the base model, the training data (source, sha256, counts), the config, the GRPO rewards and their weights,
the held-out figures before and after, the GRPO health figures, and how to serve the folder with the family's
tool-call and reasoning parsers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

#: A family's tool-call format, read from its chat template, and the vLLM parsers that read it back
#: (configs/experiment/<family>/family.env names the same ones).
_XML_CALLS = "<function="


def serving_parsers(template: str) -> dict[str, str | None]:
    """vLLM's tool-call parser for a chat template's call format (Qwen3.5's XML or Hermes JSON), and its reasoning
    parser when the template thinks."""
    tool = "qwen3_coder" if _XML_CALLS in template else "hermes"
    return {"tool_call_parser": tool, "reasoning_parser": "qwen3" if "<think>" in template else None}


def base_licence(base: Path) -> str:
    """The base model's licence as its own card declares it (front matter `license:`), else a pointer to it."""
    readme = base / "README.md"
    if readme.exists():
        m = re.search(r"^license:\s*(\S+)", readme.read_text(encoding="utf-8", errors="replace"), re.MULTILINE)
        if m:
            return m.group(1).strip("'\"")
    return "other"


def _template(folder: Path) -> str:
    for name in ("chat_template.jinja", "tokenizer_config.json"):
        path = folder / name
        if path.exists():
            text = path.read_text(encoding="utf-8")
            if name.endswith(".json"):
                return str(json.loads(text).get("chat_template") or "")
            return text
    return ""


def _figures(held_out: dict[str, Any] | None) -> list[str]:
    if not held_out:
        return ["No held-out probes ran (no held-out record with a call)."]
    before, after = held_out["before"], held_out["after"]
    return [
        "| held-out probe (greedy first turn) | before | after |",
        "|---|---|---|",
        f"| well-formed call rate | {before['well_formed_call_rate']:.0%} | {after['well_formed_call_rate']:.0%} |",
        f"| first tool right | {before['first_tool_right']:.0%} | {after['first_tool_right']:.0%} |",
        "",
        f"{after.get('probed', '?')} held-out prompts (split by tool sequence), {held_out['points']} probe points "
        "(eval.jsonl).",
    ]


def model_card(
    kind: str, config: dict[str, Any], manifest: dict[str, Any], summary: dict[str, Any], folder: Path, *, adapter: bool
) -> str:
    """The card text of `folder` (a run's `model/`, or `adapter/` when `adapter`)."""
    base = Path(str(config["model"]))
    parsers = serving_parsers(_template(folder))
    thinking = (config.get("chat") or {}).get("enable_thinking")
    licence = base_licence(base)
    front = {
        "base_model": str(base),
        "library_name": "peft" if adapter else "transformers",
        "license": licence,
        "tags": ["kopa-edge", kind, "tool-calling", *(["lora"] if adapter else [])],
        "pipeline_tag": "text-generation",
    }
    serve = [
        "vllm serve",
        *([str(base), "--enable-lora", f"--lora-modules tuned={folder}"] if adapter else [str(folder)]),
        f"--enable-auto-tool-choice --tool-call-parser {parsers['tool_call_parser']}",
    ]
    if parsers["reasoning_parser"]:
        serve.append(f"--reasoning-parser {parsers['reasoning_parser']}")
    if thinking is not None:
        serve.append(f"--default-chat-template-kwargs '{json.dumps({'enable_thinking': thinking})}'")
    data = {
        k: manifest.get(k)
        for k in ("source", "sha256", "records", "train", "eval", "used_train_rows", "abstain_rows", "environment")
        if manifest.get(k) is not None
    }
    lines = [
        "---",
        yaml.safe_dump(front, allow_unicode=True, sort_keys=False).strip(),
        "---",
        "",
        f"# {kind.upper()} of {base.name} on KOPA EDGE trajectories",
        "",
        f"{'The LoRA adapter' if adapter else 'The model (LoRA merged)' if config['lora']['enabled'] else 'The model'}"
        f" of run `{Path(str(config['output']))}`: `kopa train {kind}` (training/run.py) from the base model "
        f"`{base}`, {summary.get('steps')} steps on {summary.get('device')}.",
        "",
        "## Data",
        "",
        "```json",
        json.dumps(data, ensure_ascii=False, indent=1),
        "```",
        "",
        "## Evaluation",
        "",
        *_figures(summary.get("held_out")),
        "",
    ]
    if kind == "grpo":
        rewards = (config.get("grpo") or {}).get("rewards") or {}
        lines += [
            "## Rewards (training/rewards.py, weights as configured)",
            "",
            "| reward | weight |",
            "|---|---|",
            *[f"| {k} | {v} |" for k, v in rewards.items()],
            "",
            f"First logged mean reward {summary.get('first_reward')}, last {summary.get('last_reward')}; "
            f"{summary.get('tool_calls')} tool calls executed ({config['grpo'].get('environment')} tools).",
            "",
            "Health: `" + json.dumps(summary.get("health") or {}, ensure_ascii=False) + "`",
            "",
        ]
    lines += [
        "## Serving",
        "",
        "```bash",
        " \\\n  ".join(serve),
        "```",
        "",
        "Serve with the chat-template arguments the run trained with (`chat` in the config below): the GRPO "
        "rollouts and SFT rows were rendered with them.",
        "",
        "## Licence",
        "",
        f"The base model's licence applies (`{licence}`; see `{base}`). The training data are trajectories over "
        "public Korean open-data APIs; their responses are subject to each provider's terms.",
        "",
        "## Config",
        "",
        "```yaml",
        yaml.safe_dump(config, allow_unicode=True, sort_keys=False).strip(),
        "```",
        "",
    ]
    return "\n".join(lines)


def write_model_cards(run: Path, kind: str, summary: dict[str, Any]) -> list[Path]:
    """README.md in the run's `model/` and `adapter/` (those that exist), from its config.yaml and manifest.json."""
    config = yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8"))
    man_path = run / "manifest.json"
    manifest = json.loads(man_path.read_text(encoding="utf-8")) if man_path.exists() else {}
    written = []
    for name in ("model", "adapter"):
        folder = run / name
        if folder.is_dir():
            card = model_card(kind, config, manifest, summary, folder, adapter=name == "adapter")
            (folder / "README.md").write_text(card, encoding="utf-8")
            written.append(folder / "README.md")
    return written
