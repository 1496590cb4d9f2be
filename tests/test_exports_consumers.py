"""Exports checked by the consumers that read them: `datasets` loads trl.jsonl and the HF folder (same schema,
unique config, splits by tool sequence); the Qwen2.5 chat template trl ships renders exactly hermes.jsonl;
trl's SFTTrainer with assistant-only loss keeps every conversation whole at SFT_MAX_LENGTH (a tiny local model
and tokenizer, trained one step); LLaMA-Factory's ShareGPT rules (written here from its documented behaviour);
OpenAI chat rules; BFCL's own AST checker (bfcl-eval in .kopa/bfcl-venv) scores the ground truth 100%."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from sandbox.inprocess import sandbox_mode
from synthesis.engine import synthesize
from synthesis.export import (
    SFT_MAX_LENGTH,
    convert,
    export_all,
    is_bfcl_single,
    split_by_sequence,
    write_all,
    write_hf_dataset,
)
from synthesis.records import Trajectory
from tests.support.helpers import verified_store

ROOT = Path(__file__).resolve().parents[1]
# the bfcl-eval environment scripts/bfcl_env.sh creates: $KOPA_BFCL_VENV, else .kopa/bfcl-venv
BFCL_PYTHON = Path(os.environ.get("KOPA_BFCL_VENV") or ROOT / ".kopa" / "bfcl-venv") / "bin" / "python"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], EmbeddedStore, Settings]]:
    settings, transport = sandbox_mode(Settings())
    store = verified_store(tmp_path_factory.mktemp("consumers") / "g.sqlite3", settings, transport)

    async def go() -> dict[str, Any]:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport)
        try:
            return await synthesize(
                store,
                settings,
                ex,
                count=90,
                seed=5,
                extras={"irrelevance": 0.05, "clarification": 0.05, "error_recovery": 0.05, "hard_negative": 0.05},
            )
        finally:
            await ex.aclose()

    out = asyncio.run(go())
    yield out, store, settings
    store.close()


@pytest.fixture(scope="module")
def records(synthesized: tuple[dict[str, Any], EmbeddedStore, Settings]) -> list[Trajectory]:
    recs: list[Trajectory] = synthesized[0]["records"]
    assert len(recs) == 90
    assert {r.kind for r in recs} == {"normal", "irrelevance", "clarification", "error_recovery", "hard_negative"}
    return recs


@pytest.fixture(scope="module")
def exported(records: list[Trajectory], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_all(tmp_path_factory.mktemp("export"), records)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_every_line_carries_the_trajectory_id(records: list[Trajectory], exported: dict[str, Path]) -> None:
    ids = {r.id for r in records}
    for fmt in ("trl", "openai", "hermes", "sharegpt", "bfcl"):
        lines = _lines(exported[fmt])
        assert lines and all(line["id"] in ids for line in lines), fmt
        if fmt != "bfcl":
            assert [line["id"] for line in lines] == [r.id for r in records], fmt


def _qwen_template(name: str) -> str:
    import trl

    return (Path(trl.__file__).parent / "chat_templates" / name).read_text(encoding="utf-8")


def test_hermes_is_the_qwen25_template_rendering_byte_for_byte(
    records: list[Trajectory], exported: dict[str, Path]
) -> None:
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")),  # type: ignore[no-untyped-call]
        chat_template=_qwen_template("qwen2_5.jinja"),
    )
    trl_lines = _lines(exported["trl"])
    hermes = _lines(exported["hermes"])
    for t, h in zip(trl_lines, hermes, strict=True):
        rendered = tok.apply_chat_template(t["messages"], tools=t["tools"], tokenize=False)
        assert rendered == h["text"], t["id"]
    # parallel calls share one assistant turn and their results one user turn, as the template groups them
    parallel = next(r for r in records if r.shape == "parallel" and r.kind == "normal")
    text = next(h["text"] for h in hermes if h["id"] == parallel.id)
    n = len(parallel.steps)  # the root, two children, and a conversion step where a child needs a projection
    assert text.count("<tool_response>") == n and text.count("<|im_start|>user\n<tool_response>") == n - 1


def test_trl_jsonl_and_the_hf_folder_share_one_schema_with_unique_configs(
    records: list[Trajectory], exported: dict[str, Path], tmp_path: Path
) -> None:
    import datasets

    trl = datasets.load_dataset("json", data_files=str(exported["trl"]), split="train")
    assert len(trl) == len(records) and set(trl.column_names) == {"id", "messages", "tools"}
    calls = [c for row in trl for m in row["messages"] if m.get("tool_calls") for c in m["tool_calls"]]
    assert calls and all(not isinstance(c["function"]["arguments"], str) for c in calls)  # objects, not JSON text
    config = {"graph_snapshot": "g_test", "seed": 5}
    a = write_hf_dataset(tmp_path / "one" / "hf", records, config=config, stats={}, validation=0.2)
    b = write_hf_dataset(tmp_path / "two" / "hf", records[:50], config=config, stats={}, validation=0.2)
    name_a = (a / "README.md").read_text(encoding="utf-8").split("config_name: ")[1].split()[0]
    name_b = (b / "README.md").read_text(encoding="utf-8").split("config_name: ")[1].split()[0]
    assert name_a != name_b
    da = datasets.load_dataset(str(a), name_a)
    db = datasets.load_dataset(str(b), name_b)
    assert set(da) == {"train", "validation"} and len(da["train"]) + len(da["validation"]) == len(records)
    assert len(db["train"]) + len(db["validation"]) == 50  # never another folder's cache
    seq = {r.id: "|".join(s.tool for s in r.steps) for r in records}
    assert not {seq[i] for i in da["train"]["id"]} & {seq[i] for i in da["validation"]["id"]}
    single = datasets.load_dataset("json", data_files=str(a / "data" / "train.jsonl"), split="train")
    assert single.features == da["train"].features
    assert da["train"].features == trl.features
    by_id = {row["id"]: row for row in trl}
    assert all(row["messages"] == by_id[row["id"]]["messages"] for row in da["validation"])
    train, val = split_by_sequence(records, 0.2)
    assert len(train) == len(da["train"]) and len(val) == len(da["validation"])


@pytest.mark.slow
def test_sft_trainer_keeps_every_example_whole_at_the_documented_max_length(
    exported: dict[str, Path], tmp_path: Path
) -> None:
    import datasets
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.trainer.sft_config import SFTConfig
    from trl.trainer.sft_trainer import SFTTrainer

    texts = [h["text"] for h in _lines(exported["hermes"])]
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    core = Tokenizer(models.BPE(unk_token=None))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    # a small vocabulary: at least as many tokens per text as a large chat tokenizer would spend
    core.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=600, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",  # type: ignore[no-untyped-call]
        chat_template=_qwen_template("qwen2_5_training.jinja"),
    )
    lengths = {t: len(tok(t)["input_ids"]) for t in texts}
    print(
        "token lengths (min/median/max):",
        min(lengths.values()),
        sorted(lengths.values())[len(lengths) // 2],
        max(lengths.values()),
    )
    assert max(lengths.values()) <= SFT_MAX_LENGTH
    ds = datasets.load_dataset("json", data_files=str(exported["trl"]), split="train").select(range(12))
    model = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=SFT_MAX_LENGTH,
            tie_word_embeddings=True,
        )
    )
    args = SFTConfig(
        output_dir=str(tmp_path / "sft"),
        max_length=SFT_MAX_LENGTH,
        assistant_only_loss=True,
        max_steps=2,
        per_device_train_batch_size=2,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        use_cpu=True,
        dataset_num_proc=None,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok)
    prepared: Any = trainer.train_dataset
    assert prepared is not None and len(prepared) == len(ds)  # nothing dropped
    for row, source in zip(prepared, ds, strict=True):
        full: Any = tok.apply_chat_template(source["messages"], tools=source["tools"], tokenize=True)
        ids = full["input_ids"] if hasattr(full, "keys") else full
        assert len(row["input_ids"]) == len(ids) <= SFT_MAX_LENGTH  # nothing cut
        learned = [label != -100 for label in row["labels"]]  # trl folds the assistant mask into the labels
        assert sum(learned) > 0 and not learned[0]  # the system prompt and the tools are not learned
        assert learned[-1]  # the final answer is learned, to its last token
    result = trainer.train()
    assert torch.isfinite(torch.tensor(result.training_loss))


# ---------------------------------------------------------------------------------------------- LLaMA-Factory


def llamafactory_sharegpt_problems(example: dict[str, Any]) -> list[str]:
    """LLaMA-Factory's ShareGPT rules (its documented `sharegpt` format with the default tags): a list under
    `conversations` of {from, value}; an optional leading system turn (or a `system` column); then human or
    observation turns at even positions and gpt or function_call turns at odd positions, ending with the
    assistant (an even count); `tools` a JSON string; a function_call's value a JSON object or list of
    {name, arguments}. Examples that break a rule are dropped by its converter."""
    problems: list[str] = []
    conv = example.get("conversations")
    if not isinstance(conv, list) or not conv:
        return ["no conversations"]
    if conv[0].get("from") == "system":
        conv = conv[1:]
    odd, even = ("human", "observation"), ("gpt", "function_call")
    for i, turn in enumerate(conv):
        if set(turn) != {"from", "value"} or not isinstance(turn["value"], str):
            problems.append(f"turn {i} is not {{from, value}}")
        if turn.get("from") not in (odd if i % 2 == 0 else even):
            problems.append(f"turn {i}: {turn.get('from')} where {(odd if i % 2 == 0 else even)} is expected")
        if turn.get("from") == "function_call":
            calls = json.loads(turn["value"])
            for c in calls if isinstance(calls, list) else [calls]:
                if set(c) != {"name", "arguments"}:
                    problems.append(f"turn {i}: a call without name/arguments")
    if len(conv) % 2:
        problems.append("odd number of turns")
    if "tools" in example and not isinstance(json.loads(example["tools"]), list):
        problems.append("tools is not a JSON list")
    if "system" in example and not isinstance(example["system"], str):
        problems.append("system is not text")
    return problems


def test_sharegpt_passes_llamafactory_rules(records: list[Trajectory], exported: dict[str, Path]) -> None:
    lines = _lines(exported["sharegpt"])
    assert all(not llamafactory_sharegpt_problems(x) for x in lines), [
        (x["id"], llamafactory_sharegpt_problems(x)) for x in lines if llamafactory_sharegpt_problems(x)
    ][:3]
    # the checker rejects what the issue found: two observations in a row
    bad = json.loads(json.dumps(lines[0]))
    bad["conversations"].insert(3, {"from": "observation", "value": "{}"})
    assert llamafactory_sharegpt_problems(bad)
    record = next(r for r in records if r.shape == "parallel")
    parallel = next(x for x in lines if x["id"] == record.id)
    merged = [t for t in parallel["conversations"] if t["from"] == "observation"]
    # calls made together (the two children, or a conversion step next to a child) answer in one observation
    assert len(merged) == len(record.steps) - 1 and any(isinstance(json.loads(t["value"]), list) for t in merged)


def test_openai_chat_jsonl_rules(exported: dict[str, Path]) -> None:
    for line in _lines(exported["openai"]):
        msgs = line["messages"]
        assert msgs[0]["role"] == "system" and msgs[-1]["role"] == "assistant" and msgs[-1]["content"]
        open_ids: list[str] = []
        for m in msgs:
            assert m["role"] in ("system", "user", "assistant", "tool")
            if m["role"] == "assistant" and m.get("tool_calls"):
                assert m["content"] is None and not open_ids
                for c in m["tool_calls"]:
                    assert c["type"] == "function" and isinstance(json.loads(c["function"]["arguments"]), dict)
                    open_ids.append(c["id"])
            elif m["role"] == "tool":
                assert m["tool_call_id"] == open_ids.pop(0)
            else:
                assert isinstance(m["content"], str) and not open_ids
        assert not open_ids
        assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in line["tools"])


# ---------------------------------------------------------------------------------------------- BFCL

_BFCL_SCRIPT = r"""
import json, sys
from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
out = []
for line in open(sys.argv[1], encoding="utf-8"):
    item = json.loads(line)
    calls = [(name, args) for call in item["ground_truth"] for name, args in call.items()]
    answer = [{name: {k: v[0] for k, v in args.items()}} for name, args in calls]
    r = ast_checker(item["function"], answer, item["ground_truth"], Language.PYTHON, "multiple", "gpt-4o-2024-11-20-FC")
    out.append({"id": item["id"], "valid": r["valid"], "error": r.get("error")})
print(json.dumps(out))
"""


def test_bfcl_items_pass_bfcls_ast_checker(
    synthesized: tuple[dict[str, Any], EmbeddedStore, Settings], records: list[Trajectory], tmp_path: Path
) -> None:
    result, store, settings = synthesized
    done = export_all(tmp_path, result, store, settings, {"seed": 5})
    items = _lines(tmp_path / "bfcl.jsonl")
    singles = [r for r in records if is_bfcl_single(r)]
    assert len(items) == len(singles) > 0
    assert done["distribution"]["bfcl"] == {
        "single_call_items": len(singles),
        "left_out_multi_step": len(records) - len(singles),
    }
    kinds = {"string": str, "integer": int, "float": float, "boolean": bool, "array": list, "dict": dict}
    for item in items:
        assert len(item["ground_truth"]) == 1 and len(item["question"]) == 1
        for fn in item["function"]:
            params = fn["parameters"]
            assert params["type"] == "dict" and isinstance(params["required"], list)
            assert all(p["type"] in (*kinds, "any") for p in params["properties"].values())
        ((name, args),) = item["ground_truth"][0].items()
        spec = next(f for f in item["function"] if f["name"] == name)["parameters"]
        assert set(spec["required"]) <= set(args)
        for k, values in args.items():
            assert isinstance(values[0], kinds[spec["properties"][k]["type"]]), (item["id"], k, values)
    # a multi-step record converts for the API with a flag, but never enters bfcl.jsonl
    multi = next(r for r in records if r.n_steps > 1)
    assert convert(multi, "bfcl")["multi_step"] is True and multi.id not in {i["id"] for i in items}
    if not BFCL_PYTHON.exists():
        if IN_CI:
            pytest.fail(f"bfcl-eval is not installed ({BFCL_PYTHON}) — CI must run BFCL's checker")
        pytest.skip(f"bfcl-eval is not installed ({BFCL_PYTHON}); scripts/bfcl_env.sh creates it")
    script = tmp_path / "check.py"
    script.write_text(_BFCL_SCRIPT, encoding="utf-8")
    proc = subprocess.run(
        [str(BFCL_PYTHON), str(script), str(tmp_path / "bfcl.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    scored = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(scored) == len(items) and all(s["valid"] for s in scored), [s for s in scored if not s["valid"]][:3]
