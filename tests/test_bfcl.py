"""BFCL harness validation without a GPU: bfcl-eval 2026.3.23 itself (in its own venv, created here under CI when
missing) generates against tiny OpenAI-compatible servers on loopback and scores with its own checkers.

* oracle (answers every question with its ground truth from bfcl-eval's possible_answer/): 100% on the single-turn
  categories it covers, also when the calls come back as text (Hermes JSON, Qwen XML) for the handler to decode;
* null (never calls a tool): 0% on those, 100% on irrelevance, 0% on relevance;
* oracle on multi-turn (state-based checkers: the ground-truth calls played turn by turn, one per request, with the
  tool results BFCL's own classes return read back) and live_relevance (any call is right): 100%.

Each run takes the first 5 entries of each category in BFCL's own order (--limit-per-category).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from bench.bfcl.categories import MULTI_TURN, OFFLINE_DEFAULT, not_run, resolve
from bench.bfcl.env import data_dir, default_venv, ensure_venv, is_ready
from bench.bfcl.results import bfcl_summary, compare_columns, load_summary, percent, render_table
from bench.bfcl.run import BfclRequest, normalise_endpoint, registry_name, run_bfcl
from bench.records import BfclSummary
from cli.bfcl import bfcl_cmd
from core.errors import InvalidInput, NotFound
from tests.conftest import IN_CI
from tests.support.helpers import free_port
from tests.support.oracle_endpoint import MODEL, serve_endpoint

ROOT = Path(__file__).resolve().parents[1]
CALLING = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
]
IRRELEVANCE = ["irrelevance", "live_irrelevance"]
LIMIT = 5


@pytest.fixture(scope="module")
def bfcl_venv() -> Path:
    venv = default_venv()
    venv = venv if venv.is_absolute() else ROOT / venv
    if not is_ready(venv):
        if not IN_CI and not os.environ.get("KOPA_BFCL_CREATE"):
            pytest.skip(f"no bfcl-eval venv at {venv}: `bash scripts/bfcl_env.sh` (or KOPA_BFCL_CREATE=1) makes it")
        ensure_venv(venv)
    return venv


@pytest.fixture(scope="module")
def bfcl_data(bfcl_venv: Path) -> Path:
    return data_dir(bfcl_venv)


def _run(venv: Path, url: str, out: Path, categories: list[str], **kw: object) -> BfclSummary:
    request = BfclRequest(
        endpoint=url,
        model=MODEL,
        categories=categories,
        out=out,
        limit_per_category=LIMIT,
        venv=venv,
        num_threads=8,
        **kw,  # type: ignore[arg-type]
    )
    return run_bfcl(request, log=lambda _line: None)


def _accuracies(summary: BfclSummary) -> dict[str, tuple[float, int]]:
    cats = summary["categories"]
    return {c: (s["accuracy"], s["total"]) for c, s in cats.items()}


def test_oracle_scores_full_marks_through_bfcls_checker(bfcl_venv: Path, bfcl_data: Path, tmp_path: Path) -> None:
    with serve_endpoint("oracle", bfcl_data) as (url, app):
        summary = _run(bfcl_venv, url, tmp_path / "oracle", CALLING + IRRELEVANCE)
        requests = app.state.requests
    assert _accuracies(summary) == {c: (1.0, LIMIT) for c in CALLING + IRRELEVANCE}
    assert requests == LIMIT * len(CALLING + IRRELEVANCE)
    # the scores are bfcl-eval's own files and CSVs, parsed
    score_files = list((tmp_path / "oracle" / "bfcl" / "score").rglob("BFCL_v4_*_score.json"))
    assert len(score_files) == len(CALLING + IRRELEVANCE)
    groups = summary["groups"]
    assert isinstance(groups, dict)
    assert groups["non_live"] == 1.0 and groups["live"] == 1.0 and groups["irrelevance"] == 1.0
    assert groups["multi_turn"] is None and groups["relevance"] is None
    overall = summary["overall"]
    assert isinstance(overall, dict)
    assert overall["bfcl_overall"] is not None and 0 < overall["bfcl_overall"] < 1  # not-run groups count as 0
    assert "web_search_base" in overall["counted_as_zero"] and "multi_turn_base" in overall["counted_as_zero"]
    assert load_summary(tmp_path / "oracle") == summary
    assert compare_columns(summary)["bfcl.simple_python"] == 1.0
    assert "not run: web_search_base" in render_table(summary)


@pytest.mark.slow
def test_oracle_plays_multi_turn_and_relevance_to_full_marks(bfcl_venv: Path, bfcl_data: Path, tmp_path: Path) -> None:
    """BFCL's multi-turn checkers compare the state of its own classes (file system, trading, travel, ...) after
    each turn with the ground truth's; the endpoint sends each turn's calls one request at a time as BFCL executes
    them and feeds the results back, so 100% shows generation, execution and scoring of those categories work."""
    categories = [*MULTI_TURN, "live_relevance"]
    with serve_endpoint("oracle", bfcl_data) as (url, app):
        summary = _run(bfcl_venv, url, tmp_path / "mt", categories)
        requests, results, oracle = app.state.requests, list(app.state.tool_results), app.state.oracle
    assert _accuracies(summary) == {c: (1.0, LIMIT) for c in categories}
    groups = summary["groups"]
    assert isinstance(groups, dict)
    assert groups["multi_turn"] == 1.0 and groups["relevance"] == 1.0
    # one request per ground-truth call plus one text reply per turn, for the first LIMIT entries of each category
    scripts = {s.entry: s for group in oracle.multi_turn.by_opening.values() for s in group}
    played = [scripts[f"{c}_{i}"] for c in MULTI_TURN for i in range(LIMIT)]
    calls = sum(len(turn) for s in played for turn in s.calls)
    assert requests == calls + sum(len(s.calls) for s in played) + LIMIT
    assert oracle.multi_turn.ambiguous == 0
    # every call's result came back from BFCL's classes, none an error (an exception, or a method's {"error": ...})
    assert len(results) == calls
    failed = [r for r in results if r.startswith("Error during execution") or _error_object(r)]
    assert not failed, failed[:3]


def _error_object(text: str) -> bool:
    try:
        doc = json.loads(text)
    except ValueError:
        return False
    return isinstance(doc, dict) and "error" in doc


def test_handler_decodes_calls_left_in_the_text(bfcl_venv: Path, bfcl_data: Path, tmp_path: Path) -> None:
    """A server whose tool parser does not match the template returns the calls as text; the registered handler
    decodes Qwen XML (typed by the schema) and Hermes JSON (alternating here) so BFCL still scores them."""
    categories = ["simple_python", "parallel", "live_multiple", "irrelevance"]
    with serve_endpoint("oracle", bfcl_data, style="mixed") as (url, _app):
        summary = _run(bfcl_venv, url, tmp_path / "text", categories)
    assert _accuracies(summary) == {c: (1.0, LIMIT) for c in categories}
    results = (tmp_path / "text" / "bfcl" / "result").rglob("BFCL_v4_simple_python_result.json")
    raw = [json.loads(line)["result"] for path in results for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(raw) == LIMIT and all(isinstance(r, list) and r for r in raw)  # decoded into calls


def test_null_endpoint_scores_zero_on_calls_and_full_on_irrelevance(
    bfcl_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-bfcl-test-3f9a1c7e"
    monkeypatch.setenv("KOPA_TEST_BFCL_KEY", secret)
    out = tmp_path / "null"
    with serve_endpoint("null") as (url, app):
        summary = _run(
            bfcl_venv, url, out, [*CALLING, *IRRELEVANCE, "live_relevance"], api_key_env="KOPA_TEST_BFCL_KEY"
        )
        auth = set(app.state.auth)
    expected = {c: (0.0, LIMIT) for c in [*CALLING, "live_relevance"]} | {c: (1.0, LIMIT) for c in IRRELEVANCE}
    assert _accuracies(summary) == expected
    groups = summary["groups"]
    assert isinstance(groups, dict)
    assert groups["relevance"] == 0.0 and groups["irrelevance"] == 1.0
    # the key reached the endpoint and is written nowhere in the run folder
    assert auth == {f"Bearer {secret}"}
    for path in out.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(encoding="utf-8", errors="replace"), path


def test_categories_default_offline_and_name_what_is_not_run() -> None:
    assert "web_search_base" not in OFFLINE_DEFAULT and "memory_vector" not in OFFLINE_DEFAULT
    assert {"multi_turn_base", "memory_kv", "memory_rec_sum", "live_relevance"} <= set(OFFLINE_DEFAULT)
    assert resolve(None) == OFFLINE_DEFAULT
    assert resolve("irrelevance, simple_python,live") == [
        "simple_python",
        "irrelevance",
        "live_simple",
        "live_multiple",
        "live_parallel",
        "live_parallel_multiple",
        "live_irrelevance",
        "live_relevance",
    ]
    with pytest.raises(InvalidInput, match="unknown BFCL category 'simple_rust'"):
        resolve("simple_python,simple_rust")
    assert "SerpAPI" in not_run(OFFLINE_DEFAULT)["web_search_base"]


def test_names_endpoints_and_percentages() -> None:
    assert registry_name("Qwen/Qwen3.5-9B_tuned") == "kopa-Qwen-Qwen3.5-9B-tuned"
    assert "_" not in registry_name("a_b/c") and "/" not in registry_name("a_b/c")
    assert normalise_endpoint("http://127.0.0.1:8000") == "http://127.0.0.1:8000/v1"
    assert normalise_endpoint("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"
    with pytest.raises(InvalidInput):
        normalise_endpoint("127.0.0.1:8000")
    assert percent("85.50%") == pytest.approx(0.855) and percent("N/A") is None and percent("0.02") == 0.02


def test_summary_of_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        bfcl_summary(tmp_path)
    (tmp_path / "results.json").write_text(json.dumps({"benchmark": "kopa"}), encoding="utf-8")
    with pytest.raises(InvalidInput):
        load_summary(tmp_path / "results.json")


@pytest.fixture()
def cli_app() -> Iterator[typer.Typer]:
    app = typer.Typer()
    app.command("bfcl")(bfcl_cmd)
    app.command("noop")(lambda: None)
    yield app


def test_cli_bad_input_is_one_line_and_non_zero(cli_app: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    dead = f"http://127.0.0.1:{free_port()}/v1"
    cases = [
        (["bfcl", "--endpoint", dead, "--model", "m", "--venv", str(tmp_path / "v")], "nothing answers at"),
        (["bfcl", "--endpoint", "ftp://x", "--model", "m"], "endpoint must be an http(s) URL"),
        (["bfcl", "--endpoint", dead, "--model", "m", "--categories", "bogus"], "unknown BFCL category"),
        (["bfcl", "--endpoint", dead, "--model", "m", "--mode", "chat"], "--mode must be fc or prompt"),
    ]
    for args, message in cases:
        result = runner.invoke(cli_app, args)
        assert result.exit_code != 0, args
        assert message in result.output, result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "v").exists()  # nothing was installed for a dead endpoint


def test_cli_refuses_a_model_the_endpoint_does_not_serve(cli_app: typer.Typer) -> None:
    with serve_endpoint("null") as (url, _app):
        result = CliRunner().invoke(cli_app, ["bfcl", "--endpoint", url, "--model", "other-model"])
    assert result.exit_code == 1
    assert f"does not serve 'other-model'; it serves {MODEL}" in result.output
