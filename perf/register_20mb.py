"""Time to register one 20 MB API document (the POST /v1/apis limit): parse, derive tools, write to a store.

    python -m perf.register_20mb [--mb 20] [--neo4j bolt://127.0.0.1:17687] [--again]

Prints the document size, its operations and the seconds spent in each phase (JSON load with its bounds, tools,
register = parse + store write) for the embedded store, and for Neo4j when a URI is given (or KOPA_TEST_NEO4J_URI
is set), each on its own line; with --again also a second, unchanged registration (the diff reads every tool back).
The Neo4j figures include the server's work; the API is deleted again afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from core.settings import Neo4jSettings, Settings
from graph import neo4j_store
from graph.embedded_store import EmbeddedStore
from graph.models import RegistrationMeta
from graph.neo4j_store import Neo4jStore
from graph.openapi import load_document, parse_document
from graph.registry import register
from graph.store import GraphStore


def _operation(i: int) -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {f"field{j}Nm": {"type": "string", "description": f"출력 항목 {j} " * 4} for j in range(16)},
    }
    return {
        "get": {
            "operationId": f"getGeneratedOperation{i}Info",
            "summary": f"생성된 오퍼레이션 {i} 조회",
            "description": "공공데이터 오퍼레이션 설명 " * 20,
            "parameters": [
                {
                    "name": f"param{j}",
                    "in": "query",
                    "required": j < 2,
                    "description": f"입력 값 {j}",
                    "schema": {"type": "string"},
                }
                for j in range(8)
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
                                            "header": {
                                                "type": "object",
                                                "properties": {"resultCode": {"type": "string"}},
                                            },
                                            "body": {
                                                "type": "object",
                                                "properties": {
                                                    "items": {
                                                        "type": "object",
                                                        "properties": {"item": {"type": "array", "items": item}},
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


def build_document(target_bytes: int) -> dict[str, Any]:
    """An OpenAPI 3 document of about `target_bytes` of JSON, made of realistic data.go.kr-style operations."""
    one = len(json.dumps({"/opNNNNN": _operation(0)}, ensure_ascii=False).encode())
    count = max(1, int(target_bytes * 0.96) // one)
    return {
        "openapi": "3.0.3",
        "info": {"title": "Generated 20 MB API", "version": "1"},
        "servers": [{"url": "https://apis.data.go.kr/1230000/GeneratedService"}],
        "paths": {f"/op{i:05d}": _operation(i) for i in range(count)},
    }


def measure(store: GraphStore, raw: bytes, label: str, again: bool = False) -> None:
    """One first registration of the document (parse + write), and with `again` a second, unchanged one."""
    settings = Settings()
    t0 = time.perf_counter()
    doc = load_document(raw, "application/json")
    t1 = time.perf_counter()
    _, tools = parse_document(doc, RegistrationMeta())
    t2 = time.perf_counter()
    result = register(store, settings, doc)
    t3 = time.perf_counter()
    assert result.created and len(result.tools) == len(tools), "the API was registered already"
    print(
        f"{label:9s} load {t1 - t0:6.2f} s  tools {t2 - t1:6.2f} s ({len(tools)} tools)  "
        f"register (parse + write) {t3 - t2:6.2f} s  total {t3 - t0:6.2f} s",
        flush=True,
    )
    if again:
        t4 = time.perf_counter()
        second = register(store, settings, load_document(raw, "application/json"))
        t5 = time.perf_counter()
        changes = sorted({t["change"] for t in second.tools})
        print(f"{label:9s} again (load + register, {'/'.join(changes)}) {t5 - t4:6.2f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--neo4j", default=os.environ.get("KOPA_TEST_NEO4J_URI", ""))
    ap.add_argument("--again", action="store_true", help="also time registering the same document a second time")
    args = ap.parse_args()
    raw = json.dumps(build_document(int(args.mb * 1024 * 1024)), ensure_ascii=False).encode()
    print(f"document: {len(raw) / 1024 / 1024:.1f} MB")
    with tempfile.TemporaryDirectory() as d:
        store = EmbeddedStore(Path(d) / "g.sqlite3")
        store.init_schema()
        measure(store, raw, "embedded", args.again)
        store.close()
    if args.neo4j:
        neo = Neo4jStore(Neo4jSettings(uri=args.neo4j))
        neo.init_schema()
        api, tools = parse_document(load_document(raw))
        if neo.get_api(api.id) is not None:  # left by an interrupted run: measure a first registration
            neo.delete_api(api.id)
        rows = sum(1 + len(t.params) + len(t.fields) for t in tools)
        mode = (
            "one transaction"
            if rows <= neo4j_store.SINGLE_TX_ROWS
            else f"transactions of ~{neo4j_store.CHUNK_ROWS} rows, {neo4j_store.WRITERS} at a time"
        )
        print(f"neo4j     {args.neo4j}: {rows} tool/param/field rows in {mode}")
        try:
            measure(neo, raw, "neo4j", args.again)
        finally:
            neo.delete_api(api.id)
            neo.close()


if __name__ == "__main__":
    main()
