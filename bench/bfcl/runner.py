"""BFCL runner: executed with the Python of the bfcl-eval virtual environment (never imported by the project).

It registers the model under test in bfcl-eval's model registry at run time (no edit to the installed package),
with `KopaChatHandler`, an OpenAI-compatible chat-completions handler, then calls bfcl-eval's own generation and
evaluation entry points. Scoring is bfcl-eval's checkers, untouched.

    <bfcl-venv>/bin/python bench/bfcl/runner.py CONFIG.json

CONFIG.json: {"registry_name", "served_model", "mode": "fc"|"prompt", "categories": [...],
"limit_per_category": int|null, "temperature": float, "num_threads": int, "max_tokens": int|null}.
Environment (set by bench/bfcl/run.py): BFCL_PROJECT_ROOT (the run folder, read by bfcl-eval at import time),
KOPA_BFCL_BASE_URL (the endpoint, ending in /v1), KOPA_BFCL_API_KEY (optional; never written anywhere).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypedDict

from bfcl_eval._llm_response_generation import main as generation_main  # type: ignore[import-not-found]
from bfcl_eval.constants.eval_config import PROJECT_ROOT  # type: ignore[import-not-found]
from bfcl_eval.constants.model_config import (  # type: ignore[import-not-found]
    MODEL_CONFIG_MAPPING,
    ModelConfig,
)
from bfcl_eval.eval_checker.eval_runner import main as evaluation_main  # type: ignore[import-not-found]
from bfcl_eval.model_handler.api_inference.openai_completion import (  # type: ignore[import-not-found]
    OpenAICompletionsHandler,
)
from bfcl_eval.utils import (  # type: ignore[import-not-found]
    is_memory_prereq,
    load_dataset_entry,
    sort_key,
)


class ClientKwargs(TypedDict):
    """What the OpenAI client of the handler is built with."""

    base_url: str
    api_key: str
    timeout: float
    max_retries: int


class ParsedResponse(TypedDict):
    """One model response as bfcl-eval's handlers return it from `_parse_query_response_*`."""

    model_responses: list[dict[str, str]] | str
    model_responses_message_for_chat_history: dict[str, Any]
    input_token: int
    output_token: int


class ParsedCallResponse(ParsedResponse):
    """A function-calling response, with the ids of its calls."""

    tool_call_ids: list[str]


THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
HERMES_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
XML_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)</function>", re.DOTALL)
XML_PARAMETER = re.compile(r"<parameter=([^>\s]+)>(.*?)</parameter>", re.DOTALL)


def _xml_value(raw: str, string: bool) -> Any:
    """A <parameter> body: kept as text for a string parameter, else read as JSON when it parses."""
    text = raw.strip("\n")
    if string:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _xml_args(name: str, body: str, strings: dict[str, set[str]]) -> str:
    texts = strings.get(name, set())
    return json.dumps({k: _xml_value(v, k in texts) for k, v in XML_PARAMETER.findall(body)})


def _string_params(tools: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Per tool name, the parameters its schema types `string` (their XML values stay text)."""
    out: dict[str, set[str]] = {}
    for tool in tools:
        function = tool.get("function", tool)
        properties = function.get("parameters", {}).get("properties", {})
        out[str(function.get("name"))] = {
            k for k, schema in properties.items() if isinstance(schema, dict) and schema.get("type") == "string"
        }
    return out


def parse_text_tool_calls(content: str, tools: list[dict[str, Any]] | None = None) -> list[tuple[str, str]]:
    """Tool calls a server left in the text instead of `tool_calls` (its parser did not match the template):
    Hermes/Qwen JSON inside <tool_call>, or the XML <function=NAME><parameter=P>V</parameter> style (values typed
    by the tool's schema). Returns (name, JSON arguments) pairs; [] when the text holds no call."""
    strings = _string_params(tools or [])
    text = THINK.sub("", content)
    calls: list[tuple[str, str]] = []
    for block in HERMES_CALL.findall(text):
        xml = XML_FUNCTION.findall(block)
        if xml:
            calls.extend((name, _xml_args(name, body, strings)) for name, body in xml)
            continue
        try:
            obj = json.loads(block)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            args = obj.get("arguments", obj.get("parameters", {}))
            calls.append((obj["name"], args if isinstance(args, str) else json.dumps(args)))
    if not calls:
        calls.extend((name, _xml_args(name, body, strings)) for name, body in XML_FUNCTION.findall(text))
    return calls


class KopaChatHandler(OpenAICompletionsHandler):  # type: ignore[misc]
    """bfcl-eval's OpenAI chat-completions handler pointed at a local OpenAI-compatible server (vLLM, ...):
    no `store` field, optional max_tokens, reasoning blocks stripped, and tool calls decoded from the text when
    the server's tool parser did not extract them."""

    def __init__(
        self, model_name: str, temperature: float, registry_name: str, is_fc_model: bool, **kwargs: Any
    ) -> None:
        super().__init__(model_name, temperature, registry_name, is_fc_model, **kwargs)
        self._local = threading.local()  # the tools of the request this thread is decoding
        max_tokens = os.environ.get("KOPA_BFCL_MAX_TOKENS")
        self.max_tokens = int(max_tokens) if max_tokens else None

    def _build_client_kwargs(self) -> ClientKwargs:
        return {
            "base_url": os.environ["KOPA_BFCL_BASE_URL"],
            "api_key": os.environ.get("KOPA_BFCL_API_KEY") or "EMPTY",
            "timeout": float(os.environ.get("KOPA_BFCL_TIMEOUT", "600")),
            "max_retries": 2,
        }

    def _create(self, **kwargs: Any) -> tuple[Any, float]:
        if self.max_tokens:
            kwargs["max_tokens"] = self.max_tokens
        start = time.time()
        response = self.client.chat.completions.create(**kwargs)
        return response, time.time() - start

    def _query_FC(self, inference_data: dict[str, Any]) -> tuple[Any, float]:
        message = inference_data["message"]
        tools = inference_data["tools"]
        inference_data["inference_input_log"] = {"message": repr(message), "tools": tools}
        self._local.tools = tools
        kwargs: dict[str, Any] = {"messages": message, "model": self.model_name, "temperature": self.temperature}
        if tools:
            kwargs["tools"] = tools
        return self._create(**kwargs)

    def _query_prompting(self, inference_data: dict[str, Any]) -> tuple[Any, float]:
        inference_data["inference_input_log"] = {"message": repr(inference_data["message"])}
        return self._create(messages=inference_data["message"], model=self.model_name, temperature=self.temperature)

    def _parse_query_response_FC(self, api_response: Any) -> ParsedCallResponse:
        message = api_response.choices[0].message
        content = message.content or ""
        calls = [(c.function.name, c.function.arguments) for c in (message.tool_calls or [])]
        ids = [c.id for c in (message.tool_calls or [])]
        if not calls and content:
            calls = parse_text_tool_calls(content, getattr(self._local, "tools", None))
            ids = [f"call_{uuid.uuid4().hex[:12]}" for _ in calls]
        usage = api_response.usage
        visible = THINK.sub("", content).strip()
        history: dict[str, Any] = {"role": "assistant", "content": visible}
        if calls:
            history["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in zip(ids, calls, strict=True)
            ]
        return {
            "model_responses": [{n: a} for n, a in calls] if calls else visible,
            "model_responses_message_for_chat_history": history,
            "tool_call_ids": ids,
            "input_token": getattr(usage, "prompt_tokens", 0) if usage else 0,
            "output_token": getattr(usage, "completion_tokens", 0) if usage else 0,
        }

    def _parse_query_response_prompting(self, api_response: Any) -> ParsedResponse:
        message = api_response.choices[0].message
        visible = THINK.sub("", message.content or "").strip()
        usage = api_response.usage
        return {
            "model_responses": visible,
            "model_responses_message_for_chat_history": {"role": "assistant", "content": visible},
            "input_token": getattr(usage, "prompt_tokens", 0) if usage else 0,
            "output_token": getattr(usage, "completion_tokens", 0) if usage else 0,
        }

    def _add_reasoning_content_if_available_FC(self, api_response: Any, response_data: dict[str, Any]) -> None:
        reasoning = getattr(api_response.choices[0].message, "reasoning_content", None)
        if reasoning:
            response_data["reasoning_content"] = reasoning

    def _add_reasoning_content_if_available_prompting(self, api_response: Any, response_data: dict[str, Any]) -> None:
        self._add_reasoning_content_if_available_FC(api_response, response_data)

    def decode_ast(self, result: Any, language: Any, has_tool_call_tag: Any) -> Any:
        if self.is_fc_model and not isinstance(result, list):
            raise ValueError("the model made no function call")
        return super().decode_ast(result, language, has_tool_call_tag)

    def decode_execute(self, result: Any, has_tool_call_tag: Any) -> Any:
        if self.is_fc_model and not isinstance(result, list):
            raise ValueError("the model made no function call")
        return super().decode_execute(result, has_tool_call_tag)


def register(registry_name: str, served_model: str, fc: bool) -> None:
    config = ModelConfig(
        model_name=served_model,
        display_name=f"{served_model} ({'FC' if fc else 'Prompt'}) (KOPA endpoint)",
        url="local",
        org="local",
        license="unknown",
        model_handler=KopaChatHandler,
        input_price=None,
        output_price=None,
        is_fc_model=fc,
        underscore_to_dot=fc,
    )
    MODEL_CONFIG_MAPPING[registry_name] = config


def select_ids(categories: list[str], limit: int) -> dict[str, list[str]]:
    """The first `limit` entries of each category in BFCL's own order (sort_key), plus the memory prerequisite
    entries they depend on."""
    chosen: dict[str, list[str]] = {}
    for category in categories:
        entries = load_dataset_entry(category)
        by_id = {e["id"]: e for e in entries}
        scored = sorted((e for e in entries if not is_memory_prereq(e["id"])), key=sort_key)[:limit]
        ids: list[str] = []
        todo = [e["id"] for e in scored]
        while todo:
            entry_id = todo.pop()
            if entry_id in ids:
                continue
            ids.append(entry_id)
            todo.extend(d for d in by_id.get(entry_id, {}).get("depends_on", []) if d in by_id)
        chosen[category] = ids
    return chosen


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    registry_name: str = config["registry_name"]
    categories: list[str] = config["categories"]
    limit = config.get("limit_per_category")
    fc = config.get("mode", "fc") == "fc"
    register(registry_name, config["served_model"], fc)
    if limit:
        ids = select_ids(categories, int(limit))
        (PROJECT_ROOT / "test_case_ids_to_generate.json").write_text(json.dumps(ids, indent=1), encoding="utf-8")
        print(f"kopa-bfcl: {sum(len(v) for v in ids.values())} entries selected ({limit} per category)", flush=True)
    args = SimpleNamespace(
        model=[registry_name],
        test_category=categories,
        temperature=float(config.get("temperature", 0.001)),
        include_input_log=False,
        exclude_state_log=True,
        num_gpus=1,
        num_threads=int(config.get("num_threads", 8)),
        gpu_memory_utilization=0.9,
        backend="vllm",
        skip_server_setup=True,
        local_model_path=None,
        result_dir=None,
        allow_overwrite=bool(limit),
        run_ids=bool(limit),
        enable_lora=False,
        max_lora_rank=None,
        lora_modules=None,
    )
    started = time.monotonic()
    generation_main(args)
    generated = time.monotonic()
    evaluation_main([registry_name], categories, None, None, bool(limit))
    print(
        f"kopa-bfcl: done (generation {generated - started:.1f}s, evaluation {time.monotonic() - generated:.1f}s)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: runner.py CONFIG.json", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
