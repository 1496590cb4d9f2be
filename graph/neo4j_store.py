"""The Neo4j 5 store: one driver per process, every query from graph.queries, UNWIND batching, one
transaction per unit of work (except the registration of a very large document, written tool chunk by tool chunk:
see Neo4jStore.apply_registration)."""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import (
    ConnectionAcquisitionTimeoutError,
    ConnectionPoolError,
    ConstraintError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from core.egress import hide_addresses
from core.errors import StoreBusy, StoreUnavailable
from core.json_types import JsonObject
from core.settings import Neo4jSettings
from graph import queries
from graph.models import (
    ApiRecord,
    GraphStats,
    LinkRecord,
    RunRecord,
    TokenRecord,
    ToolRecord,
    utcnow,
)
from graph.neo4j_props import (
    CREATE_TOOLS,
    UPSERT_TOOLS,
    FlagRow,
    ToolRow,
    api_from,
    api_props,
    link_from,
    link_props,
    tool_from,
    tool_row,
)

log = logging.getLogger("kopa.neo4j")
BATCH = 2000
#: Registration: up to SINGLE_TX_ROWS tools + params + fields are written in one transaction; larger ones in
#: transactions of about CHUNK_ROWS rows (whole tools), WRITERS at a time (see Neo4jStore.apply_registration).
SINGLE_TX_ROWS = 10_000
CHUNK_ROWS = 2_000
WRITERS = 2
CHUNK_ATTEMPTS = 3
#: Driver timeouts (seconds): an unreachable Neo4j answers StoreUnavailable (HTTP 503) within a few seconds
#: instead of hanging a request for the driver defaults (30 s connect, 60 s acquisition, 30 s retries).
CONNECT_TIMEOUT_S = 2.0
ACQUIRE_TIMEOUT_S = 5.0
RETRY_TIME_S = 1.5
#: Connections per process; a request that waits ACQUIRE_TIMEOUT_S for one hears StoreBusy (503, Retry-After).
POOL_SIZE = 20
#: Largest list index Cypher slices accept (Java int); offsets beyond it are clamped: the page is empty anyway.
MAX_INDEX = 2**31 - 1
_UNAVAILABLE = (ServiceUnavailable, SessionExpired, ConnectionPoolError)


class _ExpectedDeadlockRetries(logging.Filter):
    """The driver logs every retry of a managed transaction as a WARNING. Writers in different processes (Celery
    workers saving outcomes, a registration next to a verification) take locks on the same dense Tool, Field and
    Param nodes in no common order, so Neo4j now and then aborts one of two waiting transactions with
    DeadlockDetected, and the driver retries it: that is Neo4j's documented way of resolving them, and a write that
    still fails after the retries raises (and is reported). Those retries are expected: logged at DEBUG, counted in
    `retries`; every other driver warning stays a warning. (Within one process, link outcomes are written one at a
    time: see Neo4jStore.save_link.)"""

    retries = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if (
            record.levelno == logging.WARNING
            and str(record.msg).startswith("Transaction failed and will be retried")
            and "DeadlockDetected" in record.getMessage()
        ):
            type(self).retries += 1
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


logging.getLogger("neo4j.session").addFilter(_ExpectedDeadlockRetries())


def _page(offset: int, limit: int) -> tuple[int, int]:
    """Offsets and limits a Cypher slice can take whatever the caller passed (negative counts as 0)."""
    limit = max(0, min(int(limit), MAX_INDEX // 2))
    offset = max(0, min(int(offset), MAX_INDEX - limit))
    return offset, limit


def _rows_of(t: ToolRecord) -> int:
    return 1 + len(t.params) + len(t.fields)


def _chunks(tools: list[ToolRecord]) -> list[list[ToolRecord]]:
    """Consecutive tools in chunks of about CHUNK_ROWS rows (a tool with its params and fields is never split)."""
    out: list[list[ToolRecord]] = []
    size = CHUNK_ROWS
    for t in tools:
        if size >= CHUNK_ROWS:
            out.append([])
            size = 0
        out[-1].append(t)
        size += _rows_of(t)
    return out


def _flag_row(tool: str, flag: tuple[list[str], list[str]]) -> FlagRow:
    return {"tool": tool, "params": list(flag[0]), "fields": list(flag[1])}


def _chunk_flags(chunk: list[ToolRecord], flags: dict[str, tuple[list[str], list[str]]]) -> list[FlagRow]:
    return [_flag_row(t.name, flags[t.name]) for t in chunk if t.name in flags]


def _flag(tx: neo4j.ManagedTransaction, flag_rows: list[FlagRow]) -> set[str]:
    """Mark the links on the given params and fields for re-verification; their ids."""
    ids: set[str] = set()
    for i in range(0, len(flag_rows), BATCH):
        rec = tx.run(queries.FLAG_LINKS, flags=flag_rows[i : i + BATCH]).single()
        ids.update(rec["ids"] if rec else ())
    return ids


def _write_tools(tx: neo4j.ManagedTransaction, rows: list[ToolRow], flag_rows: list[FlagRow], create: bool) -> set[str]:
    """Write tool rows (tool_row): those no Tool node has the name of yet with CREATE_TOOLS (when `create`), the
    others with UPSERT_TOOLS; then flag the links of flag_rows. Returns the ids of the flagged links."""
    existing: set[str] = set()
    if create:
        existing = {r["name"] for r in tx.run(queries.EXISTING_TOOLS, names=[r["name"] for r in rows])}
    new = [r for r in rows if create and r["name"] not in existing]
    old = [r for r in rows if not create or r["name"] in existing]
    if new:
        tx.run(CREATE_TOOLS, tools=new).consume()
    if old:
        tx.run(UPSERT_TOOLS, tools=old).consume()
    return _flag(tx, flag_rows)


class Neo4jStore:
    backend = "neo4j"

    def __init__(self, settings: Neo4jSettings) -> None:
        self.settings = settings
        password = settings.password.get_secret_value()
        auth = (settings.user, password) if password else None
        self.driver = GraphDatabase.driver(
            settings.uri,
            auth=auth,
            max_connection_pool_size=POOL_SIZE,
            connection_timeout=CONNECT_TIMEOUT_S,
            connection_acquisition_timeout=ACQUIRE_TIMEOUT_S,
            max_transaction_retry_time=RETRY_TIME_S,
            liveness_check_timeout=30.0,
            notifications_min_severity="OFF",
        )
        self.db = settings.database
        #: one link outcome written at a time per store: a verification run saves outcomes from many threads, and
        #: concurrent saves deadlock on the tools they share (20 driver retries, ~1 s each, in a 93-link run).
        self._outcomes = threading.Lock()

    # ------------------------------------------------------------------ plumbing
    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        """The error callers (and response bodies) see: no internal address in it; the log has the full text.
        A pool-acquisition timeout means Neo4j answers but every connection is busy: StoreBusy, "retry"."""
        if isinstance(exc, ConnectionAcquisitionTimeoutError):
            log.warning("Neo4j connection pool exhausted (%s)", exc)
            return StoreBusy(
                f"the graph store is busy (all {POOL_SIZE} connections in use for "
                f"{ACQUIRE_TIMEOUT_S:g} s); retry shortly"
            )
        log.warning("Neo4j is not reachable at %s: %s", self.settings.uri, exc)
        return StoreUnavailable(f"Neo4j is not reachable ({type(exc).__name__}: {hide_addresses(str(exc))[:200]})")

    def _read(self, query: str, **params: Any) -> list[neo4j.Record]:
        """An auto-commit read with one immediate second attempt (a pooled connection that died with a restart),
        no backoff: when Neo4j is away the caller hears StoreUnavailable within about CONNECT_TIMEOUT_S."""
        for attempt in (1, 2):
            try:
                with self.driver.session(database=self.db, default_access_mode=neo4j.READ_ACCESS) as session:
                    return list(session.run(query, params))
            except _UNAVAILABLE as exc:  # incl. no connection from the pool within ACQUIRE_TIMEOUT_S (busy)
                if attempt == 2 or isinstance(exc, ConnectionPoolError):
                    raise self._unavailable(exc) from exc
        raise AssertionError("unreachable")

    def _write(self, work: Any) -> Any:
        try:
            with self.driver.session(database=self.db) as session:
                return session.execute_write(work)
        except _UNAVAILABLE as exc:
            raise self._unavailable(exc) from exc

    def init_schema(self) -> None:
        try:
            with self.driver.session(database=self.db) as session:
                for stmt in queries.SCHEMA:
                    session.run(stmt).consume()
                session.run(queries.AWAIT_INDEXES).consume()
        except _UNAVAILABLE as exc:
            raise self._unavailable(exc) from exc

    def ping(self) -> None:
        """One round trip, no retries: readiness answers within CONNECT_TIMEOUT_S when Neo4j is away."""
        try:
            with self.driver.session(database=self.db, default_access_mode=neo4j.READ_ACCESS) as session:
                session.run(queries.PING).consume()
        except (*_UNAVAILABLE, OSError) as exc:
            raise self._unavailable(exc) from exc

    def close(self) -> None:
        self.driver.close()

    # ------------------------------------------------------------------ APIs and tools
    def apply_registration(
        self, api: ApiRecord, upsert: list[ToolRecord], retire: list[str], flags: dict[str, tuple[list[str], list[str]]]
    ) -> int:
        """One transaction up to SINGLE_TX_ROWS tools, params and fields (every document of the catalog). A larger
        one does not fit one transaction (a 20 MB document is ~120,000 nodes, and in one transaction it ran the
        1 GB Neo4j heap out of memory at commit); its tools go in chunks of about CHUNK_ROWS rows, each chunk one
        transaction with its tools, their params and fields and the flags of their links, WRITERS at a time; the
        API is written first, retirements last. Readers may see such a registration half done, and one that
        fails half way leaves every tool either as it was or as the document says: registering the document
        again completes it (what is written already then diffs as unchanged)."""
        chunks = _chunks(upsert)
        rows = sum(_rows_of(t) for t in upsert)
        retire_flags = [_flag_row(n, flags[n]) for n in retire if n in flags]
        upserted = {t.name for t in upsert}
        stray = [_flag_row(n, f) for n, f in flags.items() if n not in upserted and n not in retire]
        api_map = api_props(api)

        def finish(tx: neo4j.ManagedTransaction) -> set[str]:
            if retire:
                tx.run(queries.RETIRE_TOOLS, names=retire, now=utcnow()).consume()
            return _flag(tx, retire_flags + stray)

        if rows <= SINGLE_TX_ROWS:
            built = [[tool_row(t) for t in chunk] for chunk in chunks]

            def work(tx: neo4j.ManagedTransaction, create: bool) -> int:
                tx.run(queries.UPSERT_API, api=api_map).consume()
                ids: set[str] = set()
                for chunk, chunk_rows in zip(chunks, built, strict=True):
                    ids |= _write_tools(tx, chunk_rows, _chunk_flags(chunk, flags), create)
                return len(ids | finish(tx))

            try:
                return int(self._write(lambda tx: work(tx, True)))
            except ConstraintError:  # a concurrent registration created one of the new tools first
                return int(self._write(lambda tx: work(tx, False)))

        self._write(lambda tx: tx.run(queries.UPSERT_API, api=api_map).consume())
        ids: set[str] = set()
        with ThreadPoolExecutor(max_workers=WRITERS, thread_name_prefix="kopa-register") as pool:
            futures = [pool.submit(self._write_chunk, chunk, _chunk_flags(chunk, flags)) for chunk in chunks]
            try:
                for fut in as_completed(futures):
                    ids |= fut.result()
            except BaseException:
                for fut in futures:
                    fut.cancel()
                raise
        ids |= self._write(finish)
        return len(ids)

    def _write_chunk(self, chunk: list[ToolRecord], flag_rows: list[FlagRow]) -> set[str]:
        """One chunk of a large registration in its own transaction (see apply_registration). Chunks written at
        the same time can deadlock on the links they flag (Neo4j then fails one of them with a transient error):
        a chunk is tried again up to CHUNK_ATTEMPTS times, beyond the driver's own retries."""
        rows = [tool_row(t) for t in chunk]
        create = True
        for attempt in range(1, CHUNK_ATTEMPTS + 1):
            try:
                ids: set[str] = self._write(lambda tx, c=create: _write_tools(tx, rows, flag_rows, c))
                return ids
            except ConstraintError:  # a concurrent registration created one of these tools first
                if not create:
                    raise
                create = False
            except TransientError:
                if attempt == CHUNK_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    def list_apis(self, offset: int = 0, limit: int = 50) -> tuple[list[ApiRecord], int]:
        offset, limit = _page(offset, limit)
        recs = self._read(queries.LIST_APIS, offset=offset, limit=limit)
        return [api_from(r) for r in recs[0]["rows"]], int(recs[0]["total"])

    def get_api(self, api_id: str) -> ApiRecord | None:
        recs = self._read(queries.GET_API, id=api_id)
        return api_from(recs[0]["api"]) if recs else None

    def delete_api(self, api_id: str) -> int:
        def work(tx: neo4j.ManagedTransaction) -> int:
            rec = tx.run(queries.DELETE_API, id=api_id).single()
            return int(rec["removed"]) if rec else -1

        return int(self._write(work))

    def tools_of_api(self, api_id: str) -> list[ToolRecord]:
        return [tool_from(r["tool"], r["params"], r["fields"]) for r in self._read(queries.TOOLS_OF_API, api_id=api_id)]

    def tool_owners(self, names: list[str]) -> dict[str, str]:
        return {r["name"]: r["api_id"] for r in self._read(queries.TOOL_OWNERS, names=names)}

    def list_tools(
        self,
        offset: int = 0,
        limit: int = 50,
        api_id: str | None = None,
        q: str | None = None,
        status: str | None = "active",
    ) -> tuple[list[ToolRecord], int]:
        offset, limit = _page(offset, limit)
        recs = self._read(queries.LIST_TOOLS, offset=offset, limit=limit, api_id=api_id, q=q, status=status)
        total = int(recs[0]["total"]) if recs else 0
        return [tool_from(r["tool"], r["params"], r["fields"]) for r in recs if r["tool"] is not None], total

    def all_tools(self, status: str | None = "active") -> list[ToolRecord]:
        return [tool_from(r["tool"], r["params"], r["fields"]) for r in self._read(queries.ALL_TOOLS, status=status)]

    def get_tool(self, name: str) -> ToolRecord | None:
        recs = self._read(queries.GET_TOOL, name=name)
        return tool_from(recs[0]["tool"], recs[0]["params"], recs[0]["fields"]) if recs else None

    # ------------------------------------------------------------------ links
    def upsert_candidates(self, links: list[LinkRecord]) -> int:
        rows = [
            {
                "id": lk.id,
                "field_id": f"{lk.source_tool}|{lk.source_field}",
                "param_id": f"{lk.target_tool}|{lk.target_param}",
                "props": link_props(lk),
            }
            for lk in links
        ]

        def work(tx: neo4j.ManagedTransaction) -> int:
            n = 0
            for i in range(0, len(rows), BATCH):
                rec = tx.run(queries.UPSERT_CANDIDATES, links=rows[i : i + BATCH]).single()
                n += int(rec["n"]) if rec else 0
            return n

        return int(self._write(work))

    def list_links(
        self, status: str | None = None, tool: str | None = None, offset: int = 0, limit: int = 100
    ) -> tuple[list[LinkRecord], int]:
        offset, limit = _page(offset, limit)
        recs = self._read(queries.LIST_LINKS, status=status, tool=tool, offset=offset, limit=limit)
        return [link_from(r) for r in recs[0]["rows"]], int(recs[0]["total"])

    def get_link(self, link_id: str) -> LinkRecord | None:
        recs = self._read(queries.GET_LINK, id=link_id)
        return link_from(recs[0]["link"]) if recs else None

    def save_link(self, link: LinkRecord) -> None:
        def work(tx: neo4j.ManagedTransaction) -> None:
            tx.run(queries.SAVE_LINK, id=link.id, props=link_props(link)).consume()
            tx.run(queries.REFRESH_FEEDS_MANY, pairs=[[link.source_tool, link.target_tool]]).consume()

        with self._outcomes:
            self._write(work)

    def run_counts(self, run_id: str) -> dict[str, int]:
        return {r["status"]: int(r["n"]) for r in self._read(queries.RUN_COUNTS, run=run_id)}

    # ------------------------------------------------------------------ runs
    def save_run(self, run: RunRecord) -> None:
        self._write(
            lambda tx: tx.run(
                queries.SAVE_RUN, id=run.id, data=run.model_dump_json(), created_at=run.created_at
            ).consume()
        )

    def get_run(self, run_id: str) -> RunRecord | None:
        recs = self._read(queries.GET_RUN, id=run_id)
        return RunRecord.model_validate_json(recs[0]["data"]) if recs else None

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        return [RunRecord.model_validate_json(r["data"]) for r in self._read(queries.LIST_RUNS, limit=limit)]

    # ------------------------------------------------------------------ verified graph, trajectories
    def verified_edges(self) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {}
        for r in self._read(queries.VERIFIED_EDGES):
            out.setdefault(r["source"], {})[r["target"]] = sorted(r["links"] or [])
        return out

    def sample_paths(self, starts: list[str], min_hops: int, max_hops: int, per_start: int) -> list[list[str]]:
        recs = self._read(queries.sample_paths_query(min_hops, max_hops), starts=starts, per_start=per_start)
        return [list(r["path"]) for r in recs]

    def save_batch(self, batch: dict[str, Any]) -> None:
        self._write(
            lambda tx: tx.run(
                queries.SAVE_BATCH,
                id=batch["id"],
                data=json.dumps(batch, ensure_ascii=False),
                team=batch.get("team", ""),
                created_at=batch.get("created_at", ""),
            ).consume()
        )

    def get_batch(self, batch_id: str) -> dict[str, Any] | None:
        recs = self._read(queries.GET_BATCH, id=batch_id)
        return json.loads(recs[0]["data"]) if recs else None

    def list_batches(self, team: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        return [json.loads(r["data"]) for r in self._read(queries.LIST_BATCHES, team=team, limit=limit)]

    def add_trajectories(self, batch_id: str, items: list[dict[str, Any]]) -> None:
        rows = [
            {"id": f"{batch_id}:{it['id']}", "seq": it.get("seq", i), "data": json.dumps(it, ensure_ascii=False)}
            for i, it in enumerate(items)
        ]
        self._write(lambda tx: tx.run(queries.ADD_TRAJECTORIES, batch_id=batch_id, items=rows).consume())

    def list_trajectories(
        self, batch_id: str | None, offset: int = 0, limit: int = 100
    ) -> tuple[list[dict[str, Any]], int]:
        offset, limit = _page(offset, limit)
        rec = self._read(queries.LIST_TRAJECTORIES, batch_id=batch_id, offset=offset, limit=limit)[0]
        return [json.loads(d) for d in rec["rows"]], int(rec["total"])

    def save_links(self, links: list[LinkRecord]) -> None:
        """Many outcomes in few transactions (bulk loads, benchmarks); same effects as save_link."""
        rows = [{"id": lk.id, "props": link_props(lk)} for lk in links]
        pairs = sorted({(lk.source_tool, lk.target_tool) for lk in links})

        def work(tx: neo4j.ManagedTransaction) -> None:
            for i in range(0, len(rows), BATCH):
                tx.run(queries.SAVE_LINKS, links=rows[i : i + BATCH]).consume()
            for i in range(0, len(pairs), BATCH):
                tx.run(queries.REFRESH_FEEDS_MANY, pairs=[list(p) for p in pairs[i : i + BATCH]]).consume()

        self._write(work)

    # ------------------------------------------------------------------ tokens, stats
    def add_token(self, token: TokenRecord) -> None:
        self._write(lambda tx: tx.run(queries.ADD_TOKEN, token=token.model_dump()).consume())

    def find_token(self, token_hash: str) -> TokenRecord | None:
        recs = self._read(queries.FIND_TOKEN, hash=token_hash)
        return TokenRecord.model_validate(recs[0]["token"]) if recs else None

    def list_tokens(self) -> list[TokenRecord]:
        return [TokenRecord.model_validate(r["token"]) for r in self._read(queries.LIST_TOKENS)]

    def revoke_token(self, token_id: str) -> TokenRecord | None:
        def work(tx: neo4j.ManagedTransaction) -> JsonObject | None:
            rec = tx.run(queries.REVOKE_TOKEN, id=token_id, now=utcnow()).single()
            return dict(rec["token"]) if rec else None

        props = self._write(work)
        return TokenRecord.model_validate(props) if props else None

    # ------------------------------------------------------------------ repair
    def repair(self) -> dict[str, int]:
        """Rebuild the derived relationships of a graph written before they were keyed: one FEEDS per verified
        tool pair, one VERIFIED per verified link, no parallel HAS_TOOL/HAS_PARAM/PRODUCES. Idempotent."""
        before = int(self._read(queries.REPAIR_COUNT_FEEDS)[0]["n"])
        pairs = [[r["source"], r["target"]] for r in self._read(queries.REPAIR_VERIFIED_PAIRS)]
        try:
            with self.driver.session(database=self.db) as session:
                session.run(queries.REPAIR_DROP_FEEDS).consume()  # implicit transaction (CALL ... IN TRANSACTIONS)
        except _UNAVAILABLE as exc:
            raise self._unavailable(exc) from exc

        def work(tx: neo4j.ManagedTransaction) -> dict[str, int]:
            for i in range(0, len(pairs), BATCH):
                tx.run(queries.REFRESH_FEEDS_MANY, pairs=pairs[i : i + BATCH]).consume()
            out = {}
            for key, query in (
                ("duplicate_verified_removed", queries.REPAIR_DUPLICATE_VERIFIED),
                ("stray_verified_removed", queries.REPAIR_STRAY_VERIFIED),
                ("missing_verified_added", queries.REPAIR_MISSING_VERIFIED),
                ("duplicate_structure_removed", queries.REPAIR_DUPLICATE_STRUCTURE),
            ):
                rec = tx.run(query).single()
                out[key] = int(rec[0]) if rec else 0
            return out

        counts = self._write(work)
        after = int(self._read(queries.REPAIR_COUNT_FEEDS)[0]["n"])
        return {"feeds_before": before, "feeds_after": after, **counts}

    def stats(self) -> GraphStats:
        rec = self._read(queries.STATS)[0]
        return {
            "apis": rec["apis"],
            "tools": rec["tools"],
            "active_tools": rec["active"],
            "links": {s: n for s, n in rec["links"] if s is not None},
        }

    def reset(self) -> None:
        try:
            with self.driver.session(database=self.db) as session:
                session.run(queries.RESET).consume()
        except Neo4jError as exc:
            raise StoreUnavailable(str(exc)) from exc
