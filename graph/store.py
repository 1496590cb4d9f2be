"""The store interface both backends implement (Neo4j and the embedded SQLite file), and the factory.

`GraphStore` is the whole interface, combined from one protocol per kind of record (APIs, tools, links, runs,
batches, tokens) and the backend's own lifecycle; code that uses one kind can depend on that part alone.
"""

from __future__ import annotations

from typing import Any, Protocol

from core.settings import Settings
from graph.embedded_store import EmbeddedStore
from graph.models import ApiRecord, GraphStats, LinkRecord, RunRecord, TokenRecord, ToolRecord
from graph.neo4j_store import Neo4jStore

# Paged reads take any non-negative offset/limit: values past what a backend can index give an empty page
# (with the right total), never an error.


class BackendStore(Protocol):
    """The backend itself: schema, health, lifecycle and whole-store operations."""

    backend: str

    def init_schema(self) -> None: ...
    def ping(self) -> None: ...
    def close(self) -> None: ...
    def stats(self) -> GraphStats: ...
    def reset(self) -> None: ...


class ApiStore(Protocol):
    """Registered API documents (an API is written with its tools)."""

    def apply_registration(
        self, api: ApiRecord, upsert: list[ToolRecord], retire: list[str], flags: dict[str, tuple[list[str], list[str]]]
    ) -> int:
        """Write an API, upsert tools, retire tools, and flag links touching the given (tool -> (param keys, field
        names)); returns the number of links flagged. One transaction for ordinary documents; a very large one
        (Neo4j, over 10,000 rows) is written tool by tool in chunks, each tool either old or new after a failure,
        and registering the same document again completes it."""
        ...

    def list_apis(self, offset: int = 0, limit: int = 50) -> tuple[list[ApiRecord], int]: ...
    def get_api(self, api_id: str) -> ApiRecord | None: ...
    def delete_api(self, api_id: str) -> int: ...


class ToolStore(Protocol):
    """The tools derived from the registered operations."""

    def tools_of_api(self, api_id: str) -> list[ToolRecord]: ...
    def tool_owners(self, names: list[str]) -> dict[str, str]: ...
    def list_tools(
        self,
        offset: int = 0,
        limit: int = 50,
        api_id: str | None = None,
        q: str | None = None,
        status: str | None = "active",
    ) -> tuple[list[ToolRecord], int]: ...
    def get_tool(self, name: str) -> ToolRecord | None: ...
    def all_tools(self, status: str | None = "active") -> list[ToolRecord]: ...


class LinkStore(Protocol):
    """Candidate and verified links between tools, and the verified graph they make."""

    def upsert_candidates(self, links: list[LinkRecord]) -> int: ...
    def list_links(
        self, status: str | None = None, tool: str | None = None, offset: int = 0, limit: int = 100
    ) -> tuple[list[LinkRecord], int]: ...
    def get_link(self, link_id: str) -> LinkRecord | None: ...
    def save_link(self, link: LinkRecord) -> None: ...
    def save_links(self, links: list[LinkRecord]) -> None: ...
    def run_counts(self, run_id: str) -> dict[str, int]:
        """Links last decided by the run, by status."""
        ...

    def verified_edges(self) -> dict[str, dict[str, list[str]]]:
        """source tool -> target tool -> verified link ids (the tool-level graph trajectories walk)."""
        ...

    def sample_paths(self, starts: list[str], min_hops: int, max_hops: int, per_start: int) -> list[list[str]]:
        """Acyclic tool paths over verified links from each start, in a deterministic order."""
        ...

    def repair(self) -> dict[str, int]:
        """Rebuild derived relationships (one FEEDS per verified pair, one VERIFIED per verified link)."""
        ...


class RunStore(Protocol):
    """Verification runs."""

    def save_run(self, run: RunRecord) -> None: ...
    def get_run(self, run_id: str) -> RunRecord | None: ...
    def list_runs(self, limit: int = 20) -> list[RunRecord]: ...


class BatchStore(Protocol):
    """Trajectory batches and the trajectories in them."""

    def save_batch(self, batch: dict[str, Any]) -> None: ...
    def get_batch(self, batch_id: str) -> dict[str, Any] | None: ...
    def list_batches(self, team: str | None = None, limit: int = 50) -> list[dict[str, Any]]: ...
    def add_trajectories(self, batch_id: str, items: list[dict[str, Any]]) -> None: ...
    def list_trajectories(
        self, batch_id: str | None, offset: int = 0, limit: int = 100
    ) -> tuple[list[dict[str, Any]], int]: ...


class TokenStore(Protocol):
    """API tokens (hashes only)."""

    def add_token(self, token: TokenRecord) -> None: ...
    def find_token(self, token_hash: str) -> TokenRecord | None: ...
    def list_tokens(self) -> list[TokenRecord]: ...
    def revoke_token(self, token_id: str) -> TokenRecord | None:
        """Mark a token revoked (idempotent); None when there is no token with that id."""
        ...


class GraphStore(BackendStore, ApiStore, ToolStore, LinkStore, RunStore, BatchStore, TokenStore, Protocol):
    """Everything a backend stores: what `open_store` returns and both backends implement."""


def open_store(settings: Settings) -> GraphStore:
    """Create the configured store once per process (callers keep the instance)."""
    if settings.store == "neo4j":
        return Neo4jStore(settings.neo4j)
    return EmbeddedStore(settings.graph_file())


def all_apis(store: ApiStore) -> list[ApiRecord]:
    """Every registered API, page by page."""
    out: list[ApiRecord] = []
    while True:
        page, total = store.list_apis(offset=len(out), limit=500)
        out.extend(page)
        if not page or len(out) >= total:
            return out


def all_links(store: LinkStore, status: str | None = None, tool: str | None = None) -> list[LinkRecord]:
    """Every link (optionally by status or tool), page by page."""
    out: list[LinkRecord] = []
    offset = 0
    while True:
        page, total = store.list_links(status=status, tool=tool, offset=offset, limit=2000)
        out.extend(page)
        offset += len(page)
        if not page or offset >= total:
            return out
