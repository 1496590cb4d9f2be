"""Trajectory synthesis figures, one process, the bundled catalog against an in-process sandbox (no latency):

* end-to-end synthesis rate (executed trajectories per second; target >= 20/s on this machine);
* replay: re-executing every trajectory from its recorded steps (target 100%);
* the ordering claim: EDGE (verify links, then sample over verified links) against "synthesise, then filter"
  (sample chains over unverified candidate links, execute, keep what runs): usable fraction and API calls per
  usable trajectory for each, with the ratio.

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
from sandbox.inprocess import sandbox_mode
from synthesis.engine import synthesize
from synthesis.records import Trajectory
from tests.support.helpers import register_catalog
from verification.engine import Engine, prepare_round
from verification.runs import execute_run, new_run, run_progress


def fresh(root: Path, name: str, settings: Settings) -> EmbeddedStore:
    return register_catalog(EmbeddedStore(root / f"{name}.sqlite3"), settings)


async def synth(
    store: EmbeddedStore, settings: Settings, transport: Any, count: int, unverified: bool
) -> tuple[dict[str, Any], float]:
    ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=1000)[0]}, transport=transport)
    t0 = time.perf_counter()
    try:
        out = await synthesize(store, settings, ex, count=count, seed=7, unverified=unverified)
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
    settings, transport = sandbox_mode(Settings())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        edge = fresh(root, "edge", settings)
        run = asyncio.run(execute_run(edge, settings, new_run(), transport=transport, economy=MemoryEconomy()))
        verify_calls = run_progress(edge, run)["calls_spent"]
        out, seconds = asyncio.run(synth(edge, settings, transport, args.count, unverified=False))
        kept = out["records"]
        print(f"== EDGE: verify ({verify_calls} calls), then sample over verified links")
        print(
            f"trajectories {len(kept)} of {out['attempted']} executed plans, {out['calls']} calls, {seconds:.1f} s: "
            f"{len(kept) / seconds:.1f} trajectories/s   (target >= 20/s)"
        )
        replayed = asyncio.run(replay(edge, settings, transport, kept))
        print(
            f"replay from recorded steps: {replayed}/{len(kept)} = {replayed / max(1, len(kept)):.0%}   (target 100%)"
        )

        base = fresh(root, "baseline", settings)
        economy = MemoryEconomy()
        brun = new_run()
        engine = Engine(
            base,
            settings,
            Executor(
                settings, economy, {a.id: a for a in base.list_apis(limit=1000)[0]}, transport=transport, run_id=brun.id
            ),
            brun,
            tools={t.name: t for t in base.all_tools()},
        )

        async def candidates_only() -> None:
            try:
                await prepare_round(engine, base.all_tools())
            finally:
                await engine.executor.aclose()

        asyncio.run(candidates_only())
        profile_calls = economy.calls(brun.id).get("calls", 0)
        bout, bseconds = asyncio.run(synth(base, settings, transport, args.count, unverified=True))
        bkept = bout["records"]
        print(
            f"== baseline: sample over unverified candidates ({profile_calls} sampling calls), execute, keep what runs"
        )
        print(
            f"trajectories {len(bkept)} of {bout['attempted']} executed plans, {bout['calls']} calls, {bseconds:.1f} s"
        )

        edge_frac = len(kept) / max(1, out["attempted"])
        base_frac = len(bkept) / max(1, bout["attempted"])
        edge_cost = (verify_calls + out["calls"]) / max(1, len(kept))
        edge_marginal = out["calls"] / max(1, len(kept))
        base_cost = (profile_calls + bout["calls"]) / max(1, len(bkept))
        base_marginal = bout["calls"] / max(1, len(bkept))
        print("== the ordering claim")
        print(f"usable fraction            EDGE {edge_frac:.0%}   baseline {base_frac:.0%}")
        print(
            f"calls per usable trajectory (synthesis only)     EDGE {edge_marginal:.2f}   baseline {base_marginal:.2f}"
            f"   ratio {base_marginal / max(edge_marginal, 1e-9):.2f}x"
        )
        print(
            f"calls per usable trajectory (incl. verification/sampling, {args.count} trajectories)   "
            f"EDGE {edge_cost:.2f}   baseline {base_cost:.2f}   ratio {base_cost / max(edge_cost, 1e-9):.2f}x"
        )
        edge.close()
        base.close()


if __name__ == "__main__":
    main()
