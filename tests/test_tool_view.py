"""One tool view: the tool specs a model reads are the same text in an SFT row, in a GRPO prompt
as trl 1.16 templates it (`environment_factory`, one environment per tool set) and in a KOPA-Bench episode through
the local transformers adapter — each the tool's `graph.specs.function_spec`, `pattern` and `format` included."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from bench.agents import TransformersAgent
from bench.episode import run_episode
from bench.records import EpisodeRecord
from bench.tasks import Task
from cli.bench import bench_env
from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.specs import function_spec
from sandbox.inprocess import sandbox_mode
from synthesis.engine import synthesize
from synthesis.records import SynthesisResult, Trajectory
from tests.support.helpers import copy_store
from training import datasets
from training.environment import BoundTool, ReplayBackend, environment_factories
from training.run import load_model, load_tokenizer
from training.tiny import build_tiny, conversation_texts

pytest.importorskip("trl")
os.environ.update({"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "TRL_EXPERIMENTAL_SILENCE": "1"})
_TOOLS = re.compile(r"<tools>\n(.*?)\n</tools>", re.DOTALL)


def tool_lines(prompt: str) -> list[str]:
    """The tool specs a rendered prompt shows, one JSON text per tool (sorted: the benchmark shuffles them)."""
    found = _TOOLS.findall(prompt)
    assert len(found) == 1, prompt[:500]
    return sorted(line for line in found[0].split("\n") if line.strip())


def _has(spec: dict[str, Any], key: str) -> bool:
    return any(key in p for p in spec["function"]["parameters"].get("properties", {}).values())


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory, verified_catalog: Path) -> list[Trajectory]:
    root = tmp_path_factory.mktemp("view")
    settings, transport = sandbox_mode(Settings())
    store = copy_store(verified_catalog, root / "g.sqlite3")

    async def go() -> SynthesisResult:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport)
        try:
            return await synthesize(store, settings, ex, count=6, shapes=("single",), extras={})
        finally:
            await ex.aclose()

    try:
        return list(asyncio.run(go())["records"])
    finally:
        store.close()


@pytest.mark.slow
def test_sft_row_grpo_prompt_and_bench_episode_render_identical_tool_specs(
    records: list[Trajectory], tmp_path: Path
) -> None:
    from trl.trainer.grpo_config import GRPOConfig
    from trl.trainer.grpo_trainer import GRPOTrainer

    # a record offering a tool whose spec carries `pattern` and `format` (what a signature-derived schema drops)
    rec = next(
        r for r in records if any(_has(t, "pattern") for t in r.tools) and any(_has(t, "format") for t in r.tools)
    )
    names = [t["function"]["name"] for t in rec.tools]
    model_dir = build_tiny(
        tmp_path / "tiny",
        conversation_texts([datasets.sft_row(r) for r in records]),
        vocab_size=1024,
        max_positions=4096,
    )
    tok = load_tokenizer(model_dir)

    # SFT: the row's tools, rendered as SFTTrainer renders the conversation
    row = datasets.sft_row(rec)
    sft = tool_lines(tok.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False))

    # GRPO: the prompt trl tokenises for this row's environment, decoded
    factories, _ = environment_factories([rec], ReplayBackend([rec]))
    grow = datasets.grpo_row(rec)

    def zero(completions: list[Any], **kwargs: Any) -> list[float | None]:
        return [0.0] * len(completions)

    args = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        use_cpu=True,
        per_device_train_batch_size=2,
        num_generations=2,
        max_steps=1,
        max_completion_length=8,
        report_to=[],
        logging_steps=1,
    )
    trainer = GRPOTrainer(
        model=load_model(model_dir),
        reward_funcs=[zero],
        args=args,
        train_dataset=datasets.to_dataset([grow], "grpo"),
        processing_class=tok,
        environment_factory=dict(factories),
    )
    env_tools = trainer._env_tools[grow["environment"]]
    assert sorted(t.__name__ for t in env_tools) == sorted(names)
    assert all(isinstance(t, BoundTool) for t in env_tools)
    assert sorted(env_tools, key=lambda t: t["function"]["name"]) == sorted(
        rec.tools, key=lambda t: t["function"]["name"]
    )
    trainer._batch_environments = [grow["environment"]]
    prompt_ids, _, _ = trainer._tokenize_prompts([grow["prompt"]])
    grpo_text = tok.decode(prompt_ids[0], skip_special_tokens=False)
    grpo = tool_lines(grpo_text)

    # the tools trl will call are the same objects: a gold call replays its recorded response
    step = rec.steps[0]
    env: Any = trainer._environment_pool[grow["environment"]][0]
    env.reset(trajectory_id=rec.id)
    tool = getattr(env, step.tool)  # what trl puts in a rollout's tool dict, called with the model's arguments
    assert isinstance(tool, BoundTool) and tool.__name__ == step.tool
    out = tool(**step.arguments)
    assert json.loads(out)["rows"] == step.response.rows and env.calls[-1]["ok"]

    # KOPA-Bench: an episode offering the same tools, through the local transformers adapter; the prompt it renders
    prompts: list[str] = []

    class Recording(TransformersAgent):
        def _load(self) -> tuple[Any, Any]:
            tk, model = super()._load()
            if not getattr(tk, "_recording", False):
                render = tk.apply_chat_template

                def spy(*a: Any, **kw: Any) -> Any:
                    out = render(*a, **kw)
                    prompts.append(str(out))
                    return out

                tk.apply_chat_template = spy
                tk._recording = True
            return tk, model

    task = Task(
        id="view-probe",
        category="single",
        persona="citizen",
        turns=[rec.request],
        tools={"offered": names, "distractors": 0},
        gold=[{"id": "s1", "tool": step.tool, "args": {k: {"const": v} for k, v in step.arguments.items()}}],
        facts=[{"kind": "count", "from": "s1"}],
    )

    async def episode() -> EpisodeRecord:
        async with bench_env() as e:
            assert {n: function_spec(e.registry[n]) for n in names} == {t["function"]["name"]: t for t in rec.tools}
            return await run_episode(
                task, Recording(model_dir, max_new_tokens=4), e.backend, e.registry, now=e.now, max_turns=1
            )

    ep = asyncio.run(episode())
    assert prompts and sorted(ep["offered"]) == sorted(names)
    bench = tool_lines(prompts[0])

    assert sft == grpo == bench
    by_name = sorted(rec.tools, key=lambda t: str(t["function"]["name"]))
    assert sorted((json.loads(line) for line in grpo), key=lambda t: str(t["function"]["name"])) == by_name
    patterned = next(t for t in rec.tools if _has(t, "format"))
    for p in patterned["function"]["parameters"]["properties"].values():
        for key in ("pattern", "format"):
            if key in p:
                assert json.dumps(p[key], ensure_ascii=False) in grpo_text
