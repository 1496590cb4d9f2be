"""KOPA-Bench harness: the task loader and its errors, gold programs, the reference agents (oracle 100 % live over a
real sandbox socket and in replay with identical episodes, no_tool 0 % except irrelevance, wrong_calls failing
what it changed), the episode loop's handling of malformed/unknown/looping calls, resumable runs, scores, reports,
compare, overlap and the contamination guard."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from bench.agents import AgentReply, EpisodeContext, NoToolAgent, OracleAgent, ToolCall, WrongCallsAgent
from bench.episode import canonical_episode, run_episode
from bench.gold import GoldError, execute_gold
from bench.records import AgentInfo, ChatMessage, EpisodeRecord, ResultsDoc
from bench.run import read_episodes, run_bench
from bench.scores import bootstrap_ci, pass_at_k, pass_hat_k, wilson_ci
from bench.tasks import SHIPPED_TASKS, TaskError, load_tasks, task_set_hash
from cli.bench import app, bench_env
from synthesis.contamination import BenchFingerprints
from synthesis.records import StepResponse, Trajectory, TrajectoryStep

FIXTURES = Path(__file__).parent / "fixtures" / "bench"
TASKS = load_tasks(FIXTURES)
SCORED = {t.category for t in TASKS} - {"irrelevance"}
runner = CliRunner()


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _bench(agent: Any, out: Path, **env: Any) -> dict[str, Any]:
    async with bench_env(**env) as e:
        doc: dict[str, Any] = dict(await run_bench(TASKS, agent, e, out, k=2, concurrency=4, resume=False))
        return doc


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, sandbox_url: str) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("bench")
    snap = root / "snapshot.json"
    out: dict[str, Any] = {"root": root, "snapshot": snap}
    out["live"] = run(_bench(OracleAgent(), root / "live", live=sandbox_url, record=snap))
    out["replay"] = run(_bench(OracleAgent(), root / "replay", mode="replay", snapshot=snap))
    out["no_tool"] = run(_bench(NoToolAgent(), root / "no_tool", mode="replay", snapshot=snap))
    wrong = WrongCallsAgent()
    out["wrong"] = run(_bench(wrong, root / "wrong", mode="replay", snapshot=snap))
    out["wrong_agent"] = wrong
    return out


# ---------------------------------------------------------------------------------------------- loader


def _write(tmp: Path, tasks: Any, name: str = "t.yaml") -> Path:
    folder = tmp / "tasks"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(yaml.safe_dump(tasks, allow_unicode=True), encoding="utf-8")
    return folder


def _task(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = json.loads(
        json.dumps(yaml.safe_load((FIXTURES / "chain.yaml").read_text(encoding="utf-8"))[0])
    )
    base.update(over)
    return base


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda t: t.update(category="chained"), "category"),
        (lambda t: t.update(id="Bad ID"), "id: id must match"),
        (
            lambda t: t["gold"][1]["args"]["admCd"].update({"from": "nowhere"}),
            "gold[1].args.admCd: 'from' names unknown",
        ),
        (lambda t: t["gold"][0]["args"].update(keyword={"user": "부산 해운대구"}), "does not appear in any user turn"),
        (lambda t: t["gold"][0]["args"].update(keyword={"user": "x", "const": 1}), "exactly one of user / const"),
        (lambda t: t.update(facts=[]), "facts: a task must state at least one fact"),
        (lambda t: t.update(facts=[{"kind": "number", "from": "addr"}]), "needs `field`"),
        (lambda t: t.update(facts=[{"kind": "weight", "value": 1}]), "facts[0].kind"),
        (lambda t: t.update(turns=[t["turns"][0], "b"]), "turns: only clarification tasks"),
        (lambda t: t.update(must_call=["kma_get_vilage_fcst"]), "must_call"),
        (lambda t: t["gold"][1].update(expect="maybe"), "gold[1].expect"),
        (lambda t: t.update(extra_field=1), "extra_field"),
    ],
)
def test_loader_rejects_malformed_tasks_naming_file_task_and_field(tmp_path: Path, mutate: Any, expected: str) -> None:
    task = _task()
    mutate(task)
    folder = _write(tmp_path, [task])
    with pytest.raises(TaskError) as err:
        load_tasks(folder)
    msg = err.value.detail
    assert str(folder / "t.yaml") in msg and f"task {task['id']}" in msg and expected in msg, msg


def test_loader_file_level_errors_and_hash(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "a.yaml").write_text("- id: x\n  turns: [unclosed\n", encoding="utf-8")
    with pytest.raises(TaskError, match=r"a\.yaml: not valid YAML"):
        load_tasks(folder)
    (folder / "a.yaml").write_text("id: not-a-list\n", encoding="utf-8")
    with pytest.raises(TaskError, match="holds a YAML list"):
        load_tasks(folder)
    twice = _write(tmp_path, [_task()], "one.yaml")
    _write(tmp_path, [_task()], "two.yaml")
    with pytest.raises(TaskError, match="duplicate"):
        load_tasks(twice)
    with pytest.raises(TaskError, match="no such task folder"):
        load_tasks(tmp_path / "missing")
    assert task_set_hash(TASKS) == task_set_hash(list(reversed(TASKS)))
    changed = [t.model_copy(update={"turns": ["다른 질문"]}) if i == 0 else t for i, t in enumerate(TASKS)]
    assert task_set_hash(changed) != task_set_hash(TASKS)
    assert {t.category for t in TASKS} == {
        "single",
        "chain",
        "fan_in",
        "parallel",
        "conditional",
        "error",
        "clarification",
        "irrelevance",
    }


def test_gold_refuses_a_failing_program(tmp_path: Path) -> None:
    bad = _task(id="fx-bad-gold", turns=["주소 '종로구 없는길 999'의 건물명을 알려줘."])
    bad["gold"][0]["args"]["keyword"] = {"user": "종로구 없는길 999"}
    task = load_tasks(_write(tmp_path, [bad]))[0]

    async def go() -> None:
        async with bench_env() as env:
            await execute_gold(task, env.backend, env.now)

    with pytest.raises(GoldError, match=r"fx-bad-gold: step 'addr' \(juso_addr_link_api\) expected ok, got empty"):
        run(go())
    result = runner.invoke(app, ["check", "--tasks", str(tmp_path / "tasks")])
    assert result.exit_code == 1 and "refused" in result.output and "expected ok" in result.output


def test_check_command_validates_the_fixture_tasks() -> None:
    result = runner.invoke(app, ["check", "--tasks", str(FIXTURES)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout.strip().splitlines()[-1])
    assert doc["valid"] == len(TASKS) == 8 and doc["refused"] == 0 and doc["three_plus_calls"] >= 2


# ---------------------------------------------------------------------------------------------- reference agents


def test_oracle_scores_100_live_and_replay_with_identical_episodes(runs: dict[str, Any]) -> None:
    for mode in ("live", "replay"):
        doc = runs[mode]
        assert doc["refused"] == {}
        assert doc["run"]["episodes"] == len(TASKS) * 2
        for cat, s in doc["scores"]["by_category"].items():
            assert s["pass_hat_k"] == 1.0 and s["pass_at_k"] == 1.0, (mode, cat)
        o = doc["scores"]["overall"]
        assert o["tool_precision"] == o["tool_recall"] == o["arg_accuracy"] == o["provenance_accuracy"] == 1.0
        assert o["calls_vs_gold"] == 1.0 and o["replay_misses"] == 0
    assert runs["live"]["run"]["mode"] == "live" and runs["replay"]["run"]["mode"] == "replay"
    live = [canonical_episode(e) for e in runs["live"]["episodes"]]
    replay = [canonical_episode(e) for e in runs["replay"]["episodes"]]
    assert live == replay
    strip = ("model_ms", "harness_ms")
    assert [{k: v for k, v in s.items() if k not in strip} for s in runs["live"]["scored"]] == [
        {k: v for k, v in s.items() if k not in strip} for s in runs["replay"]["scored"]
    ]
    snap = json.loads(runs["snapshot"].read_text(encoding="utf-8"))
    assert snap["id"].startswith("snap_") and snap["entries"]
    assert "serviceKey" not in runs["snapshot"].read_text(encoding="utf-8")  # no secret in the snapshot


def test_every_turn_is_recorded(runs: dict[str, Any]) -> None:
    ep = next(e for e in runs["live"]["episodes"] if e["task"] == "fx-fanin-bus")
    assert [len(t["tool_calls"]) for t in ep["turns"]] == [1, 1, 1, 0]  # city, stop (needs the city), arrival
    par = next(e for e in runs["live"]["episodes"] if e["task"] == "fx-parallel-air-drug")
    assert [len(t["tool_calls"]) for t in par["turns"]] == [2, 0]  # independent calls in one turn
    assert ep["turns"][0]["results"][0]["content"].startswith('{"rows"')
    clar = next(e for e in runs["live"]["episodes"] if e["task"] == "fx-clarify-bus")
    assert clar["first_reply"]["calls_before"] == 0 and "정류장" in clar["first_reply"]["content"]
    assert {t["user_turn"] for t in clar["turns"]} == {0, 1}
    cond = next(e for e in runs["live"]["episodes"] if e["task"] == "fx-cond-air-pharmacy")
    assert [c["tool"] for c in cond["calls"]] == [
        "airkorea_get_msrstn_accto_rltm_mesure_dnsty",
        "hira_get_parmacy_basis_list",
    ]


def test_no_tool_scores_zero_except_irrelevance(runs: dict[str, Any]) -> None:
    cats = runs["no_tool"]["scores"]["by_category"]
    assert cats["irrelevance"]["pass_hat_k"] == 1.0
    assert runs["no_tool"]["scores"]["irrelevance_refusal_rate"] == 1.0
    for cat in SCORED:
        assert cats[cat]["pass_hat_k"] == 0.0 and cats[cat]["pass_at_k"] == 0.0, cat
    assert runs["oracle" if False else "live"]["scores"]["irrelevance_refusal_rate"] == 1.0


def test_wrong_calls_fail_the_affected_tasks(runs: dict[str, Any]) -> None:
    agent: WrongCallsAgent = runs["wrong_agent"]
    assert len(agent.affected) >= 5
    by_task: dict[str, list[bool]] = {}
    for s in runs["wrong"]["scored"]:
        by_task.setdefault(s["task"], []).append(s["passed"])
    for tid in agent.affected:
        assert by_task[tid] == [False, False], tid
    o = runs["wrong"]["scores"]["overall"]
    assert o["provenance_accuracy"] < 1.0 and o["arg_accuracy"] < 1.0
    # the wrong calls were never recorded: replay reports each as a miss, never an invented answer
    assert o["replay_misses"] > 0
    miss = next(c for e in runs["wrong"]["episodes"] for c in e["calls"] if c["miss"])
    assert miss["outcome"] == "error" and miss["rows"] == 0


# ---------------------------------------------------------------------------------------------- episode loop


class Scripted:
    """Replies in order; the last reply repeats."""

    name = "scripted"

    def __init__(self, replies: list[AgentReply]) -> None:
        self.replies = replies
        self.seen: list[list[ChatMessage]] = []

    def describe(self) -> AgentInfo:
        return {"adapter": "test", "model": "scripted"}

    async def aclose(self) -> None:
        return None

    async def reply(self, ctx: EpisodeContext) -> AgentReply:
        self.seen.append(list(ctx.messages))
        return self.replies[min(len(self.seen) - 1, len(self.replies) - 1)]


def test_malformed_unknown_and_looping_calls_are_answered_and_scored(runs: dict[str, Any]) -> None:
    task = next(t for t in TASKS if t.id == "fx-single-air")
    agent = Scripted(
        [
            AgentReply(
                "",
                [
                    ToolCall("a", "airkorea_get_msrstn_accto_rltm_mesure_dnsty", None, "{oops", "not JSON"),
                    ToolCall("b", "no_such_tool", {"x": 1}),
                    ToolCall(
                        "a",
                        "airkorea_get_msrstn_accto_rltm_mesure_dnsty",
                        {"stationName": "종로구", "dataTerm": "DAILY", "ver": "1.3"},
                    ),
                ],
            ),
            AgentReply("측정값을 찾지 못했습니다."),
        ]
    )

    async def go(a: Any, max_turns: int = 8) -> EpisodeRecord:
        async with bench_env(mode="replay", snapshot=runs["snapshot"]) as env:
            return await run_episode(task, a, env.backend, env.registry, now=env.now, max_turns=max_turns)

    ep = run(go(agent))
    results = ep["turns"][0]["results"]
    assert [r["outcome"] for r in results] == ["malformed", "unknown_tool", "ok"]
    assert "malformed tool call" in results[0]["content"] and "unknown tool" in results[1]["content"]
    assert len({r["id"] for r in results}) == 3  # a repeated call id is made unique
    tool_msgs = [m for m in agent.seen[1] if m["role"] == "tool"]
    assert len(tool_msgs) == 3 and all(m["tool_call_id"] for m in tool_msgs)
    assert ep["status"] == "answered" and [c["valid"] for c in ep["calls"]] == [False, False, True]
    looping = Scripted(
        [AgentReply("", [ToolCall("x", "airkorea_get_msrstn_accto_rltm_mesure_dnsty", {"stationName": "종로구"})])]
    )
    ep = run(go(looping, max_turns=3))
    assert ep["status"] == "loop" and len(ep["turns"]) == 3 and "no final answer" in ep["error"]


class Crashing(OracleAgent):
    name = "oracle"

    async def reply(self, ctx: EpisodeContext) -> AgentReply:
        if ctx.task.id == "fx-chain-addr-coord":
            raise RuntimeError("boom")
        return await super().reply(ctx)


def test_runs_resume_and_never_lose_recorded_episodes(runs: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "resume"
    shutil.copytree(runs["root"] / "replay", out)
    lines = (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    kept = lines[:5]
    (out / "episodes.jsonl").write_text("\n".join(kept) + "\n" + lines[5][: len(lines[5]) // 2], encoding="utf-8")
    assert len(read_episodes(out / "episodes.jsonl")) == 5  # the torn line (a crash mid-write) is skipped

    async def go(agent: Any, resume: bool = True) -> ResultsDoc:
        async with bench_env(mode="replay", snapshot=runs["snapshot"]) as env:
            return await run_bench(TASKS, agent, env, out, k=2, concurrency=3, resume=resume)

    doc = run(go(OracleAgent()))
    assert doc["run"]["resumed_episodes"] == 5 and doc["run"]["episodes"] == 16
    assert all(s["pass_hat_k"] == 1.0 for s in doc["scores"]["by_category"].values())
    assert [canonical_episode(e) for e in doc["episodes"]] == [canonical_episode(e) for e in runs["replay"]["episodes"]]
    # an agent that crashes on one task: that task's episodes are recorded failures, the rest are scored
    doc = run(go(Crashing(), resume=False))
    failed = [e for e in doc["episodes"] if e["status"] == "harness_error"]
    assert {e["task"] for e in failed} == {"fx-chain-addr-coord"} and "boom" in failed[0]["error"]
    assert doc["run"]["episodes"] == 16 and doc["scores"]["by_category"]["chain"]["pass_hat_k"] == 0.0
    assert doc["scores"]["by_category"]["single"]["pass_hat_k"] == 1.0
    with pytest.raises(Exception, match="another agent"):
        run(go(NoToolAgent()))


# ---------------------------------------------------------------------------------------------- scores and reports


def test_pass_hat_k_and_pass_at_k() -> None:
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(3, 2, 3) == 0.0 and pass_hat_k(4, 3, 2) == pytest.approx(0.5)
    assert pass_at_k(3, 0, 3) == 0.0 and pass_at_k(3, 1, 3) == 1.0 and pass_at_k(4, 1, 2) == pytest.approx(0.5)
    lo, hi = bootstrap_ci([0.0, 1.0] * 20, seed=1)
    assert 0.3 < lo < 0.5 < hi < 0.7
    assert bootstrap_ci([1.0] * 10) == (1.0, 1.0)  # why reports use Wilson: a bootstrap collapses when all agree
    assert wilson_ci([1.0] * 8) == (0.6756, 1.0) and wilson_ci([0.0] * 8) == (0.0, 0.3244)
    lo, hi = wilson_ci([0.0, 1.0] * 20)
    assert 0.34 < lo < 0.5 < hi < 0.66
    assert wilson_ci([1.0] * 100)[0] > wilson_ci([1.0] * 8)[0]  # more tasks, a tighter interval


def test_failures_are_named_and_replay_misses_counted_apart(runs: dict[str, Any]) -> None:
    no_tool = runs["no_tool"]["scores"]
    assert no_tool["overall"]["failures"] and "replay_miss" not in no_tool["overall"]["failures"]
    assert set(no_tool["overall"]["failures"]) <= {"missing_fact", "wrong_tool", "failed_call", "no_clarification"}
    clar = next(s for s in runs["no_tool"]["scored"] if s["task"] == "fx-clarify-bus")
    assert clar["failure"] == "no_clarification" and "clarify" in clar["failed_checks"]
    single = next(s for s in runs["no_tool"]["scored"] if s["task"] == "fx-single-air")
    assert single["failure"] == "wrong_tool" and single["missing"]
    # the wrong calls were never recorded: their failures are replay misses, not judged failures
    wrong = runs["wrong"]["scores"]["overall"]
    assert wrong["failures"].get("replay_miss", 0) >= 2 * 5 and wrong["replay_miss_episodes"] >= 10
    assert set(runs["live"]["scores"]["by_gold_calls"]) >= {"0", "1", "2", "3"}
    assert sum(s["tasks"] for s in runs["live"]["scores"]["by_gold_calls"].values()) == len(TASKS)
    assert runs["live"]["scores"]["overall"]["pass_hat_k_ci"][0] < 1.0  # 8 of 8 is not certainty


def test_report_and_compare(runs: dict[str, Any], tmp_path: Path) -> None:
    from bench.report import write_report

    path = write_report(runs["root"] / "live", runs["live"])
    text = path.read_text(encoding="utf-8")
    assert "| conditional |" in text and "pass^2" in text and runs["live"]["run"]["task_set_hash"] in text
    assert "No episode failed." in text and "## Per number of gold calls" in text and "Wilson" in text
    assert (path.parent / "categories.png").stat().st_size > 1000
    assert (path.parent / "calls_vs_success.png").stat().st_size > 1000
    text = write_report(runs["root"] / "no_tool", runs["no_tool"], with_plots=False).read_text(encoding="utf-8")
    assert "### fx-single-air (single, 2 of 2 trials failed): wrong_tool" in text
    assert "missing facts:" in text and "| no_clarification | 2 |" in text
    assert "죄송하지만" in text  # the last messages of the failed episode
    text = write_report(runs["root"] / "wrong", runs["wrong"], with_plots=False).read_text(encoding="utf-8")
    assert "## Replay misses" in text and "- replay misses: `" in text and "counted apart from the" in text
    result = runner.invoke(
        app, ["compare", str(runs["root"] / "live"), str(runs["root"] / "no_tool"), "--out", str(tmp_path / "cmp.md")]
    )
    assert result.exit_code == 0, result.output
    assert "live: oracle (live, k=2)" in result.stdout and "no_tool: no_tool (replay, k=2)" in result.stdout
    assert "| irrelevance | 1.000" in result.stdout and "| pass^2 |" in result.stdout
    bad = runner.invoke(app, ["compare", str(tmp_path / "nothing")])
    assert bad.exit_code != 0 and "no results" in bad.output and "Traceback" not in bad.output


def test_compare_puts_bfcl_next_to_kopa_bench(runs: dict[str, Any], tmp_path: Path) -> None:
    """A BFCL run folder (results.json as `kopa bench bfcl` writes it) of the same model shares the row."""
    model = runs["live"]["run"]["model"]
    name = model.get("model") or model.get("name") if isinstance(model, dict) else model
    bfcl = tmp_path / "bfcl-run"
    bfcl.mkdir()
    (bfcl / "results.json").write_text(
        json.dumps(
            {
                "benchmark": "bfcl",
                "model": name,
                "categories": {"simple_python": {"accuracy": 0.8, "correct": 4, "total": 5}},
                "groups": {"non_live": 0.8, "live": None, "multi_turn": None, "irrelevance": 1.0},
                "overall": {"bfcl_overall": 0.42},
            }
        ),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["compare", str(runs["root"] / "live"), str(bfcl)])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if line.startswith("| live + bfcl-run"))
    assert f"| {name} (live) |" in row, row
    assert "100.0%" in row and "42.0%" in row and "80.0%" in row, row
    only_bfcl = runner.invoke(app, ["compare", str(bfcl)])
    assert only_bfcl.exit_code == 0 and "42.0%" in only_bfcl.stdout and "pass^" in only_bfcl.stdout


def test_compare_keys_rows_by_run_and_labels_k(runs: dict[str, Any], tmp_path: Path) -> None:
    """Two runs of one model are two rows (never one overwriting the other), and a k=1 run next to a k=2 run
    says each cell's k instead of calling both pass^2."""
    one = tmp_path / "oracle-k1"

    async def go() -> None:
        async with bench_env(mode="replay", snapshot=runs["snapshot"]) as env:
            await run_bench(TASKS, OracleAgent(), env, one, k=1)

    run(go())
    result = runner.invoke(app, ["compare", str(runs["root"] / "live"), str(runs["root"] / "replay"), str(one)])
    assert result.exit_code == 0, result.output
    rows = [
        line
        for line in result.stdout.split("# KOPA-Bench comparison")[0].splitlines()
        if line.startswith("| ") and "oracle" in line
    ]
    assert [r.split(" | ")[0] for r in rows] == ["| live", "| replay", "| oracle-k1"], rows
    assert "100.0% (k=2)" in rows[0] and "100.0% (k=1)" in rows[2]
    assert "runs differ in k (1, 2)" in result.stdout and "| pass^2 |" not in result.stdout
    assert "oracle-k1: oracle (replay, k=1)" in result.stdout and "1.000 [0.68, 1.00] (k=1)" in result.stdout
    same = runner.invoke(app, ["compare", str(runs["root"] / "live"), str(runs["root"] / "replay")])
    assert "| pass^2 |" in same.stdout and "differ in k" not in same.stdout


def test_cli_run_bad_input_is_one_line(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_task(category="nope")])
    result = runner.invoke(app, ["run", "--tasks", str(folder)])
    assert result.exit_code == 2 and "task fx-chain-addr-coord: category" in result.output
    result = runner.invoke(app, ["run", "--tasks", str(FIXTURES), "--mode", "replay", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "needs --snapshot" in result.output
    result = runner.invoke(app, ["run", "--tasks", str(FIXTURES), "--agent", "openai"])
    assert result.exit_code == 2 and "--url" in result.output
    result = runner.invoke(
        app,
        [
            "run",
            "--tasks",
            str(FIXTURES),
            "--mode",
            "replay",
            "--snapshot",
            str(tmp_path / "missing.json"),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2 and "no such snapshot" in result.output


def test_cli_run_replay_end_to_end(runs: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "cli"
    result = runner.invoke(
        app,
        [
            "run",
            "--tasks",
            str(FIXTURES),
            "--agent",
            "oracle",
            "--mode",
            "replay",
            "--snapshot",
            str(runs["snapshot"]),
            "--k",
            "1",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    line = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["pass_hat_k"] == 1.0 and line["episodes"] == 8
    assert (out / "report.md").exists() and len(read_episodes(out / "episodes.jsonl")) == 8


# ---------------------------------------------------------------------------------------------- contamination


def _trajectory(tools: list[str], slots: list[Any], request: str) -> Trajectory:
    steps = [
        TrajectoryStep(
            step=i + 1,
            tool=t,
            arguments={"q": s},
            provenance={"q": {"kind": "slot", "value": s}},
            response=StepResponse(rows=1, items=[{}]),
        )
        for i, (t, s) in enumerate(zip(tools, slots, strict=True))
    ]
    return Trajectory(
        id="tr_x", request=request, shape="chain", n_steps=len(steps), tools=[], steps=steps, final_answer=""
    )


def test_contamination_guard_and_overlap_command(tmp_path: Path) -> None:
    from bench.overlap import fingerprints

    fp = fingerprints(TASKS)
    chain = next(t for t in TASKS if t.id == "fx-chain-addr-coord")
    same = _trajectory(["juso_addr_link_api"], ["종로구 신교로 185"], "완전히 다른 요청 문장입니다")
    assert fp.is_contaminated(same) is None  # a different tool sequence
    two = TrajectoryStep(
        step=2, tool="juso_addr_coord_api", arguments={}, provenance={}, response=StepResponse(rows=1, items=[{}])
    )
    program = same.model_copy(update={"steps": [*same.steps, two], "n_steps": 2})
    assert "same tool sequence and slot values as fx-chain-addr-coord" in (fp.is_contaminated(program) or "")
    near = _trajectory(["tour_search_keyword2"], ["경복궁"], chain.turns[0].replace("확인해 주세요", "확인해주세요!"))
    assert "near-duplicate request of fx-chain-addr-coord" in (fp.is_contaminated(near) or "")
    far = _trajectory(["tour_search_keyword2"], ["경복궁"], "경복궁 관람 시간 알려줘")
    assert fp.is_contaminated(far) is None
    assert BenchFingerprints([(["a"], ["x"], "요청")], ["t1"]).match(["a"], ["X"], "전혀 무관") is not None
    data = tmp_path / "data.jsonl"
    data.write_text(
        "\n".join(json.dumps(t.to_json(), ensure_ascii=False) for t in (program, near, far)) + "\nnot json\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["overlap", str(data), "--tasks", str(FIXTURES)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["records"], doc["overlapping"], doc["unreadable"]) == (3, 2, 1)
    assert doc["by_kind"] == {"program": 1, "request": 1}
    # values shared with the benchmark a model could memorise: the address the gold program's user states, written
    # to the same tool by the program record (the keyword search for 경복궁 is no gold program's)
    shared = doc["shared"]
    assert shared["records_sharing_argument_values"] == 1 and shared["argument_values_by_source"] == {"slot": 1}
    assert shared["most_shared_argument_values"] == [["juso_addr_link_api.q=종로구 신교로 185", 1]]
    bad = runner.invoke(app, ["overlap", str(tmp_path / "none.jsonl"), "--tasks", str(FIXTURES)])
    assert bad.exit_code == 2 and "no such dataset" in bad.output


def test_overlap_reads_an_export_folder(tmp_path: Path) -> None:
    """`kopa bench overlap` on the folders scripts/experiment.sh hands it: an export folder as `kopa synth --out`
    and `kopa demo` write it (every format, the hf/ folder) and a demo workdir; it reads records.jsonl, the file
    `kopa train --data FOLDER` reads, and says so. A conversion file or a folder without records is refused."""
    from synthesis.export import write_all, write_hf_dataset
    from training.datasets import load_records

    chain = next(t for t in TASKS if t.id == "fx-chain-addr-coord")
    same = _trajectory(["juso_addr_link_api"], ["종로구 신교로 185"], "완전히 다른 요청 문장입니다")
    two = TrajectoryStep(
        step=2, tool="juso_addr_coord_api", arguments={}, provenance={}, response=StepResponse(rows=1, items=[{}])
    )
    program = same.model_copy(update={"steps": [*same.steps, two], "n_steps": 2})
    near = _trajectory(["tour_search_keyword2"], ["경복궁"], chain.turns[0].replace("확인해 주세요", "확인해주세요!"))
    far = _trajectory(["tour_search_keyword2"], ["경복궁"], "경복궁 관람 시간 알려줘")
    records = [r.model_copy(update={"id": f"tr_{i}"}) for i, r in enumerate((program, near, far))]
    workdir = tmp_path / "edge"
    export = workdir / "export"
    write_all(export, records)
    write_hf_dataset(export / "hf", records, config={"seed": 0}, stats={}, validation=0.1)
    assert {"records.jsonl", "trl.jsonl", "hf"} <= {p.name for p in export.iterdir()}
    for given in (export, workdir, export / "records.jsonl"):
        result = runner.invoke(app, ["overlap", str(given), "--tasks", str(FIXTURES)])
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert doc["dataset"] == str(export / "records.jsonl") and f"read {export / 'records.jsonl'}" in result.stderr
        assert (doc["records"], doc["unreadable"], doc["by_kind"]) == (3, 0, {"program": 1, "request": 1})
    assert [r.id for r in load_records(export)] == [r.id for r in records]  # the records training reads
    trl = runner.invoke(app, ["overlap", str(export / "trl.jsonl"), "--tasks", str(FIXTURES)])
    assert trl.exit_code == 2 and "records.jsonl, not the trl" in trl.output
    (tmp_path / "empty").mkdir()
    empty = runner.invoke(app, ["overlap", str(tmp_path / "empty"), "--tasks", str(FIXTURES)])
    assert empty.exit_code == 2 and "holds no records.jsonl" in empty.output


# ---------------------------------------------------------------------------------------------- shipped tasks


@pytest.mark.skipif(
    not any(SHIPPED_TASKS.glob("*.yaml")) and os.environ.get("CI", "").lower() not in ("1", "true"),
    reason="bench/tasks/*.yaml not written yet",
)
def test_shipped_tasks_load_with_the_promised_counts() -> None:
    tasks = load_tasks()
    counts: dict[str, int] = {}
    for t in tasks:
        counts[t.category] = counts.get(t.category, 0) + 1
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"^(\d+) hand-written institutional tasks", readme, re.MULTILINE)
    assert stated and len(tasks) == int(stated[1]), counts  # the count the README states is the shipped count
    assert all(
        counts.get(c, 0) >= 12
        for c in ("single", "chain", "fan_in", "parallel", "conditional", "error", "clarification", "irrelevance")
    ), counts
    assert sum(1 for t in tasks if len(t.gold) >= 3) >= 60
    providers = {s.tool.split("_", 1)[0] for t in tasks for s in t.gold}
    assert providers >= {"juso", "kma", "airkorea", "molit", "tago", "tour", "hira", "mfds", "nts", "mois"}
