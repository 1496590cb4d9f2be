"""The embedded default store: one SQLite file, no server. Same interface and semantics as the Neo4j store
(one contract test suite runs against both)."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from graph.models import ApiRecord, GraphStats, LinkRecord, RunRecord, TokenRecord, ToolRecord, utcnow
from graph.paths import enumerate_paths

#: SQLite takes 64-bit LIMIT/OFFSET; larger Python ints would overflow, so pages are clamped (and empty).
MAX_INDEX = 2**62


def _page(offset: int, limit: int) -> tuple[int, int]:
    limit = max(0, min(int(limit), MAX_INDEX))
    return max(0, min(int(offset), MAX_INDEX)), limit


SCHEMA = """
CREATE TABLE IF NOT EXISTS apis (id TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tools (
  name TEXT PRIMARY KEY, api_id TEXT NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tools_api ON tools(api_id);
CREATE TABLE IF NOT EXISTS links (
  id TEXT PRIMARY KEY, source_tool TEXT NOT NULL, source_field TEXT NOT NULL, target_tool TEXT NOT NULL,
  target_param TEXT NOT NULL, status TEXT NOT NULL, score REAL NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS links_status ON links(status);
CREATE INDEX IF NOT EXISTS links_source ON links(source_tool);
CREATE INDEX IF NOT EXISTS links_target ON links(target_tool);
CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batches (
  id TEXT PRIMARY KEY, team TEXT NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trajectories (
  id TEXT PRIMARY KEY, batch_id TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS trajectories_batch ON trajectories(batch_id, seq);
"""


class EmbeddedStore:
    backend = "embedded"

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self.conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.init_schema()

    def _tx(self) -> Any:
        store = self

        class _Tx:
            def __enter__(self) -> sqlite3.Connection:
                store._lock.acquire()
                store.conn.execute("BEGIN IMMEDIATE")
                return store.conn

            def __exit__(self, exc_type: Any, *_: Any) -> None:
                try:
                    store.conn.execute("ROLLBACK" if exc_type else "COMMIT")
                finally:
                    store._lock.release()

        return _Tx()

    def _q(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with self._lock:
            return self.conn.execute(sql, args).fetchall()

    def init_schema(self) -> None:
        with self._lock:
            self.conn.executescript(SCHEMA)

    def ping(self) -> None:
        self._q("SELECT 1")

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    # ------------------------------------------------------------------ APIs and tools
    def apply_registration(
        self, api: ApiRecord, upsert: list[ToolRecord], retire: list[str], flags: dict[str, tuple[list[str], list[str]]]
    ) -> int:
        flagged = 0
        with self._tx() as c:
            old = c.execute("SELECT data FROM apis WHERE id = ?", (api.id,)).fetchone()
            if old:
                api = api.model_copy(update={"created_at": json.loads(old[0])["created_at"]})
            c.execute("INSERT OR REPLACE INTO apis VALUES (?, ?)", (api.id, api.model_dump_json()))
            c.executemany(
                "INSERT OR REPLACE INTO tools VALUES (?, ?, ?, ?)",
                [(t.name, t.api_id, t.status, t.model_dump_json()) for t in upsert],
            )
            for name in retire:
                row = c.execute("SELECT data FROM tools WHERE name = ?", (name,)).fetchone()
                if row:
                    gone = ToolRecord.model_validate_json(row[0]).model_copy(
                        update={"status": "retired", "updated_at": utcnow()}
                    )
                    c.execute(
                        "UPDATE tools SET status = 'retired', data = ? WHERE name = ?", (gone.model_dump_json(), name)
                    )
            for tool, (params, fields) in flags.items():
                rows = c.execute(
                    "SELECT id, data FROM links WHERE (target_tool = ? "
                    "AND target_param IN (SELECT value FROM json_each(?)))"
                    " OR (source_tool = ? AND source_field IN (SELECT value FROM json_each(?)))",
                    (tool, json.dumps(params), tool, json.dumps(fields)),
                ).fetchall()
                for link_id, data in rows:
                    link = LinkRecord.model_validate_json(data).model_copy(update={"needs_reverify": True})
                    c.execute("UPDATE links SET data = ? WHERE id = ?", (link.model_dump_json(), link_id))
                    flagged += 1
        return flagged

    def list_apis(self, offset: int = 0, limit: int = 50) -> tuple[list[ApiRecord], int]:
        offset, limit = _page(offset, limit)
        total = self._q("SELECT count(*) FROM apis")[0][0]
        rows = self._q("SELECT data FROM apis ORDER BY id LIMIT ? OFFSET ?", limit, offset)
        return [ApiRecord.model_validate_json(r[0]) for r in rows], int(total)

    def get_api(self, api_id: str) -> ApiRecord | None:
        rows = self._q("SELECT data FROM apis WHERE id = ?", api_id)
        return ApiRecord.model_validate_json(rows[0][0]) if rows else None

    def delete_api(self, api_id: str) -> int:
        with self._tx() as c:
            if not c.execute("SELECT 1 FROM apis WHERE id = ?", (api_id,)).fetchone():
                return -1
            names = [r[0] for r in c.execute("SELECT name FROM tools WHERE api_id = ?", (api_id,))]
            c.execute(
                "DELETE FROM links WHERE source_tool IN (SELECT name FROM tools WHERE api_id = ?)"
                " OR target_tool IN (SELECT name FROM tools WHERE api_id = ?)",
                (api_id, api_id),
            )
            c.execute("DELETE FROM tools WHERE api_id = ?", (api_id,))
            c.execute("DELETE FROM apis WHERE id = ?", (api_id,))
        return len(names)

    def tools_of_api(self, api_id: str) -> list[ToolRecord]:
        return [
            ToolRecord.model_validate_json(r[0]) for r in self._q("SELECT data FROM tools WHERE api_id = ?", api_id)
        ]

    def tool_owners(self, names: list[str]) -> dict[str, str]:
        rows = self._q(
            "SELECT name, api_id FROM tools WHERE name IN (SELECT value FROM json_each(?))", json.dumps(names)
        )
        return {r[0]: r[1] for r in rows}

    def list_tools(
        self,
        offset: int = 0,
        limit: int = 50,
        api_id: str | None = None,
        q: str | None = None,
        status: str | None = "active",
    ) -> tuple[list[ToolRecord], int]:
        offset, limit = _page(offset, limit)
        where, args = ["1=1"], []
        if api_id:
            where.append("api_id = ?")
            args.append(api_id)
        if status:
            where.append("status = ?")
            args.append(status)
        if q:
            where.append(
                "(lower(name) LIKE ? OR json_extract(data, '$.summary') "
                "LIKE ? OR json_extract(data, '$.description') LIKE ?)"
            )
            args += [f"%{q.lower()}%", f"%{q}%", f"%{q}%"]
        cond = " AND ".join(where)
        total = self._q(f"SELECT count(*) FROM tools WHERE {cond}", *args)[0][0]
        rows = self._q(f"SELECT data FROM tools WHERE {cond} ORDER BY name LIMIT ? OFFSET ?", *args, limit, offset)
        return [ToolRecord.model_validate_json(r[0]) for r in rows], int(total)

    def all_tools(self, status: str | None = "active") -> list[ToolRecord]:
        rows = self._q("SELECT data FROM tools WHERE ? IS NULL OR status = ? ORDER BY name", status, status)
        return [ToolRecord.model_validate_json(r[0]) for r in rows]

    def get_tool(self, name: str) -> ToolRecord | None:
        rows = self._q("SELECT data FROM tools WHERE name = ?", name)
        return ToolRecord.model_validate_json(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ links
    def upsert_candidates(self, links: list[LinkRecord]) -> int:
        with self._tx() as c:
            for lk in links:
                row = c.execute("SELECT data FROM links WHERE id = ?", (lk.id,)).fetchone()
                if row:
                    cur = LinkRecord.model_validate_json(row[0]).model_copy(
                        update={"score": lk.score, "transform": lk.transform}
                    )
                else:
                    cur = lk
                c.execute(
                    "INSERT OR REPLACE INTO links VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        cur.id,
                        cur.source_tool,
                        cur.source_field,
                        cur.target_tool,
                        cur.target_param,
                        cur.status,
                        cur.score,
                        cur.model_dump_json(),
                    ),
                )
        return len(links)

    def list_links(
        self, status: str | None = None, tool: str | None = None, offset: int = 0, limit: int = 100
    ) -> tuple[list[LinkRecord], int]:
        offset, limit = _page(offset, limit)
        cond = "(? IS NULL OR status = ?) AND (? IS NULL OR source_tool = ? OR target_tool = ?)"
        args = [status, status, tool, tool, tool]
        total = self._q(f"SELECT count(*) FROM links WHERE {cond}", *args)[0][0]
        rows = self._q(
            f"SELECT data FROM links WHERE {cond} ORDER BY score DESC, id LIMIT ? OFFSET ?", *args, limit, offset
        )
        return [LinkRecord.model_validate_json(r[0]) for r in rows], int(total)

    def get_link(self, link_id: str) -> LinkRecord | None:
        rows = self._q("SELECT data FROM links WHERE id = ?", link_id)
        return LinkRecord.model_validate_json(rows[0][0]) if rows else None

    def save_link(self, link: LinkRecord) -> None:
        with self._tx() as c:
            c.execute(
                "UPDATE links SET status = ?, score = ?, data = ? WHERE id = ?",
                (link.status, link.score, link.model_dump_json(), link.id),
            )

    def run_counts(self, run_id: str) -> dict[str, int]:
        rows = self._q(
            "SELECT status, count(*) FROM links WHERE json_extract(data, '$.last_run') = ? GROUP BY status", run_id
        )
        return {s: int(n) for s, n in rows}

    # ------------------------------------------------------------------ runs
    def save_run(self, run: RunRecord) -> None:
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?)", (run.id, run.created_at, run.model_dump_json()))

    def get_run(self, run_id: str) -> RunRecord | None:
        rows = self._q("SELECT data FROM runs WHERE id = ?", run_id)
        return RunRecord.model_validate_json(rows[0][0]) if rows else None

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        return [
            RunRecord.model_validate_json(r[0])
            for r in self._q("SELECT data FROM runs ORDER BY created_at DESC LIMIT ?", limit)
        ]

    # ------------------------------------------------------------------ verified graph, trajectories
    def verified_edges(self) -> dict[str, dict[str, list[str]]]:
        active = {r[0] for r in self._q("SELECT name FROM tools WHERE status = 'active'")}
        out: dict[str, dict[str, list[str]]] = {}
        for link_id, src, dst in self._q(
            "SELECT id, source_tool, target_tool FROM links WHERE status = 'verified' ORDER BY id"
        ):
            if src in active and dst in active and src != dst:
                out.setdefault(src, {}).setdefault(dst, []).append(link_id)
        return out

    def sample_paths(self, starts: list[str], min_hops: int, max_hops: int, per_start: int) -> list[list[str]]:
        """The same semantics as the Neo4j query (graph.paths)."""
        return enumerate_paths(self.verified_edges(), starts, min_hops, max_hops, per_start)

    def save_links(self, links: list[LinkRecord]) -> None:
        with self._tx() as c:
            c.executemany(
                "UPDATE links SET status = ?, score = ?, data = ? WHERE id = ?",
                [(lk.status, lk.score, lk.model_dump_json(), lk.id) for lk in links],
            )

    def save_batch(self, batch: dict[str, Any]) -> None:
        with self._tx() as c:
            c.execute(
                "INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?)",
                (
                    batch["id"],
                    batch.get("team", ""),
                    batch.get("created_at", ""),
                    json.dumps(batch, ensure_ascii=False),
                ),
            )

    def get_batch(self, batch_id: str) -> dict[str, Any] | None:
        rows = self._q("SELECT data FROM batches WHERE id = ?", batch_id)
        return json.loads(rows[0][0]) if rows else None

    def list_batches(self, team: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        rows = self._q(
            "SELECT data FROM batches WHERE ? IS NULL OR team = ? ORDER BY created_at DESC LIMIT ?", team, team, limit
        )
        return [json.loads(r[0]) for r in rows]

    def add_trajectories(self, batch_id: str, items: list[dict[str, Any]]) -> None:
        with self._tx() as c:
            c.executemany(
                "INSERT OR REPLACE INTO trajectories VALUES (?, ?, ?, ?)",
                [
                    (f"{batch_id}:{it['id']}", batch_id, it.get("seq", i), json.dumps(it, ensure_ascii=False))
                    for i, it in enumerate(items)
                ],
            )

    def list_trajectories(
        self, batch_id: str | None, offset: int = 0, limit: int = 100
    ) -> tuple[list[dict[str, Any]], int]:
        offset, limit = _page(offset, limit)
        total = self._q("SELECT count(*) FROM trajectories WHERE ? IS NULL OR batch_id = ?", batch_id, batch_id)[0][0]
        rows = self._q(
            "SELECT data FROM trajectories WHERE ? IS NULL OR batch_id = ? ORDER BY batch_id, seq LIMIT ? OFFSET ?",
            batch_id,
            batch_id,
            limit,
            offset,
        )
        return [json.loads(r[0]) for r in rows], int(total)

    # ------------------------------------------------------------------ tokens, stats
    def add_token(self, token: TokenRecord) -> None:
        with self._tx() as c:
            c.execute("INSERT OR REPLACE INTO tokens VALUES (?, ?)", (token.token_hash, token.model_dump_json()))

    def find_token(self, token_hash: str) -> TokenRecord | None:
        rows = self._q("SELECT data FROM tokens WHERE hash = ?", token_hash)
        return TokenRecord.model_validate_json(rows[0][0]) if rows else None

    def list_tokens(self) -> list[TokenRecord]:
        tokens = [TokenRecord.model_validate_json(r[0]) for r in self._q("SELECT data FROM tokens")]
        return sorted(tokens, key=lambda t: (t.created_at, t.id))

    def revoke_token(self, token_id: str) -> TokenRecord | None:
        with self._tx() as c:
            for token_hash, data in c.execute("SELECT hash, data FROM tokens").fetchall():
                token = TokenRecord.model_validate_json(data)
                if token.id == token_id:
                    if not token.revoked_at:
                        token = token.model_copy(update={"revoked_at": utcnow()})
                        c.execute("UPDATE tokens SET data = ? WHERE hash = ?", (token.model_dump_json(), token_hash))
                    return token
        return None

    def repair(self) -> dict[str, int]:
        """Nothing to rebuild: the embedded store keeps no derived relationships (the tool-level graph is a query
        over the links table, whose primary key already makes one row per link)."""
        pairs = sum(len(targets) for targets in self.verified_edges().values())
        return {
            "feeds_before": pairs,
            "feeds_after": pairs,
            "duplicate_verified_removed": 0,
            "stray_verified_removed": 0,
            "missing_verified_added": 0,
            "duplicate_structure_removed": 0,
        }

    def stats(self) -> GraphStats:
        apis = self._q("SELECT count(*) FROM apis")[0][0]
        tools = self._q("SELECT count(*), sum(status = 'active') FROM tools")[0]
        links = {s: n for s, n in self._q("SELECT status, count(*) FROM links GROUP BY status")}
        return {"apis": apis, "tools": tools[0], "active_tools": tools[1] or 0, "links": links}

    def reset(self) -> None:
        with self._tx() as c:
            for table in ("links", "tools", "apis", "tokens", "runs", "batches", "trajectories"):
                c.execute(f"DELETE FROM {table}")
