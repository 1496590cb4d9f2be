"""Exports checked by the consumers that read them: `datasets.load_from_disk` loads the HF folder (a DatasetDict
written by save_to_disk, every row its trl.jsonl line) and its validation split holds every kind and shape; the
Qwen2.5 chat template trl ships renders exactly hermes.jsonl; the stated token lengths are what a tokenizer counts and
the shipped training configs keep them (or say they do not); trl's SFTTrainer with assistant-only loss keeps every
conversation of the HF folder whole at SFT_MAX_LENGTH (a tiny local model and tokenizer, trained one step);
LLaMA-Factory's ShareGPT rules (written here from its documented behaviour); OpenAI chat rules; BFCL's own loader,
ids, AST checker and irrelevance rule (bfcl-eval in its own venv, `bench.bfcl.env`) accept every BFCL entry."""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.bfcl.env import default_venv, is_ready, venv_python
from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from sandbox.inprocess import sandbox_mode
from synthesis.engine import synthesize
from synthesis.export import (
    SFT_MAX_LENGTH,
    VALIDATION_FRACTION,
    convert,
    export_all,
    length_lines,
    sequence_key,
    split_records,
    token_lengths,
    write_all,
    write_hf_dataset,
)
from synthesis.export_bfcl import BFCL_CATEGORIES, BFCL_PREFIX
from synthesis.records import SynthesisResult, Trajectory
from tests.conftest import IN_CI
from tests.support.helpers import copy_store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def synthesized(
    tmp_path_factory: pytest.TempPathFactory, verified_catalog: Path
) -> Iterator[tuple[SynthesisResult, EmbeddedStore, Settings]]:
    settings, transport = sandbox_mode(Settings())
    store = copy_store(verified_catalog, tmp_path_factory.mktemp("consumers") / "g.sqlite3")

    async def go() -> SynthesisResult:
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
def records(synthesized: tuple[SynthesisResult, EmbeddedStore, Settings]) -> list[Trajectory]:
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
    for fmt in ("trl", "openai", "hermes", "sharegpt"):
        lines = _lines(exported[fmt])
        assert [line["id"] for line in lines] == [r.id for r in records], fmt
    # a BFCL entry's id is BFCL's (simple_python_0, ...); it names the trajectories it comes from
    bfcl = _lines(exported["bfcl"])
    assert bfcl and all(line["trajectory_ids"] and set(line["trajectory_ids"]) <= ids for line in bfcl)


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


def test_the_hf_folder_loads_with_load_from_disk_row_for_row_as_trl_jsonl(
    records: list[Trajectory], exported: dict[str, Path], tmp_path: Path
) -> None:
    import datasets

    trl = {line["id"]: line for line in _lines(exported["trl"])}
    folder = write_hf_dataset(tmp_path / "hf", records, config={"seed": 5}, stats={}, validation=VALIDATION_FRACTION)
    ds = datasets.load_from_disk(str(folder))  # the call the dataset card documents
    assert isinstance(ds, datasets.DatasetDict) and set(ds) == {"train", "validation"}
    assert 'load_from_disk("<this folder>")' in (folder / "README.md").read_text(encoding="utf-8")
    train, val = split_records(records, VALIDATION_FRACTION)
    assert list(ds["train"]["id"]) == [r.id for r in train] and list(ds["validation"]["id"]) == [r.id for r in val]
    # every row is its trl.jsonl line: the same messages, calls with arguments as objects, no keys filled with None
    rows = [row for split in ds.values() for row in split]
    assert len(rows) == len(records) and all(row == trl[row["id"]] for row in rows)
    calls = [c for row in rows for m in row["messages"] if m.get("tool_calls") for c in m["tool_calls"]]
    assert calls and all(isinstance(c["function"]["arguments"], dict) for c in calls)
    # trl.jsonl itself loads with the json builder, the same columns
    assert set(datasets.load_dataset("json", data_files=str(exported["trl"]), split="train").column_names) == set(
        ds["train"].column_names
    )
    # a later export into the same folder replaces the earlier one whole
    write_hf_dataset(folder, records[:30], config={"seed": 5}, stats={})
    again = datasets.load_from_disk(str(folder))
    assert set(again) == {"train"} and list(again["train"]["id"]) == [r.id for r in records[:30]]


def test_validation_holds_every_kind_and_shape_the_train_split_has(records: list[Trajectory]) -> None:
    from training.datasets import split_by_sequence

    train, val = split_records(records, VALIDATION_FRACTION)
    assert len(train) + len(val) == len(records) and 0 < len(val) <= 2 * round(VALIDATION_FRACTION * len(records))
    assert {r.kind for r in val} == {r.kind for r in train} == {r.kind for r in records}
    assert {r.shape for r in val} == {r.shape for r in train}
    assert not {sequence_key(r) for r in train} & {sequence_key(r) for r in val}  # still no sequence in both
    assert split_records(records, VALIDATION_FRACTION) == (train, val)  # deterministic
    assert split_by_sequence(records, VALIDATION_FRACTION) == (train, val)  # the split `kopa train` evaluates on
    # a kind whose records all share one tool sequence cannot be in both: it stays in train, the others still are
    recovery = next(r for r in records if r.kind == "error_recovery")
    narrow = [r for r in records if r.kind != "error_recovery" or sequence_key(r) == sequence_key(recovery)]
    train, val = split_records(narrow, VALIDATION_FRACTION)
    assert "error_recovery" in {r.kind for r in train} and "error_recovery" not in {r.kind for r in val}
    assert {r.kind for r in val} == {r.kind for r in narrow} - {"error_recovery"}


@pytest.fixture(scope="module")
def tiny_tokenizer(records: list[Trajectory]) -> Any:
    """The tokenizer `kopa train tiny --data EXPORT` builds for this export (its defaults: the rendered
    conversations, vocabulary 4096): the one the shipped CPU configs train with."""
    if IN_CI:
        import trl  # noqa: F401  (the train extra is installed under CI)
    else:
        pytest.importorskip("trl")
    from training.datasets import sft_row
    from training.tiny import build_tokenizer, conversation_texts

    return build_tokenizer(conversation_texts(sft_row(r) for r in records), vocab_size=4096)


def test_stated_token_lengths_are_what_the_tokenizer_counts_and_the_configs_keep_them(
    synthesized: tuple[SynthesisResult, EmbeddedStore, Settings],
    records: list[Trajectory],
    exported: dict[str, Path],
    tiny_tokenizer: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import numpy as np

    from training.config import load_config
    from training.datasets import grpo_rows, measure, sft_row
    from training.run import print_warnings
    from training.tiny import build_model

    tok = tiny_tokenizer
    result, store, settings = synthesized
    done = export_all(tmp_path, result, store, settings, {"seed": 5}, tokenizer=tok)
    stated = json.loads((tmp_path / "lengths.json").read_text(encoding="utf-8"))
    assert stated == done["lengths"] and stated["tokens"] == token_lengths(records, tok)
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert all(line in card for line in length_lines(stated))
    # the figures, counted another way: the tokens of hermes.jsonl (the Qwen2.5 template's text, this tokenizer's
    # template) and of each GRPO prompt as trl renders it, at the nearest rank
    whole = {h["id"]: len(tok(h["text"], add_special_tokens=False)["input_ids"]) for h in _lines(exported["hermes"])}
    prompts = {
        r.id: len(
            tok(
                tok.apply_chat_template(
                    convert(r, "trl")["messages"][: 2 + len(r.preamble)],  # system, earlier turns, the request
                    tools=r.tools,
                    tokenize=False,
                    add_generation_prompt=True,
                ),
                add_special_tokens=False,
            )["input_ids"]
        )
        for r in records
        if r.steps
    }
    completions = [whole[i] - n for i, n in prompts.items()]

    def figures(values: list[int]) -> dict[str, int]:
        q = np.percentile(values, [50, 90, 100], method="inverted_cdf")
        return {"p50": int(q[0]), "p90": int(q[1]), "max": int(q[2])}

    tokens = stated["tokens"]
    assert tokens["sft"] == figures(list(whole.values())) and tokens["rows"] == len(records)
    assert tokens["grpo_prompt"] == figures(list(prompts.values())) and tokens["grpo_rows"] == len(prompts)
    assert tokens["grpo_completion"] == figures(completions)
    over = tokens["trl_default_max_length"]
    assert over == {"max_length": 1024, "rows_over": sum(n > 1024 for n in whole.values())}
    # the shipped CPU configs (README: kopa demo, kopa train tiny, kopa train sft/grpo) keep every conversation and
    # every GRPO prompt of such an export whole
    sft = load_config(ROOT / "configs" / "train" / "sft.yaml")
    grpo = load_config(ROOT / "configs" / "train" / "grpo.yaml")
    assert sft.sft.max_length >= tokens["sft"]["max"], (sft.sft.max_length, tokens["sft"])
    assert grpo.grpo.max_prompt_length >= tokens["grpo_prompt"]["max"], (grpo.grpo.max_prompt_length, tokens)
    # what they do not keep, a run says before it trains: GRPO's completion budget against the recorded completions
    by_id = {r.id: r for r in records}
    rows, _ = grpo_rows([r for r in records if r.steps])
    _, report = measure(rows, by_id, tok, "grpo", grpo.grpo.max_prompt_length, "drop", grpo.grpo.max_completion_length)
    assert report.completion_longest == max(whole[row["trajectory_id"]] - prompts[row["trajectory_id"]] for row in rows)
    cut = [line for line in report.warnings() if "max_completion_length" in line]
    assert bool(cut) == (report.completion_longest > grpo.grpo.max_completion_length)
    print_warnings(report.warnings())  # what `kopa train grpo` prints before it trains
    assert capsys.readouterr().err.splitlines() == report.warnings()
    # `kopa train tiny` builds a model with the positions these bounds need
    positions = inspect.signature(build_model).parameters["max_positions"].default
    assert (
        positions >= sft.sft.max_length and positions >= grpo.grpo.max_prompt_length + grpo.grpo.max_completion_length
    )
    _, sft_report = measure([sft_row(r) for r in records], by_id, tok, "sft", 1024, "keep")
    assert sft_report.warnings() == [
        f"warning: {over['rows_over']} of {len(records)} sft rows exceed sft.max_length 1024 tokens (longest "
        f"{tokens['sft']['max']}): kept and truncated by the trainer (data.length_policy keep)"
    ]


@pytest.mark.parametrize(
    "family", sorted(p.name for p in (ROOT / "configs" / "experiment").iterdir() if (p / "grpo.yaml").exists())
)
def test_the_experiment_budgets_keep_every_recorded_completion(
    records: list[Trajectory], tiny_tokenizer: Any, family: str
) -> None:
    """The GPU configs' completion budget (calls, tool results, answer) against a demo-mixed export measured with the
    tokenizer `kopa train tiny` builds (digits one a token, as Qwen's): below the p90 most rollouts would be cut
    inside their tool results (1,024 was); the configs keep every recorded completion, prompt and conversation whole
    (docs/experiment.md states the 1.5x margin over the demo export's max for Qwen's vocabulary)."""
    from training.config import load_config

    tokens = token_lengths(records, tiny_tokenizer)
    completion, prompt, whole = tokens["grpo_completion"], tokens["grpo_prompt"], tokens["sft"]
    grpo = load_config(ROOT / "configs" / "experiment" / family / "grpo.yaml").grpo
    sft = load_config(ROOT / "configs" / "experiment" / family / "sft.yaml").sft
    assert grpo.max_completion_length >= completion["p90"], (family, grpo.max_completion_length, completion)
    assert grpo.max_completion_length >= completion["max"], (family, grpo.max_completion_length, completion)
    assert grpo.max_prompt_length >= prompt["max"] and sft.max_length >= whole["max"], (family, tokens)
    assert sft.max_length >= grpo.max_prompt_length + grpo.max_completion_length  # SFT holds what GRPO can


@pytest.mark.slow
def test_sft_trainer_keeps_every_example_whole_at_the_documented_max_length(
    records: list[Trajectory], exported: dict[str, Path], tmp_path: Path
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
    hf = write_hf_dataset(tmp_path / "hf", records, config={}, stats={}, validation=VALIDATION_FRACTION)
    ds = datasets.load_from_disk(str(hf))["train"].select(range(12))  # the HF folder, as trl gets it
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


def test_the_tokenizer_option_is_checked_before_any_work(tiny_tokenizer: Any, tmp_path: Path) -> None:
    """`kopa demo|synth --tokenizer DIR` loads a saved tokenizer with its chat template, or refuses the folder."""
    import typer

    from cli.synth import load_tokenizer

    assert load_tokenizer(None) is None
    with pytest.raises(typer.Exit):
        load_tokenizer(tmp_path)  # no tokenizer.json
    tiny_tokenizer.save_pretrained(tmp_path / "tok")
    loaded = load_tokenizer(tmp_path / "tok")
    assert loaded.chat_template == tiny_tokenizer.chat_template
    text = "<|im_start|>user\n우산 챙겨야 해?<|im_end|>"
    assert loaded(text)["input_ids"] == tiny_tokenizer(text)["input_ids"]


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
from pathlib import Path
from types import SimpleNamespace
from bfcl_eval.constants.category_mapping import ALL_CATEGORIES, VERSION_PREFIX
from bfcl_eval.constants.enums import Language, ReturnFormat
from bfcl_eval.eval_checker.eval_runner import _evaluate_single_ast_entry, _evaluate_single_relevance_entry
from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
from bfcl_eval.model_handler.utils import default_decode_ast_prompting
from bfcl_eval.utils import extract_test_category_from_id, load_file, sort_key

folder, calls_path, answers_path = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
calls = json.loads(open(calls_path, encoding="utf-8").read())  # entry id -> the recorded calls [{name: args}]
answers = json.loads(open(answers_path, encoding="utf-8").read())  # entry id -> the recorded final answer
fc = SimpleNamespace(is_fc_model=True)
fc.decode_ast = lambda result, language, has_tool_call_tag: OpenAICompletionsHandler.decode_ast(
    fc, result, language, has_tool_call_tag
)
prompting = SimpleNamespace(decode_ast=default_decode_ast_prompting)
model = "gpt-4o-2024-11-20-FC"
out = {"prefix": VERSION_PREFIX, "entries": []}
for path in sorted(folder.glob(VERSION_PREFIX + "_*.json")):
    category = path.name[len(VERSION_PREFIX) + 1 : -len(".json")]
    entries = load_file(path, sort_by_id=True)
    answer_file = folder / "possible_answer" / path.name
    possible = {a["id"]: a["ground_truth"] for a in load_file(answer_file)} if category != "irrelevance" else {}
    for entry in entries:
        i = entry["id"]
        sort_key(entry)  # BFCL orders its entries by id; an id not of its form fails here
        row = {"id": i, "category": category, "known": category in ALL_CATEGORIES}
        row["from_id"] = extract_test_category_from_id(i)
        if category == "irrelevance":
            # BFCL's rule: the answer decodes to no call, as a function-calling model's text and as a prompted one's
            row["fc"] = _evaluate_single_relevance_entry(fc, i, answers[i], entry, model, category)["valid"]
            row["prompt"] = _evaluate_single_relevance_entry(prompting, i, answers[i], entry, model, category)["valid"]
            # control: a call to an offered function fails the same rule
            fn = entry["function"][0]["name"]
            row["control"] = not any(
                _evaluate_single_relevance_entry(h, i, res, entry, model, category)["valid"]
                for h, res in ((fc, [{fn: "{}"}]), (prompting, f"[{fn}()]"))
            )
        else:
            made = [{name: json.dumps(args)} for call in calls[i] for name, args in call.items()]
            text = "[" + ", ".join(
                f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for c in calls[i] for n, a in c.items()
            ) + "]"
            for mode, handler, result in (("fc", fc, made), ("prompt", prompting, text)):
                r = _evaluate_single_ast_entry(
                    handler, i, result, possible[i], entry, model, category, Language.PYTHON, ReturnFormat.PYTHON
                )
                row[mode] = r["valid"]
                if not r["valid"]:
                    row[mode + "_error"] = r.get("error")
            # control: the same calls with one value changed (or one call fewer) fail the checker
            wrong = [dict(a) for c in calls[i] for a in c.values()]
            names = [n for c in calls[i] for n in c]
            if wrong[0]:
                k, v = next(iter(wrong[0].items()))
                wrong[0][k] = v + 1 if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v) + "x"
            else:
                names, wrong = names[1:], wrong[1:]
            bad = [{n: json.dumps(a)} for n, a in zip(names, wrong)]
            row["control"] = not _evaluate_single_ast_entry(
                fc, i, bad, possible[i], entry, model, category, Language.PYTHON, ReturnFormat.PYTHON
            )["valid"]
        out["entries"].append(row)
print(json.dumps(out, ensure_ascii=False))
"""


def _category(item: dict[str, Any]) -> str:
    return str(item["id"]).rsplit("_", 1)[0]


def test_bfcl_entries_are_of_bfcls_categories_and_pass_its_checkers(
    synthesized: tuple[SynthesisResult, EmbeddedStore, Settings], records: list[Trajectory], tmp_path: Path
) -> None:
    result, store, settings = synthesized
    done = export_all(tmp_path, result, store, settings, {"seed": 5})
    items = _lines(tmp_path / "bfcl.jsonl")
    counts = Counter(_category(i) for i in items)
    assert set(counts) == set(BFCL_CATEGORIES) and done["distribution"]["bfcl"]["items"] == dict(counts)
    for c in BFCL_CATEGORIES:  # BFCL's id form: the category, then the entry's number from 0
        assert [i["id"] for i in items if _category(i) == c] == [f"{c}_{n}" for n in range(counts[c])]
    by_id = {r.id: r for r in records}
    # every record of one call is a simple or multiple entry; every irrelevance record an irrelevance entry; the
    # parallel entries join two single-call records each; records of several calls are left out and counted
    own = [i["trajectory_ids"] for i in items if _category(i) in ("simple_python", "multiple", "irrelevance")]
    assert all(len(t) == 1 for t in own)
    assert sorted(t[0] for t in own) == sorted(r.id for r in records if r.n_steps == 1 or r.kind == "irrelevance")
    assert done["distribution"]["bfcl"]["left_out_multi_step"] == sum(r.n_steps > 1 for r in records)
    kinds = {"string": str, "integer": int, "float": float, "boolean": bool, "array": list, "dict": dict}
    for item in items:
        c, names = _category(item), [f["name"] for f in item["function"]]
        sources = [by_id[t] for t in item["trajectory_ids"]]
        assert item["question"][0][-1]["role"] == "user" and item["question"][0][0]["role"] == "system"
        if c == "irrelevance":
            assert "ground_truth" not in item and not sources[0].steps and len(names) > 1
            continue
        truth = [next(iter(call.items())) for call in item["ground_truth"]]
        assert [(name, {k: v[0] for k, v in args.items()}) for name, args in truth] == [
            (s.tool, {k: v[0] for k, v in convert(r, "bfcl")["ground_truth"][0][s.tool].items()})
            for r in sources
            for s in r.steps
        ]
        if c == "simple_python":
            assert len(names) == 1 == len(truth) and sources[0].steps[0].tool == names[0]
        elif c == "multiple":
            assert len(names) > 1 and len(truth) == 1
        elif c == "parallel":
            assert len(names) == 1 and len(truth) == 2 and truth[0][0] == truth[1][0] and truth[0][1] != truth[1][1]
            assert all(r.request in item["question"][0][-1]["content"] for r in sources)
        else:
            assert len(truth) == 2 and truth[0][0] != truth[1][0] and {truth[0][0], truth[1][0]} <= set(names)
        for fn in item["function"]:
            params = fn["parameters"]
            assert params["type"] == "dict" and isinstance(params["required"], list)
            assert all(p["type"] in (*kinds, "any") for p in params["properties"].values())
        for name, args in truth:
            spec = next(f for f in item["function"] if f["name"] == name)["parameters"]
            assert set(spec["required"]) <= set(args)
            for k, values in args.items():
                assert isinstance(values[0], kinds[spec["properties"][k]["type"]]), (item["id"], k, values)
    # a multi-step record converts for the batch route, flagged, and is in no entry
    multi = next(r for r in records if r.n_steps > 1)
    assert convert(multi, "bfcl")["multi_step"] is True
    assert multi.id not in {t for i in items for t in i["trajectory_ids"]}
    # bfcl-eval's own layout: a question file per category and its possible answers (none for irrelevance)
    folder = tmp_path / "bfcl"
    for c in BFCL_CATEGORIES:
        name = f"{BFCL_PREFIX}_{c}.json"
        assert [e["id"] for e in _lines(folder / name)] == [i["id"] for i in items if _category(i) == c]
        assert (folder / "possible_answer" / name).exists() == (c != "irrelevance")
    venv = default_venv()
    if not is_ready(venv):
        if IN_CI:
            pytest.fail(f"bfcl-eval is not installed ({venv}) — CI must run BFCL's checker")
        pytest.skip(f"bfcl-eval is not installed ({venv}); scripts/bfcl_env.sh creates it")
    calls = {
        i["id"]: [{s.tool: s.arguments} for t in i["trajectory_ids"] for s in by_id[t].steps]
        for i in items
        if _category(i) != "irrelevance"
    }
    answers = {i["id"]: by_id[i["trajectory_ids"][0]].final_answer for i in items if _category(i) == "irrelevance"}
    (tmp_path / "calls.json").write_text(json.dumps(calls, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "answers.json").write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
    script = tmp_path / "check.py"
    script.write_text(_BFCL_SCRIPT, encoding="utf-8")
    proc = subprocess.run(
        [
            str(venv_python(venv)),
            str(script),
            str(folder),
            str(tmp_path / "calls.json"),
            str(tmp_path / "answers.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"BFCL_PROJECT_ROOT": str(tmp_path / "bfcl-root"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    scored = json.loads(proc.stdout.strip().splitlines()[-1])
    assert scored["prefix"] == BFCL_PREFIX
    entries = scored["entries"]
    assert sorted(e["id"] for e in entries) == sorted(i["id"] for i in items)
    assert all(e["known"] and e["from_id"] == e["category"] for e in entries)  # BFCL reads our ids as its own
    failed = [e for e in entries if not (e["fc"] and e["prompt"])]
    assert not failed, failed[:3]
    assert all(e["control"] for e in entries), [e for e in entries if not e["control"]][:3]  # the checks can fail
