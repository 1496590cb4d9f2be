"""Model adapters and reference agents of KOPA-Bench.

* `OpenAIChatAgent`: any OpenAI-compatible chat endpoint with tools (vLLM, llama.cpp server, Ollama, TGI), over
  httpx: URL, model name, sampling options, timeouts. Tool calls come from `tool_calls`, or from the content
  when the server does not parse them (`<think>` blocks stripped first; Hermes JSON or Qwen3.5 XML `<tool_call>`
  blocks, read by `execution.tool_calls`). A malformed call the model made goes back to the server in a form it
  can parse (`wire_messages`: arguments "{}", the episode's error tool message quotes what the model wrote),
  because vLLM parses replayed arguments strictly and answers HTTP 500 otherwise.
* `TransformersAgent`: a local `transformers` model directory whose chat template supports tools; the generated
  text is parsed for tool calls by `execution.tool_calls` (Hermes JSON or Qwen3.5 XML).
* Reference agents that validate the harness: `OracleAgent` (executes the gold program and answers with the
  facts), `NoToolAgent` (answers without calling), `WrongCallsAgent` (the gold program with one plausible wrong
  argument, as a refuted link or a wrong code would give).

An agent sees an `EpisodeContext` and returns an `AgentReply`; it never raises for a model failure (the reply's
`error` says what went wrong and the episode records it as a scored failure).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, cast

import httpx

from bench.gold import GoldError, compute_facts, depends, from_value, resolve_args, when_holds
from bench.records import AgentInfo, ChatMessage, TemplateMessage, WireToolCall
from bench.tasks import FromArg, GoldStep, Task, UserArg
from core.json_types import JsonObject
from execution.result import CallResult
from execution.tool_calls import parse_tool_calls, strip_think
from synthesis.facts import render_fact

REFUSAL = "죄송하지만 제공된 도구로는 요청하신 정보를 확인할 수 없습니다."


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] | None
    raw: str = ""
    error: str = ""  # why the call could not be read (the episode answers it with an error tool message)


@dataclass
class AgentReply:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    error: str = ""


@dataclass
class EpisodeContext:
    task: Task
    messages: list[ChatMessage]
    tools: list[dict[str, Any]]
    now: datetime
    user_turn: int = 0
    observations: dict[str, CallResult] = field(default_factory=dict)
    scratch: dict[str, Any] = field(default_factory=dict)


class Agent(Protocol):
    name: str

    def describe(self) -> AgentInfo: ...

    async def reply(self, ctx: EpisodeContext) -> AgentReply: ...

    async def aclose(self) -> None: ...


# ---------------------------------------------------------------------------------------------- parsing


def _quoted(raw: str) -> str:
    return json.dumps(raw[:200], ensure_ascii=False) + ("…" if len(raw) > 200 else "")


def parse_tool_blocks(
    text: str, prefix: str = "call", tools: list[dict[str, Any]] | None = None
) -> tuple[str, list[ToolCall]]:
    """(content without the calls, calls) from a model's text, read by `execution.tool_calls` (Hermes JSON or
    Qwen3.5 XML in `<tool_call>` blocks, XML parameter values typed by `tools`); ids `{prefix}_{i}`."""
    content, found = parse_tool_calls(text, tools)
    return content, [ToolCall(f"{prefix}_{i}", c.name, c.arguments, c.raw, c.error) for i, c in enumerate(found)]


def parse_openai_calls(raw_calls: Any) -> list[ToolCall]:
    out: list[ToolCall] = []
    for i, c in enumerate(raw_calls if isinstance(raw_calls, list) else []):
        cid = str(c.get("id") or f"call_{i}") if isinstance(c, dict) else f"call_{i}"
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            out.append(
                ToolCall(
                    cid,
                    "",
                    None,
                    json.dumps(c, ensure_ascii=False, default=str)[:500],
                    "the tool call has no function name",
                )
            )
            continue
        args = fn.get("arguments", "{}")
        raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        if isinstance(args, str):
            try:
                args = json.loads(args or "{}")
            except json.JSONDecodeError as exc:
                out.append(
                    ToolCall(
                        cid,
                        fn["name"],
                        None,
                        raw[:500],
                        f"the arguments are not valid JSON ({exc.msg}): {_quoted(raw)}",
                    )
                )
                continue
        if not isinstance(args, dict):
            out.append(
                ToolCall(cid, fn["name"], None, raw[:500], f"the arguments are not a JSON object: {_quoted(raw)}")
            )
            continue
        out.append(ToolCall(cid, fn["name"], args, raw[:500]))
    return out


def _parsable_arguments(arguments: Any) -> str:
    """Tool-call arguments as a JSON object text a strict server accepts: the model's own when they are one,
    else "{}" (what was wrong, and what the model wrote, is in the error tool message that answers the call)."""
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    if isinstance(arguments, str):
        try:
            if isinstance(json.loads(arguments or "{}"), dict):
                return arguments or "{}"
        except json.JSONDecodeError:
            pass
    return "{}"


def wire_messages(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The conversation as an OpenAI-compatible server parses it: every assistant tool call with arguments that
    decode to a JSON object (vLLM json.loads replayed arguments and fails the request otherwise). The episode's
    own record keeps what the model wrote."""
    out = []
    for m in messages:
        if m["role"] == "assistant" and m.get("tool_calls"):
            calls: list[WireToolCall] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {
                        "name": c["function"]["name"],
                        "arguments": _parsable_arguments(c["function"]["arguments"]),
                    },
                }
                for c in m["tool_calls"]
            ]
            m = {**m, "tool_calls": calls}
        out.append(m)
    return out


def template_messages(messages: list[Any]) -> list[TemplateMessage]:
    """OpenAI wire messages (an episode's, or a request's as `bench.serve_local` receives them) as chat templates
    take them: tool-call arguments as objects ({} when they are not one), no content as ""."""
    out = []
    for m in messages:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            calls = []
            for c in m["tool_calls"]:
                fn = dict(c.get("function") or {})
                args = fn.get("arguments")
                if isinstance(args, str):
                    try:
                        args = json.loads(args or "{}")
                    except json.JSONDecodeError:
                        args = {}
                fn["arguments"] = args if isinstance(args, dict) else {}
                calls.append({**c, "type": "function", "function": fn})
            m = {**m, "tool_calls": calls}
        if m.get("content") is None:
            m = {**m, "content": ""}
        out.append(cast(TemplateMessage, m))
    return out


# ---------------------------------------------------------------------------------------------- model adapters


class OpenAIChatAgent:
    """An OpenAI-compatible `/chat/completions` endpoint with tools."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        temperature: float = 0.0,
        top_p: float | None = None,
        max_tokens: int = 1024,
        seed: int | None = None,
        timeout_s: float = 120.0,
        api_key_env: str | None = None,
        extra: dict[str, Any] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = f"openai:{model}"
        self.url = url.rstrip("/")
        if not self.url.endswith("/chat/completions"):
            self.url = self.url + ("/chat/completions" if self.url.endswith("/v1") else "/v1/chat/completions")
        self.model = model
        self.options: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if top_p is not None:
            self.options["top_p"] = top_p
        if seed is not None:
            self.options["seed"] = seed
        self.options.update(extra or {})
        self.timeout_s = timeout_s
        headers = {}
        if api_key_env:
            key = os.environ.get(api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.AsyncClient(timeout=timeout_s, headers=headers, transport=transport)

    def describe(self) -> AgentInfo:
        return {
            "adapter": "openai",
            "endpoint": self.url,
            "model": self.model,
            "options": self.options,
            "timeout_s": self.timeout_s,
        }

    async def aclose(self) -> None:
        await self._client.aclose()

    async def reply(self, ctx: EpisodeContext) -> AgentReply:
        body = {
            "model": self.model,
            "messages": wire_messages(ctx.messages),
            "tools": ctx.tools,
            "tool_choice": "auto",
            **self.options,
        }
        started = time.perf_counter()
        try:
            resp = await self._client.post(self.url, json=body)
        except httpx.TimeoutException:
            return AgentReply(
                error=f"endpoint timed out after {self.timeout_s:g} s",
                latency_ms=(time.perf_counter() - started) * 1000,
            )
        except httpx.TransportError as exc:
            return AgentReply(
                error=f"endpoint unreachable: {type(exc).__name__}: {exc}",
                latency_ms=(time.perf_counter() - started) * 1000,
            )
        latency = (time.perf_counter() - started) * 1000
        if resp.status_code != 200:
            return AgentReply(error=f"endpoint answered HTTP {resp.status_code}: {resp.text[:200]}", latency_ms=latency)
        try:
            doc = resp.json()
            msg = doc["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            return AgentReply(error=f"not a chat completion: {resp.text[:200]}", latency_ms=latency)
        usage = doc.get("usage") or {}
        content = strip_think(str(msg.get("content") or ""))
        calls = parse_openai_calls(msg.get("tool_calls"))
        if not calls and "<tool_call>" in content:
            content, calls = parse_tool_blocks(
                content, prefix=f"call_t{ctx.user_turn}_{len(ctx.observations)}", tools=ctx.tools
            )
        return AgentReply(
            str(content), calls, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), latency
        )


class TransformersAgent:
    """A local transformers model directory (tokenizer with a tool-aware chat template, causal LM)."""

    def __init__(
        self,
        model_dir: Path | str,
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        top_p: float | None = None,
        seed: int = 0,
        device: str | None = None,
        max_context: int | None = None,
    ) -> None:
        self.model_dir = Path(model_dir)
        if not (self.model_dir / "config.json").is_file():
            raise FileNotFoundError(f"{self.model_dir}: not a transformers model directory (no config.json)")
        self.name = f"transformers:{self.model_dir.name}"
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.seed = seed
        self.device = device
        self.max_context = max_context
        self._lock = asyncio.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def describe(self) -> AgentInfo:
        return {
            "adapter": "transformers",
            "model_dir": str(self.model_dir),
            "model": self.model_dir.name,
            "options": {
                "max_new_tokens": self.max_new_tokens,
                "temperature": self.temperature,
                "top_p": self.top_p,
                "seed": self.seed,
            },
        }

    async def aclose(self) -> None:
        self._loaded = None

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            tok = AutoTokenizer.from_pretrained(self.model_dir)
            model: Any = AutoModelForCausalLM.from_pretrained(self.model_dir)
            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            model = model.to(device)
            model.eval()
            self._loaded = (tok, model)
        return self._loaded

    def _generate(self, messages: list[ChatMessage], tools: list[dict[str, Any]]) -> tuple[str, int, int]:
        import torch

        tok, model = self._load()
        prompt = tok.apply_chat_template(
            template_messages(wire_messages(messages)), tools=tools, add_generation_prompt=True, tokenize=False
        )
        enc = tok(prompt, return_tensors="pt", add_special_tokens=False)
        ids = enc["input_ids"]
        limit = int(self.max_context or getattr(model.config, "max_position_embeddings", None) or 4096)
        if ids.shape[1] + self.max_new_tokens > limit:
            ids = ids[:, -(limit - self.max_new_tokens) :]
        ids = ids.to(model.device)
        torch.manual_seed(self.seed)
        sample = self.temperature > 0
        kwargs: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens,
            "do_sample": sample,
            "attention_mask": torch.ones_like(ids),
        }
        if sample:
            kwargs["temperature"] = self.temperature
            if self.top_p is not None:
                kwargs["top_p"] = self.top_p
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        if pad is not None:
            kwargs["pad_token_id"] = pad
        with torch.no_grad():
            out = model.generate(ids, **kwargs)
        new = out[0, ids.shape[1] :]
        return str(tok.decode(new, skip_special_tokens=False)), int(ids.shape[1]), int(new.shape[0])

    async def reply(self, ctx: EpisodeContext) -> AgentReply:
        started = time.perf_counter()
        async with self._lock:
            try:
                text, n_in, n_out = await asyncio.to_thread(self._generate, ctx.messages, ctx.tools)
            except Exception as exc:  # a model failure is a scored failure, never a crashed run
                return AgentReply(
                    error=f"generation failed: {type(exc).__name__}: {exc}",
                    latency_ms=(time.perf_counter() - started) * 1000,
                )
        for special in ("<|im_end|>", "<|endoftext|>", "</s>", "<eos>"):
            text = text.replace(special, "")
        text = strip_think(text)
        content, calls = parse_tool_blocks(
            text, prefix=f"call_t{ctx.user_turn}_{len(ctx.observations)}", tools=ctx.tools
        )
        return AgentReply(content, calls, n_in, n_out, (time.perf_counter() - started) * 1000)


# ---------------------------------------------------------------------------------------------- reference agents


class NoToolAgent:
    """Answers without calling any tool (an honest refusal)."""

    name = "no_tool"

    def describe(self) -> AgentInfo:
        return {"adapter": "reference", "model": "no_tool"}

    async def aclose(self) -> None:
        return None

    async def reply(self, ctx: EpisodeContext) -> AgentReply:
        return AgentReply(REFUSAL)


class OracleAgent:
    """Executes the gold program through the episode (independent steps in parallel, `when` evaluated on what it
    observed) and answers with the facts computed from its own observations."""

    name = "oracle"

    def describe(self) -> AgentInfo:
        return {"adapter": "reference", "model": self.name}

    async def aclose(self) -> None:
        return None

    def adjust(
        self, task: Task, step: GoldStep, args: JsonObject, results: dict[str, CallResult], scratch: dict[str, Any]
    ) -> JsonObject:
        return args

    def answer(self, task: Task, results: dict[str, CallResult]) -> str:
        try:
            facts = compute_facts(task, results)
        except GoldError:
            return REFUSAL
        return "조회 결과입니다. " + " / ".join(render_fact(f) for f in facts) + "."

    async def reply(self, ctx: EpisodeContext) -> AgentReply:
        task = ctx.task
        if task.category == "irrelevance":
            return AgentReply(REFUSAL)
        if task.category == "clarification" and ctx.user_turn == 0 and task.clarify is not None:
            return AgentReply(f"{task.clarify.ask_keywords[0]} 정보를 알려주시겠어요? 어느 쪽인지 확인이 필요합니다.")
        issued: dict[str, str] = ctx.scratch.setdefault("issued", {})  # step id -> call id
        skipped: set[str] = ctx.scratch.setdefault("skipped", set())
        results = {sid: ctx.observations[cid] for sid, cid in issued.items() if cid in ctx.observations}
        ready: list[ToolCall] = []
        for step in task.gold:
            if step.id in issued or step.id in skipped:
                continue
            deps = depends(step)
            if deps & skipped:
                skipped.add(step.id)
                continue
            if not deps <= set(results):
                continue
            try:
                if not when_holds(step.when, results):
                    skipped.add(step.id)
                    continue
                spec = next((t for t in ctx.tools if t.get("function", {}).get("name") == step.tool), None)
                args = resolve_args(step, results, ctx.now, spec)
            except GoldError:
                skipped.add(step.id)
                continue
            args = self.adjust(task, step, args, results, ctx.scratch)
            cid = f"oracle_{step.id}"
            issued[step.id] = cid
            ready.append(ToolCall(cid, step.tool, args, json.dumps(args, ensure_ascii=False)))
        if ready:
            return AgentReply("", ready)
        if any(s.id not in issued and s.id not in skipped for s in task.gold):
            return AgentReply(REFUSAL)  # waiting on nothing: a dependency gave no usable result
        return AgentReply(self.answer(task, results))


def _corrupt_text(value: Any) -> str:
    text = str(value)
    digits = [i for i, ch in enumerate(text) if ch.isdigit()]
    if digits:
        i = digits[-1]
        return text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1 :]
    return text[::-1] + "동"


class WrongCallsAgent(OracleAgent):
    """The gold program with one plausible wrong argument per task: a code taken from the wrong field of the
    earlier result (what a refuted link gives), or, with no such code, a wrong user value. `affected` lists the
    tasks it changed."""

    name = "wrong_calls"

    def __init__(self) -> None:
        self.affected: set[str] = set()

    def adjust(
        self, task: Task, step: GoldStep, args: JsonObject, results: dict[str, CallResult], scratch: dict[str, Any]
    ) -> JsonObject:
        if scratch.get("corrupted"):
            return args
        if step.expect != "ok":
            return args  # a step meant to fail fails anyway: changing it proves nothing
        has_from = any(isinstance(src, FromArg) for s in task.gold for src in s.args.values())
        for name, src in step.args.items():
            if isinstance(src, FromArg):
                try:
                    row = from_value(src, results).row
                except GoldError:
                    continue
                right = str(args[name])
                for other in sorted(row):
                    v = row[other]
                    if (
                        other != src.field
                        and v not in (None, "")
                        and not isinstance(v, list | dict)
                        and str(v) != right
                    ):
                        scratch["corrupted"] = f"{step.id}.{name}: {other} instead of {src.field}"
                        self.affected.add(task.id)
                        return {**args, name: str(v)}
            elif isinstance(src, UserArg) and not has_from and isinstance(args[name], str | int):
                scratch["corrupted"] = f"{step.id}.{name}: wrong user value"
                self.affected.add(task.id)
                return {**args, name: _corrupt_text(args[name])}
        return args

    def answer(self, task: Task, results: dict[str, CallResult]) -> str:
        try:
            facts = compute_facts(task, results)
        except GoldError:
            return "조회했습니다. 요청하신 결과는 위와 같습니다."
        return "조회 결과입니다. " + " / ".join(render_fact(f) for f in facts) + "."


REFERENCE_AGENTS: dict[str, Callable[[], Agent]] = {
    "oracle": OracleAgent,
    "no_tool": NoToolAgent,
    "wrong_calls": WrongCallsAgent,
}
