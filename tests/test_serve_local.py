"""`kopa bench serve-local` (bench/serve_local.py): the OpenAI-compatible endpoint the rehearsal serves tiny models
with. A call written in a family's own template comes back as `tool_calls` (as vLLM's parser returns it), a tool
turn in the request renders through the template, and a wrong model name is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.agents import template_messages
from bench.serve_local import completion
from training.tiny import FAMILIES, chat_template

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]
CALL: dict[str, Any] = {
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "서울", "days": 3}},
}


def rendered_call(family: str) -> str:
    """The assistant turn of a gold call as the family's template writes it (what a model trained on it emits)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    tools: list[Any] = list(TOOLS)

    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "서울 날씨"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
    ]
    head = render_jinja_template([messages[:1]], tools=tools, chat_template=chat_template(family))[0][0]
    full = render_jinja_template([messages], tools=tools, chat_template=chat_template(family))[0][0]
    assert full.startswith(head[: len(head) - 1])
    turn = full.rsplit("<|im_start|>assistant\n", 1)[1]
    return str(turn)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_call_in_the_family_template_comes_back_as_tool_calls(family: str) -> None:
    doc = completion(rendered_call(family), TOOLS, "m", 10, 5)
    message = doc["choices"][0]["message"]
    assert doc["choices"][0]["finish_reason"] == "tool_calls", message
    [call] = message["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "서울", "days": 3}
    assert "<tool_call>" not in message["content"] and "<function=" not in message["content"]
    assert doc["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def test_text_without_a_call_is_content() -> None:
    doc = completion("<think>\n\n</think>\n\n죄송하지만 확인할 수 없습니다.<|im_end|>", TOOLS, "m", 1, 1)
    message = doc["choices"][0]["message"]
    assert message == {"role": "assistant", "content": "죄송하지만 확인할 수 없습니다."}
    assert doc["choices"][0]["finish_reason"] == "stop"


def test_wire_arguments_become_objects_for_the_template() -> None:
    wire: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{"}}],
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "d", "function": {"name": "f", "arguments": '{"a": 1}'}}],
        },
    ]
    out = template_messages(wire)
    assert out[0]["content"] == "" and out[0]["tool_calls"][0]["function"]["arguments"] == {}
    assert out[1]["tool_calls"][0]["function"]["arguments"] == {"a": 1}


WIRE_CALL = {"name": "get_weather", "arguments": '{"city": "서울"}'}


def test_the_endpoint_serves_a_tiny_model(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from bench.serve_local import make_app
    from training.tiny import build_tiny

    model = build_tiny(tmp_path / "tiny", ["서울 날씨 get_weather city days"] * 20, vocab_size=600, family="qwen3.5")
    client = TestClient(make_app(model, "tiny-9b", chat_template_kwargs={"enable_thinking": False}))
    assert client.get("/v1/models").json()["data"][0]["id"] == "tiny-9b"
    body: dict[str, Any] = {
        "model": "tiny-9b",
        "messages": [
            {"role": "user", "content": "서울 날씨"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "서울"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 3}'},
        ],
        "tools": TOOLS,
        "max_tokens": 8,
        "temperature": 0.7,
        "seed": 1,
    }
    answered = client.post("/v1/chat/completions", json=body)
    assert answered.status_code == 200, answered.text
    first = answered.json()
    again = client.post("/v1/chat/completions", json=body).json()
    assert first["choices"][0]["message"] == again["choices"][0]["message"]  # seeded sampling repeats
    assert 0 < first["usage"]["completion_tokens"] <= 8 and first["usage"]["prompt_tokens"] > 20
    refused = client.post("/v1/chat/completions", json={**body, "model": "other"})
    assert refused.status_code == 404 and "tiny-9b" in refused.text
