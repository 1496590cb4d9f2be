"""The judge on its specification: the labelled answer corpus (`bench/judge_corpus/`, written by authors who did not
write the judge's rules), each answer judged in its task's oracle episode against the in-process sandbox, exactly as
`kopa bench judge-eval` does.

Targets (issue 32): recall >= 97 % on the correct answers and false passes <= 1 % on the wrong ones. The judge does
not reach them yet on every part; these tests hold the figures it reaches (`FLOOR` on the tuned parts, one floor
per held-out part), so a rule that wins one by losing the other, or that loses either, fails here. Raise the floors
as the judge improves."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bench.judge_eval import CORPUS, CorpusError, evaluate, load_corpus, oracle_episodes
from bench.tasks import CATEGORIES, load_tasks
from cli.bench import bench_env

#: The figures the judge holds on the tuned parts (recall at least, false passes at most): measured 98.0 % and
#: 1.3 % (`kopa bench judge-eval`, parts 1-7, 3,621 answers), rounded a little towards failing.
FLOOR = {"recall": 0.978, "false_pass": 0.014}
#: The same per part (one author's answers each): measured recall / false passes 100.0 / 1.4, 100.0 / 1.4,
#: 99.3 / 0.8, 99.7 / 1.5, 94.6 / 0.0, 100.0 / 1.0, 95.7 / 2.5 %.
PART_FLOORS = {
    "part1.jsonl": {"recall": 0.99, "false_pass": 0.016},
    "part2.jsonl": {"recall": 0.985, "false_pass": 0.016},
    "part3.jsonl": {"recall": 0.985, "false_pass": 0.01},
    "part4.jsonl": {"recall": 0.995, "false_pass": 0.016},
    "part5.jsonl": {"recall": 0.945, "false_pass": 0.004},
    # writer-6, tuned on since issue 32's part6 rules (it read 96.5 % / 3.9 % held out before them)
    "part6.jsonl": {"recall": 0.995, "false_pass": 0.011},
    # writer-7, tuned on since issue 32's part7 rules (it read 93.1 % / 5.3 % held out before them)
    "part7.jsonl": {"recall": 0.955, "false_pass": 0.026},
}
#: Held-out parts (`judge_corpus/holdout/<file>`, written after the rules and never tuned on) with the figures the
#: judge reached when each was written: a rule must not lower them. Only a part given a floor here is judged (one
#: being written is not), and the folder may be empty: a part moves to the tuned ones once rules are tuned on it.
HOLDOUT = CORPUS / "holdout"
HOLDOUT_FLOORS: dict[str, dict[str, float]] = {
    # writer-8, written while the rules were tuned on part7 and never read by a rule's author: 96.8 % / 4.5 % at the
    # session's start (f0f7900), 97.2 % / 4.2 % after the part6 rules, 97.6 % / 3.7 % after the part7 rules
    "part8.jsonl": {"recall": 0.97, "false_pass": 0.04},
}


@pytest.fixture(scope="module")
def reports() -> dict[str, dict[str, Any]]:
    tasks = load_tasks()

    async def go() -> dict[str, dict[str, Any]]:
        async with bench_env() as env:
            gold, episodes = await oracle_episodes(tasks, env)
            by_id = {t.id: t for t in tasks}
            folders = [("corpus", CORPUS)] + [(name, HOLDOUT / name) for name in HOLDOUT_FLOORS]
            return {
                name: evaluate(load_corpus(folder), by_id, gold, episodes, tools=env.registry, now=env.now)
                for name, folder in folders
            }

    return asyncio.run(go())


@pytest.fixture(scope="module")
def report(reports: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return reports["corpus"]


def test_each_held_out_part_holds_its_floor(reports: dict[str, dict[str, Any]]) -> None:
    for name, floor in HOLDOUT_FLOORS.items():
        held = reports[name]
        assert held["answers"] >= 300 and held["tasks"] >= 100 and not held["unknown_tasks"], name
        assert held["recall"] >= floor["recall"], (name, held["disagreements"][:5])
        assert held["false_pass"] <= floor["false_pass"], name


def test_the_corpus_covers_the_benchmark(report: dict[str, Any]) -> None:
    assert report["answers"] >= 600 and report["tasks"] >= 100 and not report["unknown_tasks"]
    assert set(report["by_category"]) == set(CATEGORIES)
    assert report["correct"] >= 300 and report["wrong"] >= 300
    authors = {i.author for i in load_corpus(CORPUS)}
    assert len(authors) >= 3


def test_recall_and_false_passes_hold_the_floor(report: dict[str, Any]) -> None:
    assert report["recall"] >= FLOOR["recall"], report["disagreements"][:5]
    assert report["false_pass"] <= FLOOR["false_pass"], [d for d in report["disagreements"] if d["label"] == "fail"][:5]


def test_each_tuned_part_holds_its_floor(report: dict[str, Any]) -> None:
    assert set(PART_FLOORS) == set(report["by_file"])
    for name, floor in PART_FLOORS.items():
        figures = report["by_file"][name]
        assert figures["recall"] >= floor["recall"], (name, [d for d in report["disagreements"] if name in d["source"]])
        assert figures["false_pass"] <= floor["false_pass"], name


def test_the_report_breaks_the_figures_down_by_corpus_file(report: dict[str, Any]) -> None:
    assert set(report["by_file"]) == {p.name for p in CORPUS.glob("*.jsonl")}
    assert sum(r["correct"] + r["wrong"] for r in report["by_file"].values()) == report["answers"]


def test_the_judge_takes_milliseconds_per_answer(report: dict[str, Any]) -> None:
    assert report["ms_per_answer"] < 25


def test_a_corpus_line_that_is_not_a_labelled_answer_is_refused(tmp_path: Any) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "x", "answer": "a", "label": "maybe"}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.jsonl:1: label must be pass or fail"):
        load_corpus(tmp_path)
