"""Data quality of trajectories synthesised on the unseen family (tests/unseen/: services of made-up agencies the
engine was never tuned to): the family is registered with its own key and verified in process, trajectories are
synthesised over its verified links against its emulated servers, and the same figures as `kopa demo` prints are
printed and checked (issue 21):

* answers about an arbitrary row of many 0; chains through an entity the question does not mention <= 2%;
* every trajectory that calls a tool carries facts that `synthesis.facts.check_answer` confirms on its own answer
  and rejects for a constant answer.

    python -m perf.data_quality_unseen [--count 120] [--seed 7]

Exits non-zero when a figure misses its target.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from synthesis.engine import synthesize
from synthesis.quality import quality, quality_lines, question_targets
from synthesis.records import SynthesisResult
from tests.unseen.harness import run_unseen, transport, unseen_settings


def run(count: int, seed: int, root: Path) -> tuple[SynthesisResult, float]:
    graph = root / "unseen.sqlite3"
    run_unseen(graph)
    settings = unseen_settings(Settings(store="embedded", embedded_path=graph))
    store = EmbeddedStore(graph)

    async def go() -> SynthesisResult:
        ex = Executor(
            settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=1000)[0]}, transport=transport()
        )
        try:
            return await synthesize(store, settings, ex, count=count, seed=seed)
        finally:
            await ex.aclose()

    t0 = time.perf_counter()
    try:
        out = asyncio.run(go())
    finally:
        store.close()
    return out, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=120)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out, elapsed = run(args.count, args.seed, Path(tmp))
    records = out["records"]
    q = quality(records)
    print(
        f"unseen family: synthesised {len(records)} trajectories in {elapsed:.1f}s "
        f"({len(out['discarded'])} discarded, {out['calls']} upstream calls)"
    )
    print("\n".join(quality_lines(q)))
    misses = question_targets(q)
    for m in misses:
        print("MISS", m)
    if not records:
        print("MISS no trajectories")
        misses.append("count")
    sys.exit(1 if misses else 0)


if __name__ == "__main__":
    main()
