"""Trajectory synthesis figures, one process, the bundled catalog against in-process sandboxes (no latency):

* end-to-end synthesis rate over verified links (executed trajectories per second; target >= 20/s here);
* replay: re-executing every trajectory from its recorded steps (target 100%);
* the ordering claim: EDGE (verification driven by demand, then plans over verified links) against "synthesise,
  then filter" (plans over unverified candidate links, executed, what runs kept): usable fraction and API calls
  per usable trajectory for each, with the ratio. The arms are perf.crossover's: each on a FRESH sandbox (its own
  quotas, store and call economy), the same seed, every upstream request counted at the transport.

    python -m perf.synthesis [--count 300]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy, NoCache
from graph.embedded_store import EmbeddedStore
from perf.crossover import baseline_arm, edge_arm, fresh_upstream
from synthesis.engine import synthesize
from synthesis.records import SynthesisResult, Trajectory


async def synth(store: EmbeddedStore, settings: Settings, transport: Any, count: int) -> tuple[SynthesisResult, float]:
    """Synthesis over the verified links only (no verification on the way): the rate figure."""
    ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=1000)[0]}, transport=transport)
    t0 = time.perf_counter()
    try:
        out = await synthesize(store, settings, ex, count=count, seed=7)
    finally:
        await ex.aclose()
    return out, time.perf_counter() - t0


async def replay(store: EmbeddedStore, settings: Settings, transport: Any, records: list[Trajectory]) -> int:
    tools = {t.name: t for t in store.all_tools()}
    ex = Executor(
        settings, NoCache(MemoryEconomy()), {a.id: a for a in store.list_apis(limit=1000)[0]}, transport=transport
    )
    ok = 0
    try:
        for r in records:
            results = [await ex.call(tools[s.tool], s.arguments) for s in r.steps]
            ok += all(x.ok for x in results)
    finally:
        await ex.aclose()
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        up = fresh_upstream(root, "edge", "sandbox", 7)
        edge = asyncio.run(edge_arm(up, args.count, 7))
        kept = edge.kept
        print(
            f"== EDGE: verification on demand ({edge.verification_calls} calls, {edge.verified_links} links "
            f"verified), then plans over verified links ({edge.synthesis_calls} calls), {edge.seconds:.1f} s"
        )
        out, seconds = asyncio.run(synth(up.store, up.settings, up.transport, args.count))
        print(
            f"synthesis over those verified links: {len(out['records'])} trajectories in {seconds:.1f} s: "
            f"{len(out['records']) / seconds:.1f} trajectories/s   (target >= 20/s)"
        )
        replayed = asyncio.run(replay(up.store, up.settings, up.transport, kept))
        print(
            f"replay from recorded steps: {replayed}/{len(kept)} = {replayed / max(1, len(kept)):.0%}   (target 100%)"
        )
        up.store.close()
        bup = fresh_upstream(root, "baseline", "sandbox", 7)
        base = asyncio.run(baseline_arm(bup, args.count, 7))
        bup.store.close()
        print(
            f"== baseline (fresh sandbox): sample over unverified candidates ({base.verification_calls} sampling "
            f"calls), execute, keep what runs: {len(base.kept)} trajectories, {base.synthesis_calls} calls, "
            f"{base.seconds:.1f} s" + (f"; {base.shortfall}" if base.shortfall else "")
        )
        edge_frac = len(kept) / max(1, edge.extra["attempted"])
        base_frac = len(base.kept) / max(1, base.extra["attempted"])
        edge_marginal = edge.synthesis_calls / max(1, len(kept))
        base_marginal = base.synthesis_calls / max(1, len(base.kept))
        print("== the ordering claim")
        print(f"usable fraction            EDGE {edge_frac:.0%}   baseline {base_frac:.0%}")
        print(
            f"calls per usable trajectory (synthesis only)     EDGE {edge_marginal:.2f}   baseline {base_marginal:.2f}"
            f"   ratio {base_marginal / max(edge_marginal, 1e-9):.2f}x"
        )
        print(
            f"calls per usable trajectory (incl. verification/sampling, {args.count} trajectories)   "
            f"EDGE {edge.per_usable:.2f}   baseline {base.per_usable:.2f}   "
            f"ratio {base.per_usable / max(edge.per_usable, 1e-9):.2f}x"
        )


if __name__ == "__main__":
    main()
