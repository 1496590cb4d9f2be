"""Every task example of bench/TASKS.md passes as written: each fenced YAML (or JSON) block is a list of tasks that
the shipped tasks' loader accepts, whose tool names the registry has, and that `kopa bench check` finds valid
(gold programs executed against the in-process sandbox, the oracle's answer scored)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from bench.tasks import check_tools, load_tasks
from cli.bench import app, tool_rows

DOC = Path(__file__).resolve().parents[3] / "bench" / "TASKS.md"
BLOCK = re.compile(r"^```(yaml|yml|json)[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
runner = CliRunner()


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))]


def write_examples(folder: Path) -> list[dict[str, Any]]:
    raws: list[dict[str, Any]] = []
    for i, (lang, text) in enumerate(blocks()):
        data = json.loads(text) if lang == "json" else yaml.safe_load(text)
        assert isinstance(data, list) and data, f"TASKS.md block {i} ({lang}) is not a list of tasks"
        raws += data
        (folder / f"example-{i}.yaml").write_text(text, encoding="utf-8")  # JSON is YAML: the same loader reads it
    return raws


def test_the_doc_has_task_examples_covering_what_it_documents(tmp_path: Path) -> None:
    raws = write_examples(tmp_path)
    assert len(blocks()) >= 2 and len(raws) >= 5
    facts = [f for t in raws for f in t.get("facts", [])]
    assert any(f["kind"] == "count" and "label" not in f for f in facts)
    assert any(f["kind"] == "text" and "from" not in f and "label" not in f for f in facts)
    assert any(s.get("when") for t in raws for s in t["gold"])
    assert any("where" in str(f.get("row", "")) for f in facts)


def test_every_doc_example_loads_and_names_registered_tools(tmp_path: Path) -> None:
    raws = write_examples(tmp_path)
    tasks = load_tasks(tmp_path)  # the loader of the shipped tasks; raises on the first invalid one
    assert sorted(t.id for t in tasks) == sorted(r["id"] for r in raws)
    assert check_tools(tasks, {r["name"] for r in tool_rows()}) == []


def test_every_doc_example_passes_bench_check(tmp_path: Path) -> None:
    raws = write_examples(tmp_path)
    result = runner.invoke(app, ["check", "--tasks", str(tmp_path)])
    assert result.exit_code == 0, result.output[-3000:]
    doc = json.loads(result.stdout.strip().splitlines()[-1])
    assert doc["tasks"] == doc["valid"] == len(raws) and doc["invalid"] == doc["refused"] == 0
