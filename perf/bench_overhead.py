"""KOPA-Bench harness figures: the oracle on every shipped task x k=3, live (in-process sandbox, recording a
snapshot) and then in replay; prints the harness time per task (target < 50 ms, so the model is always the
bottleneck) and whether the live and replay episodes and scores are identical.

    python -m perf.bench_overhead [--tasks DIR] [--k 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.agents import OracleAgent
from bench.episode import canonical_episode
from bench.records import ResultsDoc
from bench.run import run_bench
from bench.tasks import load_tasks
from cli.bench import bench_env


async def one_run(tasks: Any, out: Path, k: int, **env_kw: Any) -> tuple[ResultsDoc, float]:
    async with bench_env(**env_kw) as env:
        started = time.perf_counter()
        doc = await run_bench(tasks, OracleAgent(), env, out, k=k, concurrency=1, resume=False)
        return doc, time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=Path, default=None)
    ap.add_argument("--k", type=int, default=3)
    args = ap.parse_args()
    tasks = load_tasks(args.tasks)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        snap = root / "snapshot.json"
        live, live_s = asyncio.run(one_run(tasks, root / "live", args.k, record=snap))
        replay, replay_s = asyncio.run(one_run(tasks, root / "replay", args.k, mode="replay", snapshot=snap))
    n = len(tasks)
    eps = replay["run"]["episodes"]
    same_eps = [canonical_episode(e) for e in live["episodes"]] == [canonical_episode(e) for e in replay["episodes"]]
    same_scores = [{k: v for k, v in s.items() if k not in ("model_ms", "harness_ms")} for s in live["scored"]] == [
        {k: v for k, v in s.items() if k not in ("model_ms", "harness_ms")} for s in replay["scored"]
    ]
    per_episode = [e["harness_ms"] for e in replay["episodes"]]
    print(
        json.dumps(
            {
                "tasks": n,
                "k": args.k,
                "episodes": eps,
                "live_wall_s": round(live_s, 2),
                "replay_wall_s": round(replay_s, 2),
                "replay_ms_per_task_wall": round(replay_s * 1000 / n, 2),
                "replay_ms_per_episode_wall": round(replay_s * 1000 / max(1, eps), 2),
                "harness_ms_per_episode_mean": round(sum(per_episode) / max(1, len(per_episode)), 2),
                "harness_ms_per_episode_max": round(max(per_episode, default=0.0), 2),
                "target_ms_per_task": 50,
                "oracle_live": {c: v["pass_hat_k"] for c, v in live["scores"]["by_category"].items()},
                "oracle_replay": {c: v["pass_hat_k"] for c, v in replay["scores"]["by_category"].items()},
                "identical_episodes": same_eps,
                "identical_scores": same_scores,
                "replay_misses": replay["scores"]["overall"]["replay_misses"],
            },
            ensure_ascii=False,
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
