"""The typed records of synthesis and verification: one request type validated in one place, one batch type, one
run-progress type, read alike by the REST route, the CLI and the Celery worker (synthesis.records,
synthesis.batches, verification.runs)."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import APIRouter
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from pydantic import SecretStr
from typer.testing import CliRunner

import workers.tasks
from api.app import create_app
from api.routes import batches as batch_routes
from api.routes import verification as run_routes
from api.security import mint_token
from cli import app as kopa
from cli.verify import SUMMARY
from core.errors import InvalidInput
from core.settings import BatchSettings, Settings
from graph.embedded_store import EmbeddedStore
from synthesis.batches import Batch, BatchRequest, _account, new_batch, visible_batch
from synthesis.records import SHAPES, BenchmarkOverlap, SynthesisRequest, SynthesisResult
from verification.reports import VerdictChange, YieldRow
from verification.runs import RunProgress, new_run, run_progress

#: The keys a new batch was stored and answered with before it was typed (the wire format it keeps).
STORED_KEYS = {
    "id",
    "team",
    "status",
    "count",
    "shapes",
    "min_steps",
    "max_steps",
    "api_ids",
    "seed",
    "format",
    "source",
    "on_demand",
    "created_at",
    "produced",
    "discarded",
    "calls",
    "message",
}
#: Bad requests, as a REST body and as `kopa synth` options (None: the CLI has no such option).
BAD: list[tuple[dict[str, Any], list[str] | None]] = [
    ({"count": 0}, ["--count", "0"]),
    ({"count": 5, "shapes": ["spiral"]}, ["--count", "5", "--shapes", "spiral"]),
    ({"count": 5, "min_steps": 4, "max_steps": 2}, ["--count", "5", "--min-steps", "4", "--max-steps", "2"]),
    ({"count": 5, "seed": -1}, ["--count", "5", "--seed", "-1"]),
    ({"count": 5, "source": "pool", "on_demand": True}, None),
]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, EmbeddedStore, dict[str, str]]]:
    settings = Settings(bootstrap_token=SecretStr("boot"), redis_url=None, batches=BatchSettings(max_count=300))
    store = EmbeddedStore(tmp_path / "r.sqlite3")
    with TestClient(create_app(settings, store)) as client:
        yield client, store, {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-r')}"}
    store.close()


def _get(router: APIRouter, path: str) -> APIRoute:
    """The router's GET route at `path`."""
    return next(r for r in router.routes if isinstance(r, APIRoute) and r.path == path and "GET" in (r.methods or ()))


def _message(detail: str) -> str:
    """A problem's words without the field's name (each entry names the field its own way)."""
    return detail.split(": ", 1)[1]


@pytest.mark.parametrize(("body", "options"), BAD)
def test_a_bad_request_reads_the_same_from_every_entry(
    served: tuple[TestClient, EmbeddedStore, dict[str, str]],
    tmp_path: Path,
    body: dict[str, Any],
    options: list[str] | None,
) -> None:
    client, store, reader = served
    r = client.post("/v1/trajectory-batches", json=body, headers=reader)
    assert r.status_code == 422 and r.json()["error"] == "invalid_input", r.text
    rest = r.json()["detail"]
    field = rest.split(":")[0].split("[")[0]
    assert field in body and r.json()["locations"], rest
    if field != "count":  # the count's bounds are the entry's; the worker reads the stored batch by the same rules
        with pytest.raises(InvalidInput) as stored:
            Batch.stored({"id": "tb_x", "team": "team-r", **body})
        assert stored.value.detail == rest
    assert store.list_batches("team-r") == []  # refused before anything was saved
    if options is None:
        return
    cli = CliRunner().invoke(kopa, ["synth", *options, "--out", str(tmp_path / "out")])
    line = cli.output.strip()
    assert cli.exit_code == 2 and line.startswith(f"error: --{field.replace('_', '-')}: "), cli.output
    assert _message(line.removeprefix("error: ")) == _message(rest)


def test_the_count_bound_is_each_entrys_in_the_same_words(
    served: tuple[TestClient, EmbeddedStore, dict[str, str]], tmp_path: Path
) -> None:
    client, _, reader = served
    rest = client.post("/v1/trajectory-batches", json={"count": 301}, headers=reader).json()["detail"]
    assert rest == "count: Input should be less than or equal to 300"
    cli = CliRunner().invoke(kopa, ["synth", "--count", "100001", "--out", str(tmp_path / "out")])
    assert cli.output.strip() == "error: --count: Input should be less than or equal to 100,000"


def test_route_store_and_worker_share_the_batch_type(
    served: tuple[TestClient, EmbeddedStore, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, store, reader = served
    assert _get(batch_routes.router, "/v1/trajectory-batches/{batch_id}").response_model is Batch
    assert typing.get_type_hints(batch_routes.create)["body"] is BatchRequest
    assert issubclass(BatchRequest, SynthesisRequest) and issubclass(Batch, BatchRequest)
    assert batch_routes.BatchStarted.model_fields.keys() == {"id", "status", "progress", "items"}
    settings = Settings(redis_url=None)
    batch = new_batch(store, settings, "team-r", BatchRequest(count=3, shapes=["chain"], seed=4))
    assert set(store.get_batch(batch.id) or {}) == STORED_KEYS  # the wire format it had as a dict literal
    answered = client.get(f"/v1/trajectory-batches/{batch.id}", headers=reader).json()
    assert Batch.model_validate(answered) == batch == visible_batch(store, batch.id, "team-r")
    assert set(answered) == STORED_KEYS
    # the Celery task reads the stored batch as a Batch and hands its id to run_batch
    seen: list[Any] = []

    async def run(_store: Any, _settings: Any, batch_id: str, **_: Any) -> None:
        seen.append(batch_id)

    monkeypatch.setattr(workers.tasks, "store", lambda: store)
    monkeypatch.setattr(workers.tasks, "run_batch", run)

    def abandon(_graph: Any, read: Batch) -> bool:
        seen.append(read)
        return False

    monkeypatch.setattr(workers.tasks, "abandon_demand_run", abandon)
    workers.tasks.synthesize_batch.run(batch.id)
    assert seen == [batch, batch.id]


def test_a_batch_states_what_its_synthesis_gave() -> None:
    batch = Batch(id="tb_s", team="team-r", count=3, shapes=list(SHAPES))
    result = SynthesisResult(
        records=[],
        discarded=[{"plan": "a", "reason": "benchmark overlap: t1"}, {"plan": "b", "reason": "near duplicate"}],
        calls=7,
        shortfall="0 of 3 requested: the verified graph yielded 0 distinct executable trajectories",
        snapshot="snap",
        requeued_links=["lk_1"],
        benchmark_overlap=BenchmarkOverlap(benchmark_tasks=9, discarded_as_overlapping=1),
    )
    _account(batch, result, None)
    assert (batch.discarded, batch.calls, batch.snapshot, batch.requeued_links, batch.benchmark_overlap) == (
        2,
        7,
        "snap",
        1,
        1,
    )
    assert batch.message == result.shortfall + "; verify more links or widen the shapes"
    assert result["calls"] == result.calls == 7  # scripts written against the dict still read it


def test_route_and_cli_share_the_run_progress_type(
    served: tuple[TestClient, EmbeddedStore, dict[str, str]],
) -> None:
    client, store, reader = served
    assert _get(run_routes.router, "/v1/verification-runs/{run_id}").response_model is RunProgress
    assert typing.get_type_hints(run_routes.get_run)["return"] is RunProgress
    assert RunProgress.model_fields.keys() >= SUMMARY  # what `kopa verify` prints are the type's fields
    run = new_run()
    store.save_run(run)
    answered = client.get(f"/v1/verification-runs/{run.id}", headers=reader).json()
    assert answered == run_progress(store, run).model_dump(mode="json")
    assert len(answered) == 22  # `candidate` too, which the route's own copy of the fields had left out


def test_the_reports_keep_their_wire_keys() -> None:
    change = VerdictChange(link="lk", source="a.x", target="b.y", before="verified", after="refuted", at="t", run="r")
    assert list(change.model_dump()) == ["link", "source", "target", "from", "to", "at", "run", "reason"]
    assert VerdictChange.model_validate(change.model_dump()) == change
    assert set(YieldRow.model_fields) >= {"run", "calls", "calls_per_candidate", "quota_use"}
