"""Register the generated catalog (sandbox/generated.py) into a store and label its candidate links.

It lives here, not in sandbox/, because registration goes through graph.registry and sandbox may import only core
(tests/test_architecture.py). Used by tests/test_generated_catalog.py and perf/generated_catalog.py.
"""

from __future__ import annotations

import re
from typing import TypeVar

from core.settings import Settings
from graph.candidates import derive_candidates
from graph.conversions import register_conversions
from graph.models import LinkRecord, ToolRecord
from graph.registry import register
from graph.store import GraphStore
from sandbox.generated import DEFAULT_SEED, generated_documents, instance_of_host

S = TypeVar("S", bound=GraphStore)
_TAG = re.compile(r"_r(\d+)(?:_\d+)?$")


def register_generated(
    store: S,
    settings: Settings,
    *,
    min_operations: int = 1000,
    seed: int = DEFAULT_SEED,
    instances: int | None = None,
    derive: bool = True,
) -> S:
    """Register every generated document through graph.registry.register (as the sandbox catalog is), the built-in
    conversion API, and store the candidates derived from the documents alone (no samples yet: verification derives
    again from values). `settings` must come from `generated_mode` (its allow-list names the generated hosts)."""
    for doc in generated_documents(instances, min_operations=min_operations, seed=seed):
        register(store, settings, doc)
    register_conversions(store, settings)
    if derive:
        store.upsert_candidates(derive_candidates(store.all_tools(), {}))
    return store


def instance_of_tool(tool: ToolRecord) -> int | None:
    """The instance a tool belongs to (by its server host; None for tools outside the catalog, e.g. conversions)."""
    m = re.match(r"https?://([^/]+)", tool.url)
    return instance_of_host(m.group(1)) if m else None


def link_kind(link: LinkRecord, instance_by_tool: dict[str, int | None]) -> str:
    """'same' (both ends in one instance), 'cross' (two instances), or 'shared' (an end outside the catalog, such as
    the built-in conversion API, that serves every instance)."""
    a, b = instance_by_tool.get(link.source_tool), instance_by_tool.get(link.target_tool)
    if a is None or b is None:
        return "shared"
    return "same" if a == b else "cross"


def instance_map(tools: list[ToolRecord]) -> dict[str, int | None]:
    return {t.name: instance_of_tool(t) for t in tools}
