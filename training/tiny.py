"""A tiny Qwen2-architecture model and tokenizer, built locally (no downloads), for tests and CPU demos.

The tokenizer is a byte-level BPE trained on the text it will see (the rendered conversations of a dataset plus
the chat template's fixed text), so Korean requests and JSON tool schemas stay short. Its chat template is one of
trl's bundled templates byte for byte (`FAMILIES`: Qwen2.5 by default; Qwen3 with Hermes JSON calls; Qwen3.5 with
XML calls, the experiment's family): trl recognises templates only by exact equality with its bundled ones, so
this is what makes `GRPOTrainer(tools=...)` / `environment_factory` accept it and set the response parser itself,
and what lets `SFTTrainer(assistant_only_loss=True)` swap in the matching training template.

`eos_token` is the end-of-turn token `<|im_end|>` (generation stops on it, and trl trims tool suffixes at it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
#: Non-special added tokens (they survive decoding, as in Qwen).
MARKERS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]


#: Chat-template families a tiny model can be built with: the real families' templates as trl ships them (trl
#: recognises a template only byte for byte), and how each writes a tool call.
FAMILIES = {
    "qwen2.5": "qwen2_5_chat_template",  # Hermes JSON in <tool_call>
    "qwen3": "qwen3_chat_template",  # Hermes JSON in <tool_call>, <think> blocks
    "qwen3.5": "qwen3_5_think_chat_template",  # XML <function=...><parameter=...> in <tool_call>; thinks by default
}


def chat_template(family: str = "qwen2.5") -> str:
    """The chat template text of a family, as the installed trl package bundles it (nothing is downloaded)."""
    import trl.chat_template_utils as ctu

    if family not in FAMILIES:
        raise ValueError(f"unknown template family {family!r} (one of {', '.join(FAMILIES)})")
    return str(getattr(ctu, FAMILIES[family]))


def _filler() -> list[str]:
    """A few generic lines so that a tokenizer trained on little data still covers JSON and digits."""
    lines = []
    for i in range(200):
        lines.append(json.dumps({"name": f"tool_{i % 17}", "arguments": {"a": i, "b": str(i * 7), "c": [i, i + 1]}}))
        lines.append(f'<tool_call>\n{{"name": "f{i}", "arguments": {{"x": "{i:05d}"}}}}\n</tool_call>')
    return lines


def build_tokenizer(
    corpus: Iterable[str], *, vocab_size: int = 4096, words: Iterable[str] = (), family: str = "qwen2.5"
) -> Any:
    """A byte-level BPE tokenizer (`PreTrainedTokenizerFast`) trained on `corpus`, with the Qwen2.5 template.
    `words` (e.g. the tool names) become whole tokens: Qwen2's pre-tokeniser splits `mfds_get_dur_prdlst_info_list03`
    into eight pieces no merge can join, and a model a few layers deep cannot learn to spell eight-piece names it
    reads three times per prompt within a CPU budget; as one token, naming a tool is one choice among the offered."""
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    bpe = Tokenizer(models.BPE())
    # Qwen2's own normaliser and pre-tokeniser: `AutoTokenizer` loads a qwen2 model's tokenizer as `Qwen2Tokenizer`,
    # which rebuilds both from these, so the benchmark's local adapter tokenises exactly as training does
    bpe.normalizer = normalizers.NFC()
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    template_text = chat_template(family)
    bpe.train_from_iterator([*corpus, template_text, *_filler()], trainer=trainer)
    tok = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in [*MARKERS, *dict.fromkeys(words)]])
    tok.chat_template = template_text
    return tok


def build_model(tok: Any, *, hidden_size: int = 64, layers: int = 2, max_positions: int = 8192, seed: int = 0) -> Any:
    """A randomly initialised `Qwen2ForCausalLM` sized for a CPU."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    eos = tok.convert_tokens_to_ids("<|im_end|>")
    pad = tok.convert_tokens_to_ids("<|endoftext|>")
    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        pad_token_id=pad,
        eos_token_id=eos,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(  # type: ignore[no-untyped-call]
        eos_token_id=eos, pad_token_id=pad, do_sample=True
    )
    return model


def conversation_texts(rows: Iterable[dict[str, Any]], family: str = "qwen2.5") -> list[str]:
    """Conversations with tools (`messages`/`prompt` + `tools`) rendered by the chat template, one text a row: the
    text the model will read, the template's fixed instructions and JSON included, so BPE merges what every row
    repeats (trained on the messages alone, the English tool instructions stay one character a token, about 200
    tokens of every prompt)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    template = chat_template(family)
    out = []
    for row in rows:
        messages = list(row.get("messages") or row.get("prompt") or [])
        rendered = render_jinja_template([messages], tools=row.get("tools") or None, chat_template=template)[0]
        out.append(str(rendered[0]))
    return out


def build_tiny(
    out: Path,
    corpus: Iterable[str] = (),
    *,
    vocab_size: int = 4096,
    words: Iterable[str] = (),
    hidden_size: int = 64,
    layers: int = 2,
    max_positions: int = 8192,
    seed: int = 0,
    family: str = "qwen2.5",
) -> Path:
    """Build and save a tiny model + tokenizer to `out` (loadable with `load_tiny` or any `from_pretrained`), with
    the chat template of `family`."""
    tok = build_tokenizer(corpus, vocab_size=vocab_size, words=words, family=family)
    model = build_model(tok, hidden_size=hidden_size, layers=layers, max_positions=max_positions, seed=seed)
    out.mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(out)
    model.save_pretrained(out)
    return out


def load_tokenizer(path: Path | str) -> Any:
    """The saved tokenizer as trained (not `AutoTokenizer`, which swaps in `Qwen2Tokenizer` for a qwen2 config)."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(str(path))


def check_template(tok: Any) -> dict[str, bool]:
    """trl's own checks of a tokenizer's chat template for tool-calling training."""
    from trl.chat_template_utils import is_chat_template_prefix_preserving, supports_tool_calling

    return {
        "tool_calling": bool(supports_tool_calling(tok)),
        "prefix_preserving": bool(is_chat_template_prefix_preserving(tok)),
    }
