"""The user-value pools a graph draws from, harvested from the world behind the endpoints: each tool that seeds alone
can call is called once (a larger page), then again at later pages and with values drawn area first from the first
round's pools, so trajectories start all over the world rather than at the documents' examples."""

from __future__ import annotations

import asyncio
import json
import random
from typing import TYPE_CHECKING, Any

from execution.executor import Executor
from execution.seeds import coerce, configured, param_schema, profile_args
from graph import envelopes, transforms
from graph.concepts import norm
from graph.models import ToolRecord
from synthesis.routes import row_area

if TYPE_CHECKING:
    from synthesis.verified_graph import VerifiedGraph

#: Second-round harvest calls (and later pages) per tool, each with user values drawn from the first round's pools
#: (area first): enough to reach most districts and most places in them rather than the documents' examples (the
#: sandbox, 40 시군구: with 8 the pharmacy names reach 25 of them and the pharmacies 40 of the world's 62 KMA grid
#: cells, with 16 they reach 37 and 55), a few calls per tool (48 tools: about 200 calls).
HARVEST_SPREAD = 16
#: Most values kept per user parameter's pool.
POOL_MAX = 300
_ADDRESS_FIELDS = (
    "roadAddr",
    "roadAddrPart1",
    "addr",
    "addr1",
    "kaptAddr",
    "doroJuso",
    "platPlc",
    "newPlatPlc",
    "jibunAddr",
)
_KEYWORD_FIELDS = ("title",)


async def harvest(graph: VerifiedGraph, executor: Executor) -> int:
    """Fill the value pools from the world: call each tool that seeds alone can call once (a larger page), keep
    the values of the fields that verified links (or names) tie to each user-knowable parameter, then call each
    tool again with `HARVEST_SPREAD` draws from those pools (other places, other entities than the documents'
    examples), so trajectories start all over the world. Returns the upstream calls spent."""
    rows: dict[str, list[dict[str, Any]]] = {}
    calls = 0

    # tool -> (rows in all, rows received, the next page's token) of its seeded call
    totals: dict[str, tuple[int, int, str]] = {}

    async def sample(tool: ToolRecord, args: dict[str, Any]) -> None:
        nonlocal calls
        result = await executor.call(tool, {k: coerce(v, param_schema(tool, k)) for k, v in args.items()})
        calls += 0 if result.cached else 1
        if result.ok:
            got = [r for r in result.items if isinstance(r, dict)]
            rows.setdefault(tool.name, []).extend(got)
            totals.setdefault(tool.name, (result.total or len(got), len(got), result.next_token))

    seeded: list[tuple[ToolRecord, dict[str, Any]]] = []
    for tool in sorted(graph.tools.values(), key=lambda t: t.name):
        args, missing = profile_args(tool, graph.settings)
        if not missing:
            seeded.append((tool, args))
    await asyncio.gather(*(sample(t, a) for t, a in seeded))
    fill_pools(graph, rows)
    spread: list[tuple[ToolRecord, dict[str, Any]]] = []
    for tool, args in seeded:
        rnd = random.Random(tool.name)
        spread.extend((tool, {**args, **a}) for a in later_pages(tool, *totals.get(tool.name, (0, 0, "")), rnd))
        users = [p for p in tool.params if p.required and graph.role(tool, p) == "user" and p.name in args]
        pools = [
            [
                (v, a)
                for v, a in zip(
                    graph.pools.get((tool.name, p.name), []),
                    graph.pool_areas.get((tool.name, p.name), []),
                    strict=False,
                )
                if str(v) != str(args[p.name])
            ]
            for p in users
        ]
        if users and all(pools):
            for _ in range(HARVEST_SPREAD):
                draw = {p.name: area_first(pool, rnd) for p, pool in zip(users, pools, strict=True)}
                spread.append((tool, {**args, **draw}))
    await asyncio.gather(*(sample(t, a) for t, a in spread))
    fill_pools(graph, rows)
    return calls


def later_pages(tool: ToolRecord, total: int, got: int, token: str, rnd: random.Random) -> list[dict[str, Any]]:
    """The paging arguments of up to `HARVEST_SPREAD` later pages of a listing (they hold other places and
    entities than the first, the documents' examples), by the paging description the view reads
    (graph.envelopes): pages drawn by number, offset or index range when the total says how many there are,
    else the page the first answer's token (or `hasNext` page number) names."""
    params = [(p.name, p.type) for p in tool.params]
    pages = -(-total // got) if got else 0
    if pages > 1 and envelopes.page_args(params, 2, got):
        drawn = rnd.sample(range(2, pages + 1), min(HARVEST_SPREAD, pages - 1))
        return [{k: str(v) for k, v in envelopes.page_args(params, n, got).items()} for n in drawn]
    following = envelopes.next_param(params)
    return [{following: token}] if following and token else []


def fill_pools(graph: VerifiedGraph, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Each user parameter's pool: the values the world's rows give it, each with the area (시도, 시군구) of the
    row it came from, kept spread over the areas (`user_value` draws an area first). A field of the parameter's
    name is read from the tool's own rows when they state it (the pharmacy search's names are pharmacies'), from
    other tools' rows only when they never do (a hospital's name finds no pharmacy)."""
    by_field: dict[str, list[tuple[Any, str]]] = {}
    own: dict[tuple[str, str], list[tuple[Any, str]]] = {}
    for name, items in rows.items():
        for r in items:
            area = row_area(r)
            for k, v in r.items():
                by_field.setdefault(norm(k), []).append((v, area))
                own.setdefault((name, norm(k)), []).append((v, area))
    for tool in graph.tools.values():
        for p in tool.params:
            if graph.role(tool, p) != "user":
                continue
            values: list[tuple[Any, str]] = [(v, "") for v in configured(graph.settings).get(p.name, [])]
            for lk in graph.into.get((tool.name, p.key()), []):
                for r in rows.get(lk.source_tool, []):
                    try:
                        values.append((transforms.apply(lk.transform, r.get(lk.source_field), r), row_area(r)))
                    except transforms.TransformError:
                        continue
            n = norm(p.name)
            if n == "keyword":
                names = _ADDRESS_FIELDS if "주소" in p.description else _KEYWORD_FIELDS
                for f in names:
                    values.extend(by_field.get(norm(f), []))
            elif not envelopes.paging_name(p.name):  # a page or its size is no value of a field
                values.extend(own.get((tool.name, n)) or by_field.get(n, []))
            unique: dict[str, tuple[Any, str]] = {}
            for x, area in values:
                v = _pool_value(x)
                if v is not None:
                    unique.setdefault(json.dumps(v, ensure_ascii=False, sort_keys=True), (v, area))
            clean = list(unique.values())
            if p.enum:
                members = {str(e) for e in p.enum}  # typed enums (1, true) against values read as text
                known = [v for v, _ in clean]
                clean = [c for c in clean if str(c[0]) in members] + [(v, "") for v in p.enum if v not in known]
            if clean:
                kept = _spread(clean, POOL_MAX)
                graph.pools[(tool.name, p.name)] = [v for v, _ in kept]
                graph.pool_areas[(tool.name, p.name)] = [a for _, a in kept]


def area_first(values: list[tuple[Any, str]], rnd: random.Random) -> Any:
    """A value drawn area first (each area of the pool as likely as any other), then within its area."""
    areas = sorted({a for _, a in values})
    area = rnd.choice(areas)
    return rnd.choice([v for v, a in values if a == area])


def _spread(values: list[tuple[Any, str]], most: int) -> list[tuple[Any, str]]:
    """At most `most` values, taken in turn from each area (in order of first appearance), so a pool keeps every
    area its rows reach rather than the first rows' one."""
    if len(values) <= most:
        return values
    by_area: dict[str, list[tuple[Any, str]]] = {}
    for v in values:
        by_area.setdefault(v[1], []).append(v)
    out: list[tuple[Any, str]] = []
    queues = list(by_area.values())
    while len(out) < most:
        for q in queues:
            if q and len(out) < most:
                out.append(q.pop(0))
    return out


def _pool_value(value: Any) -> Any:
    if isinstance(value, list):
        return value if value and all(isinstance(v, str | int) for v in value) and len(value) == 1 else None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value).strip()
    if not 2 <= len(text) <= 40 or text in ("-", "null", "None"):
        return None
    return value
