"""The graph plans are drawn over (`VerifiedGraph`): verified links (or pending ones, or every candidate), each
parameter's role and sources, coverage counts, and the user-value pools harvested from the world behind the
endpoints. See synthesis.plans."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from core.settings import Settings
from execution.executor import Executor
from execution.seeds import (
    coerce,
    kma_base,
    now,
    param_schema,
    seed_value,
    user_date,
)
from graph import echoes, envelopes
from graph.candidates import NON_LINKABLE
from graph.concepts import ROLE_EXTENSION, concepts_of, norm, pair_group, param_role
from graph.models import LinkRecord, ParamRecord, ToolRecord
from graph.paths import enumerate_paths
from graph.store import GraphStore, all_links
from synthesis import pools
from synthesis.records import Plan, Source
from synthesis.routes import entity_name_fields, is_area_field, row_kind

#: Link states no run has settled: the pending graph proposes plans over them, to be verified before they run.
PENDING = ("candidate", "inconclusive")
#: Page size for tools whose rows are the categories of one answer (see VerifiedGraph._whole_answer).
WHOLE_PAGE = 60
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_DATE_LIKE = re.compile(r"(de|dt|date|time|ts|ymd)$")
_NAME_FIELD = re.compile(r"(nm|name|명)$")


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
        samples: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
        sample_args: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """`unverified=True` walks every candidate link instead (the synthesise-then-filter baseline).
        `pending=True` walks the verified links and those no run has decided yet (candidate, inconclusive),
        never a refuted one: the demand-driven path (synthesis.demand) proposes plans over them and verifies the
        links on a plan before it runs (`decide` then keeps or drops each link). `samples` (the rows discovery
        sampled per tool) and `sample_args` (the arguments those rows answered) give the pending graph each
        undecided link's echo signal (graph.echoes): links the target's own answers contradict are proposed
        last."""
        self.store = store
        self.settings = settings
        self.unverified = unverified
        self.pending = pending and not unverified
        self.tools = {t.name: t for t in store.all_tools() if not api_ids or t.api_id in api_ids}
        links = all_links(store, status=None if unverified or self.pending else "verified")
        if self.pending:
            links = [lk for lk in links if lk.status in PENDING or lk.status == "verified"]
        self.links = {lk.id: lk for lk in links if lk.source_tool in self.tools and lk.target_tool in self.tools}
        #: The echo signal of each undecided link of the pending graph (no call: discovery's sampled rows).
        self.echo: dict[str, echoes.Echo] = (
            echoes.signals_for([lk for lk in self.links.values() if lk.status != "verified"], samples, sample_args)
            if self.pending and samples
            else {}
        )
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
        #: the area (시도 시군구, or empty) of each pool value's row, position by position
        self.pool_areas: dict[tuple[str, str], list[str]] = {}
        self._roles: dict[tuple[str, str], str] = {}
        self._roots: dict[str, dict[str, Source] | None] = {}
        self._clock: dict[tuple[str, str, str], Any] = {}
        self._triples: list[tuple[str, str, str]] | None = None
        self._entity: dict[str, ParamRecord | None] = {}
        #: The pending graph's evidence per step pair: pairs with a verified link, refuted links per pair.
        self.pair_verified: set[tuple[str, str]] = {
            (lk.source_tool, lk.target_tool) for lk in self.links.values() if lk.status == "verified"
        }
        self.pair_refuted: Counter[tuple[str, str]] = Counter((lk.source_tool, lk.target_tool) for lk in self.refuted)
        #: `pair_prior` per step pair, until a link between them is decided (the sampler weighs thousands of paths)
        self._pair_prior: dict[tuple[str, str], float] = {}
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

    def user_value(self, tool: ToolRecord, p: ParamRecord, rnd: random.Random) -> Any:
        """A value a user would state: a clock-relative date for a date parameter (a person asks about a month
        relative to today, not about dates harvested from other tools' rows), else from the harvested pool, else
        the seed."""
        pool = self.pools.get((tool.name, p.name))
        value = user_date(p.name, p.description, self.settings, rnd)
        if value is None and pool:
            # an area first, then a value in it: people ask about every district, not the first rows' one
            areas = self.pool_areas.get((tool.name, p.name), [])
            paired = list(zip(pool, areas, strict=True)) if len(areas) == len(pool) else [(v, "") for v in pool]
            value = pools.area_first(paired, rnd)
        elif value is None:
            value = seed_value(p, self.settings)
        return coerce(value, param_schema(tool, p.name))

    def clock_value(self, tool: ToolRecord, p: ParamRecord) -> Any:
        """Issue dates and times that follow from the clock the system message states."""
        key = (tool.name, p.name, now(self.settings).isoformat())  # per instant: trajectories differ in clock
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
        size = envelopes.size_param([(p.name, p.type) for p in tool.params])
        page = next((p for p in tool.params if p.name == size), None)
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

    def mention_field(self, tool: ToolRecord) -> str | None:
        """The field a person names a row of this tool by (a city's name in a code list, a complex's name in a
        동's list of complexes): the entity's name field, else an area's name field; None when the rows carry
        neither."""
        names = entity_name_fields(tool)
        if names:
            return names[0]
        return next(
            (f.name for f in tool.fields if is_area_field(f.name, f.description) and _NAME_FIELD.search(norm(f.name))),
            None,
        )

    def listing_sources(self, tool: ToolRecord) -> dict[str, Source] | None:
        """A listing callable with constants (and the clock) alone whose rows a person names (a code list of cities
        or regions): the start of a route where the user's words pick its row (`Step.names`); None for a tool that
        takes anything a user says or needs a code."""
        if (
            self.root_sources(tool) is not None
            or self.mention_field(tool) is None
            or any(self.role(tool, p) == "user" for p in tool.params)
        ):
            return None
        out: dict[str, Source] = {}
        for p in self._required(tool):
            role = self.role(tool, p)
            value = self.clock_value(tool, p) if role == "clock" else seed_value(p, self.settings)
            if role not in ("clock", "constant") or value is None:
                return None
            out[p.name] = Source(role, coerce(value, param_schema(tool, p.name)))
        return self._whole_answer(tool, out)

    def named_by(self, tool: ToolRecord) -> tuple[str, str]:
        """(field, parameter): how a person names a row of this tool in the middle of a route and the optional
        parameter that takes it, so the call narrows to it: the entity's name parameter (a stop's name), else an
        identifier a person knows that the rows carry (a bus route's number); else the name field alone (no
        parameter narrows) or nothing."""
        fields = {norm(f.name): f.name for f in tool.fields}
        entity = self.entity_param(tool)
        options = [entity] if entity is not None else []
        options += [
            p
            for p in tool.params
            if self.role(tool, p) == "user" and not _DATE_LIKE.search(p.name.lower()) and p is not entity
        ]
        for p in options:
            if not p.required and norm(p.name) in fields:
                return fields[norm(p.name)], p.name
        return self.mention_field(tool) or "", ""

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
        self,
        tool: ToolRecord,
        upstream: list[tuple[int, str]],
        rnd: random.Random,
        *,
        link_clock: bool = False,
        split: bool = False,
    ) -> dict[str, Source] | None:
        """Sources for a step fed by earlier steps (index, tool): verified links for codes (and for names an
        earlier result gives), the user for other user-knowable values, the clock, constants. Parameters that
        belong together (nx/ny, sigunguCd/bjdongCd, ...) come from one and the same upstream step.
        `link_clock` lets an issue date and time come from an upstream product of the same issue, and `split` a group
        come from two steps when no one step feeds it whole (fan-in: the middle step was asked with the root's row,
        so the root's city code and the stop id the middle step gives belong to one stop)."""
        out: dict[str, Source] = {}
        fed_any = False
        groups: dict[frozenset[str], int] = {}
        required = self._required(tool)
        for p in required:
            role = self.role(tool, p)
            options = [
                (i, lk) for i, up in upstream for lk in self.into.get((tool.name, p.key()), []) if lk.source_tool == up
            ]
            bound = self._same_step(tool, p, required, upstream, options, groups, rnd, split=split)
            if bound is None:
                if role == "code":
                    return None
                options = []
            else:
                options = bound
            if role == "clock" and not (link_clock and options):
                out[p.name] = Source("clock", self.clock_value(tool, p))
            elif role == "constant":
                value = seed_value(p, self.settings)
                if value is None:
                    return None
                out[p.name] = Source("constant", coerce(value, param_schema(tool, p.name)))
            elif options:
                # least used first; in the pending graph a verified link before one still to verify, and one the
                # target's sampled answers contradict (graph.echoes) after the others
                def rank(o: tuple[int, LinkRecord]) -> tuple[float, int]:
                    return -self.link_prior(o[1]), self.link_use[o[1].id]

                options.sort(key=lambda o: (self.pending and o[1].status != "verified", *rank(o), -o[1].score, o[1].id))
                best = [o for o in options if rank(o) == rank(options[0])]
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
        listings = [(i, up) for i, up in upstream if self.listing_sources(self.tools[up]) is not None]
        if not fed_any and listings and self.root_sources(tool) is None:
            # a listing whose required parameters are all constants (a tourism area list) narrows to the area the
            # user named in a code list through its optional area codes
            fed_any = self._fed_optional(tool, out, listings, groups, rnd)
        if not fed_any:
            return None
        self._narrow(tool, out, groups, dict(upstream))
        return self._whole_answer(tool, out)

    def _fed_optional(
        self,
        tool: ToolRecord,
        out: dict[str, Source],
        upstream: list[tuple[int, str]],
        groups: dict[frozenset[str], int],
        rnd: random.Random,
    ) -> bool:
        """Optional code parameters fed by verified links from the upstream steps (each from its least used
        link); True when one is."""
        fed = False
        optional = [p for p in tool.params if not p.required and self.role(tool, p) == "code" and p.name not in out]
        for p in optional:
            options = [
                (i, lk) for i, up in upstream for lk in self.into.get((tool.name, p.key()), []) if lk.source_tool == up
            ]
            bound = self._same_step(tool, p, optional, upstream, options, groups, rnd)
            if not bound:
                continue
            bound.sort(key=lambda o: (-self.link_prior(o[1]), self.link_use[o[1].id], -o[1].score, o[1].id))
            i, lk = bound[0]
            out[p.name] = Source("link", link=lk, from_step=i)
            fed = True
        return fed

    def _same_step(
        self,
        tool: ToolRecord,
        p: ParamRecord,
        required: list[ParamRecord],
        upstream: list[tuple[int, str]],
        options: list[tuple[int, LinkRecord]],
        groups: dict[frozenset[str], int],
        rnd: random.Random,
        *,
        split: bool = False,
    ) -> list[tuple[int, LinkRecord]] | None:
        """A parameter of a group that belongs together (nx/ny, ...) is fed only from the one upstream step that
        feeds every mate (chosen once per group, in `groups`): its options narrowed to that step, or None when no
        step feeds them all. Parameters outside a group (or with no options) keep theirs."""
        group = pair_group(p.name)
        if group is None or not options:
            return options
        mates = [q for q in required if q.name in group]
        steps_ok = set.intersection(
            *[
                {i for i, up in upstream for lk in self.into.get((tool.name, q.key()), []) if lk.source_tool == up}
                for q in mates
            ]
        )
        if group in groups:
            steps_ok &= {groups[group]}
        if not steps_ok and split and group not in groups:
            return options
        if not steps_ok:
            return None
        if group not in groups:
            groups[group] = rnd.choice(sorted(steps_ok))
        return [o for o in options if o[0] == groups[group]]

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
        """How promising the step a -> b is to the pending graph: 4 with a verified link, else the best echo prior
        of its undecided links (`link_prior`) / (1 + 2 per refuted link between them); always 1 outside the
        pending graph."""
        if not self.pending:
            return 1.0
        if (a, b) in self.pair_verified:
            return 4.0
        known = self._pair_prior.get((a, b))
        if known is None:
            ids = self.edges.get(a, {}).get(b, [])
            bet = max((self.link_prior(self.links[i]) for i in ids if i in self.links), default=1.0)
            known = self._pair_prior[(a, b)] = bet / (1.0 + 2 * self.pair_refuted[(a, b)])
        return known

    def link_prior(self, link: LinkRecord) -> float:
        """What the echo signal (graph.echoes) says of an undecided link of the pending graph, as a weight
        (`echoes.PRIOR`: 1/20 when the target is known to answer only other values of the same form, else 1); 1
        for a verified link and outside the pending graph."""
        if not self.pending or link.status == "verified":
            return 1.0
        return echoes.prior(self.echo.get(link.id))

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
        self._pair_prior.pop((link.source_tool, link.target_tool), None)
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
        """Fill the value pools from the world (synthesis.pools.harvest); returns the upstream calls spent. The
        sources and fan-in triples worked out before are worked out again over the new pools."""
        self._roots.clear()
        self._triples = None
        return await pools.harvest(self, executor)
