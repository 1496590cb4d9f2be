"""scripts/experiment.sh --dry-run: every `kopa` command it prints names a command that exists, with options that
command declares, and `--help` works for each (a renamed command or option breaks the script hours into a GPU run,
not here otherwise)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
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


def dry_run(family: str) -> list[str]:
    env = {**os.environ, "WORK": ".kopa/experiment-dry", "SEEDS": "0"}
    done = subprocess.run(
        ["bash", str(SCRIPT), "--family", family, "--dry-run"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [line.removeprefix("+ ").removesuffix(" &") for line in done.stdout.splitlines() if line.startswith("+ ")]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
@pytest.mark.parametrize("family", FAMILIES)
def test_dry_run_names_only_commands_and_options_that_exist(family: str) -> None:
    lines = dry_run(family)
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
