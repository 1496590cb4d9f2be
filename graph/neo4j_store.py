"""The Neo4j 5 store: one driver per process, every query from graph.queries, UNWIND batching, one
transaction per unit of work."""

from __future__ import annotations

import json
from typing import Any

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import ConnectionPoolError, Neo4jError, ServiceUnavailable, SessionExpired

from core.errors import StoreUnavailable
from core.settings import Neo4jSettings
from graph import queries as Q
from graph.models import (
    ApiRecord,
    FieldRecord,
    LinkRecord,
    ParamRecord,
    RunRecord,
    TokenRecord,
    ToolRecord,
    utcnow,
)
from graph.openapi import field_hash, param_hash

BATCH = 2000
#: Driver timeouts (seconds): an unreachable Neo4j answers StoreUnavailable (HTTP 503) within a few seconds
#: instead of hanging a request for the driver defaults (30 s connect, 60 s acquisition, 30 s retries).
CONNECT_TIMEOUT_S = 2.0
ACQUIRE_TIMEOUT_S = 5.0
RETRY_TIME_S = 1.5
#: Largest list index Cypher slices accept (Java int); offsets beyond it are clamped: the page is empty anyway.
MAX_INDEX = 2**31 - 1
_UNAVAILABLE = (ServiceUnavailable, SessionExpired, ConnectionPoolError)


def _page(offset: int, limit: int) -> tuple[int, int]:
    """Offsets and limits a Cypher slice can take whatever the caller passed (negative counts as 0)."""
    limit = max(0, min(int(limit), MAX_INDEX // 2))
    offset = max(0, min(int(offset), MAX_INDEX - limit))
    return offset, limit
_TOOL_JSON = ("json_schema",)
_LINK_JSON = ("transform", "evidence", "history")


def _api_props(api: ApiRecord) -> dict[str, Any]:
    d = api.model_dump(exclude={"auth"})
    d["auth"] = api.auth.model_dump_json()
    return {k: v for k, v in d.items() if v is not None}


def _api_from(props: dict[str, Any]) -> ApiRecord:
    props = dict(props)
    props["auth"] = json.loads(props.get("auth") or "{}")
    return ApiRecord.model_validate(props)


def _tool_rows(tools: list[ToolRecord]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    trows, prows, frows = [], [], []
    for t in tools:
        props = t.model_dump(exclude={"params", "fields"})
        for k in _TOOL_JSON:
            props[k] = json.dumps(props[k], ensure_ascii=False)
        props = {k: v for k, v in props.items() if v is not None}
        pids = [f"{t.name}|{p.key()}" for p in t.params]
        fids = [f"{t.name}|{f.name}" for f in t.fields]
        trows.append({"name": t.name, "api_id": t.api_id, "props": props, "param_ids": pids, "field_ids": fids})
        for p, pid in zip(t.params, pids, strict=True):
            row = p.model_dump()
            row.update({"id": pid, "tool": t.name, "key": p.key(), "hash": param_hash(p),
                        "example": json.dumps(p.example, ensure_ascii=False), "default": json.dumps(p.default, ensure_ascii=False)})
            prows.append({k: v for k, v in row.items() if v is not None})
        for f, fid in zip(t.fields, fids, strict=True):
            row = f.model_dump()
            row.update({"id": fid, "tool": t.name, "hash": field_hash(f), "example": json.dumps(f.example, ensure_ascii=False)})
            frows.append({k: v for k, v in row.items() if v is not None})
    return trows, prows, frows


def _tool_from(tool: dict[str, Any], params: list[dict[str, Any]], fields: list[dict[str, Any]]) -> ToolRecord:
    tool = dict(tool)
    for k in _TOOL_JSON:
        tool[k] = json.loads(tool.get(k) or "{}")
    plist = []
    for p in params:
        p = {k: v for k, v in p.items() if k not in ("id", "tool", "key", "hash", "removed")}
        p["example"], p["default"] = json.loads(p.get("example") or "null"), json.loads(p.get("default") or "null")
        plist.append(ParamRecord.model_validate(p))
    flist = []
    for f in fields:
        f = {k: v for k, v in f.items() if k not in ("id", "tool", "hash", "removed")}
        f["example"] = json.loads(f.get("example") or "null")
        flist.append(FieldRecord.model_validate(f))
    order = {n: i for i, n in enumerate(tool.get("param_order") or [])}
    tool.pop("param_order", None)
    plist.sort(key=lambda p: order.get(p.key(), len(order)))
    forder = {n: i for i, n in enumerate(tool.pop("field_order", None) or [])}
    flist.sort(key=lambda f: forder.get(f.name, len(forder)))
    return ToolRecord.model_validate({**tool, "params": plist, "fields": flist})


def _link_props(link: LinkRecord) -> dict[str, Any]:
    d = link.model_dump()
    for k in _LINK_JSON:
        d[k] = json.dumps(d[k], ensure_ascii=False)
    return d


def _link_from(props: dict[str, Any]) -> LinkRecord:
    props = dict(props)
    for k in _LINK_JSON:
        props[k] = json.loads(props.get(k) or ("[]" if k == "history" else "{}"))
    return LinkRecord.model_validate(props)


class Neo4jStore:
    backend = "neo4j"

    def __init__(self, settings: Neo4jSettings) -> None:
        self.settings = settings
        password = settings.password.get_secret_value()
        auth = (settings.user, password) if password else None
        self.driver = GraphDatabase.driver(
            settings.uri, auth=auth, max_connection_pool_size=20, connection_timeout=CONNECT_TIMEOUT_S,
            connection_acquisition_timeout=ACQUIRE_TIMEOUT_S, max_transaction_retry_time=RETRY_TIME_S,
            liveness_check_timeout=30.0, notifications_min_severity="OFF")
        self.db = settings.database

    # ------------------------------------------------------------------ plumbing
    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        return StoreUnavailable(f"Neo4j is not reachable at {self.settings.uri}: {exc}")

    def _read(self, query: str, **params: Any) -> list[neo4j.Record]:
        """An auto-commit read with one immediate second attempt (a pooled connection that died with a restart),
        no backoff: when Neo4j is away the caller hears StoreUnavailable within about CONNECT_TIMEOUT_S."""
        for attempt in (1, 2):
            try:
                with self.driver.session(database=self.db, default_access_mode=neo4j.READ_ACCESS) as session:
                    return list(session.run(query, params))
            except _UNAVAILABLE as exc:  # incl. no connection from the pool within ACQUIRE_TIMEOUT_S
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
                for stmt in Q.SCHEMA:
                    session.run(stmt).consume()
                session.run(Q.AWAIT_INDEXES).consume()
        except _UNAVAILABLE as exc:
            raise self._unavailable(exc) from exc

    def ping(self) -> None:
        """One round trip, no retries: readiness answers within CONNECT_TIMEOUT_S when Neo4j is away."""
        try:
            with self.driver.session(database=self.db, default_access_mode=neo4j.READ_ACCESS) as session:
                session.run(Q.PING).consume()
        except (*_UNAVAILABLE, OSError) as exc:
            raise self._unavailable(exc) from exc

    def close(self) -> None:
        self.driver.close()

    # ------------------------------------------------------------------ APIs and tools
    def apply_registration(self, api: ApiRecord, upsert: list[ToolRecord], retire: list[str],
                           flags: dict[str, tuple[list[str], list[str]]]) -> int:
        trows, prows, frows = _tool_rows(upsert)
        for row, tool in zip(trows, upsert, strict=True):
            row["props"]["param_order"] = [p.key() for p in tool.params]
            row["props"]["field_order"] = [f.name for f in tool.fields]
        flag_rows = [{"tool": t, "params": p, "fields": f} for t, (p, f) in flags.items()]

        def work(tx: neo4j.ManagedTransaction) -> int:
            tx.run(Q.UPSERT_API, api=_api_props(api)).consume()
            for i in range(0, len(trows), BATCH):
                tx.run(Q.UPSERT_TOOLS, tools=trows[i:i + BATCH]).consume()
            for i in range(0, len(prows), BATCH * 5):
                tx.run(Q.UPSERT_PARAMS, params=prows[i:i + BATCH * 5]).consume()
            for i in range(0, len(frows), BATCH * 5):
                tx.run(Q.UPSERT_FIELDS, fields=frows[i:i + BATCH * 5]).consume()
            if retire:
                tx.run(Q.RETIRE_TOOLS, names=retire, now=utcnow()).consume()
            if flag_rows:
                rec = tx.run(Q.FLAG_LINKS, flags=flag_rows).single()
                return int(rec["flagged"]) if rec else 0
            return 0

        return int(self._write(work))

    def list_apis(self, offset: int = 0, limit: int = 50) -> tuple[list[ApiRecord], int]:
        offset, limit = _page(offset, limit)
        recs = self._read(Q.LIST_APIS, offset=offset, limit=limit)
        return [_api_from(r) for r in recs[0]["rows"]], int(recs[0]["total"])

    def get_api(self, api_id: str) -> ApiRecord | None:
        recs = self._read(Q.GET_API, id=api_id)
        return _api_from(recs[0]["api"]) if recs else None

    def delete_api(self, api_id: str) -> int:
        def work(tx: neo4j.ManagedTransaction) -> int:
            rec = tx.run(Q.DELETE_API, id=api_id).single()
            return int(rec["removed"]) if rec else -1

        return int(self._write(work))

    def tools_of_api(self, api_id: str) -> list[ToolRecord]:
        return [_tool_from(r["tool"], r["params"], r["fields"]) for r in self._read(Q.TOOLS_OF_API, api_id=api_id)]

    def tool_owners(self, names: list[str]) -> dict[str, str]:
        return {r["name"]: r["api_id"] for r in self._read(Q.TOOL_OWNERS, names=names)}

    def list_tools(self, offset: int = 0, limit: int = 50, api_id: str | None = None, q: str | None = None,
                   status: str | None = "active") -> tuple[list[ToolRecord], int]:
        offset, limit = _page(offset, limit)
        recs = self._read(Q.LIST_TOOLS, offset=offset, limit=limit, api_id=api_id, q=q, status=status)
        total = int(recs[0]["total"]) if recs else 0
        return [_tool_from(r["tool"], r["params"], r["fields"]) for r in recs if r["tool"] is not None], total

    def all_tools(self, status: str | None = "active") -> list[ToolRecord]:
        return [_tool_from(r["tool"], r["params"], r["fields"]) for r in self._read(Q.ALL_TOOLS, status=status)]

    def get_tool(self, name: str) -> ToolRecord | None:
        recs = self._read(Q.GET_TOOL, name=name)
        return _tool_from(recs[0]["tool"], recs[0]["params"], recs[0]["fields"]) if recs else None

    # ------------------------------------------------------------------ links
    def upsert_candidates(self, links: list[LinkRecord]) -> int:
        rows = [{"id": lk.id, "field_id": f"{lk.source_tool}|{lk.source_field}",
                 "param_id": f"{lk.target_tool}|{lk.target_param}", "props": _link_props(lk)} for lk in links]

        def work(tx: neo4j.ManagedTransaction) -> int:
            n = 0
            for i in range(0, len(rows), BATCH):
                rec = tx.run(Q.UPSERT_CANDIDATES, links=rows[i:i + BATCH]).single()
                n += int(rec["n"]) if rec else 0
            return n

        return int(self._write(work))

    def list_links(self, status: str | None = None, tool: str | None = None, offset: int = 0,
                   limit: int = 100) -> tuple[list[LinkRecord], int]:
        offset, limit = _page(offset, limit)
        recs = self._read(Q.LIST_LINKS, status=status, tool=tool, offset=offset, limit=limit)
        return [_link_from(r) for r in recs[0]["rows"]], int(recs[0]["total"])

    def get_link(self, link_id: str) -> LinkRecord | None:
        recs = self._read(Q.GET_LINK, id=link_id)
        return _link_from(recs[0]["link"]) if recs else None

    def save_link(self, link: LinkRecord) -> None:
        def work(tx: neo4j.ManagedTransaction) -> None:
            tx.run(Q.SAVE_LINK, id=link.id, props=_link_props(link)).consume()
            tx.run(Q.REFRESH_FEEDS_MANY, pairs=[[link.source_tool, link.target_tool]]).consume()

        self._write(work)

    def run_counts(self, run_id: str) -> dict[str, int]:
        return {r["status"]: int(r["n"]) for r in self._read(Q.RUN_COUNTS, run=run_id)}

    # ------------------------------------------------------------------ runs
    def save_run(self, run: RunRecord) -> None:
        self._write(lambda tx: tx.run(Q.SAVE_RUN, id=run.id, data=run.model_dump_json(),
                                      created_at=run.created_at).consume())

    def get_run(self, run_id: str) -> RunRecord | None:
        recs = self._read(Q.GET_RUN, id=run_id)
        return RunRecord.model_validate_json(recs[0]["data"]) if recs else None

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        return [RunRecord.model_validate_json(r["data"]) for r in self._read(Q.LIST_RUNS, limit=limit)]

    # ------------------------------------------------------------------ verified graph, trajectories
    def verified_edges(self) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {}
        for r in self._read(Q.VERIFIED_EDGES):
            out.setdefault(r["source"], {})[r["target"]] = sorted(r["links"] or [])
        return out

    def sample_paths(self, starts: list[str], min_hops: int, max_hops: int, per_start: int) -> list[list[str]]:
        recs = self._read(Q.sample_paths_query(min_hops, max_hops), starts=starts, per_start=per_start)
        return [list(r["path"]) for r in recs]

    def save_batch(self, batch: dict[str, Any]) -> None:
        self._write(lambda tx: tx.run(Q.SAVE_BATCH, id=batch["id"], data=json.dumps(batch, ensure_ascii=False),
                                      team=batch.get("team", ""), created_at=batch.get("created_at", "")).consume())

    def get_batch(self, batch_id: str) -> dict[str, Any] | None:
        recs = self._read(Q.GET_BATCH, id=batch_id)
        return json.loads(recs[0]["data"]) if recs else None

    def list_batches(self, team: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        return [json.loads(r["data"]) for r in self._read(Q.LIST_BATCHES, team=team, limit=limit)]

    def add_trajectories(self, batch_id: str, items: list[dict[str, Any]]) -> None:
        rows = [{"id": f"{batch_id}:{it['id']}", "seq": it.get("seq", i), "data": json.dumps(it, ensure_ascii=False)}
                for i, it in enumerate(items)]
        self._write(lambda tx: tx.run(Q.ADD_TRAJECTORIES, batch_id=batch_id, items=rows).consume())

    def list_trajectories(self, batch_id: str | None, offset: int = 0, limit: int = 100) -> tuple[list[dict[str, Any]], int]:
        offset, limit = _page(offset, limit)
        rec = self._read(Q.LIST_TRAJECTORIES, batch_id=batch_id, offset=offset, limit=limit)[0]
        return [json.loads(d) for d in rec["rows"]], int(rec["total"])

    def save_links(self, links: list[LinkRecord]) -> None:
        """Many outcomes in few transactions (bulk loads, benchmarks); same effects as save_link."""
        rows = [{"id": lk.id, "props": _link_props(lk)} for lk in links]
        pairs = sorted({(lk.source_tool, lk.target_tool) for lk in links})

        def work(tx: neo4j.ManagedTransaction) -> None:
            for i in range(0, len(rows), BATCH):
                tx.run(Q.SAVE_LINKS, links=rows[i:i + BATCH]).consume()
            for i in range(0, len(pairs), BATCH):
                tx.run(Q.REFRESH_FEEDS_MANY, pairs=[list(p) for p in pairs[i:i + BATCH]]).consume()

        self._write(work)

    # ------------------------------------------------------------------ tokens, stats
    def add_token(self, token: TokenRecord) -> None:
        self._write(lambda tx: tx.run(Q.ADD_TOKEN, token=token.model_dump()).consume())

    def find_token(self, token_hash: str) -> TokenRecord | None:
        recs = self._read(Q.FIND_TOKEN, hash=token_hash)
        return TokenRecord.model_validate(recs[0]["token"]) if recs else None

    def list_tokens(self) -> list[TokenRecord]:
        return [TokenRecord.model_validate(r["token"]) for r in self._read(Q.LIST_TOKENS)]

    def revoke_token(self, token_id: str) -> TokenRecord | None:
        def work(tx: neo4j.ManagedTransaction) -> dict[str, Any] | None:
            rec = tx.run(Q.REVOKE_TOKEN, id=token_id, now=utcnow()).single()
            return dict(rec["token"]) if rec else None

        props = self._write(work)
        return TokenRecord.model_validate(props) if props else None

    # ------------------------------------------------------------------ repair
    def repair(self) -> dict[str, int]:
        """Rebuild the derived relationships of a graph written before they were keyed: one FEEDS per verified
        tool pair, one VERIFIED per verified link, no parallel HAS_TOOL/HAS_PARAM/PRODUCES. Idempotent."""
        before = int(self._read(Q.REPAIR_COUNT_FEEDS)[0]["n"])
        pairs = [[r["source"], r["target"]] for r in self._read(Q.REPAIR_VERIFIED_PAIRS)]
        try:
            with self.driver.session(database=self.db) as session:
                session.run(Q.REPAIR_DROP_FEEDS).consume()  # implicit transaction (CALL ... IN TRANSACTIONS)
        except _UNAVAILABLE as exc:
            raise self._unavailable(exc) from exc

        def work(tx: neo4j.ManagedTransaction) -> dict[str, int]:
            for i in range(0, len(pairs), BATCH):
                tx.run(Q.REFRESH_FEEDS_MANY, pairs=pairs[i:i + BATCH]).consume()
            out = {}
            for key, query in (("duplicate_verified_removed", Q.REPAIR_DUPLICATE_VERIFIED),
                               ("stray_verified_removed", Q.REPAIR_STRAY_VERIFIED),
                               ("missing_verified_added", Q.REPAIR_MISSING_VERIFIED),
                               ("duplicate_structure_removed", Q.REPAIR_DUPLICATE_STRUCTURE)):
                rec = tx.run(query).single()
                out[key] = int(rec[0]) if rec else 0
            return out

        counts = self._write(work)
        after = int(self._read(Q.REPAIR_COUNT_FEEDS)[0]["n"])
        return {"feeds_before": before, "feeds_after": after, **counts}

    def stats(self) -> dict[str, Any]:
        rec = self._read(Q.STATS)[0]
        return {"apis": rec["apis"], "tools": rec["tools"], "active_tools": rec["active"],
                "links": {s: n for s, n in rec["links"] if s is not None}}

    def reset(self) -> None:
        try:
            with self.driver.session(database=self.db) as session:
                session.run(Q.RESET).consume()
        except Neo4jError as exc:
            raise StoreUnavailable(str(exc)) from exc
