"""Tiny OpenAI-compatible chat-completions servers for validating the BFCL harness without a GPU.

* oracle: finds the BFCL question a request carries (its user message and tool names) in bfcl-eval's shipped
  data and answers with the ground truth from possible_answer/ as `tool_calls`; a question without a possible
  answer (irrelevance) gets a plain text reply, i.e. no call.
* null: never calls a tool.

Both run with uvicorn on a free loopback port in a background thread (`serve_endpoint`).
"""

from __future__ import annotations

import functools
import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import uvicorn
from fastapi import FastAPI, Request

from tests.support.helpers import free_port

Kind = Literal["oracle", "null"]
# How the oracle's calls come back: OpenAI `tool_calls` (a server whose tool parser matched), or left in the text
# the way a server without a matching parser returns them: Hermes/Qwen JSON in <tool_call>, or the XML
# <function=...><parameter=...> style of Qwen3-Coder / Qwen3.5 templates.
# "mixed" alternates hermes and xml from one request to the next.
Style = Literal["tool_calls", "hermes", "xml", "mixed"]
MODEL = "kopa-test-model"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _tool_name(name: str) -> str:
    return name.replace(".", "_")


def _last_user(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def _pick(allowed: Any) -> tuple[bool, Any]:
    """(keep, value) from a possible-answer list of allowed values: the first given value; a parameter whose only
    allowed value is "" (may be omitted) is left out."""
    if isinstance(allowed, list):
        given = [v for v in allowed if v != ""]
        if not given:
            return False, None
        return True, _value(given[0])
    return True, _value(allowed)


def _value(value: Any) -> Any:
    if isinstance(value, dict):  # nested dict: each value is again a list of allowed values
        out = {}
        for key, allowed in value.items():
            keep, picked = _pick(allowed)
            if keep:
                out[key] = picked
        return out
    if isinstance(value, list):
        return [_value(v) for v in value]
    return value


def _java_element(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return _java(value, "HashMap")
    if isinstance(value, list):
        return _java(value, "ArrayList")
    return json.dumps(value)


def _java(value: Any, java_type: str) -> str:
    """A Java source literal for a ground-truth value (simple_java parameters are Java code strings)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float) and java_type in ("long", "float"):
        return f"{value}{'L' if java_type == 'long' else 'f'}"
    if isinstance(value, dict):
        puts = " ".join(f"put({_java_element(k)}, {_java_element(v)});" for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    if isinstance(value, list):
        items = ", ".join(_java_element(v) for v in value)
        return f"new Object[]{{{items}}}" if java_type == "Array" else f"new ArrayList<>(Arrays.asList({items}))"
    return json.dumps(value)


def _javascript(value: Any) -> str:
    """A JavaScript source literal (simple_javascript parameters are JavaScript code strings)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


class Oracle:
    """Ground-truth answers for BFCL's single-turn questions, from bfcl-eval's own data folder."""

    def __init__(self, data: Path) -> None:
        self.answers: dict[tuple[str, frozenset[str]], list[tuple[str, dict[str, Any]]]] = {}
        for truth_file in sorted((data / "possible_answer").glob("BFCL_v4_*.json")):
            questions_file = data / truth_file.name
            if not questions_file.is_file():
                continue
            truth = {row["id"]: row["ground_truth"] for row in _jsonl(truth_file)}
            for entry in _jsonl(questions_file):
                ground = truth.get(entry["id"])
                if not isinstance(ground, list) or not entry.get("question") or "function" not in entry:
                    continue
                if not all(isinstance(call, dict) for call in ground):  # multi-turn answers are code strings
                    continue
                language = entry["id"].rsplit("_", 1)[0]
                schemas = {f["name"]: f.get("parameters", {}).get("properties", {}) for f in entry["function"]}
                calls = []
                for call in ground:
                    ((name, params),) = call.items()
                    args = {}
                    for param, allowed in params.items():
                        keep, picked = _pick(allowed)
                        if not keep:
                            continue
                        if language == "simple_java":
                            picked = _java(picked, str(schemas.get(name, {}).get(param, {}).get("type", "")))
                        elif language == "simple_javascript":
                            picked = _javascript(picked)
                        args[param] = picked
                    calls.append((_tool_name(name), args))
                key = (_last_user(entry["question"][0]), frozenset(_tool_name(f["name"]) for f in entry["function"]))
                self.answers.setdefault(key, calls)

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[tuple[str, Any]] | None:
        if not tools or (messages and messages[-1].get("role") == "tool"):
            return None
        names = frozenset(str(t.get("function", t).get("name")) for t in tools)
        return self.answers.get((_last_user(messages), names))


def _text_calls(calls: list[tuple[str, Any]], style: Style) -> str:
    blocks = []
    for name, args in calls:
        if style == "hermes":
            blocks.append(f"<tool_call>\n{json.dumps({'name': name, 'arguments': args}, ensure_ascii=False)}\n</tool_call>")
            continue
        params = "".join(
            f"<parameter={key}>\n{value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}\n"
            "</parameter>\n" for key, value in args.items())
        blocks.append(f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>")
    return "<think>\nThe user wants a function call.\n</think>\n\n" + "\n".join(blocks)


@functools.lru_cache(maxsize=2)
def load_oracle(data: Path) -> Oracle:
    """The oracle of one data folder, read once per process."""
    return Oracle(data)


def _completion(calls: list[tuple[str, Any]] | None, text: str, style: Style = "tool_calls",
                serial: int = 0) -> dict[str, Any]:
    if style == "mixed":
        style = "hermes" if serial % 2 else "xml"
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else text}
    if calls and style != "tool_calls":
        message["content"] = _text_calls(calls, style)
    elif calls:
        message["tool_calls"] = [
            {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
            for name, args in calls]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def make_app(kind: Kind, data: Path | None = None, style: Style = "tool_calls") -> FastAPI:
    """The endpoint. app.state.requests counts completions; app.state.auth records the Authorization headers."""
    oracle = load_oracle(data) if kind == "oracle" and data is not None else None
    app = FastAPI()
    app.state.requests = 0
    app.state.auth = set()

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "tests"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        body = await request.json()
        app.state.requests += 1
        app.state.auth.add(request.headers.get("authorization", ""))
        calls = oracle.answer(body.get("messages", []), body.get("tools") or []) if oracle else None
        return _completion(calls, "I cannot help with that using the functions I have.", style, app.state.requests)

    return app


@contextmanager
def serve_endpoint(kind: Kind, data: Path | None = None,
                   style: Style = "tool_calls") -> Iterator[tuple[str, FastAPI]]:
    """(base URL ending in /v1, the app) of a server on a free loopback port, for the duration of the block."""
    app = make_app(kind, data, style)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the {kind} endpoint did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/v1", app
    finally:
        server.should_exit = True
        thread.join(timeout=10)
