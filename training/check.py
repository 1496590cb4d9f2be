"""`kopa train check --model DIR`: what a GPU run needs of a local model, checked before it starts (minutes here,
not hours into the run):

* the chat template is one trl recognises (trl matches templates byte for byte and sets the response parser from
  the match; any other template stops `GRPOTrainer(tools=...)` at start) and supports tool calling;
* a training template exists (the template itself when prefix-preserving with generation markers, else trl's
  bundled `*_training` swap) and a sample conversation renders through it with the right assistant mask: the
  assistant's call and answer are trained, the system, user and tool text are not;
* the template's own rendering of a gold call is read back as the same call by the project's reader
  (`execution.tool_calls`, the probes and the benchmark) and by trl's `parse_response` (GRPO);
* with data, the tokenizer's lengths of the rows against the config's budgets (SFT max_length, GRPO prompt and
  completion), so a budget that cuts tool results is seen before training.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from execution.tool_calls import parse_tool_calls, strip_think
from synthesis.export import token_lengths
from synthesis.records import Trajectory
from training.config import RunConfig

SYSTEM = "You answer with the tools."
USER = "서울 종로구의 미세먼지 농도를 알려줘"
RESULT = '{"pm10": 52, "station": "종로구"}'
ANSWER = "종로구의 미세먼지 농도는 52㎍/㎥입니다."
ARGS = {"stationName": "종로구", "numOfRows": 3}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "airkorea_get_msrstn_accto_rltm_mesure_dnsty",
            "description": "Real-time air quality of a measuring station.",
            "parameters": {
                "type": "object",
                "properties": {"stationName": {"type": "string"}, "numOfRows": {"type": "integer"}},
                "required": ["stationName"],
            },
        },
    }
]
NAME = TOOLS[0]["function"]["name"]
CALL = {"type": "function", "function": {"name": NAME, "arguments": ARGS}}


def sample() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "name": NAME, "content": RESULT},
        {"role": "assistant", "content": ANSWER},
    ]


def _check(name: str, ok: bool, detail: str) -> dict[str, Any]:
    return {"check": name, "ok": bool(ok), "detail": detail}


def template_checks(tok: Any, chat_kwargs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The template, mask and parser checks of one tokenizer."""
    from trl.chat_template_utils import (
        add_response_schema,
        get_training_chat_template,
        is_chat_template_prefix_preserving,
        parse_response,
        supports_tool_calling,
    )

    kwargs = dict(chat_kwargs or {})
    out: list[dict[str, Any]] = []
    if not isinstance(getattr(tok, "chat_template", None), str):
        return [_check("chat template", False, "the tokenizer has no chat template (tokenizer_config.json)")]
    parsing = copy.deepcopy(tok)
    try:
        parsing = add_response_schema(parsing)
        out.append(_check("template recognised by trl", True, "trl sets the response parser from its bundled copy"))
    except ValueError as exc:
        out.append(
            _check(
                "template recognised by trl",
                False,
                f"{str(exc).splitlines()[0]} (trl matches templates byte for byte: use the model's released "
                "tokenizer_config.json unchanged)",
            )
        )
        parsing = None
    out.append(_check("tool calling", supports_tool_calling(tok), "a call, its arguments and a tool result render"))
    training = None
    try:
        training = get_training_chat_template(tok)
    except ValueError as exc:
        out.append(_check("training template", False, str(exc).splitlines()[0]))
    else:
        own = training is None
        out.append(
            _check(
                "training template",
                True,
                f"the template itself (prefix-preserving: {is_chat_template_prefix_preserving(tok)})"
                if own
                else "trl's bundled training variant (prefix-preserving, with generation markers)",
            )
        )
        out.append(_mask_check(tok, training, kwargs))
    out.append(_parser_check(tok, parsing, kwargs, parse_response))
    return out


def _mask_check(tok: Any, training: str | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The assistant mask of the sample through the training template: the call and the answer are trained; the
    system, user and tool text are not."""
    try:
        enc = tok.apply_chat_template(
            sample(),
            tools=TOOLS,
            chat_template=training,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
            **kwargs,
        )
    except (ValueError, TypeError) as exc:
        return _check("assistant mask", False, f"the sample does not render with a mask: {exc}")
    ids, mask = list(enc["input_ids"]), list(enc["assistant_masks"])
    trained = tok.decode([i for i, m in zip(ids, mask, strict=True) if m], skip_special_tokens=False)
    untrained = tok.decode([i for i, m in zip(ids, mask, strict=True) if not m], skip_special_tokens=False)
    wanted = [NAME, ANSWER, "종로구"]
    missing = [w for w in wanted if w not in trained]
    leaked = [w for w in (USER, SYSTEM, RESULT) if w in trained]
    ok = sum(mask) > 0 and not missing and not leaked and USER in untrained
    detail = f"{sum(mask)} of {len(ids)} tokens trained"
    if missing:
        detail += f"; not trained: {missing}"
    if leaked:
        detail += f"; trained but not the model's: {leaked}"
    return _check("assistant mask", ok, detail)


def _completion_text(tok: Any, kwargs: dict[str, Any]) -> tuple[str, str]:
    """(prompt, completion) texts of the sample's call: the prompt with the generation prompt, and the rest of the
    conversation rendered with the call (the template's own writing of it)."""
    head = sample()[:2]
    prompt = str(tok.apply_chat_template(head, tools=TOOLS, add_generation_prompt=True, tokenize=False, **kwargs))
    full = str(tok.apply_chat_template(sample()[:3], tools=TOOLS, tokenize=False, **kwargs))
    if full.startswith(prompt):
        return prompt, full[len(prompt) :]
    marker = full.rfind(NAME)
    start = full.rfind("\n", 0, full.rfind("<tool_call>", 0, marker) if "<tool_call>" in full else marker)
    return prompt, full[start + 1 :]


def _parser_check(tok: Any, parsing: Any, kwargs: dict[str, Any], parse_response: Any) -> dict[str, Any]:
    prompt, completion = _completion_text(tok, kwargs)
    _, calls = parse_tool_calls(strip_think(completion), TOOLS)
    ours = [(c.name, c.arguments) for c in calls]
    problems = []
    if ours != [(NAME, ARGS)]:
        problems.append(f"execution.tool_calls read {ours or 'no call'} from {completion[:160]!r}")
    if parsing is not None:
        prefix = tok(prompt, add_special_tokens=False)["input_ids"]
        ids = tok(prompt + completion, add_special_tokens=False)["input_ids"][len(prefix) :]
        try:
            parsed = parse_response(parsing, ids, prefix=prefix, tools=TOOLS)
        except (ValueError, TypeError, KeyError) as exc:
            problems.append(f"trl's parse_response failed: {exc}")
        else:
            theirs = [(c["function"]["name"], c["function"]["arguments"]) for c in (parsed.get("tool_calls") or [])]
            if theirs != [(NAME, ARGS)]:
                problems.append(f"trl's parse_response read {theirs or 'no call'}")
    return _check(
        "parser reads the template's own call",
        not problems,
        "; ".join(problems) or "execution.tool_calls" + (" and trl's parse_response" if parsing else "") + " agree",
    )


def length_checks(tok: Any, records: Sequence[Trajectory], cfg: RunConfig) -> tuple[list[dict[str, Any]], Any]:
    """The rows' token lengths against the config's SFT and GRPO budgets."""
    figures = token_lengths(records, tok)
    s, p, c = figures["sft"], figures["grpo_prompt"], figures["grpo_completion"]
    budgets = [
        ("SFT conversation", s, cfg.sft.max_length, "sft.max_length"),
        ("GRPO prompt", p, cfg.grpo.max_prompt_length, "grpo.max_prompt_length"),
        (
            "GRPO completion (calls, tool results, answer)",
            c,
            cfg.grpo.max_completion_length,
            "grpo.max_completion_length",
        ),
    ]
    out = []
    for label, spread, budget, key in budgets:
        out.append(
            _check(
                f"{label} tokens",
                spread["max"] <= budget,
                f"p50 {spread['p50']}, p90 {spread['p90']}, max {spread['max']} against {key} {budget}",
            )
        )
    return out, figures


def check_model(model_dir: Path, records: Sequence[Trajectory] = (), cfg: RunConfig | None = None) -> dict[str, Any]:
    """Every check of a model directory (its tokenizer), and the data's lengths when records are given."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    cfg = cfg or RunConfig(model=model_dir, output=model_dir)
    kwargs = {"enable_thinking": cfg.chat.enable_thinking} if cfg.chat.enable_thinking is not None else {}
    checks = template_checks(tok, kwargs)
    lengths = None
    if records:
        more, lengths = length_checks(tok, records, cfg)
        checks += more
    return {"model": str(model_dir), "ok": all(c["ok"] for c in checks), "checks": checks, "lengths": lengths}
