"""KOPA-Bench model adapters end to end with a tiny model built here (Qwen2-style config, random weights, a
byte-level BPE tokenizer trained on a few lines, a chat template with tools; nothing is downloaded):

* the local transformers adapter runs it in process;
* the OpenAI-compatible adapter talks to a real OpenAI-compatible server on CPU, `transformers serve`, serving
  the same directory over a loopback socket.

The model produces garbage; the runs must complete, record every episode and score them as failures.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.agents import OpenAIChatAgent, TransformersAgent, parse_openai_calls, parse_tool_blocks
from bench.records import ResultsDoc
from bench.run import read_episodes, run_bench
from bench.tasks import Task, load_tasks
from cli.bench import bench_env
from tests.conftest import IN_CI
from tests.support.helpers import free_port, running

FIXTURES = Path(__file__).parent / "fixtures" / "bench"
TASKS = load_tasks(FIXTURES)
#: A served CPU model answers in seconds per request: three tasks (one, two and zero calls expected) suffice.
SERVED_TASKS = [t for t in TASKS if t.id in ("fx-single-air", "fx-clarify-bus", "fx-irrelevant-lotto")]

TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n{{ messages[0]['content'] if messages[0]['role'] == 'system' else '' }}"
    "\n# Tools\n<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools>\n"
    "To call a tool, write a tool_call block holding a JSON object with name and arguments.<|im_end|>\n{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m['role'] == 'system' %}{%- if not tools %}<|im_start|>system\n{{ m['content'] }}<|im_end|>\n{%- endif %}"
    "{%- elif m['role'] == 'tool' %}<|im_start|>user\n<tool_response>{{ m['content'] }}</tool_response><|im_end|>\n"
    "{%- elif m['role'] == 'assistant' %}<|im_start|>assistant\n{{ m['content'] or '' }}"
    "{%- for c in m.get('tool_calls', []) %}<tool_call>{\"name\": \"{{ c['function']['name'] }}\", \"arguments\": "
    "{{ c['function']['arguments'] | tojson }}}</tool_call>{%- endfor %}<|im_end|>\n"
    "{%- else %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{%- endif %}"
    "{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)


def build_tiny_model(out: Path) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    corpus = [t.turns[0] for t in TASKS] + ['{"name": "tool", "arguments": {"stationName": "종로구"}}'] * 5
    tok.train_from_iterator(corpus, trainer)
    options: dict[str, Any] = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "chat_template": TEMPLATE}
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, **options)  # type: ignore[no-untyped-call]
    fast.save_pretrained(out)
    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32768,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=True,
    )
    Qwen2ForCausalLM(cfg).save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "kopa-tiny-qwen2")


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Responses of the gold programs, recorded live from an in-process sandbox, for replay runs."""
    from bench.agents import OracleAgent

    root = tmp_path_factory.mktemp("snap")

    async def go() -> None:
        async with bench_env(record=root / "s.json") as env:
            await run_bench(TASKS, OracleAgent(), env, root / "oracle", k=1)

    asyncio.run(go())
    return root / "s.json"


def _run(agent: Any, out: Path, snapshot: Path, tasks: list[Task] = TASKS) -> ResultsDoc:
    async def go() -> ResultsDoc:
        try:
            async with bench_env(mode="replay", snapshot=snapshot) as env:
                return await run_bench(tasks, agent, env, out, k=1, concurrency=2, max_turns=2)
        finally:
            await agent.aclose()

    return asyncio.run(go())


def _assert_scored_failures(doc: ResultsDoc, out: Path, tasks: list[Task] = TASKS) -> None:
    assert doc["run"]["episodes"] == len(tasks) and len(read_episodes(out / "episodes.jsonl")) == len(tasks)
    assert doc["refused"] == {}
    by_cat = doc["scores"]["by_category"]
    for cat, s in by_cat.items():
        if cat != "irrelevance":
            assert s["pass_hat_k"] == 0.0, cat  # random weights never state the facts
    assert all(e["status"] in ("answered", "loop", "agent_error") for e in doc["episodes"])
    assert all(e["turns"] for e in doc["episodes"])  # every turn recorded


def test_transformers_adapter_runs_a_tiny_model_end_to_end(tiny: Path, snapshot: Path, tmp_path: Path) -> None:
    agent = TransformersAgent(tiny, max_new_tokens=24, seed=0, device="cpu")
    doc = _run(agent, tmp_path / "tf", snapshot)
    _assert_scored_failures(doc, tmp_path / "tf")
    ep = doc["episodes"][0]
    assert ep["tokens"]["prompt"] > 100 and ep["tokens"]["completion"] > 0
    assert doc["run"]["model"]["adapter"] == "transformers"
    with pytest.raises(FileNotFoundError, match="not a transformers model directory"):
        TransformersAgent(tmp_path)


def _serve_command() -> list[str]:
    exe = Path(sys.executable).parent / "transformers"
    return [str(exe)] if exe.exists() else [shutil.which("transformers") or "transformers"]


@pytest.fixture(scope="module", autouse=True)
def server_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    """`transformers serve` on loopback, started first so that its start-up overlaps building the model; it loads
    the model directory named by a request on demand (an OpenAI-compatible server on CPU)."""
    try:
        import openai  # noqa: F401  (transformers serve needs it)
    except ImportError:
        if IN_CI:
            pytest.fail("transformers serve needs the `openai` package (dev extra)")
        pytest.skip("transformers serve needs the `openai` package")
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    serve = [*_serve_command(), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with running(serve, env={**os.environ, "HF_HUB_OFFLINE": "1"}, log=log) as proc:
        yield proc, f"http://127.0.0.1:{port}", log


@pytest.fixture(scope="module")
def served(server_process: tuple[subprocess.Popen[bytes], str, Path]) -> str:
    proc, url, log = server_process
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"transformers serve did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.5)


def test_openai_adapter_against_transformers_serve(served: str, tiny: Path, snapshot: Path, tmp_path: Path) -> None:
    agent = OpenAIChatAgent(served + "/v1", str(tiny), temperature=0.0, max_tokens=24, timeout_s=60)
    doc = _run(agent, tmp_path / "oa", snapshot, SERVED_TASKS)
    _assert_scored_failures(doc, tmp_path / "oa", SERVED_TASKS)
    answered = [e for e in doc["episodes"] if e["status"] != "agent_error"]
    assert answered, [e["error"] for e in doc["episodes"]]  # the server really answered chat completions
    assert sum(e["tokens"]["prompt"] for e in answered) > 0
    assert doc["run"]["model"]["endpoint"] == served + "/v1/chat/completions"


def test_openai_adapter_unreachable_endpoint_is_a_recorded_failure(snapshot: Path, tmp_path: Path) -> None:
    agent = OpenAIChatAgent(f"http://127.0.0.1:{free_port()}", "nothing", timeout_s=2)
    doc = _run(agent, tmp_path / "down", snapshot)
    assert doc["run"]["episodes"] == len(TASKS)
    assert all(e["status"] == "agent_error" and "unreachable" in e["error"] for e in doc["episodes"])
    assert doc["scores"]["overall"]["pass_hat_k"] == 0.0 and doc["scores"]["overall"]["agent_errors"] == len(TASKS)


def test_tool_call_parsing() -> None:
    content, calls = parse_tool_blocks(
        '먼저 조회합니다. <tool_call>{"name": "a", "arguments": {"x": "1"}}</tool_call>'
        '<tool_call>{"name": "b", "arguments": "{\\"y\\": 2}"}</tool_call>'
        "<tool_call>{not json}</tool_call><tool_call>[1]</tool_call>"
    )
    assert content == "먼저 조회합니다."
    assert [(c.name, c.arguments, bool(c.error)) for c in calls] == [
        ("a", {"x": "1"}, False),
        ("b", {"y": 2}, False),
        ("", None, True),
        ("", None, True),
    ]
    calls = parse_openai_calls(
        [
            {"id": "c1", "function": {"name": "a", "arguments": '{"x": 1}'}},
            {"id": "c2", "function": {"name": "b", "arguments": "{oops"}},
            {"id": "c3"},
            {"function": {"name": "d", "arguments": {"z": 1}}},
        ]
    )
    assert [(c.id, c.name, c.arguments, bool(c.error)) for c in calls] == [
        ("c1", "a", {"x": 1}, False),
        ("c2", "b", None, True),
        ("c3", "", None, True),
        ("call_3", "d", {"z": 1}, False),
    ]
    assert json.loads(json.dumps([c.raw for c in calls]))
