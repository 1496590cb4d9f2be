"""Path query and synthesis throughput on the generated 1,000-operation catalog with Neo4j (issue 24).

    python -m perf.generated_neo4j [--count 300] [--seed 7] [--neo4j bolt://127.0.0.1:17687]

It RESETS the Neo4j database it is pointed at: use the development instance (`bash scripts/services.sh start`).

1. registers the generated catalog (sandbox/generated.py: 23 per-region copies of the sandbox, 1,035 operations)
   into Neo4j, timed;
2. EDGE on demand with Neo4j as the store (as perf.crossover's EDGE arm does on the embedded store): the links the
   plans of `count` trajectories traverse are verified and saved in Neo4j with their evidence, the plans over
   verified links executed and recorded; every upstream request counted at the transport;
3. the Cypher path query (`store.sample_paths`, graph/queries.py) over the verified links that run left: batches of
   100 start tools, 1 to 3 hops, 10 paths per start, paths per second;
4. a second synthesis of `count` trajectories over the now verified links, no verifier: every plan is drawn from the
   path query, so this is the throughput of synthesis as a team's batch request meets it (trajectories per second,
   calls per trajectory).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time

from core.settings import Neo4jSettings, Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.neo4j_store import Neo4jStore
from graph.store import all_apis, all_links
from perf.crossover import CountingTransport
from sandbox.generated import generated_mode
from synthesis.batches import synthesize_guarded
from synthesis.records import SynthesisRequest, SynthesisResult
from tests.support.generated import register_generated
from verification.runs import DemandVerifier


async def _synthesize(
    store: Neo4jStore, settings: Settings, transport: CountingTransport, count: int, seed: int, demand: bool
) -> SynthesisResult:
    economy = MemoryEconomy()
    verifier = DemandVerifier(store, settings, economy=economy, transport=transport) if demand else None
    ex = Executor(settings, economy, {a.id: a for a in all_apis(store)}, transport=transport)
    try:
        return await synthesize_guarded(
            store, settings, ex, SynthesisRequest(count=count, seed=seed), verifier=verifier
        )
    finally:
        await ex.aclose()
        if verifier is not None:
            await verifier.close()


def _path_query(store: Neo4jStore, rounds: int) -> tuple[int, float, int]:
    """Paths sampled by the Cypher path query from verified sources, the seconds it took, and the queries run."""
    edges = store.verified_edges()
    starts = sorted(edges)
    rnd = random.Random(1)
    paths = 0
    t0 = time.perf_counter()
    for _ in range(rounds):
        batch = rnd.sample(starts, min(100, len(starts)))
        paths += len(store.sample_paths(batch, 1, 3, 10))
    return paths, time.perf_counter() - t0, rounds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=300, help="trajectories per synthesis")
    ap.add_argument("--seed", type=int, default=7, help="synthesis seed (the second synthesis uses seed + 1)")
    ap.add_argument("--rounds", type=int, default=20, help="path-query batches of 100 start tools")
    ap.add_argument("--neo4j", default=os.environ.get("KOPA_TEST_NEO4J_URI", "bolt://127.0.0.1:17687"))
    args = ap.parse_args()

    store = Neo4jStore(Neo4jSettings(uri=args.neo4j))
    try:
        store.init_schema()
        store.reset()
        settings, inner = generated_mode(Settings(), min_operations=1000)
        t0 = time.perf_counter()
        register_generated(store, settings, min_operations=1000, derive=False)
        tools = store.all_tools()
        print(f"registered the generated catalog into Neo4j: {len(tools)} tools in {time.perf_counter() - t0:.1f} s")

        transport = CountingTransport(inner)
        t1 = time.perf_counter()
        edge = asyncio.run(_synthesize(store, settings, transport, args.count, args.seed, demand=True))
        secs = time.perf_counter() - t1
        figures = edge.get("verification") or {}
        links = all_links(store)
        verified = sum(1 for lk in links if lk.status == "verified")
        print(
            f"EDGE on demand, Neo4j store: {len(edge['records'])} of {args.count} kept in {secs:.0f} s "
            f"({len(edge['records']) / secs:.2f} trajectories/s), {transport.requests} upstream calls "
            f"({transport.requests / max(1, len(edge['records'])):.2f} per kept trajectory); links asked "
            f"{figures.get('links_asked', 0)}, verified {figures.get('verified', 0)}, refuted "
            f"{figures.get('refuted', 0)}; verified links in the graph now {verified}"
        )

        paths, psecs, queries = _path_query(store, args.rounds)
        print(
            f"Cypher path query over the verified links: {paths} paths from {queries} batches of 100 start tools "
            f"(1-3 hops, 10 per start) in {psecs:.2f} s: {paths / psecs:.0f} paths/s, "
            f"{1000 * psecs / queries:.0f} ms per batch"
        )

        transport.requests = 0
        t2 = time.perf_counter()
        again = asyncio.run(_synthesize(store, settings, transport, args.count, args.seed + 1, demand=False))
        secs2 = time.perf_counter() - t2
        kept = len(again["records"])
        print(
            f"synthesis over verified links only (path query draws every plan): {kept} of {args.count} kept in "
            f"{secs2:.0f} s ({kept / secs2:.2f} trajectories/s), {transport.requests} upstream calls "
            f"({transport.requests / max(1, kept):.2f} per kept trajectory)"
            + (f"; {again['shortfall']}" if again.get("shortfall") else "")
        )
    finally:
        store.close()


if __name__ == "__main__":
    main()
