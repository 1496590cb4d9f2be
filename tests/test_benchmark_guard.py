"""The benchmark guard on the batch path: it reads the same KOPA-Bench tasks as the benchmark, and a trajectory
batch never keeps a task of the benchmark (a made-up benchmark of exactly what a batch produced, then the shipped
one)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from core.settings import Settings
from sandbox.inprocess import sandbox_mode
from synthesis.batches import BatchRequest, benchmark_guard, new_batch, run_batch
from synthesis.contamination import BenchFingerprints
from tests.support.helpers import copy_store


def test_the_guard_reads_the_same_tasks_as_the_benchmark() -> None:
    from bench.overlap import fingerprints
    from bench.tasks import load_tasks

    ours, theirs = benchmark_guard(Settings()), fingerprints(load_tasks())
    assert sorted(ours.labels) == sorted(theirs.labels) and len(ours.labels) >= 100
    assert ours.programs == theirs.programs and set(ours.requests) == set(theirs.requests)


def test_a_batch_never_contains_a_benchmark_task(tmp_path: Path, verified_catalog: Path) -> None:
    settings, sandbox = sandbox_mode(Settings(redis_url=None))
    store = copy_store(verified_catalog, tmp_path / "v.sqlite3")
    empty = tmp_path / "none"
    empty.mkdir()
    free = settings.model_copy(update={"batches": settings.batches.model_copy(update={"benchmark_tasks": empty})})
    first = new_batch(store, free, "team-g", BatchRequest(count=6, seed=11))
    asyncio.run(run_batch(store, free, first.id, transport=sandbox))
    produced = store.list_trajectories(first.id, 0, 100)[0]
    assert produced, "the verified graph produced nothing"
    # a benchmark whose tasks are exactly what that batch produced: the same batch again must keep none of them
    tasks = [
        {
            "id": f"made-{i}",
            "turns": [r["request"]],
            "gold": [{"id": f"s{j}", "tool": s["tool"], "args": {}} for j, s in enumerate(r["steps"])],
        }
        for i, r in enumerate(produced)
    ]
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "made.yaml").write_text(yaml.safe_dump(tasks, allow_unicode=True), encoding="utf-8")
    guarded = settings.model_copy(update={"batches": settings.batches.model_copy(update={"benchmark_tasks": folder})})
    guard: BenchFingerprints = benchmark_guard(guarded)
    assert all(guard.is_contaminated(r) for r in produced)
    again = new_batch(store, guarded, "team-g", BatchRequest(count=6, seed=11))
    done = asyncio.run(run_batch(store, guarded, again.id, transport=sandbox))
    kept = store.list_trajectories(again.id, 0, 100)[0]
    assert not [r["id"] for r in kept if guard.is_contaminated(r)], "a batch kept a benchmark task"
    assert done.benchmark_overlap is not None and done.benchmark_overlap >= 1
    # and with the shipped benchmark (the default): nothing of KOPA-Bench in a batch, even where the same batch
    # without a guard holds some (with this seed it does: what REST and Celery batches emitted before)
    shipped = benchmark_guard(settings)
    default = new_batch(store, settings, "team-g", BatchRequest(count=6, seed=11))
    asyncio.run(run_batch(store, settings, default.id, transport=sandbox))
    clean = store.list_trajectories(default.id, 0, 100)[0]
    assert clean and not [r["id"] for r in clean if shipped.is_contaminated(r)]
    store.close()
