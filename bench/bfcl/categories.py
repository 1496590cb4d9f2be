"""BFCL v4 test categories (bfcl-eval 2026.3.23, constants/category_mapping.py) and which of them run offline."""

from __future__ import annotations

from core.errors import InvalidInput

NON_LIVE = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
]
LIVE = ["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"]
MULTI_TURN = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context"]
MEMORY = ["memory_kv", "memory_vector", "memory_rec_sum"]
WEB_SEARCH = ["web_search_base", "web_search_no_snippet"]
ALL_SCORING = NON_LIVE + LIVE + MULTI_TURN + MEMORY + WEB_SEARCH

# Categories left out of the default run, with the reason reported next to the scores (never as a 0 in an average).
NOT_OFFLINE: dict[str, str] = {
    "web_search_base": "needs a live web search service (SerpAPI key and HTTP fetching)",
    "web_search_no_snippet": "needs a live web search service (SerpAPI key and HTTP fetching)",
    "memory_vector": "loads the sentence-transformers model all-MiniLM-L6-v2 from the hub at first use; "
    "run it explicitly (--categories memory_vector) once that model is in the local cache",
}
OFFLINE_DEFAULT = [c for c in ALL_SCORING if c not in NOT_OFFLINE]

COLLECTIONS: dict[str, list[str]] = {
    "offline": OFFLINE_DEFAULT,
    "all_scoring": ALL_SCORING,
    "non_live": NON_LIVE,
    "live": LIVE,
    "multi_turn": MULTI_TURN,
    "single_turn": NON_LIVE + LIVE,
    "memory": [c for c in MEMORY if c not in NOT_OFFLINE],
    "web_search": WEB_SEARCH,
    "irrelevance": ["irrelevance", "live_irrelevance", "live_relevance"],
}


def resolve(spec: str | None) -> list[str]:
    """Comma-separated categories or collection names -> categories in BFCL order, without duplicates.
    None or '' is the offline default."""
    if not spec or not spec.strip():
        return list(OFFLINE_DEFAULT)
    wanted: set[str] = set()
    for raw in spec.split(","):
        name = raw.strip()
        if not name:
            continue
        if name in COLLECTIONS:
            wanted.update(COLLECTIONS[name])
        elif name in ALL_SCORING:
            wanted.add(name)
        else:
            known = ", ".join(list(COLLECTIONS) + ALL_SCORING)
            raise InvalidInput(f"unknown BFCL category {name!r}; known: {known}")
    return [c for c in ALL_SCORING if c in wanted]


def not_run(categories: list[str]) -> dict[str, str]:
    """Every scoring category outside this run, with why."""
    return {c: NOT_OFFLINE.get(c, "not selected for this run") for c in ALL_SCORING if c not in categories}
