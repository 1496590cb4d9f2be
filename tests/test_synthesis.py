"""Trajectory synthesis over the verified graph: plans, execution with provenance, replay, exports that load
with `datasets` and render with a tool-capable chat template, and path sampling identical on both backends."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from core.clock import world_at
from core.settings import Neo4jSettings, Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy, NoCache
from execution.view import BUDGET
from graph.embedded_store import EmbeddedStore
from sandbox.inprocess import sandbox_mode
from sandbox.keys import DEMO_KEY
from synthesis.engine import VerifiedGraph, sample_plans, synthesize
from synthesis.export import FORMATS, convert, write_all, write_hf_dataset
from synthesis.records import SynthesisResult
from tests.support.helpers import copy_store, register_catalog


@pytest.fixture(scope="module")
def verified(
    tmp_path_factory: pytest.TempPathFactory, verified_catalog: Path
) -> Iterator[tuple[EmbeddedStore, Settings, Any]]:
    settings, transport = sandbox_mode(Settings())
    store = copy_store(verified_catalog, tmp_path_factory.mktemp("synth") / "g.sqlite3")
    yield store, settings, transport
    store.close()


@pytest.fixture(scope="module")
def records(verified: tuple[EmbeddedStore, Settings, Any]) -> list[dict[str, Any]]:
    store, settings, transport = verified

    async def go() -> SynthesisResult:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport)
        try:
            return await synthesize(store, settings, ex, count=80, seed=11)
        finally:
            await ex.aclose()

    out = asyncio.run(go())
    assert len(out["records"]) == 80
    return [r.to_json() for r in out["records"]]


def test_plans_are_seeded_and_satisfiable(verified: tuple[EmbeddedStore, Settings, Any]) -> None:
    store, settings, _ = verified
    a = [p.key for p in sample_plans(VerifiedGraph(store, settings), 40, seed=3)]
    b = [p.key for p in sample_plans(VerifiedGraph(store, settings), 40, seed=3)]
    c = [p.key for p in sample_plans(VerifiedGraph(store, settings), 40, seed=4)]
    assert a == b and a != c
    graph = VerifiedGraph(store, settings)
    plans = sample_plans(graph, 60, seed=5)
    # fan-in plans whose target one step of the route feeds alone are not planned (plan_shapes.fan_in_targets)
    assert {"single", "chain", "parallel"} <= {p.shape for p in plans}
    assert all(p.route for p in plans)  # every plan says why it was chosen
    for plan in plans:
        for i, step in enumerate(plan.steps):
            required = {p.name for p in step.tool.params if p.required} - {step.tool.format_name}
            assert required <= set(step.sources), (plan.key, required - set(step.sources))
            for src in step.sources.values():
                if src.kind == "link":
                    assert src.link is not None and src.link.status == "verified" and src.from_step < i
        if plan.shape == "fan_in":  # the final call joins the route's last lookup with an earlier one
            joined = {s.from_step for s in plan.steps[-1].sources.values() if s.kind == "link"}
            assert len(joined) >= 2 and len(plan.steps) - 2 in joined
        if plan.shape == "parallel":
            assert plan.steps[1].depends_on == plan.steps[2].depends_on == [0]


def test_records_carry_provenance_and_no_secrets(records: list[dict[str, Any]]) -> None:
    assert len({r["id"] for r in records}) == len(records)
    for r in records:
        assert any("\uac00" <= ch <= "\ud7a3" for ch in r["request"]) and r["final_answer"]
        assert DEMO_KEY not in json.dumps(r, ensure_ascii=False)
        names = {t["function"]["name"] for t in r["tools"]}
        assert {s["tool"] for s in r["steps"]} <= names and set(r["distractors"]) <= names
        for step in r["steps"]:
            assert set(step["arguments"]) == set(step["provenance"])
            for arg, prov in step["provenance"].items():
                if prov["kind"] == "link":
                    upstream = r["steps"][prov["from_step"]]
                    assert prov["link"] in r["metadata"]["verified_links"] and prov["field"]
                    assert upstream["step"] < step["step"], arg
                else:
                    assert prov["value"] == step["arguments"][arg]
            assert step["response"]["rows"] >= 1 and len(step["response"]["items"]) <= BUDGET.rows
        assert r["metadata"]["graph_snapshot"] and r["metadata"]["provenance"] in ("live", "replayed_from_cache")


def test_every_trajectory_replays_from_its_recorded_steps(
    verified: tuple[EmbeddedStore, Settings, Any], records: list[dict[str, Any]]
) -> None:
    store, settings, transport = verified
    tools = {t.name: t for t in store.all_tools()}

    async def replay() -> list[bool]:
        ex = Executor(
            settings, NoCache(MemoryEconomy()), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport
        )
        try:
            out = []
            for r in records:  # at the record's own clock (the world answers the instant the record was made at)
                with world_at(datetime.fromisoformat(r["now"]) if r.get("now") else None):
                    results = [await ex.call(tools[s["tool"]], s["arguments"]) for s in r["steps"]]
                out.append(all(res.ok for res in results))
            return out
        finally:
            await ex.aclose()

    assert all(asyncio.run(replay()))


CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n# "
    "Tools\n<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools><|im_end|>\n{% endif %}"
    "{%- for m in messages %}<|im_start|>{{ m.role }}\n{% if m.tool_calls %}{% for c in m.tool_calls %}"
    '<tool_call>{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}</tool_call>'
    "{% endfor %}{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}"
)


def test_exports_load_with_datasets_and_render_with_a_chat_template(
    records: list[dict[str, Any]], tmp_path: Path
) -> None:
    import datasets
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    paths = write_all(tmp_path, records)
    assert set(paths) == {"record", *FORMATS}
    trl = datasets.load_dataset("json", data_files=str(paths["trl"]), split="train")
    assert len(trl) == len(records) and "messages" in trl.column_names and "tools" in trl.column_names
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")),  # type: ignore[no-untyped-call]
        chat_template=CHAT_TEMPLATE,
    )
    example = convert(records[0], "trl")
    text = tok.apply_chat_template(example["messages"], tools=example["tools"], tokenize=False)
    assert "<tool_call>" in text and records[0]["steps"][0]["tool"] in text and records[0]["request"] in text
    hermes = json.loads(paths["hermes"].read_text(encoding="utf-8").splitlines()[0])["text"]
    # byte-identical to the Qwen2.5 template, whose system prompt shows one example <tool_call> block
    assert hermes.count("<tool_call>\n") == len(records[0]["steps"]) + 1
    entries = [json.loads(line) for line in paths["bfcl"].read_text(encoding="utf-8").splitlines()]
    single = next(r for r in records if len(r["steps"]) == 1)
    bfcl = next(e for e in entries if e.get("trajectory_ids") == [single["id"]])
    assert bfcl["ground_truth"][0] == {
        single["steps"][0]["tool"]: {k: [v] for k, v in single["steps"][0]["arguments"].items()}
    }
    folder = write_hf_dataset(tmp_path / "hf", records, config={"seed": 11}, stats={"n": len(records)})
    hf = datasets.load_from_disk(str(folder))["train"]
    assert len(hf) == len(records) and "KOPA EDGE trajectories" in (folder / "README.md").read_text(encoding="utf-8")


def test_path_sampling_is_the_same_on_neo4j(verified: tuple[EmbeddedStore, Settings, Any], neo4j_uri: str) -> None:
    from graph.neo4j_store import Neo4jStore

    store, settings, _ = verified
    neo = Neo4jStore(Neo4jSettings(uri=neo4j_uri))
    neo.init_schema()
    neo.reset()
    try:
        register_catalog(neo, settings)
        links = store.list_links(limit=100_000)[0]
        neo.upsert_candidates(links)
        for lk in links:
            if lk.status == "verified":
                neo.save_link(lk)
        edges = store.verified_edges()
        assert neo.verified_edges() == edges
        starts = sorted(edges)[:12]
        # complete enumerations are identical
        for lo, hi in ((1, 1), (1, 2)):
            assert neo.sample_paths(starts, lo, hi, 10_000) == store.sample_paths(starts, lo, hi, 10_000)
        # bounded ones keep the same number of valid paths per start
        for lo, hi in ((2, 4), (5, 5)):
            a, b = neo.sample_paths(starts, lo, hi, 25), store.sample_paths(starts, lo, hi, 25)
            assert len(a) == len(b)
            for path in a:
                assert lo <= len(path) - 1 <= hi and len(set(path)) == len(path)
                assert all(y in edges[x] for x, y in itertools.pairwise(path))
    finally:
        neo.reset()
        neo.close()
