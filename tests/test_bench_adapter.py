"""The OpenAI-compatible adapter against a strict OpenAI-compatible server on loopback (a real HTTP server in a
thread) that rejects what vLLM rejects: replayed tool-call arguments that do not json.loads to an object (vLLM
parses them for the chat template and answers HTTP 500), and tool messages answering no call. A model's
malformed call must come back in a form the server parses, with an error tool message, so the episode recovers
instead of being lost; `<think>` blocks never become calls or answers."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.agents import OpenAIChatAgent, OracleAgent, parse_tool_blocks, wire_messages
from bench.records import ChatMessage, EpisodeRecord, ResultsDoc, WireToolCall
from bench.run import run_bench
from bench.tasks import load_tasks
from cli.bench import bench_env
from execution.tool_calls import strip_think

FIXTURES = Path(__file__).parent / "fixtures" / "bench"
TASK = next(t for t in load_tasks(FIXTURES) if t.id == "fx-single-air")
TOOL = "airkorea_get_msrstn_accto_rltm_mesure_dnsty"


def strict_problem(body: Any) -> str | None:
    """Why a strict server (vLLM's request handling) refuses a chat request, or None."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return "messages must be a list"
    ids: set[str] = set()
    for i, m in enumerate(body["messages"]):
        if m.get("role") == "assistant":
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                if not isinstance(fn.get("name"), str):
                    return f"messages[{i}]: tool call without a function name"
                try:
                    args = json.loads(fn.get("arguments"))  # type: ignore[arg-type]  # None fails as vLLM does
                except (TypeError, json.JSONDecodeError) as exc:
                    return f"messages[{i}]: json.decoder.JSONDecodeError: {exc}"
                if not isinstance(args, dict):
                    return f"messages[{i}]: tool call arguments must be an object"
                ids.add(str(c.get("id")))
        if m.get("role") == "tool" and m.get("tool_call_id") not in ids:
            return f"messages[{i}]: tool message answers no tool call"
    return None


class StrictServer:
    """Answers POST /v1/chat/completions with scripted messages in order (the last repeats) after the strict
    checks; records every request body."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.bodies: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                problem = strict_problem(body)
                if problem is None:
                    outer.bodies.append(body)
                    msg = outer.replies[min(len(outer.bodies) - 1, len(outer.replies) - 1)]
                    doc: dict[str, Any]
                    status, doc = (
                        200,
                        {
                            "id": "x",
                            "object": "chat.completion",
                            "choices": [{"index": 0, "message": {"role": "assistant", **msg}, "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
                        },
                    )
                else:
                    status, doc = 500, {"object": "error", "message": problem, "code": 500}
                outer.statuses.append(status)
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> StrictServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("adapter")

    async def go() -> None:
        async with bench_env(record=root / "s.json") as env:
            await run_bench([TASK], OracleAgent(), env, root / "oracle", k=1)

    asyncio.run(go())
    return root / "s.json"


def _episode(server: StrictServer, snapshot: Path, out: Path) -> EpisodeRecord:
    agent = OpenAIChatAgent(server.url, "strict-model", timeout_s=10)

    async def go() -> ResultsDoc:
        try:
            async with bench_env(mode="replay", snapshot=snapshot) as env:
                return await run_bench([TASK], agent, env, out, k=1, max_turns=4)
        finally:
            await agent.aclose()

    doc = asyncio.run(go())
    assert len(doc["episodes"]) == 1
    return doc["episodes"][0]


def _call(cid: str, arguments: str) -> WireToolCall:
    return {"id": cid, "type": "function", "function": {"name": TOOL, "arguments": arguments}}


def test_the_server_is_strict_like_vllm() -> None:
    bad: list[ChatMessage] = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [_call("c1", "{oops")]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
    ]
    with StrictServer([{"content": "ok"}]) as server:
        refused = httpx.post(server.url + "/chat/completions", json={"model": "m", "messages": bad}, timeout=5)
        assert refused.status_code == 500 and "JSONDecodeError" in refused.text
        for args in ("[1]", '"text"'):
            msgs = [bad[0], {**bad[1], "tool_calls": [_call("c1", args)]}, bad[2]]
            assert (
                httpx.post(
                    server.url + "/chat/completions", json={"model": "m", "messages": msgs}, timeout=5
                ).status_code
                == 500
            )
        fixed = httpx.post(
            server.url + "/chat/completions", json={"model": "m", "messages": wire_messages(bad)}, timeout=5
        )
        assert fixed.status_code == 200, fixed.text


def test_a_malformed_call_goes_back_parsable_and_the_episode_recovers(snapshot: Path, tmp_path: Path) -> None:
    """Turn 1 a truncated-JSON call, turn 2 the same call well formed, turn 3 the answer: every request is
    accepted, the model reads an error tool message quoting what it wrote, then the real result."""
    good = json.dumps({"stationName": "종로구", "dataTerm": "DAILY", "ver": "1.3"}, ensure_ascii=False)
    replies: list[dict[str, Any]] = [
        {"content": None, "tool_calls": [_call("c1", '{"stationName": "종로구", "dataTerm": ')]},
        {"content": None, "tool_calls": [_call("c2", good)]},
        {"content": "<think>PM10 값을 정리하자</think>종로구 측정 결과를 알려드립니다."},
    ]
    with StrictServer(replies) as server:
        ep = _episode(server, snapshot, tmp_path / "run")
    assert server.statuses == [200, 200, 200], server.statuses
    assert ep["status"] == "answered" and ep["error"] == ""
    assert [c["valid"] for c in ep["calls"]] == [False, True] and ep["calls"][1]["outcome"] == "ok"
    second = server.bodies[1]["messages"]
    replayed = next(m for m in second if m["role"] == "assistant" and m.get("tool_calls"))
    assert json.loads(replayed["tool_calls"][0]["function"]["arguments"]) == {}
    answer = next(m for m in second if m["role"] == "tool" and m["tool_call_id"] == "c1")
    assert "not valid JSON" in answer["content"] and "dataTerm" in answer["content"]
    assert ep["turns"][0]["tool_calls"][0]["raw"].startswith('{"stationName"')  # the record keeps what it wrote
    assert ep["final_answer"] == "종로구 측정 결과를 알려드립니다."  # the reasoning is not the answer


def test_without_the_fix_the_strict_server_loses_the_episode(
    snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same script with the messages sent verbatim (the adapter before): HTTP 500 and a lost episode."""
    import bench.agents as agents

    monkeypatch.setattr(agents, "wire_messages", lambda messages: messages)
    replies: list[dict[str, Any]] = [
        {"content": None, "tool_calls": [_call("c1", '{"stationName": ')]},
        {"content": "끝"},
    ]
    with StrictServer(replies) as server:
        ep = _episode(server, snapshot, tmp_path / "before")
    assert server.statuses == [200, 500] and ep["status"] == "agent_error" and "HTTP 500" in ep["error"]


def test_think_blocks_are_stripped_before_reading_calls(snapshot: Path, tmp_path: Path) -> None:
    text = (
        '<think>혹시 <tool_call>{"name": "nope", "arguments": {}}</tool_call> 를 부를까?</think>\n'
        f'<tool_call>{{"name": "{TOOL}", "arguments": {{"stationName": "종로구"}}}}</tool_call>'
    )
    content, calls = parse_tool_blocks(strip_think(text))
    assert content == "" and [(c.name, c.arguments) for c in calls] == [(TOOL, {"stationName": "종로구"})]
    assert strip_think("앞부분 추론</think>답입니다") == "답입니다"  # template opened the block in the prompt
    assert strip_think("답입니다 <think>잘린 추론") == "답입니다"
    with StrictServer([{"content": text}, {"content": "<think>\n</think>\n\n측정소 결과입니다."}]) as server:
        ep = _episode(server, snapshot, tmp_path / "think")
    assert [c["tool"] for c in ep["calls"]] == [TOOL] and ep["final_answer"] == "측정소 결과입니다."


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    yield
