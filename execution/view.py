"""One view of a tool result: the text a model reads back after a call, the same in synthesised SFT records, GRPO
rollouts and KOPA-Bench episodes (what the model sees is what it is scored on).

The view shows the response's rows **in the provider's order**, from the first, within a budget; nothing here (or
anywhere) moves the row a task or an answer needs into the window. A model that needs another row narrows the call
with the tool's own filters or pages through it, as a careful agent would against the real API; when rows are left
out the view says so and names those parameters (read from the tool's parameter schema, as the model sees it).

Budget (`BUDGET`), chosen from real responses and a real context:

* a 32k-token context with 3-4 tool calls, after the system prompt, the offered tools' specs (3-6k tokens for 3-8
  tools) and the answer, leaves about 6k tokens per tool message; chat tokenizers spend at most one token per
  character of this JSON (Korean text about one per syllable, ASCII fewer), so a message is capped at
  `message_chars = 6000` characters;
* `rows = 20`: data.go.kr's default page is 10 rows (`numOfRows`), juso's 10 (`countPerPage`); 20 shows two default
  pages or one hour of a KMA forecast with room (12 categories per forecast hour, about 130 characters a row), while
  a 32-field RTMS trade row (about 700 characters) fills the character cap at 8 rows first;
* `fields = 80`: the widest real rows fit whole (RTMS trades 32 fields; the 건축HUB 표제부 row about 75 in the real
  API, 39 in the sandbox): an API has no parameter that selects fields, so a field cut out could never be seen;
* `value_chars = 300`: TourAPI `overview`/`homepage` and MFDS `efcyQesitm` texts run to thousands of characters;
  the first 300 carry the facts, and a cut value ends with `…`.

The message is a JSON object: `{"rows": N, "shown": k, "items": [...]}` plus `"note"` when k < N, where N is the
rows the query has in all as the provider states it (`totalCount` and its kin, `graph.envelopes.detect_paging`;
the rows received when it states none) and `"first"` the position of a later page's first row;
`{"rows": 0, "items": [], "message": ...}` for an empty answer; `{"error": outcome, "message": ...}` for a
failure. `visible` is idempotent (`visible(visible(rows)) == visible(rows)` for the same total), so a record that
stores the shown rows and the total renders the same text as the live response did.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from core.json_types import JsonObject
from graph import envelopes, providers


@dataclass(frozen=True)
class Budget:
    rows: int = 20
    fields: int = 80
    value_chars: int = 300
    message_chars: int = 6000


BUDGET = Budget()
ELLIPSIS = "…"


class _HasSchema(Protocol):
    @property
    def json_schema(self) -> JsonObject: ...


ToolLike = _HasSchema | Mapping[str, Any] | None


def parameters(tool: ToolLike) -> dict[str, Any]:
    """The parameter schema as the model sees it: a ToolRecord's `json_schema`, or a function spec's `parameters`."""
    if tool is None:
        return {}
    if isinstance(tool, Mapping):
        fn = tool.get("function", tool)
        params = fn.get("parameters", fn) if isinstance(fn, Mapping) else {}
        return dict(params) if isinstance(params, Mapping) else {}
    return dict(tool.json_schema or {})


def _properties(tool: ToolLike) -> JsonObject:
    """The parameter schemas by name (none where the schema's `properties` is not an object)."""
    props = parameters(tool).get("properties")
    return props if isinstance(props, dict) else {}


def _typed(tool: ToolLike) -> list[tuple[str, str]]:
    """(name, JSON type) of a tool's parameters, as graph.envelopes describes paging from them."""
    props = _properties(tool)
    return [(str(k), str(v.get("type", "")) if isinstance(v, Mapping) else "") for k, v in props.items()]


def narrowing(tool: ToolLike) -> tuple[list[str], list[str]]:
    """(filter parameters, paging parameters) of a tool, in the schema's order."""
    props = _properties(tool)
    typed = _typed(tool)
    filters: list[str] = []
    paging: list[str] = []
    for name in map(str, props):
        if envelopes.pages(name, typed):
            paging.append(name)
        elif not (providers.presentation(name) or providers.key_name(name)):
            filters.append(name)
    return filters, paging


def _cut(value: Any, budget: Budget) -> Any:
    if isinstance(value, str) and len(value) > budget.value_chars:
        return value[: budget.value_chars - len(ELLIPSIS)] + ELLIPSIS
    return value


def _row(row: Mapping[str, Any], budget: Budget) -> JsonObject:
    return {str(k): _cut(v, budget) for k, v in list(row.items())[: budget.fields]}


def _dumps(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, default=str)


def note(total: int, shown: int, tool: ToolLike, *, first: int = 1, next_token: str = "") -> str:
    """What the model reads when rows are left out: which rows of how many, and how to narrow (empty when none is).
    `first` is the 1-based position of the first shown row in the whole answer (a later page starts past 1);
    `next_token` the answer's token for its next page, said with the tool's cursor parameter that takes it."""
    parts: list[str] = []
    cursor = envelopes.next_param(_typed(tool)) if next_token else None
    if shown < total:
        where = f"the first {shown} of {total} rows" if first <= 1 else f"rows {first}-{first + shown - 1} of {total}"
        parts.append(f"showing {where} in the response's order; to see other rows, narrow the call")
        filters, paging = narrowing(tool)
        how = []
        if filters:
            how.append("with its filters (" + ", ".join(filters) + ")")
        if paging:
            how.append(
                "or page through it (" + ", ".join(paging) + ")"
                if filters
                else "by paging through it (" + ", ".join(paging) + ")"
            )
        parts[-1] += (" " + " ".join(how)) if how else " (this tool has no filter or paging parameters)"
    if cursor:
        value = next_token if cursor.lower() in envelopes.page_names() else json.dumps(next_token)
        parts.append(f"more rows follow this page: call again with {cursor}={value}")
    return "; ".join(parts)


def _doc(rows: list[JsonObject], total: int, tool: ToolLike, first: int = 1, following: str = "") -> dict[str, Any]:
    doc: dict[str, Any] = {"rows": total, "shown": len(rows), "items": rows}
    if first > 1:
        doc["first"] = first
    text = note(total, len(rows), tool, first=first, next_token=following)
    if text:
        doc["note"] = text
    return doc


def visible(
    items: Sequence[Mapping[str, Any]],
    *,
    total: int | None = None,
    tool: ToolLike = None,
    budget: Budget = BUDGET,
    first: int = 1,
    next_token: str = "",
) -> list[JsonObject]:
    """The rows the model sees: the response's first rows (never reordered), each cut to the field and value
    budget, as many as fit the row and message budgets (at least one)."""
    n = len(items) if total is None else total
    cut = [_row(r, budget) for r in items[: budget.rows]]
    out: list[JsonObject] = []
    for row in cut:
        trial = [*out, row]
        if out and len(_dumps(_doc(trial, n, tool, first, next_token))) > budget.message_chars:
            break
        out = trial
    return out


def view_object(
    outcome: str,
    items: Sequence[Mapping[str, Any]] = (),
    *,
    reason: str = "",
    tool: ToolLike = None,
    total: int | None = None,
    first: int = 1,
    budget: Budget = BUDGET,
    next_token: str = "",
) -> dict[str, Any]:
    """The view as a JSON-ready object (see the module docstring). `items` may be every row of the response, or
    rows already `visible` with the response's `total`."""
    if outcome == "ok" and items:
        rows = [dict(r) for r in items if isinstance(r, Mapping)]
        first = max(1, first) if total is not None else 1
        n = len(rows) if total is None else max(total, first - 1 + len(rows))
        shown = visible(rows, total=n, tool=tool, budget=budget, first=first, next_token=next_token)
        return _doc(shown, n, tool, first, next_token)
    if outcome in ("ok", "empty"):
        return {"rows": 0, "items": [], "message": reason or "no data"}
    return {"error": outcome, "message": reason or "the call failed"}


def render(doc: Mapping[str, Any]) -> str:
    """The text of a view object (the one JSON serialisation every consumer uses)."""
    return _dumps(doc)


def tool_view(
    outcome: str,
    items: Sequence[Mapping[str, Any]] = (),
    *,
    reason: str = "",
    tool: ToolLike = None,
    total: int | None = None,
    first: int = 1,
    budget: Budget = BUDGET,
    next_token: str = "",
) -> str:
    """The text a model reads back for one tool result."""
    doc = view_object(
        outcome, items, reason=reason, tool=tool, total=total, first=first, budget=budget, next_token=next_token
    )
    return render(doc)


VIEW_RULE = (
    f"tool messages show the response's first rows in its order (at most {BUDGET.rows} rows, "
    f"{BUDGET.fields} fields a row, {BUDGET.value_chars} characters a value, {BUDGET.message_chars} characters "
    "a message), the total row count, and when rows are left out a note naming the tool's filter and paging "
    "parameters"
)

__all__ = [
    "BUDGET",
    "VIEW_RULE",
    "Budget",
    "narrowing",
    "note",
    "parameters",
    "render",
    "tool_view",
    "view_object",
    "visible",
]
