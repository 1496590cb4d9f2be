"""An OpenAI-compatible endpoint over a local transformers model: what `kopa bench serve-local` runs where vLLM
cannot (a CPU, the experiment's rehearsal). `POST /v1/chat/completions` renders the request's messages and tools
with the model's own chat template (`chat_template_kwargs` in the body or the server's defaults, as vLLM's
`--default-chat-template-kwargs`), generates with HF `generate` (greedy at temperature 0, seeded otherwise), and
returns the calls the text holds as `tool_calls`, read by the one reader the probes and the benchmark use
(`execution.tool_calls`: Hermes JSON or Qwen3.5 XML), the way vLLM's tool-call parsers return them; `GET /v1/models`
lists the one served name. Requests are answered one at a time (one model, one CPU)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request

from bench.agents import template_messages
from bench.records import ChatCompletion, ChatMessage, ModelList
from execution.tool_calls import parse_tool_calls, strip_think

SPECIAL_TEXT = ("<|im_end|>", "<|endoftext|>", "</s>", "<eos>")


def completion(text: str, tools: list[dict[str, Any]] | None, model: str, n_in: int, n_out: int) -> ChatCompletion:
    """The chat completion of one generated text: calls read from it as `tool_calls`, the rest as content."""
    for special in SPECIAL_TEXT:
        text = text.replace(special, "")
    content, calls = parse_tool_calls(strip_think(text), tools)
    readable = [c for c in calls if c.arguments is not None]
    message: ChatMessage = {"role": "assistant", "content": content if readable else strip_think(text)}
    if readable:
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
            }
            for c in readable
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if readable else "stop"}],
        "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
    }


class LocalModel:
    """A transformers model directory loaded once; `generate` renders, truncates from the left to fit and samples."""

    def __init__(self, model_dir: Path, *, chat_template_kwargs: dict[str, Any] | None = None) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if not (model_dir / "config.json").is_file():
            raise FileNotFoundError(f"{model_dir}: not a transformers model directory (no config.json)")
        self.tok: Any = AutoTokenizer.from_pretrained(model_dir)
        model: Any = AutoModelForCausalLM.from_pretrained(model_dir)
        self.model: Any = model.to("cuda" if torch.cuda.is_available() else "cpu")
        self.model.eval()
        self.kwargs = dict(chat_template_kwargs or {})
        self.lock = threading.Lock()

    def generate(self, body: dict[str, Any]) -> tuple[str, int, int]:
        import torch

        tools = body.get("tools") or None
        kwargs = {**self.kwargs, **(body.get("chat_template_kwargs") or {})}
        prompt = self.tok.apply_chat_template(
            template_messages(list(body.get("messages") or [])),
            tools=tools,
            add_generation_prompt=True,
            tokenize=False,
            **kwargs,
        )
        ids = self.tok(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"]
        max_new = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
        limit = int(getattr(self.model.config, "max_position_embeddings", None) or 4096)
        max_new = min(max_new, limit // 2)
        if ids.shape[1] + max_new > limit:
            ids = ids[:, -(limit - max_new) :]
        ids = ids.to(self.model.device)
        temperature = float(body.get("temperature") or 0.0)
        gen: dict[str, Any] = {
            "max_new_tokens": max_new,
            "do_sample": temperature > 0,
            "attention_mask": torch.ones_like(ids),
        }
        if temperature > 0:
            gen["temperature"] = temperature
            if body.get("top_p") is not None:
                gen["top_p"] = float(body["top_p"])
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else self.tok.eos_token_id
        if pad is not None:
            gen["pad_token_id"] = pad
        with self.lock, torch.no_grad():
            torch.manual_seed(int(body.get("seed") or 0))
            out = self.model.generate(ids, **gen)
        new = out[0, ids.shape[1] :]
        return str(self.tok.decode(new, skip_special_tokens=False)), int(ids.shape[1]), int(new.shape[0])


def make_app(model_dir: Path, name: str, *, chat_template_kwargs: dict[str, Any] | None = None) -> FastAPI:
    local = LocalModel(model_dir, chat_template_kwargs=chat_template_kwargs)
    app = FastAPI(title=f"kopa serve-local {name}")

    @app.get("/v1/models", response_model=None)  # the typed dict is the body, as built
    def models() -> ModelList:
        return {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "local"}]}

    @app.post("/v1/chat/completions", response_model=None)
    async def chat(request: Request) -> ChatCompletion:
        body = await request.json()
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise HTTPException(400, "a chat completion request needs a messages list")
        if body.get("model") not in (None, name):
            raise HTTPException(404, f"model {body.get('model')!r} is not served here (this serves {name!r})")
        try:
            text, n_in, n_out = await asyncio.to_thread(local.generate, body)
        except (ValueError, TypeError) as exc:  # a request the template cannot render
            raise HTTPException(400, f"cannot render the request: {exc}") from None
        return completion(text, body.get("tools"), name, n_in, n_out)

    return app


def serve(model_dir: Path, name: str, *, host: str, port: int, chat_template_kwargs: str = "") -> None:
    kwargs: dict[str, Any] = {}
    if chat_template_kwargs:
        with contextlib.suppress(json.JSONDecodeError):
            kwargs = json.loads(chat_template_kwargs)
        if not isinstance(kwargs, dict) or not kwargs:
            raise ValueError(f"--chat-template-kwargs must be a JSON object, not {chat_template_kwargs!r}")
    app = make_app(model_dir, name, chat_template_kwargs=kwargs)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
