"""scripts/experiment.sh --dry-run: every `kopa` command it prints names a command that exists, with options that
command declares, and `--help` works for each (a renamed command or option breaks the script hours into a GPU run,
not here otherwise). scripts/experiment.sh --rehearsal: every stage runs on a CPU, exit 0, with tiny models of the
family's chat template (data of both arms, overlap, SFT, GRPO with live tools, the held-out probes, serving through an
OpenAI-compatible endpoint, KOPA-Bench live and replay on a task subset, BFCL in bfcl-eval's own environment on a
subset, the held-out-provider arm, and the comparison table): `--dry-run` only prints commands, so this is what
catches a stage that would stop the GPU run hours in."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from cli import app

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "experiment.sh"
FAMILIES = sorted(p.parent.name for p in (ROOT / "configs" / "experiment").glob("*/family.env"))


def kopa_commands(line: str) -> list[list[str]]:
    """The `kopa` command lines in one printed command, also those inside `sh -c '...'` and after `env A=B`."""
    words = shlex.split(line)
    out: list[list[str]] = []
    for i, word in enumerate(words):
        if word == "kopa":
            out.append(words[i + 1 :])
            break
        if " " in word and "kopa " in word:
            out += kopa_commands(word)
    return out


def resolve(words: list[str]) -> tuple[Any, list[str], list[str]]:
    """(the click command, its path of names, the option names the line passes) for the words after `kopa`."""
    cmd: Any = typer.main.get_command(app)
    path: list[str] = []
    rest = list(words)
    while getattr(cmd, "commands", None) is not None and rest and not rest[0].startswith("-"):
        sub = cmd.commands.get(rest[0])
        assert sub is not None, f"`kopa {' '.join([*path, rest[0]])}` is not a command"
        cmd, path, rest = sub, [*path, rest.pop(0)], rest
    options = [w.split("=", 1)[0] for w in rest if w.startswith("--")]
    return cmd, path, options


def script(family: str, *flags: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), "--family", family, *flags],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def dry_run(family: str, *flags: str) -> list[str]:
    env = {**os.environ, "WORK": ".kopa/experiment-dry", "SEEDS": "0"}
    done = script(family, "--dry-run", *flags, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line.removeprefix("+ ").removesuffix(" &") for line in done.stdout.splitlines() if line.startswith("+ ")]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("rehearsal", [(), ("--rehearsal",)], ids=["gpu-run", "rehearsal"])
def test_dry_run_names_only_commands_and_options_that_exist(family: str, rehearsal: tuple[str, ...]) -> None:
    lines = dry_run(family, *rehearsal)
    commands = [c for line in lines for c in kopa_commands(line)]
    assert len(commands) >= 8, lines  # data, overlap, training, snapshot, bench, bfcl, compare
    seen: set[tuple[str, ...]] = set()
    runner = CliRunner()
    for words in commands:
        cmd, path, options = resolve(words)
        assert path, words
        declared = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        unknown = [o for o in options if o not in declared]
        assert not unknown, f"`kopa {' '.join(path)}` has no option {unknown} (the script passes {words})"
        if tuple(path) not in seen:
            seen.add(tuple(path))
            result = runner.invoke(app, [*path, "--help"])
            assert result.exit_code == 0, (path, result.output)
    names = {" ".join(p) for p in seen}
    assert {"demo", "synth", "bench overlap", "train sft", "train grpo", "bench run", "bench bfcl"} <= names, names
    assert "bench compare" in names
    # the overlap step is handed the folders the training step reads (kopa bench overlap accepts an export folder)
    overlap = [w for w in commands if w[:2] == ["bench", "overlap"]]
    data = {w[w.index("--data") + 1] for w in commands if w[:2] == ["train", "sft"]}
    assert {w[2] for w in overlap} == data


def test_the_parser_of_printed_commands() -> None:
    line = "sh -c kopa\\ bench\\ overlap\\ \\'.kopa/x\\'\\ \\>\\ \\'.kopa/o.txt\\'"
    assert kopa_commands(line) == [["bench", "overlap", ".kopa/x", ">", ".kopa/o.txt"]]
    assert kopa_commands("env A=1 kopa synth --out x") == [["synth", "--out", "x"]]
    assert kopa_commands("vllm serve m --port 8000") == []
    with pytest.raises(AssertionError, match="not a command"):
        resolve(["bench", "nonexistent"])
    assert resolve(["train", "sft", "--set=a=1", "--data", "d"])[1:] == (["train", "sft"], ["--set", "--data"])


STAGES = [
    "bfcl-env",
    "data-edge",
    "data-baseline",
    "overlap-edge",
    "overlap-baseline",
    "tiny-9b",
    "tiny-27b",
    "check-9b",
    "check-27b",
    "sft-heldout-s0",
    "grpo-heldout-s0",
    "sft-edge-s0",
    "grpo-edge-s0",
    "sft-baseline-s0",
    "grpo-baseline-s0",
    "snapshot",
    "compare",
]
MODELS = [
    "untuned-9b",
    "sft-edge-9b-s0",
    "grpo-edge-9b-s0",
    "sft-baseline-9b-s0",
    "grpo-baseline-9b-s0",
    "untuned-27b",
    "untuned-27b-think",  # the reference with thinking on (the tiny model carries Qwen3.5's thinking template)
]
#: the held-out-provider arm (family.env HELDOUT_PROVIDER=airkorea): KOPA-Bench only, no BFCL
HELDOUT = "grpo-no-airkorea-9b-s0"


@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("curl") is None, reason="needs bash and curl")
def test_rehearsal_runs_every_stage_of_the_experiment(tmp_path: Path) -> None:
    work = tmp_path / "rehearsal"
    env = {
        **os.environ,
        "WORK": str(work),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("PORT", None)
    started = time.monotonic()
    done = script("qwen3.5", "--rehearsal", env=env, timeout=1400)
    wall = time.monotonic() - started
    assert done.returncode == 0, f"rc {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    stages = [line.split("\t")[0] for line in (work / "timings.tsv").read_text().splitlines()[1:]]
    for stage in STAGES:
        assert stage in stages, (stage, stages)
    for model in MODELS:
        for kind in ("live", "replay"):
            assert any(s.startswith(f"bench-{kind}-{model}") for s in stages), (model, kind, stages)
        assert f"bfcl-{model}" in stages
    assert f"bench-live-{HELDOUT}" in stages and f"bench-replay-{HELDOUT}" in stages
    assert f"bfcl-{HELDOUT}" not in stages
    # the held-out arm trained on fewer records (data.heldout_provider; tests/test_heldout_provider.py checks them)
    held = json.loads((work / "grpo-9b-no-airkorea-s0" / "manifest.json").read_text())
    edge = json.loads((work / "grpo-9b-edge-s0" / "manifest.json").read_text())
    assert held["records"] < edge["records"], (held["records"], edge["records"])
    # the GRPO runs executed their tools live and each model's held-out probes ran before and after
    for arm in ("edge", "baseline"):
        evals = (work / f"grpo-9b-{arm}-s0" / "eval.jsonl").read_text().splitlines()
        assert len(evals) >= 2 and all("well_formed_call_rate" in json.loads(e) for e in evals)
    results = (work / "results.md").read_text()
    assert "## Seeds aggregated" in results and "## Against untuned-27b: paired bootstrap" in results
    for model in ("grpo-edge-9b", "sft-baseline-9b", "untuned-9b"):
        assert f"| {model} |" in results, results
    # BFCL scored every model through bfcl-eval's checkers (a number, not a dash, in its column)
    seeds = results.split("## Seeds aggregated", 1)[1].split("##", 1)[0]
    assert seeds.count("(n=1") >= 3 * len(MODELS) - 1, seeds
    assert "Rehearsal: tiny qwen3.5-template models" in results
    # pass rates split by the tasks' overlap with the EDGE training data
    assert "## By overlap with the training data" in results and "| untuned-27b-think | live |" in results
    # the held-out arm's row next to the EDGE arm's and the untuned models' on the tasks calling airkorea (the
    # chain, parallel and clarification tasks of REHEARSAL_TASKS) and the others (the tour task; irrelevance)
    provider = results.split("## Held-out provider airkorea", 1)[1].split("\n## ", 1)[0]
    assert "| uses airkorea | other providers | no calls |" in provider, provider
    for model in ("grpo-no-airkorea-9b", "grpo-edge-9b", "untuned-9b", "untuned-27b"):
        for mode in ("live", "replay"):
            row = next(line for line in provider.splitlines() if line.startswith(f"| {model} | {mode} |"))
            assert row.count("% (") == 3 and "(3) |" in row and row.endswith("(1) |"), row
    # every tuned model's folders carry a model card; GRPO's report states its executed calls
    for run in ("sft-9b-edge-s0", "grpo-9b-edge-s0"):
        for folder in ("model", "adapter"):
            assert "base_model:" in (work / run / folder / "README.md").read_text()
    assert "executed_tool_calls" in (work / "grpo-9b-edge-s0" / "report.md").read_text()
    print(f"rehearsal wall time {wall:.0f} s\n{results}")
