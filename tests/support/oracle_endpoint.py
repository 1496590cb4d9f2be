"""Tiny OpenAI-compatible chat-completions servers for validating the BFCL harness without a GPU.

* oracle: finds the BFCL question a request carries (its user message and tool names) in bfcl-eval's shipped
  data and answers with the ground truth from possible_answer/ as `tool_calls`; a question without a possible
  answer (irrelevance) gets a plain text reply, i.e. no call. It also plays the multi-turn categories (`MultiTurn`:
  the per-turn ground-truth calls, one call per request, reading back the tool results BFCL's own classes return,
  then a text reply that ends the turn) and answers live_relevance questions with a call to the offered function
  that fits the question (`relevance_call`: any well-formed call is right there).
* null: never calls a tool.

Both run with uvicorn on a free loopback port in a background thread (`serve_endpoint`).
"""

from __future__ import annotations

import ast
import functools
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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


#: bfcl-eval's user message for a miss_func turn that adds the held-out functions (constants/default_prompts.py).
MISSED_FUNCTION_PROMPT = "I have updated some more functions you can choose from. What about now?"
MULTI_TURN_CATEGORIES = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")


def _func_doc_files(data: Path) -> dict[str, str]:
    """bfcl-eval's class -> function-doc file mapping (constants/executable_backend_config.py), read, not imported
    (the package lives in its own venv)."""
    source = (data.parent / "constants" / "executable_backend_config.py").read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", "") == "MULTI_TURN_FUNC_DOC_FILE_MAPPING" for t in node.targets
        ):
            return dict(ast.literal_eval(node.value))
    raise RuntimeError("bfcl-eval's MULTI_TURN_FUNC_DOC_FILE_MAPPING not found")


def parse_call(source: str, docs: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """A ground-truth call string (`mv(source='a', destination='b')`, `sort('f')`) as (name, arguments); positional
    arguments are named after the function doc's parameters in order."""
    node = ast.parse(source, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain function call: {source}")
    name = node.func.id
    params = list((docs.get(name, {}).get("parameters") or {}).get("properties", {}))
    if len(node.args) > len(params):
        raise ValueError(f"{source}: more positional arguments than {name} has parameters")
    args = {params[i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
    args.update({str(k.arg): ast.literal_eval(k.value) for k in node.keywords})
    return name, json.loads(json.dumps(args))  # as the call travels: tuples become lists


@dataclass
class Script:
    """One multi-turn entry: its user turns (None: a miss_func turn whose message bfcl-eval writes), the tools
    offered at each turn, and the calls of each turn."""

    entry: str
    turns: list[list[str] | None]
    tools: list[frozenset[str]]
    calls: list[list[tuple[str, dict[str, Any]]]]

    def matches(self, users: list[str], names: frozenset[str]) -> bool:
        said: list[str] = []
        for turn in self.turns:
            said.extend([MISSED_FUNCTION_PROMPT] if turn is None else turn)
            if len(said) >= len(users):
                break
        return said == users and self.tools[self._turn(users)] == names

    def _turn(self, users: list[str]) -> int:
        said = 0
        for t, turn in enumerate(self.turns):
            said += 1 if turn is None else len(turn)
            if said >= len(users):
                return t
        return len(self.turns) - 1

    def played(self, users: list[str], done: int) -> list[tuple[str, dict[str, Any]]]:
        """Every call this script makes before the current point (earlier turns, then `done` of this one)."""
        t = self._turn(users)
        return [c for turn in self.calls[:t] for c in turn] + self.calls[t][:done]


class MultiTurn:
    """bfcl-eval's multi-turn entries as scripts played against the conversation BFCL drives: the turn is the
    number of user messages so far, the step within it the number of tool results since the last one. Each step
    sends the turn's next ground-truth call (BFCL executes it on its own classes and appends the result); when the
    turn's calls are all played (or it has none: miss_param and miss_func turns), a text reply ends the turn."""

    def __init__(self, data: Path, categories: tuple[str, ...] = MULTI_TURN_CATEGORIES) -> None:
        files = _func_doc_files(data)
        docs: dict[str, list[dict[str, Any]]] = {
            cls: _jsonl(data / "multi_turn_func_doc" / name)
            for cls, name in files.items()
            if (data / "multi_turn_func_doc" / name).is_file()
        }
        self.by_opening: dict[str, list[Script]] = {}
        self.ambiguous = 0
        for category in categories:
            questions = data / f"BFCL_v4_{category}.json"
            truth_file = data / "possible_answer" / questions.name
            if not questions.is_file() or not truth_file.is_file():
                continue
            truth = {row["id"]: row["ground_truth"] for row in _jsonl(truth_file)}
            for entry in _jsonl(questions):
                functions = [f for cls in entry["involved_classes"] for f in docs[cls]]
                by_name = {f["name"]: f for f in functions}
                missed = {int(t): set(names) for t, names in (entry.get("missed_function") or {}).items()}
                offered = {f["name"] for f in functions} - {n for names in missed.values() for n in names}
                turns: list[list[str] | None] = []
                tools: list[frozenset[str]] = []
                for t, messages in enumerate(entry["question"]):
                    if t in missed:
                        offered |= missed[t]
                        turns.append(None)
                    else:
                        turns.append([str(m["content"]) for m in messages if m.get("role") == "user"])
                    tools.append(frozenset(_tool_name(n) for n in offered))
                calls = [[parse_call(c, by_name) for c in turn] for turn in truth[entry["id"]]]
                calls = [[(_tool_name(n), a) for n, a in turn] for turn in calls]
                script = Script(entry["id"], turns, tools, calls)
                opening = (turns[0] or [MISSED_FUNCTION_PROMPT])[0]
                self.by_opening.setdefault(opening, []).append(script)

    def answer(
        self, messages: list[dict[str, Any]], names: frozenset[str]
    ) -> tuple[bool, list[tuple[str, Any]] | None]:
        """(known, calls): known is False when the conversation is no multi-turn entry; calls None ends the turn."""
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        if not users:
            return False, None
        candidates = [s for s in self.by_opening.get(users[0], []) if s.matches(users, names)]
        if not candidates:
            return False, None
        last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
        done = sum(1 for m in messages[last_user:] if m.get("role") == "tool")
        made = [
            (str(c["function"]["name"]), json.loads(c["function"]["arguments"] or "{}"))
            for m in messages
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        ]
        # where two entries share every message so far (base vs long_context of one scenario), keep the one whose
        # calls this conversation has made
        consistent = [s for s in candidates if s.played(users, done) == made] or candidates
        nexts = []
        for s in consistent:
            turn = s.calls[s._turn(users)]
            nexts.append(turn[done] if done < len(turn) else None)
        if any(n != nexts[0] for n in nexts):
            self.ambiguous += 1
        return True, None if nexts[0] is None else [nexts[0]]


def _words(text: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if len(w) > 2}


def _placeholder(schema: dict[str, Any], question: str) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema and schema["default"] not in (None, ""):
        return schema["default"]
    kind = schema.get("type")
    if kind in ("integer",):
        return 1
    if kind in ("float", "number"):
        return 1.0
    if kind == "boolean":
        return True
    if kind in ("array", "tuple"):
        item = (schema.get("items") or {}).get("type")
        return [1.0, 1.0] if item in ("float", "number") else [1, 1] if item == "integer" else [question]
    if kind == "dict":
        return {}
    return question


def relevance_call(question: str, functions: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """A call for a live_relevance question: the offered function whose name and description share the most words
    with it, its required parameters filled from their schema (enum, default or a value of the type; strings
    get the question). BFCL's relevance checker accepts any well-formed call."""
    asked = _words(question)

    def overlap(f: dict[str, Any]) -> int:
        return len(asked & _words(f"{f['name']} {f.get('description', '')}"))

    best = max(functions, key=overlap)
    params = best.get("parameters") or {}
    props = params.get("properties") or {}
    args = {p: _placeholder(props.get(p, {}), question) for p in params.get("required", []) or []}
    return _tool_name(best["name"]), args


class Oracle:
    """Ground-truth answers for BFCL's single-turn questions, from bfcl-eval's own data folder; multi-turn entries
    through `MultiTurn`; live_relevance questions through `relevance_call`."""

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
        relevance = data / "BFCL_v4_live_relevance.json"
        for entry in _jsonl(relevance) if relevance.is_file() else []:
            question = _last_user(entry["question"][0])
            key = (question, frozenset(_tool_name(f["name"]) for f in entry["function"]))
            self.answers.setdefault(key, [relevance_call(question, entry["function"])])
        self.multi_turn = MultiTurn(data)

    def answer(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[tuple[str, Any]] | None:
        if not tools:
            return None
        names = frozenset(str(t.get("function", t).get("name")) for t in tools)
        known, calls = self.multi_turn.answer(messages, names)
        if known:
            return calls
        if messages and messages[-1].get("role") == "tool":
            return None
        return self.answers.get((_last_user(messages), names))


def _text_calls(calls: list[tuple[str, Any]], style: Style) -> str:
    blocks = []
    for name, args in calls:
        if style == "hermes":
            blocks.append(
                f"<tool_call>\n{json.dumps({'name': name, 'arguments': args}, ensure_ascii=False)}\n</tool_call>"
            )
            continue
        params = "".join(
            f"<parameter={key}>\n{value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}\n"
            "</parameter>\n"
            for key, value in args.items()
        )
        blocks.append(f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>")
    return "<think>\nThe user wants a function call.\n</think>\n\n" + "\n".join(blocks)


@functools.lru_cache(maxsize=2)
def load_oracle(data: Path) -> Oracle:
    """The oracle of one data folder, read once per process."""
    return Oracle(data)


def _completion(
    calls: list[tuple[str, Any]] | None, text: str, style: Style = "tool_calls", serial: int = 0
) -> dict[str, Any]:
    if style == "mixed":
        style = "hermes" if serial % 2 else "xml"
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else text}
    if calls and style != "tool_calls":
        message["content"] = _text_calls(calls, style)
    elif calls:
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
            for name, args in calls
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def make_app(kind: Kind, data: Path | None = None, style: Style = "tool_calls") -> FastAPI:
    """The endpoint. app.state.requests counts completions; app.state.auth records the Authorization headers;
    app.state.tool_results the tool messages BFCL sent back (each once); app.state.oracle is the oracle."""
    oracle = load_oracle(data) if kind == "oracle" and data is not None else None
    app = FastAPI()
    app.state.requests = 0
    app.state.auth = set()
    app.state.tool_results = []
    app.state.oracle = oracle

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "tests"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        body = await request.json()
        app.state.requests += 1
        app.state.auth.add(request.headers.get("authorization", ""))
        messages = body.get("messages", [])
        tail = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") != "tool"), -1)
        app.state.tool_results.extend(str(m.get("content")) for m in messages[tail + 1 :])
        calls = oracle.answer(body.get("messages", []), body.get("tools") or []) if oracle else None
        return _completion(calls, "I cannot help with that using the functions I have.", style, app.state.requests)

    return app


@contextmanager
def serve_endpoint(kind: Kind, data: Path | None = None, style: Style = "tool_calls") -> Iterator[tuple[str, FastAPI]]:
    """(base URL ending in /v1, the app) of a server on a free loopback port, for the duration of the block."""
    app = make_app(kind, data, style)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False))
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
