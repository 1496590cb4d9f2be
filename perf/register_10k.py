"""Time to register a generated catalog of 10,000 operations into each store backend.

    python -m perf.register_10k [--operations 10000] [--per-api 50] [--neo4j bolt://127.0.0.1:17687]

The Neo4j URI defaults to KOPA_TEST_NEO4J_URI (set by scripts/services.sh); without one only the embedded
store is measured. Target: under 60 s into Neo4j on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from core.settings import Neo4jSettings, Settings
from graph.registry import register
from graph.store import GraphStore


def generated_catalog(operations: int, per_api: int) -> list[dict[str, Any]]:
    docs = []
    for a in range(0, operations, per_api):
        paths: dict[str, Any] = {}
        for i in range(a, min(operations, a + per_api)):
            item = {
                "type": "object",
                "properties": {f"field{j}": {"type": "string", "description": f"출력 {j}"} for j in range(12)},
            }
            paths[f"/op{i}"] = {
                "get": {
                    "operationId": f"getOperation{i}",
                    "summary": f"생성된 오퍼레이션 {i}",
                    "parameters": [
                        {
                            "name": f"param{j}",
                            "in": "query",
                            "required": j < 2,
                            "description": f"입력 {j}",
                            "schema": {"type": "string", "pattern": "^[0-9]{5}$" if j == 0 else None}
                            if j == 0
                            else {"type": "string"},
                        }
                        for j in range(6)
                    ],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {
                                            "response": {
                                                "type": "object",
                                                "properties": {
                                                    "header": {"type": "object"},
                                                    "body": {
                                                        "type": "object",
                                                        "properties": {
                                                            "items": {
                                                                "type": "object",
                                                                "properties": {
                                                                    "item": {"type": "array", "items": item}
                                                                },
                                                            }
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    }
                                }
                            },
                        }
                    },
                }
            }
        docs.append(
            {
                "openapi": "3.0.3",
                "info": {"title": f"Generated {a // per_api}", "version": "1"},
                "servers": [{"url": f"https://apis.data.go.kr/G{a // per_api:05d}/Svc"}],
                "paths": paths,
            }
        )
    return docs


def measure(store: GraphStore, docs: list[dict[str, Any]]) -> tuple[float, int]:
    store.init_schema()
    store.reset()
    settings = Settings()
    t0 = time.perf_counter()
    for doc in docs:
        register(store, settings, doc)
    elapsed = time.perf_counter() - t0
    tools = store.stats()["tools"]
    store.reset()
    return elapsed, int(tools)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--operations", type=int, default=10_000)
    ap.add_argument("--per-api", type=int, default=50)
    ap.add_argument("--neo4j", default=os.environ.get("KOPA_TEST_NEO4J_URI"))
    args = ap.parse_args()
    docs = generated_catalog(args.operations, args.per_api)
    print(f"catalog: {args.operations} operations in {len(docs)} documents (6 params, 12 fields each)")
    from graph.embedded_store import EmbeddedStore

    with tempfile.TemporaryDirectory() as tmp:
        emb = EmbeddedStore(Path(tmp) / "bench.sqlite3")
        seconds, tools = measure(emb, docs)
        emb.close()
    print(f"embedded (SQLite)  {seconds:6.1f} s   {tools / seconds:7.0f} operations/s   ({tools} tools)")
    if args.neo4j:
        from graph.neo4j_store import Neo4jStore

        neo = Neo4jStore(Neo4jSettings(uri=args.neo4j))
        seconds, tools = measure(neo, docs)
        neo.close()
        print(
            f"neo4j              {seconds:6.1f} s   {tools / seconds:7.0f} "
            f"operations/s   ({tools} tools)  target < 60 s"
        )
    else:
        print("neo4j              skipped (no --neo4j / KOPA_TEST_NEO4J_URI)")


if __name__ == "__main__":
    main()
