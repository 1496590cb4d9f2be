"""Path sampling throughput from Neo4j on a generated verified graph of 10,000 tools.

    python -m perf.paths_10k [--tools 10000] [--degree 3] [--neo4j bolt://127.0.0.1:17687]

Registers generated tools, adds verified links (out-degree `degree`), then runs the Cypher path query in
batches of 100 start tools (1-3 hops, 10 paths per start). Target: at least 1,000 sampled paths per second.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from core.settings import Neo4jSettings, Settings
from graph.candidates import link_id
from graph.models import LinkRecord
from graph.neo4j_store import Neo4jStore
from graph.registry import register
from perf.register_10k import generated_catalog


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tools", type=int, default=10_000)
    ap.add_argument("--degree", type=int, default=3)
    ap.add_argument("--neo4j", default=os.environ.get("KOPA_TEST_NEO4J_URI", "bolt://127.0.0.1:17687"))
    args = ap.parse_args()
    store = Neo4jStore(Neo4jSettings(uri=args.neo4j))
    store.init_schema()
    store.reset()
    settings = Settings()
    t0 = time.perf_counter()
    for doc in generated_catalog(args.tools, 50):
        register(store, settings, doc)
    names = sorted(t.name for t in store.all_tools())
    rnd = random.Random(1)
    links = []
    for i, src in enumerate(names):
        for dst in rnd.sample(names, args.degree):
            if dst == src:
                continue
            t = {"kind": "identity"}
            links.append(
                LinkRecord(
                    id=link_id(src, "field0", dst, "query:param0", t),
                    source_tool=src,
                    source_field="field0",
                    target_tool=dst,
                    target_param="query:param0",
                    transform=t,
                    score=0.9,
                    status="verified",
                    last_run=f"bench-{i % 7}",
                )
            )
    store.upsert_candidates(links)
    store.save_links(links)
    print(f"graph: {len(names)} tools, {len(links)} verified links (built in {time.perf_counter() - t0:.0f} s)")
    edges = store.verified_edges()
    print(f"tool-level FEEDS edges: {sum(len(v) for v in edges.values())}")
    starts_all = names[:]
    store.sample_paths(starts_all[:100], 1, 3, 10)  # warm up the plan cache
    total = 0
    t0 = time.perf_counter()
    queries = 0
    while time.perf_counter() - t0 < 10:
        starts = rnd.sample(starts_all, 100)
        total += len(store.sample_paths(starts, 1, 3, 10))
        queries += 1
    elapsed = time.perf_counter() - t0
    print(
        f"sampled {total} paths in {queries} queries over {elapsed:.1f} s: {total / elapsed:,.0f} paths/s "
        "(target >= 1,000)"
    )
    store.reset()
    store.close()


if __name__ == "__main__":
    main()
