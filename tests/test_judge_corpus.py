"""The judge on its specification: the labelled answer corpus (`bench/judge_corpus/`, written by authors who did not
write the judge's rules), each answer judged in its task's oracle episode against the in-process sandbox, exactly as
`kopa bench judge-eval` does.

Targets (issue 32): recall >= 97 % on the correct answers and false passes <= 1 % on the wrong ones. The judge
reaches them over the tuned parts together, not yet on every part; these tests hold the figures it reaches (`FLOOR`
on the tuned parts, one floor per part and per held-out part), so a rule that wins one by losing the other, or that
loses either, fails here. Raise the floors as the judge improves."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bench.judge_eval import CORPUS, CorpusError, evaluate, load_corpus, oracle_episodes
from bench.tasks import CATEGORIES, load_tasks
from cli.bench import bench_env

#: The figures the judge holds on the tuned parts (recall at least, false passes at most): measured 98.6 % and
#: 0.96 % over parts 1-9 (`kopa bench judge-eval`, 5,215 answers), rounded a little towards failing. Issue 32 asks
#: 97 % / 1 %.
FLOOR = {"recall": 0.985, "false_pass": 0.01}
#: The parts written before part9 hold the issue's figures on their own: measured 98.4 % and 0.90 % over parts 1-8
#: (4,468 answers; 98.1 % / 0.95 % before the part9 rules).
EARLIER_PARTS = tuple(f"part{i}.jsonl" for i in range(1, 9))
EARLIER_FLOOR = {"recall": 0.983, "false_pass": 0.0095}
#: The same per part (one author's answers each): measured recall / false passes 100.0 / 1.4, 100.0 / 1.4,
#: 100.0 / 0.0, 99.7 / 1.2, 96.0 / 0.0, 100.0 / 0.3, 97.2 / 1.5, 97.6 / 1.1, 99.4 / 1.3 %.
PART_FLOORS = {
    "part1.jsonl": {"recall": 0.99, "false_pass": 0.016},
    "part2.jsonl": {"recall": 0.985, "false_pass": 0.016},
    "part3.jsonl": {"recall": 0.995, "false_pass": 0.004},
    "part4.jsonl": {"recall": 0.995, "false_pass": 0.012},
    "part5.jsonl": {"recall": 0.955, "false_pass": 0.004},
    # writer-6, tuned on since issue 32's part6 rules (it read 96.5 % / 3.9 % held out before them)
    "part6.jsonl": {"recall": 0.995, "false_pass": 0.004},
    # writer-7, tuned on since issue 32's part7 rules (it read 93.1 % / 5.3 % held out before them)
    "part7.jsonl": {"recall": 0.97, "false_pass": 0.016},
    # writer-8, tuned on since issue 32's part8 rules (it read 96.8 % / 4.5 % held out at f0f7900, 97.6 % / 3.7 %
    # before them)
    "part8.jsonl": {"recall": 0.975, "false_pass": 0.011},
    # writer-9, tuned on since the part9 rules (it read 94.9 % / 3.6 % held out at c46d469, 94.6 % / 3.0 % at
    # 4dfdff9 before them)
    "part9.jsonl": {"recall": 0.99, "false_pass": 0.014},
}
#: Held-out parts (`judge_corpus/holdout/<file>`, written after the rules and never tuned on, nor read by a rule's
#: author) with the floor each must hold: a rule must not lower them. A part named here is judged once its file
#: exists (the check skips while it is being written, or while none is named), and only its figures are asserted:
#: its answers and the disagreements are never printed, so that no rule is tuned on it. A part moves to the tuned
#: ones once rules are (part9 did with its rules).
HOLDOUT = CORPUS / "holdout"
HOLDOUT_FLOORS: dict[str, dict[str, float]] = {
    # writers 10a/10b (780 answers over the 145 tasks, reviewed by 10r against the users' requests), written after
    # the part9 rules from oracle episodes, gold and requests only: 96.3 % recall, 4.2 % false passes at 4d442ff
    "part10.jsonl": {"recall": 0.955, "false_pass": 0.05},
}


@pytest.fixture(scope="module")
def reports() -> dict[str, dict[str, Any]]:
    tasks = load_tasks()

    async def go() -> dict[str, dict[str, Any]]:
        async with bench_env() as env:
            gold, episodes = await oracle_episodes(tasks, env)
            by_id = {t.id: t for t in tasks}
            out = {"corpus": evaluate(load_corpus(CORPUS), by_id, gold, episodes, tools=env.registry, now=env.now)}
            for name in (n for n in HOLDOUT_FLOORS if (HOLDOUT / n).is_file()):
                try:  # a part still being written may end in a half line: that fails its own check only
                    held = load_corpus(HOLDOUT / name)
                except CorpusError as exc:
                    out[name] = {"error": str(exc)}
                    continue
                out[name] = evaluate(held, by_id, gold, episodes, tools=env.registry, now=env.now)
            return out

    return asyncio.run(go())


@pytest.fixture(scope="module")
def report(reports: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return reports["corpus"]


def test_each_held_out_part_holds_its_floor(reports: dict[str, dict[str, Any]]) -> None:
    written = [name for name in HOLDOUT_FLOORS if name in reports]
    if not written:
        pytest.skip("no held-out part is written yet")
    for name in written:
        assert "error" not in reports[name], reports[name].get("error")
        # figures only (pytest would print a subexpression's value): a held-out part's answers are not shown
        held = {k: reports[name][k] for k in ("answers", "tasks", "recall", "false_pass")}
        unknown = len(reports[name]["unknown_tasks"])
        assert held["answers"] >= 300 and held["tasks"] >= 100 and not unknown, (name, held)
        assert held["recall"] >= HOLDOUT_FLOORS[name]["recall"], (name, held)
        assert held["false_pass"] <= HOLDOUT_FLOORS[name]["false_pass"], (name, held)


def test_the_corpus_covers_the_benchmark(report: dict[str, Any]) -> None:
    assert report["answers"] >= 600 and report["tasks"] >= 100 and not report["unknown_tasks"]
    assert set(report["by_category"]) == set(CATEGORIES)
    assert report["correct"] >= 300 and report["wrong"] >= 300
    authors = {i.author for i in load_corpus(CORPUS)}
    assert len(authors) >= 3


def test_recall_and_false_passes_hold_the_floor(report: dict[str, Any]) -> None:
    assert report["recall"] >= FLOOR["recall"], report["disagreements"][:5]
    assert report["false_pass"] <= FLOOR["false_pass"], [d for d in report["disagreements"] if d["label"] == "fail"][:5]


def test_the_earlier_parts_hold_their_floor_together(report: dict[str, Any]) -> None:
    parts = [report["by_file"][name] for name in EARLIER_PARTS]
    correct, wrong = sum(p["correct"] for p in parts), sum(p["wrong"] for p in parts)
    recall = sum(p["recall"] * p["correct"] for p in parts) / correct
    false_pass = sum(p["false_pass"] * p["wrong"] for p in parts) / wrong
    assert recall >= EARLIER_FLOOR["recall"] and false_pass <= EARLIER_FLOOR["false_pass"], (recall, false_pass)


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
