"""The conversation formats of a recorded trajectory: the one system prompt (with the conversation's clock), trl's
conversational rows, OpenAI chat fine-tuning lines, the Qwen2.5/Hermes rendering byte for byte and LLaMA-Factory's
ShareGPT layout (synthesis.export writes them; its docstring describes each format)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from execution.seeds import KST
from execution.view import tool_view
from synthesis.records import Trajectory, TrajectoryStep, as_trajectory

Record = Trajectory | dict[str, Any]

#: The one system prompt of SFT rows, GRPO prompts and KOPA-Bench episodes (with the clock line `clock_line`).
SYSTEM = (
    "당신은 한국 공공기관 API 도구를 사용하는 민원 도우미입니다. 필요하면 도구를 호출하고, 도구 결과에 근거해서만 "
    "한국어로 답하세요. 코드나 좌표처럼 사용자가 모르는 값은 앞선 도구 결과에서 가져오세요. 필요한 정보가 빠졌으면 "
    "먼저 물어보고, 도구로 할 수 없는 요청이나 오류는 솔직하게 알리세요."
)


def clock_line(now: datetime) -> str:
    """The clock as every prompt states it (KST, to the minute)."""
    return f"현재 시각: {now.astimezone(KST).strftime('%Y-%m-%d %H:%M')} (KST)."


def system_text(now: datetime | None) -> str:
    """The system prompt at a conversation's clock (SFT, GRPO and the benchmark alike)."""
    return SYSTEM if now is None else f"{SYSTEM} {clock_line(now)}"


def system_prompt(record: Trajectory) -> str:
    if not record.now:
        return SYSTEM
    at = datetime.fromisoformat(record.now)
    return system_text(at if at.tzinfo else at.replace(tzinfo=KST))


def _calls(record: Trajectory) -> list[list[TrajectoryStep]]:
    """Tool calls grouped into assistant turns: steps that do not depend on each other go in one turn."""
    turns: list[list[TrajectoryStep]] = []
    done: set[int] = set()
    pending = list(record.steps)
    while pending:
        ready = [s for s in pending if set(s.depends_on) <= done] or pending[:1]
        turns.append(ready)
        done |= {s.step for s in ready}
        pending = [s for s in pending if s not in ready]
    return turns


def _content(step: TrajectoryStep, record: Trajectory) -> str:
    """The tool message: the one view of the recorded response (`execution.view`, as GRPO rollouts and KOPA-Bench
    episodes show it)."""
    spec = next((t for t in record.tools if t.get("function", {}).get("name") == step.tool), None)
    res = step.response
    return tool_view("ok", res.items, total=res.rows, first=res.first, tool=spec, next_token=res.next_token)


def _error_content(error: str) -> str:
    return json.dumps({"error": error}, ensure_ascii=False)


def _turns(record: Trajectory) -> list[tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str]]]]:
    """Assistant turns as ([(tool, arguments)], [(tool, response text)]), failed attempts first."""
    out = []
    for turn in _calls(record):
        first = min(s.step for s in turn)
        for a in record.attempts:
            if a.before_step == first:
                out.append(([(a.tool, a.arguments)], [(a.tool, _error_content(a.error))]))
        out.append(([(s.tool, s.arguments) for s in turn], [(s.tool, _content(s, record)) for s in turn]))
    return out


def prompt_messages(record: Trajectory) -> list[dict[str, Any]]:
    """The conversation up to the point a model answers: the system prompt with the clock, any earlier turns (a
    clarification's question and answer), then the request (SFT rows, GRPO prompts and BFCL entries alike)."""
    return [
        {"role": "system", "content": system_prompt(record)},
        *({"role": m["role"], "content": m["content"]} for m in record.preamble),
        {"role": "user", "content": record.request},
    ]


def to_trl(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    messages = prompt_messages(record)
    for calls, results in _turns(record):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": name, "arguments": args}} for name, args in calls
                ],
            }
        )
        for name, content in results:
            messages.append({"role": "tool", "name": name, "content": content})
    messages.append({"role": "assistant", "content": record.final_answer})
    return {"id": record.id, "messages": messages, "tools": record.tools}


def to_openai(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    messages = prompt_messages(record)
    n = 0
    for calls, results in _turns(record):
        ids = [f"call_{n + i + 1}" for i in range(len(calls))]
        n += len(calls)
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
                    }
                    for cid, (name, args) in zip(ids, calls, strict=True)
                ],
            }
        )
        for cid, (_, content) in zip(ids, results, strict=True):
            messages.append({"role": "tool", "tool_call_id": cid, "content": content})
    messages.append({"role": "assistant", "content": record.final_answer})
    return {"id": record.id, "messages": messages, "tools": record.tools, "parallel_tool_calls": True}


def _tojson(value: Any) -> str:
    """JSON as the chat templates' `tojson` filter writes it (transformers: ensure_ascii off, default separators)."""
    return json.dumps(value, ensure_ascii=False)


def render_qwen25(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """The Qwen2.5 chat template's rendering (the template trl ships as chat_templates/qwen2_5.jinja) of a
    conversation with tools, without a generation prompt."""
    out = [
        "<|im_start|>system\n",
        messages[0]["content"]
        if messages[0]["role"] == "system"
        else "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
        "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with "
        "function signatures within <tools></tools> XML tags:\n<tools>",
    ]
    for t in tools:
        out.append("\n" + _tojson(t))
    out.append(
        "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
        '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
        "<args-json-object>}\n</tool_call><|im_end|>\n"
    )
    for i, m in enumerate(messages):
        role = m["role"]
        if role == "user" or (role == "system" and i > 0) or (role == "assistant" and not m.get("tool_calls")):
            out.append(f"<|im_start|>{role}\n{m.get('content') or ''}<|im_end|>\n")
        elif role == "assistant":
            out.append("<|im_start|>assistant")
            if m.get("content"):
                out.append("\n" + m["content"])
            for call in m["tool_calls"]:
                fn = call.get("function", call)
                out.append(
                    '\n<tool_call>\n{"name": "'
                    + fn["name"]
                    + '", "arguments": '
                    + _tojson(fn["arguments"])
                    + "}\n</tool_call>"
                )
            out.append("<|im_end|>\n")
        elif role == "tool":
            if i == 0 or messages[i - 1]["role"] != "tool":
                out.append("<|im_start|>user")
            out.append("\n<tool_response>\n" + m["content"] + "\n</tool_response>")
            if i == len(messages) - 1 or messages[i + 1]["role"] != "tool":
                out.append("<|im_end|>\n")
    return "".join(out)


def to_hermes(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    trl = to_trl(record)
    return {"id": record.id, "text": render_qwen25(trl["messages"], trl["tools"])}


def to_sharegpt(rec: Record) -> dict[str, Any]:
    record = as_trajectory(rec)
    conv = [{"from": "human" if m["role"] == "user" else "gpt", "value": m["content"]} for m in record.preamble]
    conv.append({"from": "human", "value": record.request})
    for calls, results in _turns(record):
        conv.append(
            {
                "from": "function_call",
                "value": json.dumps(
                    [{"name": name, "arguments": args} for name, args in calls]
                    if len(calls) > 1
                    else {"name": calls[0][0], "arguments": calls[0][1]},
                    ensure_ascii=False,
                ),
            }
        )
        conv.append(
            {
                "from": "observation",
                "value": results[0][1]
                if len(results) == 1
                else json.dumps([json.loads(c) for _, c in results], ensure_ascii=False),
            }
        )
    conv.append({"from": "gpt", "value": record.final_answer})
    return {
        "id": record.id,
        "conversations": conv,
        "system": system_prompt(record),
        "tools": json.dumps(record.tools, ensure_ascii=False),
    }
