"""Plans over verified links only: which tools a user's words can call, how later steps are fed, and which
routes a careful agent would take (`synthesis.routes`).

Users know names, tools know codes: every parameter has a role (`graph.concepts.param_role`). A plan starts
from a tool whose inputs a person knows (address text, names, dates, business registration numbers); every
system code later in the plan comes from an earlier tool result; issue dates and times follow from the clock
the system message states. Slot values are drawn from the world behind the endpoints: before planning, each
tool callable from seeds alone is called once and the values of the fields that verified links (or names)
tie to a user parameter become that parameter's pool.

A careful agent's route: a step whose rows are named entities (a hospital, a bus stop, a tourist site) may feed
later steps only with its identity (the question is then about it) or when the user named it; a route that takes
only its coordinates or area codes borrows an entity nobody asked about and is not planned. Parameters that
narrow a lookup to the user's entity (the lot number after the 법정동 code) are bound from the same row when a
verified link gives them. A middle step that feeds only an issue time the clock gives is not planned (a
shorter route answers the same). Every plan records why it was chosen (`Plan.route`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
from collections import Counter
from datetime import timedelta
from typing import Any

from core.settings import Settings
from execution.executor import Executor
from execution.seeds import (
    coerce,
    configured,
    kma_base,
    now,
    param_schema,
    profile_args,
    seed_value,
    user_date,
)
from graph import transforms
from graph.candidates import NON_LINKABLE
from graph.concepts import ROLE_EXTENSION, concepts_of, norm, pair_group, param_role
from graph.models import LinkRecord, ParamRecord, ToolRecord
from graph.paths import enumerate_paths
from graph.store import GraphStore, all_links
from synthesis.records import Plan, Source, Step
from synthesis.routes import PLACE_CONCEPTS, carries_place, entity_name_fields, is_area_field, row_kind

SHAPES = ("single", "chain", "fan_in", "parallel")
#: Link states no run has settled: the pending graph proposes plans over them, to be verified before they run.
PENDING = ("candidate", "inconclusive")
#: Page size for tools whose rows are the categories of one answer (see VerifiedGraph._whole_answer).
WHOLE_PAGE = 60
#: How often one plan (tool sequence and shape) may be drawn; each draw gets its own user values.
REPEATS = {"single": 16, "chain": 6, "fan_in": 6, "parallel": 4}
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
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_DATE_LIKE = re.compile(r"(de|dt|date|time|ts|ymd)$")


class VerifiedGraph:
    """Verified links by target parameter, the tool-level edges, and usage counts for coverage-aware sampling."""

    def __init__(
        self,
        store: GraphStore,
        settings: Settings,
        api_ids: list[str] | None = None,
        *,
        unverified: bool = False,
        pending: bool = False,
    ) -> None:
        """`unverified=True` walks every candidate link instead (the synthesise-then-filter baseline).
        `pending=True` walks the verified links and those no run has decided yet (candidate, inconclusive),
        never a refuted one: the demand-driven path (synthesis.demand) proposes plans over them and verifies the
        links on a plan before it runs (`decide` then keeps or drops each link)."""
        self.store = store
        self.settings = settings
        self.unverified = unverified
        self.pending = pending and not unverified
        self.tools = {t.name: t for t in store.all_tools() if not api_ids or t.api_id in api_ids}
        links = all_links(store, status=None if unverified or self.pending else "verified")
        if self.pending:
            links = [lk for lk in links if lk.status in PENDING or lk.status == "verified"]
        self.links = {lk.id: lk for lk in links if lk.source_tool in self.tools and lk.target_tool in self.tools}
        if unverified or self.pending:
            edges: dict[str, dict[str, list[str]]] = {}
            for lk in self.links.values():
                if lk.source_tool != lk.target_tool:
                    edges.setdefault(lk.source_tool, {}).setdefault(lk.target_tool, []).append(lk.id)
            self.edges = edges
        else:
            self.edges = {
                s: {t: [i for i in ids if i in self.links] for t, ids in targets.items() if t in self.tools}
                for s, targets in store.verified_edges().items()
                if s in self.tools
            }
        self.into: dict[tuple[str, str], list[LinkRecord]] = {}
        for lk in self.links.values():
            self.into.setdefault((lk.target_tool, lk.target_param), []).append(lk)
        self.refuted = (
            []
            if unverified
            else [
                lk
                for lk in all_links(store, status="refuted")
                if lk.source_tool in self.tools and lk.target_tool in self.tools
            ]
        )
        self.tool_use: Counter[str] = Counter()
        self.link_use: Counter[str] = Counter()
        self.pools: dict[tuple[str, str], list[Any]] = {}
        self._roles: dict[tuple[str, str], str] = {}
        self._roots: dict[str, dict[str, Source] | None] = {}
        self._clock: dict[tuple[str, str], Any] = {}
        self._triples: list[tuple[str, str, str]] | None = None
        self._entity: dict[str, ParamRecord | None] = {}
        #: The pending graph's evidence per step pair: pairs with a verified link, refuted links per pair.
        self.pair_verified: set[tuple[str, str]] = {
            (lk.source_tool, lk.target_tool) for lk in self.links.values() if lk.status == "verified"
        }
        self.pair_refuted: Counter[tuple[str, str]] = Counter((lk.source_tool, lk.target_tool) for lk in self.refuted)
        self._kinds: dict[str, str] = {}

    # ------------------------------------------------------------------ roles and values

    def role(self, tool: ToolRecord, p: ParamRecord) -> str:
        key = (tool.name, p.name)
        if key not in self._roles:
            schema = param_schema(tool, p.name) or {}
            override = schema.get(ROLE_EXTENSION)
            self._roles[key] = param_role(
                p.name,
                p.description,
                enum=p.enum,
                has_default=p.default is not None,
                override=str(override) if override else None,
                non_linkable=p.name in NON_LINKABLE,
            )
        return self._roles[key]

    def slot_value(self, tool: ToolRecord, pname: str) -> Any:
        p = next(p for p in tool.params if p.name == pname)
        return seed_value(p, self.settings)

    def user_value(self, tool: ToolRecord, p: ParamRecord, rnd: random.Random) -> Any:
        """A value a user would state: a clock-relative date for a date parameter (a person asks about a month
        relative to today, not about dates harvested from other tools' rows), else from the harvested pool, else
        the seed."""
        pool = self.pools.get((tool.name, p.name))
        value = user_date(p.name, p.description, self.settings, rnd)
        if value is None:
            value = rnd.choice(pool) if pool else seed_value(p, self.settings)
        return coerce(value, param_schema(tool, p.name))

    def clock_value(self, tool: ToolRecord, p: ParamRecord) -> Any:
        """Issue dates and times that follow from the clock the system message states."""
        key = (tool.name, p.name)
        if key not in self._clock:
            self._clock[key] = self._clock_value(tool, p)
        return self._clock[key]

    def _clock_value(self, tool: ToolRecord, p: ParamRecord) -> Any:
        at = now(self.settings)
        n = norm(p.name)
        name = tool.name.lower()
        kind = "ncst" if "ncst" in name else "fcst" if "srt_fcst" in name else "vilage"
        if n in ("basedate", "basetime"):
            date, time = kma_base(kind, at)
            value: Any = date if n == "basedate" else time
        elif n == "tmfc":
            day = at if at.hour >= 6 else at - timedelta(days=1)
            value = day.strftime("%Y%m%d") + ("1800" if at.hour >= 18 or at.hour < 6 else "0600")
        else:
            value = seed_value(p, self.settings)
        return coerce(value, param_schema(tool, p.name))

    def _whole_answer(self, tool: ToolRecord, out: dict[str, Source]) -> dict[str, Source]:
        """A tool whose rows are the categories of one answer (KMA forecasts: one row per category and hour) is
        asked for a page that holds them all, so the answer can state temperature and sky, not only the first
        categories."""
        names = {f.name for f in tool.fields}
        page = next((p for p in tool.params if p.name == "numOfRows"), None)
        if page is not None and "category" in names and names & {"fcstValue", "obsrValue"}:
            out[page.name] = Source("constant", coerce(WHOLE_PAGE, param_schema(tool, page.name)))
        return out

    def _required(self, tool: ToolRecord) -> list[ParamRecord]:
        fmt = tool.format_name
        return [p for p in tool.params if p.required and p.name != fmt]

    def entity_param(self, tool: ToolRecord) -> ParamRecord | None:
        """The user parameter that names the row's entity (a hospital's name for a hospital list), if any."""
        if tool.name not in self._entity:
            names = {norm(f) for f in entity_name_fields(tool)}
            self._entity[tool.name] = next(
                (p for p in tool.params if self.role(tool, p) == "user" and norm(p.name) in names), None
            )
        return self._entity[tool.name]

    def kind(self, tool: ToolRecord) -> str:
        """`synthesis.routes.row_kind` of a tool, computed once per graph (planning asks it for every draw)."""
        if tool.name not in self._kinds:
            self._kinds[tool.name] = row_kind(tool)
        return self._kinds[tool.name]

    def root_sources(self, tool: ToolRecord, *, named: bool = False) -> dict[str, Source] | None:
        """A tool callable from what a user says (and constants and the clock) alone; None when it needs a
        system code, or when nothing a user would say goes into it. `named`: the user names the entity the
        rows are (its name parameter), so a route through it is about what they asked."""
        key = f"{tool.name}#{named}"
        if key not in self._roots:
            self._roots[key] = self._root_sources(tool, named)
        cached = self._roots[key]
        return None if cached is None else dict(cached)

    def _root_sources(self, tool: ToolRecord, named_entity: bool = False) -> dict[str, Source] | None:
        out: dict[str, Source] = {}
        for p in self._required(tool):
            role = self.role(tool, p)
            if role == "code":
                return None
            if role == "clock":
                out[p.name] = Source("clock", self.clock_value(tool, p))
                continue
            value = seed_value(p, self.settings)
            if value is None and role == "user":
                pool = self.pools.get((tool.name, p.name))
                value = pool[0] if pool else user_date(p.name, p.description, self.settings, random.Random(0))
            if value is None:
                return None
            out[p.name] = Source("slot" if role == "user" else "constant", coerce(value, param_schema(tool, p.name)))
        entity = self.entity_param(tool) if named_entity else None
        if named_entity and (entity is None or not self.pools.get((tool.name, entity.name))):
            return None
        if not any(s.kind == "slot" for s in out.values()):
            named = set(_PLACEHOLDER.findall(tool.intent or ""))
            optional = sorted(
                (
                    p
                    for p in tool.params
                    if not p.required
                    and self.role(tool, p) == "user"
                    and (p.name in named or not _DATE_LIKE.search(p.name.lower()))
                ),
                key=lambda p: (
                    p is not entity,
                    p.name not in named,
                    not self.pools.get((tool.name, p.name)),
                    tool.params.index(p),
                ),
            )
            for p in optional:
                pool = self.pools.get((tool.name, p.name))
                value = pool[0] if pool else seed_value(p, self.settings)
                if value not in (None, ""):
                    out[p.name] = Source("slot", coerce(value, param_schema(tool, p.name)))
                    break
            else:
                return None
        return self._whole_answer(tool, out)

    def fed_sources(
        self, tool: ToolRecord, upstream: list[tuple[int, str]], rnd: random.Random, *, link_clock: bool = False
    ) -> dict[str, Source] | None:
        """Sources for a step fed by earlier steps (index, tool): verified links for codes (and for names an
        earlier result gives), the user for other user-knowable values, the clock, constants. Parameters that
        belong together (nx/ny, sigunguCd/bjdongCd, ...) come from one and the same upstream step.
        `link_clock` lets an issue date and time come from an upstream product of the same issue (fan-in)."""
        out: dict[str, Source] = {}
        fed_any = False
        groups: dict[frozenset[str], int] = {}
        required = self._required(tool)
        for p in required:
            role = self.role(tool, p)
            options = [
                (i, lk) for i, up in upstream for lk in self.into.get((tool.name, p.key()), []) if lk.source_tool == up
            ]
            group = pair_group(p.name)
            if group is not None and options:
                mates = [q for q in required if q.name in group]
                steps_ok = set.intersection(
                    *[
                        {
                            i
                            for i, up in upstream
                            for lk in self.into.get((tool.name, q.key()), [])
                            if lk.source_tool == up
                        }
                        for q in mates
                    ]
                )
                if group in groups:
                    steps_ok &= {groups[group]}
                if not steps_ok:
                    if role == "code":
                        return None
                    options = []
                else:
                    if group not in groups:
                        groups[group] = rnd.choice(sorted(steps_ok))
                    options = [o for o in options if o[0] == groups[group]]
            if role == "clock" and not (link_clock and options):
                out[p.name] = Source("clock", self.clock_value(tool, p))
            elif role == "constant":
                value = seed_value(p, self.settings)
                if value is None:
                    return None
                out[p.name] = Source("constant", coerce(value, param_schema(tool, p.name)))
            elif options:
                # least used first; in the pending graph a verified link before one still to verify
                options.sort(
                    key=lambda o: (
                        self.pending and o[1].status != "verified",
                        self.link_use[o[1].id],
                        -o[1].score,
                        o[1].id,
                    )
                )
                best = [o for o in options if self.link_use[o[1].id] == self.link_use[options[0][1].id]]
                i, lk = rnd.choice(best)
                out[p.name] = Source("link", link=lk, from_step=i)
                fed_any = True
            elif role == "user":
                value = seed_value(p, self.settings)
                pool = self.pools.get((tool.name, p.name))
                value = (
                    pool[0]
                    if pool
                    else (
                        value
                        if value is not None
                        else user_date(p.name, p.description, self.settings, random.Random(0))
                    )
                )
                if value is None:
                    return None
                out[p.name] = Source("slot", coerce(value, param_schema(tool, p.name)))
            else:
                return None
        if not fed_any:
            return None
        self._narrow(tool, out, groups, dict(upstream))
        return self._whole_answer(tool, out)

    def _narrow(
        self, tool: ToolRecord, out: dict[str, Source], groups: dict[frozenset[str], int], upstream: dict[int, str]
    ) -> None:
        """Optional parameters of a bound group (the lot number with the 법정동 code) come from the same row when
        a verified link gives them, so the lookup narrows to the user's entity instead of listing the area."""
        for group, i in groups.items():
            for q in tool.params:
                if q.required or q.name not in group or q.name in out:
                    continue
                want = concepts_of(q.name, q.description)
                opts = [lk for lk in self.into.get((tool.name, q.key()), []) if lk.source_tool == upstream.get(i)]
                if opts:
                    lk = max(opts, key=lambda lk: (bool(concepts_of(lk.source_field, "") & want), lk.score, lk.id))
                    out[q.name] = Source("link", link=lk, from_step=i)

    def weight(self, names: list[str]) -> float:
        w = 1.0 / (1.0 + sum(self.tool_use[n] for n in names))
        if self.pending:
            # demand learns from what verification said: a step pair with a verified link is a better bet than
            # one whose links keep coming out refuted (in a graph of many copies, most pairs are of the latter)
            for a, b in itertools.pairwise(names):
                w *= self.pair_prior(a, b)
        return w

    def pair_prior(self, a: str, b: str) -> float:
        """How promising the step a -> b is to the pending graph: 4 with a verified link, else 1 / (1 + 2 per
        refuted link between them); always 1 outside the pending graph."""
        if not self.pending:
            return 1.0
        if (a, b) in self.pair_verified:
            return 4.0
        return 1.0 / (1.0 + 2 * self.pair_refuted[(a, b)])

    def paths(self, starts: list[str], min_hops: int, max_hops: int, per_start: int) -> list[list[str]]:
        """Verified graph: the store's path query (Cypher on Neo4j); candidate graph: the same walk in Python."""
        if self.unverified or self.pending:
            return enumerate_paths(self.edges, starts, min_hops, max_hops, per_start)
        return self.store.sample_paths(starts, min_hops, max_hops, per_start)

    def unverified_on(self, plan: Plan) -> list[LinkRecord]:
        """The links on `plan` that are not verified (always none outside the pending graph's proposals)."""
        out = {
            src.link.id: self.links.get(src.link.id, src.link)
            for s in plan.steps
            for src in s.sources.values()
            if src.link is not None
        }
        return [lk for lk in out.values() if lk.status != "verified"]

    def decide(self, link: LinkRecord, *, keep_pending: bool = False) -> None:
        """A link of the pending graph decided by verification: a verified one stays (with its evidence), any
        other leaves the graph (a refuted one joins `refuted`), unless `keep_pending` (inconclusive: tried
        again later)."""
        if link.status == "verified" or (keep_pending and link.status in PENDING):
            if link.status == "verified":
                self.pair_verified.add((link.source_tool, link.target_tool))
            if link.id in self.links:
                self.links[link.id] = link
                key = (link.target_tool, link.target_param)
                self.into[key] = [link if lk.id == link.id else lk for lk in self.into.get(key, [])]
            return
        self.links.pop(link.id, None)
        key = (link.target_tool, link.target_param)
        self.into[key] = [lk for lk in self.into.get(key, []) if lk.id != link.id]
        targets = self.edges.get(link.source_tool, {})
        ids = [i for i in targets.get(link.target_tool, []) if i != link.id]
        if ids:
            targets[link.target_tool] = ids
        else:
            targets.pop(link.target_tool, None)
        if self._triples is not None:
            # fan-in triples whose edges remain (each is checked again when drawn): not recomputed per decision
            e = self.edges
            self._triples = [
                (a, b, t) for a, b, t in self._triples if b in e.get(a, {}) and t in e.get(b, {}) and t in e.get(a, {})
            ]
        if link.status == "refuted" and link.source_tool in self.tools and link.target_tool in self.tools:
            self.refuted.append(link)
            self.pair_refuted[(link.source_tool, link.target_tool)] += 1

    # ------------------------------------------------------------------ the world behind the endpoints

    async def harvest(self, executor: Executor) -> int:
        """Fill the value pools: call each tool that seeds alone can call once (a larger page), and keep the
        values of the fields that verified links (or names) tie to each user-knowable parameter. Returns the
        upstream calls spent."""
        rows: dict[str, list[dict[str, Any]]] = {}
        calls = 0
        self._roots.clear()
        self._triples = None

        async def sample(tool: ToolRecord) -> None:
            nonlocal calls
            args, missing = profile_args(tool, self.settings)
            if missing:
                return
            result = await executor.call(tool, {k: coerce(v, param_schema(tool, k)) for k, v in args.items()})
            calls += 0 if result.cached else 1
            if result.ok:
                rows[tool.name] = [r for r in result.items if isinstance(r, dict)]

        await asyncio.gather(*(sample(t) for t in sorted(self.tools.values(), key=lambda t: t.name)))
        by_field: dict[str, list[Any]] = {}
        for items in rows.values():
            for r in items:
                for k, v in r.items():
                    by_field.setdefault(norm(k), []).append(v)
        for tool in self.tools.values():
            for p in tool.params:
                if self.role(tool, p) != "user":
                    continue
                values: list[Any] = list(configured(self.settings).get(p.name, []))
                for lk in self.into.get((tool.name, p.key()), []):
                    for r in rows.get(lk.source_tool, []):
                        try:
                            values.append(transforms.apply(lk.transform, r.get(lk.source_field), r))
                        except transforms.TransformError:
                            continue
                n = norm(p.name)
                if n == "keyword":
                    names = _ADDRESS_FIELDS if "주소" in p.description else _KEYWORD_FIELDS
                    for f in names:
                        values.extend(by_field.get(norm(f), []))
                elif n not in ("numofrows", "pageno"):
                    values.extend(by_field.get(n, []))
                unique = {
                    json.dumps(v, ensure_ascii=False, sort_keys=True): v
                    for v in (_pool_value(x) for x in values)
                    if v is not None
                }
                clean = list(unique.values())
                if p.enum:
                    members = {str(e) for e in p.enum}  # typed enums (1, true) against values read as text
                    clean = [v for v in clean if str(v) in members] + [v for v in p.enum if v not in clean]
                if clean:
                    self.pools[(tool.name, p.name)] = clean[:300]
        return calls


def _pool_value(value: Any) -> Any:
    if isinstance(value, list):
        return value if value and all(isinstance(v, str | int) for v in value) and len(value) == 1 else None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value).strip()
    if not 2 <= len(text) <= 40 or text in ("-", "null", "None"):
        return None
    return value


def _choose(rnd: random.Random, options: list[Any], weights: list[float]) -> Any:
    return rnd.choices(options, weights=weights, k=1)[0]


def sample_plans(
    graph: VerifiedGraph,
    count: int,
    *,
    shapes: tuple[str, ...] = SHAPES,
    min_steps: int = 1,
    max_steps: int = 6,
    seed: int = 7,
    max_tool_share: float = 0.25,
) -> list[Plan]:
    """Seeded, coverage-aware plans; every required parameter of every step is satisfiable, every plan starts
    from tools a user's words can call. Up to `count` plans (fewer when the plan space runs out)."""
    return PlanSampler(
        graph, shapes=shapes, min_steps=min_steps, max_steps=max_steps, seed=seed, max_tool_share=max_tool_share
    ).more(count)


class PlanSampler:
    """`sample_plans` that can be asked for more: `more(n)` draws up to n further plans, continuing the same
    seeded, coverage-aware draw (the shares, repeats and the per-tool cap grow with what was asked in all), so
    synthesis samples until it has kept enough or the plan space is exhausted (`exhausted`), with no cap on the
    pool."""

    def __init__(
        self,
        graph: VerifiedGraph,
        *,
        shapes: tuple[str, ...] = SHAPES,
        min_steps: int = 1,
        max_steps: int = 6,
        seed: int = 7,
        max_tool_share: float = 0.25,
    ) -> None:
        self.graph = graph
        self.min_steps, self.max_steps, self.share = min_steps, max_steps, max_tool_share
        self.rnd = random.Random(seed)
        self.roots = sorted(n for n, t in graph.tools.items() if graph.root_sources(t) is not None)
        self.wanted = [s for s in shapes if s in SHAPES] or list(SHAPES)
        self.asked = 0
        self.made_total = 0
        self.exhausted = not self.roots
        self.shortest: dict[tuple[str, str], int] = {}
        self.seen: Counter[str] = Counter()
        self.made: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self._chains: list[list[str]] | None = None

    @property
    def chains(self) -> list[list[str]]:
        if self._chains is None:
            graph, min_steps, max_steps = self.graph, self.min_steps, self.max_steps
            # one path query per length, so that long chains are not crowded out by short ones
            paths = (
                [
                    p
                    for hops in range(max(1, min_steps - 1), min(max_steps - 1, 5) + 1)
                    for p in graph.paths(self.roots, hops, hops, per_start=40)
                ]
                if max_steps > 1
                else []
            )
            self._chains = [
                p
                for p in paths
                if all(n in graph.tools for n in p) and min_steps <= len(p) <= max_steps and len(p) >= 2
            ]
        return self._chains

    def more(self, count: int) -> list[Plan]:
        """Up to `count` further plans; fewer (and `exhausted` set when none) once the plan space runs out."""
        if self.exhausted or count <= 0:
            return []
        graph, rnd, roots, wanted = self.graph, self.rnd, self.roots, self.wanted
        min_steps, max_steps = self.min_steps, self.max_steps
        self.asked += count
        total = self.asked
        cap = max(3, int(total * self.share))
        chains = self.chains
        seen, made, failures = self.seen, self.made, self.failures
        plans: list[Plan] = []
        attempts = 0
        while len(plans) < count and attempts < count * 30:
            attempts += 1
            # the shape furthest behind its share goes next; shapes that keep failing step aside
            open_shapes = [s for s in wanted if failures[s] < total * 5] or wanted
            shape = min(open_shapes, key=lambda s: (made[s], failures[s], wanted.index(s)))
            plan = None
            if shape == "single" and min_steps <= 1:
                name = _choose(rnd, roots, [graph.weight([r]) for r in roots])
                plan = Plan("single", [Step(graph.tools[name], graph.root_sources(graph.tools[name]) or {})], [0])
                route_check(graph, plan)
            elif shape == "chain" and chains:
                # coverage-aware among a random handful: rarely used tools win, without scoring every path
                options = rnd.sample(chains, min(48, len(chains)))
                names = _choose(rnd, options, [graph.weight(p) for p in options])
                plan = None if _shorter_exists(graph, chains, names, self.shortest) else _chain(graph, names, rnd)
            elif shape == "fan_in" and max_steps >= 3:
                plan = _fan_in(graph, rnd, roots)
            elif shape == "parallel" and max_steps >= 3:
                plan = _parallel(graph, rnd, roots)
            # a plan may repeat a few times: its user values are drawn from the pools at execution
            # the cap spreads use over tools; the first step is exempt (few tools take what a user says)
            if (
                plan is None
                or seen[plan.key] >= REPEATS.get(plan.shape, 1)
                or any(graph.tool_use[s.tool.name] >= cap for s in plan.steps[1:])
            ):
                failures[shape] += 1
                continue
            seen[plan.key] += 1
            made[shape] += 1
            plans.append(plan)
            for s in plan.steps:
                graph.tool_use[s.tool.name] += 1
                for src in s.sources.values():
                    if src.link is not None:
                        graph.link_use[src.link.id] += 1
        self.made_total += len(plans)
        self.exhausted = not plans
        return plans

    def release(self, plan: Plan) -> None:
        """A drawn plan that never ran (a link on it did not come out verified): its repeat slot and its use of
        tools and links are given back, so the plan space is that of the graph as verification leaves it."""
        if self.seen[plan.key] <= 0:
            return
        self.seen[plan.key] -= 1
        self.made[plan.shape] -= 1
        self.exhausted = False
        for s in plan.steps:
            self.graph.tool_use[s.tool.name] -= 1
            for src in s.sources.values():
                if src.link is not None:
                    self.graph.link_use[src.link.id] -= 1

    def rebase(self, graph: VerifiedGraph) -> None:
        """Continue the same draw over a grown graph (more tools reached, more candidate links): the repeats, the
        shares and the use of tools and links carry over."""
        graph.tool_use.update(self.graph.tool_use)
        graph.link_use.update(self.graph.link_use)
        self.graph = graph
        self.roots = sorted(n for n, t in graph.tools.items() if graph.root_sources(t) is not None)
        self._chains = None
        self.shortest.clear()
        self.exhausted = not self.roots


def _shorter_exists(
    graph: VerifiedGraph, chains: list[list[str]], names: list[str], shortest: dict[tuple[str, str], int]
) -> bool:
    """A careful agent takes the shortest route: a chain is not planned when a shorter planable chain joins the
    same first and last tools (`shortest` caches the shortest planable length per pair)."""
    key = (names[0], names[-1])
    if key not in shortest:
        probe = random.Random(0)
        lengths = sorted({len(c) for c in chains if (c[0], c[-1]) == key})
        shortest[key] = next(
            (
                n
                for n in lengths
                if any(_chain(graph, c, probe) is not None for c in chains if (c[0], c[-1]) == key and len(c) == n)
            ),
            len(names),
        )
    return len(names) > shortest[key]


def _deps(sources: dict[str, Source]) -> list[int]:
    return sorted({s.from_step for s in sources.values() if s.kind == "link"})


def route_check(graph: VerifiedGraph, plan: Plan) -> str | None:
    """Why a careful agent would not take this route (None when it would); sets `plan.route` to the reasons it
    would: the kind of entity each step's rows are, against what the question is about."""
    parts = []
    for i, step in enumerate(plan.steps):
        kind = graph.kind(step.tool)
        outs = [
            (later, src)
            for later in plan.steps[i + 1 :]
            for src in later.sources.values()
            if src.kind == "link" and src.link is not None and src.from_step == i
        ]
        entity = graph.entity_param(step.tool)
        named = i == 0 and identifies(step.tool, entity, [n for n, src in step.sources.items() if src.kind == "slot"])
        if i in plan.finals and not outs:
            parts.append(f"{step.tool.name}: answers ({kind} rows)")
            continue
        targets = [(later.tool, src.link) for later, src in outs if src.link is not None]
        clock_only = all(
            graph.role(t, next(p for p in t.params if p.key() == lk.target_param)) == "clock"
            for t, lk in targets
            if any(p.key() == lk.target_param for p in t.params)
        )
        if targets and clock_only:
            return f"{step.tool.name} feeds only an issue time the clock gives (a shorter route answers the same)"
        place_only = all(carries_place(lk, t) for t, lk in targets)
        if kind == "entity" and place_only and not named:
            return (
                f"{step.tool.name} lists {kind} rows the question does not ask about and only their "
                "location feeds the next call"
            )
        how = "its location" if place_only else "its identity"
        parts.append(f"{step.tool.name}: {kind} rows{' named by the user' if named else ''}, {how} feeds the next call")
    plan.route = "; ".join(parts) + f" ({len(plan.steps)} calls)"
    return None


def identifies(tool: ToolRecord, entity: ParamRecord | None, slots: list[str]) -> bool:
    """The user's words name the row's entity: its name parameter, or an identifier a person knows that the rows
    carry as a field (a business registration number)."""
    if entity is not None and entity.name in slots:
        return True
    fields = {norm(f.name): f for f in tool.fields}
    for name in slots:
        f = fields.get(norm(name))
        if (
            f is not None
            and not is_area_field(f.name, f.description)
            and not concepts_of(f.name, f.description) & PLACE_CONCEPTS
            and not _DATE_LIKE.search(name.lower())
        ):
            return True
    return False


def _root_for(graph: VerifiedGraph, tool: ToolRecord, intermediate: bool) -> dict[str, Source] | None:
    """A root step: an entity list the route passes through is searched by the name the user gives."""
    if intermediate and graph.kind(tool) == "entity":
        named = graph.root_sources(tool, named=True)
        if named is not None:
            return named
    return graph.root_sources(tool)


def _chain(graph: VerifiedGraph, names: list[str], rnd: random.Random) -> Plan | None:
    root = _root_for(graph, graph.tools[names[0]], len(names) > 1)
    if root is None:
        return None
    steps = [Step(graph.tools[names[0]], root)]
    for i, name in enumerate(names[1:], start=1):
        sources = graph.fed_sources(graph.tools[name], [(j, names[j]) for j in range(i)], rnd)
        if sources is None or not any(s.kind == "link" and s.from_step == i - 1 for s in sources.values()):
            return None
        steps.append(Step(graph.tools[name], sources, _deps(sources)))
    plan = Plan("chain", steps, [len(steps) - 1])
    return plan if route_check(graph, plan) is None else None


def fan_in_triples(graph: VerifiedGraph, roots: list[str]) -> list[tuple[str, str, str]]:
    """(root, middle, target): the middle is fed by the root, the target by both (computed once per graph)."""
    if graph._triples is None:
        probe = random.Random(0)
        out = []
        for a in roots:
            for b in sorted(graph.edges.get(a, {})):
                if b == a or graph.fed_sources(graph.tools[b], [(0, a)], probe) is None:
                    continue
                for target in sorted(t for t in graph.edges.get(b, {}) if t in graph.edges[a] and t not in (a, b)):
                    for _ in range(4):
                        sources = graph.fed_sources(graph.tools[target], [(0, a), (1, b)], probe, link_clock=True)
                        if sources is not None and set(_deps(sources)) == {0, 1}:
                            out.append((a, b, target))
                            break
        graph._triples = out
    return graph._triples


def _fan_in(graph: VerifiedGraph, rnd: random.Random, roots: list[str]) -> Plan | None:
    """A step fed by two upstream steps about the same place: a root, a step fed by it, and a target fed by
    both (the second step refines what the first found, e.g. the current observation's issue time and the
    place's grid for a forecast)."""
    triples = fan_in_triples(graph, roots)
    if not triples:
        return None
    a, b, target = _choose(rnd, triples, [graph.weight(list(t)) for t in triples])
    root = _root_for(graph, graph.tools[a], True)
    mid = graph.fed_sources(graph.tools[b], [(0, a)], rnd)
    if graph.fed_sources(graph.tools[target], [(0, a)], random.Random(0)) is not None:
        return None  # the root alone feeds the target: a careful agent skips the middle call
    if root is None or mid is None:
        return None
    for _ in range(6):
        sources = graph.fed_sources(graph.tools[target], [(0, a), (1, b)], rnd, link_clock=True)
        if sources is not None and set(_deps(sources)) == {0, 1}:
            plan = Plan(
                "fan_in",
                [
                    Step(graph.tools[a], root),
                    Step(graph.tools[b], mid, [0]),
                    Step(graph.tools[target], sources, [0, 1]),
                ],
                [2],
            )
            return plan if route_check(graph, plan) is None else None
    return None


def _parallel(graph: VerifiedGraph, rnd: random.Random, roots: list[str]) -> Plan | None:
    options = [r for r in roots if len(graph.edges.get(r, {})) >= 2]
    if not options:
        return None
    root = _choose(rnd, options, [graph.weight([r]) for r in options])
    children = sorted(graph.edges[root])
    rnd.shuffle(children)
    if graph.pending:  # the most promising pairs first (stable: the shuffled order among equals)
        children.sort(key=lambda c: -graph.pair_prior(root, c))
    picked: list[Step] = []
    for child in children:
        sources = graph.fed_sources(graph.tools[child], [(0, root)], rnd)
        if sources is not None:
            picked.append(Step(graph.tools[child], sources, [0]))
        if len(picked) == 2:
            break
    if len(picked) < 2:
        return None
    first = _root_for(graph, graph.tools[root], True)
    if first is None:
        return None
    plan = Plan("parallel", [Step(graph.tools[root], first), *picked], [1, 2])
    return plan if route_check(graph, plan) is None else None
