"""Trajectories from the verified graph: sample plans over verified links only (paths come from the store's
Cypher path query on Neo4j, or the same semantics on the embedded store), execute them for real through the
same executor as verification, and record every argument with its provenance.

Shapes: `single` (one call), `chain` (2-6 steps, each fed by the previous ones), `fan_in` (a step fed by two
upstream steps about the same place or entity), `parallel` (two calls fed by one root, combined in the answer).

Users know names, tools know codes: every parameter has a role (`graph.concepts.param_role`). A plan starts
from a tool whose inputs a person knows (address text, names, dates, business registration numbers); every
system code later in the plan comes from an earlier tool result; issue dates and times follow from the clock
the system message states. Slot values are drawn from the world behind the endpoints: before planning, each
tool callable from seeds alone is called once and the values of the fields that verified links (or names)
tie to a user parameter become that parameter's pool.

Arguments are typed per the tool's JSON Schema and validated with `jsonschema` when a record is built; the tool
message keeps the rows and fields later steps and the answer use (`trim`), and states the total row count.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import jsonschema

from core.settings import ENGINE_VERSION, Settings
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
from graph import transforms as T
from graph.candidates import NON_LINKABLE
from graph.concepts import KMA_PREFERRED, ROLE_EXTENSION, answer_label, norm, pair_group, param_role
from graph.models import LinkRecord, ParamRecord, ToolRecord, utcnow
from graph.paths import enumerate_paths
from graph.specs import function_spec
from graph.store import GraphStore, all_links
from synthesis.contamination import BenchFingerprints
from synthesis.conversions import with_conversions
from synthesis.language import (
    answer_text,
    clarification_turns,
    goal,
    irrelevance_answer,
    irrelevant_request,
    paraphrase,
    request_text,
)
from synthesis.records import (
    FailedAttempt,
    Plan,
    Source,
    Step,
    StepResponse,
    Trajectory,
    TrajectoryMeta,
    TrajectoryStep,
)

SHAPES = ("single", "chain", "fan_in", "parallel")
MAX_ROWS, MAX_FIELDS, MAX_CHARS = 3, 24, 200
TRIM_RULE = (f"responses show at most {MAX_ROWS} rows (first the row later steps and the answer use), the fields "
             f"later steps and the answer use plus others up to {MAX_FIELDS} per row, strings cut at {MAX_CHARS} "
             "characters; the tool message states the total row count")
#: Shares of the special samples among the kept records (`synthesize(extras=...)`).
DEFAULT_EXTRAS: dict[str, float] = {"irrelevance": 0.05, "clarification": 0.05, "error_recovery": 0.05,
                                    "hard_negative": 0.05}
DISTRACTORS = 2
#: Page size for tools whose rows are the categories of one answer (see VerifiedGraph._whole_answer).
WHOLE_PAGE = 60
#: Budget for a record's estimated rendered length (characters, tools included), with room for the template's
#: text and the special samples' extra turns: every rendered conversation stays under
#: `synthesis.export.SFT_MAX_LENGTH` characters, hence tokens (chat tokenizers spend at most one per character).
MAX_RENDERED_CHARS = 7000
#: How often one plan (tool sequence and shape) may be drawn; each draw gets its own user values.
REPEATS = {"single": 16, "chain": 6, "fan_in": 6, "parallel": 4}
_ADDRESS_FIELDS = ("roadAddr", "roadAddrPart1", "addr", "addr1", "kaptAddr", "doroJuso", "platPlc", "newPlatPlc",
                   "jibunAddr")
_KEYWORD_FIELDS = ("title",)
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_DATE_LIKE = re.compile(r"(de|dt|date|time|ts|ymd)$")


class RecordError(ValueError):
    """A trajectory that executed but cannot become a training record (the reason says why)."""


class VerifiedGraph:
    """Verified links by target parameter, the tool-level edges, and usage counts for coverage-aware sampling."""

    def __init__(self, store: GraphStore, settings: Settings, api_ids: list[str] | None = None, *,
                 unverified: bool = False) -> None:
        """`unverified=True` walks every candidate link instead (the synthesise-then-filter baseline)."""
        self.store = store
        self.settings = settings
        self.unverified = unverified
        self.tools = {t.name: t for t in store.all_tools() if not api_ids or t.api_id in api_ids}
        links = all_links(store, status=None if unverified else "verified")
        self.links = {lk.id: lk for lk in links if lk.source_tool in self.tools and lk.target_tool in self.tools}
        if unverified:
            edges: dict[str, dict[str, list[str]]] = {}
            for lk in self.links.values():
                if lk.source_tool != lk.target_tool:
                    edges.setdefault(lk.source_tool, {}).setdefault(lk.target_tool, []).append(lk.id)
            self.edges = edges
        else:
            self.edges = {s: {t: [i for i in ids if i in self.links] for t, ids in targets.items() if t in self.tools}
                          for s, targets in store.verified_edges().items() if s in self.tools}
        self.into: dict[tuple[str, str], list[LinkRecord]] = {}
        for lk in self.links.values():
            self.into.setdefault((lk.target_tool, lk.target_param), []).append(lk)
        self.refuted = [] if unverified else [lk for lk in all_links(store, status="refuted")
                                               if lk.source_tool in self.tools and lk.target_tool in self.tools]
        self.tool_use: Counter[str] = Counter()
        self.link_use: Counter[str] = Counter()
        self.pools: dict[tuple[str, str], list[Any]] = {}
        self._roles: dict[tuple[str, str], str] = {}
        self._roots: dict[str, dict[str, Source] | None] = {}
        self._clock: dict[tuple[str, str], Any] = {}
        self._triples: list[tuple[str, str, str]] | None = None

    # ------------------------------------------------------------------ roles and values

    def role(self, tool: ToolRecord, p: ParamRecord) -> str:
        key = (tool.name, p.name)
        if key not in self._roles:
            schema = param_schema(tool, p.name) or {}
            override = schema.get(ROLE_EXTENSION)
            self._roles[key] = param_role(p.name, p.description, enum=p.enum, has_default=p.default is not None,
                                          override=str(override) if override else None,
                                          non_linkable=p.name in NON_LINKABLE)
        return self._roles[key]

    def slot_value(self, tool: ToolRecord, pname: str) -> Any:
        p = next(p for p in tool.params if p.name == pname)
        return seed_value(p, self.settings)

    def user_value(self, tool: ToolRecord, p: ParamRecord, rnd: random.Random) -> Any:
        """A value a user would state: from the harvested pool, a clock-relative date, or the seed."""
        pool = self.pools.get((tool.name, p.name))
        if pool:
            value = rnd.choice(pool)
        else:
            value = user_date(p.name, p.description, self.settings, rnd) or seed_value(p, self.settings)
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
        fmt = tool.format_param.split("=")[0] if tool.format_param else None
        return [p for p in tool.params if p.required and p.name != fmt]

    def root_sources(self, tool: ToolRecord) -> dict[str, Source] | None:
        """A tool callable from what a user says (and constants and the clock) alone; None when it needs a
        system code, or when nothing a user would say goes into it."""
        if tool.name not in self._roots:
            self._roots[tool.name] = self._root_sources(tool)
        cached = self._roots[tool.name]
        return None if cached is None else dict(cached)

    def _root_sources(self, tool: ToolRecord) -> dict[str, Source] | None:
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
        if not any(s.kind == "slot" for s in out.values()):
            named = set(_PLACEHOLDER.findall(tool.intent or ""))
            optional = sorted((p for p in tool.params if not p.required and self.role(tool, p) == "user"
                               and (p.name in named or not _DATE_LIKE.search(p.name.lower()))),
                              key=lambda p: (p.name not in named, tool.params.index(p)))
            for p in optional:
                pool = self.pools.get((tool.name, p.name))
                value = pool[0] if pool else seed_value(p, self.settings)
                if value not in (None, ""):
                    out[p.name] = Source("slot", coerce(value, param_schema(tool, p.name)))
                    break
            else:
                return None
        return self._whole_answer(tool, out)

    def fed_sources(self, tool: ToolRecord, upstream: list[tuple[int, str]], rnd: random.Random, *,
                    link_clock: bool = False) -> dict[str, Source] | None:
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
            options = [(i, lk) for i, up in upstream for lk in self.into.get((tool.name, p.key()), [])
                       if lk.source_tool == up]
            group = pair_group(p.name)
            if group is not None and options:
                mates = [q for q in required if q.name in group]
                steps_ok = set.intersection(*[{i for i, up in upstream for lk in self.into.get((tool.name, q.key()), [])
                                               if lk.source_tool == up} for q in mates])
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
                options.sort(key=lambda o: (self.link_use[o[1].id], -o[1].score, o[1].id))
                best = [o for o in options if self.link_use[o[1].id] == self.link_use[options[0][1].id]]
                i, lk = rnd.choice(best)
                out[p.name] = Source("link", link=lk, from_step=i)
                fed_any = True
            elif role == "user":
                value = seed_value(p, self.settings)
                pool = self.pools.get((tool.name, p.name))
                value = pool[0] if pool else (value if value is not None else
                                              user_date(p.name, p.description, self.settings, random.Random(0)))
                if value is None:
                    return None
                out[p.name] = Source("slot", coerce(value, param_schema(tool, p.name)))
            else:
                return None
        return self._whole_answer(tool, out) if fed_any else None

    def weight(self, names: list[str]) -> float:
        return 1.0 / (1.0 + sum(self.tool_use[n] for n in names))

    def paths(self, starts: list[str], min_hops: int, max_hops: int, per_start: int) -> list[list[str]]:
        """Verified graph: the store's path query (Cypher on Neo4j); candidate graph: the same walk in Python."""
        if self.unverified:
            return enumerate_paths(self.edges, starts, min_hops, max_hops, per_start)
        return self.store.sample_paths(starts, min_hops, max_hops, per_start)

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
                            values.append(T.apply(lk.transform, r.get(lk.source_field), r))
                        except T.TransformError:
                            continue
                n = norm(p.name)
                if n == "keyword":
                    names = _ADDRESS_FIELDS if "주소" in p.description else _KEYWORD_FIELDS
                    for f in names:
                        values.extend(by_field.get(norm(f), []))
                elif n not in ("numofrows", "pageno"):
                    values.extend(by_field.get(n, []))
                unique = {json.dumps(v, ensure_ascii=False, sort_keys=True): v
                          for v in (_pool_value(x) for x in values) if v is not None}
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


def sample_plans(graph: VerifiedGraph, count: int, *, shapes: tuple[str, ...] = SHAPES, min_steps: int = 1,
                 max_steps: int = 6, seed: int = 7, max_tool_share: float = 0.25) -> list[Plan]:
    """Seeded, coverage-aware plans; every required parameter of every step is satisfiable, every plan starts
    from tools a user's words can call."""
    rnd = random.Random(seed)
    roots = sorted(n for n, t in graph.tools.items() if graph.root_sources(t) is not None)
    if not roots:
        return []
    cap = max(3, int(count * max_tool_share))
    # one path query per length, so that long chains are not crowded out by short ones
    paths = [p for hops in range(max(1, min_steps - 1), min(max_steps - 1, 5) + 1)
             for p in graph.paths(roots, hops, hops, per_start=40)] if max_steps > 1 else []
    chains = [p for p in paths if all(n in graph.tools for n in p) and min_steps <= len(p) <= max_steps and len(p) >= 2]
    plans: list[Plan] = []
    seen: Counter[str] = Counter()
    wanted = [s for s in shapes if s in SHAPES] or list(SHAPES)
    made: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    attempts = 0
    while len(plans) < count and attempts < count * 30:
        attempts += 1
        # the shape furthest behind its share goes next; shapes that keep failing step aside
        open_shapes = [s for s in wanted if failures[s] < count * 5] or wanted
        shape = min(open_shapes, key=lambda s: (made[s], failures[s], wanted.index(s)))
        plan = None
        if shape == "single" and min_steps <= 1:
            name = _choose(rnd, roots, [graph.weight([r]) for r in roots])
            plan = Plan("single", [Step(graph.tools[name], graph.root_sources(graph.tools[name]) or {})], [0])
        elif shape == "chain" and chains:
            # coverage-aware among a random handful: rarely used tools win, without scoring every path
            options = rnd.sample(chains, min(48, len(chains)))
            plan = _chain(graph, _choose(rnd, options, [graph.weight(p) for p in options]), rnd)
        elif shape == "fan_in" and max_steps >= 3:
            plan = _fan_in(graph, rnd, roots)
        elif shape == "parallel" and max_steps >= 3:
            plan = _parallel(graph, rnd, roots)
        # a plan may repeat a few times: its user values are drawn from the pools at execution
        # the cap spreads use over tools; the first step is exempt (few tools take what a user says)
        if plan is None or seen[plan.key] >= REPEATS.get(plan.shape, 1) or any(
                graph.tool_use[s.tool.name] >= cap for s in plan.steps[1:]):
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
    return plans


def _deps(sources: dict[str, Source]) -> list[int]:
    return sorted({s.from_step for s in sources.values() if s.kind == "link"})


def _chain(graph: VerifiedGraph, names: list[str], rnd: random.Random) -> Plan | None:
    root = graph.root_sources(graph.tools[names[0]])
    if root is None:
        return None
    steps = [Step(graph.tools[names[0]], root)]
    for i, name in enumerate(names[1:], start=1):
        sources = graph.fed_sources(graph.tools[name], [(j, names[j]) for j in range(i)], rnd)
        if sources is None or not any(s.kind == "link" and s.from_step == i - 1 for s in sources.values()):
            return None
        steps.append(Step(graph.tools[name], sources, _deps(sources)))
    return Plan("chain", steps, [len(steps) - 1])


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
    root = graph.root_sources(graph.tools[a])
    mid = graph.fed_sources(graph.tools[b], [(0, a)], rnd)
    if root is None or mid is None:
        return None
    for _ in range(6):
        sources = graph.fed_sources(graph.tools[target], [(0, a), (1, b)], rnd, link_clock=True)
        if sources is not None and set(_deps(sources)) == {0, 1}:
            return Plan("fan_in", [Step(graph.tools[a], root), Step(graph.tools[b], mid, [0]),
                                   Step(graph.tools[target], sources, [0, 1])], [2])
    return None


def _parallel(graph: VerifiedGraph, rnd: random.Random, roots: list[str]) -> Plan | None:
    options = [r for r in roots if len(graph.edges.get(r, {})) >= 2]
    if not options:
        return None
    root = _choose(rnd, options, [graph.weight([r]) for r in options])
    children = sorted(graph.edges[root])
    rnd.shuffle(children)
    picked: list[Step] = []
    for child in children:
        sources = graph.fed_sources(graph.tools[child], [(0, root)], rnd)
        if sources is not None:
            picked.append(Step(graph.tools[child], sources, [0]))
        if len(picked) == 2:
            break
    if len(picked) < 2:
        return None
    return Plan("parallel", [Step(graph.tools[root], graph.root_sources(graph.tools[root]) or {}), *picked], [1, 2])


# ---------------------------------------------------------------------------------------------- execution

def _answer_rows(rows: list[dict[str, Any]]) -> list[int]:
    """Rows an answer prefers: KMA category rows in a readable order; otherwise the first rows."""
    if rows and "category" in rows[0]:
        order = {c: i for i, c in enumerate(KMA_PREFERRED)}
        ranked = sorted((order[str(r.get("category"))], i) for i, r in enumerate(rows)
                        if str(r.get("category")) in order)
        seen: set[str] = set()
        out = []
        for _, i in ranked:
            c = str(rows[i].get("category"))
            if c not in seen:
                seen.add(c)
                out.append(i)
        return out
    return list(range(len(rows)))


def trim(items: list[dict[str, Any]], *, keep_rows: list[int] | None = None,
         keep_fields: set[str] | None = None) -> list[dict[str, Any]]:
    """The rows and fields the model sees: `keep_rows` first (in the answer's order), the fields later steps
    and the answer use, then others up to MAX_FIELDS."""
    order = list(dict.fromkeys([*(keep_rows or []), *range(len(items))]))[:MAX_ROWS]
    wanted = keep_fields or set()
    out = []
    for i in sorted(order):
        row = items[i]
        names = [k for k in row if k in wanted or answer_label(k) is not None]
        names += [k for k in row if k not in names][: max(0, MAX_FIELDS - len(names))]
        chosen = set(names)
        out.append({k: (v[:MAX_CHARS] if isinstance(v, str) else v) for k, v in row.items() if k in chosen})
    return out


@dataclass
class Outcome:
    steps: list[TrajectoryStep] | None
    reason: str = ""
    failed_links: list[str] = field(default_factory=list)
    calls: int = 0


def _needed_fields(plan: Plan, idx: int) -> set[str]:
    out: set[str] = set()
    for later in plan.steps[idx + 1:]:
        for src in later.sources.values():
            if src.kind == "link" and src.link is not None and src.from_step == idx:
                out.add(src.link.source_field)
                pair = src.link.transform.get("pair")
                if pair:
                    out.add(str(pair))
    return out


async def execute_plan(plan: Plan, executor: Executor, rnd: random.Random, *, tries: int = 3,
                       graph: VerifiedGraph | None = None) -> Outcome:
    """Run a plan end to end; on failure retry with other user values and upstream rows, then give up with the
    reason. The first try follows each step's top row (what the user's words found first)."""
    reason = ""
    failed: list[str] = []
    calls = 0
    for attempt in range(tries):
        chosen_rows: list[dict[str, Any]] = []
        steps_out: list[TrajectoryStep] = []
        ok = True
        for idx, step in enumerate(plan.steps):
            args: dict[str, Any] = {}
            prov: dict[str, Any] = {}
            try:
                for pname, src in step.sources.items():
                    schema = param_schema(step.tool, pname)
                    if src.kind == "link" and src.link is not None:
                        row = chosen_rows[src.from_step]
                        raw = row.get(src.link.source_field)
                        args[pname] = coerce(T.apply(src.link.transform, raw, row), schema)
                        prov[pname] = {**src.provenance(), "source_value": raw}
                        continue
                    if src.kind == "slot" and graph is not None:
                        p = next(p for p in step.tool.params if p.name == pname)
                        args[pname] = graph.user_value(step.tool, p, rnd)
                    else:
                        args[pname] = coerce(src.value, schema)
                    prov[pname] = {"kind": src.kind, "value": args[pname]}
            except T.TransformError as exc:
                ok, reason = False, f"step {idx + 1} ({step.tool.name}): transform failed: {exc}"
                failed = [s.link.id for s in step.sources.values() if s.link is not None]
                break
            result = await executor.call(step.tool, args)
            calls += 0 if result.cached else 1
            if not result.ok:
                ok = False
                reason = f"step {idx + 1} ({step.tool.name}): {result.outcome} {result.reason}".strip()
                if result.definitive and any(s.kind == "link" for s in step.sources.values()):
                    failed = [s.link.id for s in step.sources.values() if s.link is not None]
                break
            rows = [r for r in result.items if isinstance(r, dict)]
            final = idx in plan.finals
            preferred = _answer_rows(rows) if final else []
            top = (preferred[0] if preferred else 0) if attempt == 0 else rnd.randrange(min(len(rows), MAX_ROWS))
            keep = list(dict.fromkeys([top, *preferred]))
            chosen_rows.append(rows[top])
            items = trim(rows, keep_rows=keep, keep_fields=_needed_fields(plan, idx))
            shown = sorted(list(dict.fromkeys([*keep, *range(len(rows))]))[:MAX_ROWS])
            steps_out.append(TrajectoryStep(
                step=idx + 1, tool=step.tool.name, arguments=args, provenance=prov,
                depends_on=[d + 1 for d in step.depends_on],
                response=StepResponse(rows=len(rows), items=items, shown=shown, chosen=shown.index(top), url=result.url,
                                      replayed_from_cache=result.cached)))
        if ok:
            return Outcome(steps_out, calls=calls)
    return Outcome(None, reason, failed, calls)


def record_id(request: str, steps: list[TrajectoryStep]) -> str:
    raw = json.dumps([request, [(s.tool, s.arguments) for s in steps]], ensure_ascii=False, sort_keys=True, default=str)
    return "tr_" + hashlib.sha256(raw.encode()).hexdigest()[:16]


def validate_arguments(tool: ToolRecord, args: dict[str, Any]) -> str | None:
    """The first JSON Schema violation of a call's arguments, or None."""
    schema = tool.json_schema or {"type": "object"}
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
    if not errors:
        return None
    e = errors[0]
    where = "/".join(str(x) for x in e.path) or "(arguments)"
    return f"{where}: {e.message[:160]}"


def _check(plan: Plan, steps: list[TrajectoryStep]) -> None:
    for s, st in zip(plan.steps, steps, strict=True):
        problem = validate_arguments(s.tool, st.arguments)
        if problem:
            raise RecordError(f"schema: step {st.step} ({st.tool}) {problem}")
        for pname, prov in st.provenance.items():
            if prov["kind"] != "link":
                continue
            up = steps[prov["from_step"]]
            if not any(str(r.get(prov["field"])) == str(prov.get("source_value")) for r in up.response.items):
                raise RecordError(f"grounding: step {st.step} {pname} uses a value the tool message of step "
                                  f"{up.step} does not show")


def _only_used_row(step: TrajectoryStep) -> TrajectoryStep:
    r = step.response
    if len(r.items) <= 1:
        return step
    return step.model_copy(update={"response": r.model_copy(update={
        "items": [r.items[r.chosen]], "shown": [r.shown[r.chosen]] if r.shown else [], "chosen": 0})})


def clock_iso(settings: Settings) -> str:
    return now(settings).isoformat(timespec="minutes")


def build_record(plan: Plan, outcome: Outcome, graph: VerifiedGraph, rnd: random.Random, *, seed: int,
                 distractors: int = DISTRACTORS, snapshot: str = "") -> Trajectory:
    """The typed record; raises RecordError when an argument breaks its schema or a linked value is not
    visible in the earlier tool message."""
    assert outcome.steps is not None
    steps = outcome.steps
    _check(plan, steps)
    slots = {f"{s.tool}.{p}": v["value"] for s in steps for p, v in s.provenance.items() if v["kind"] == "slot"}
    request = request_text(plan, steps, rnd)
    template_request = request
    if graph.settings.batches.paraphrase_url:
        keep = [str(v) for v in slots.values() if isinstance(v, str | int | float)]
        request = paraphrase(request, graph.settings.batches.paraphrase_url, must_keep=keep)
    chain_tools = [s.tool for s in plan.steps]
    others = sorted(n for n in graph.tools if n not in {t.name for t in chain_tools})
    extra = [graph.tools[n] for n in rnd.sample(others, min(distractors, len(others)))]
    spec_len = {t.name: len(json.dumps(function_spec(t), ensure_ascii=False)) for t in [*chain_tools, *extra]}

    def size() -> int:
        return 1000 + len(request) + sum(len(json.dumps(s.arguments, ensure_ascii=False)) + 80 + len(
            json.dumps(s.response.items, ensure_ascii=False)) for s in steps) + sum(spec_len.values())

    while extra and size() > MAX_RENDERED_CHARS:
        spec_len.pop(extra.pop().name, None)  # fewer distractors before anything the model needs goes
    for final in (False, True):  # then only the used row of intermediate steps, then of final ones
        if size() <= MAX_RENDERED_CHARS:
            break
        steps = [_only_used_row(s) if (s.step - 1 in plan.finals) == final and not (
            final and s.response.items and "category" in s.response.items[0]) else s for s in steps]
    if size() > MAX_RENDERED_CHARS:
        raise RecordError(f"too long: about {size()} characters rendered (limit {MAX_RENDERED_CHARS})")
    answer, answered = answer_text(plan, steps)
    goals = [goal(plan.steps[i].tool, {p: v["value"] for p, v in steps[i].provenance.items() if v["kind"] == "slot"})[0]
             for i in plan.finals]
    intermediate = [goal(s.tool, {})[0] for i, s in enumerate(plan.steps) if i not in plan.finals]
    offered = list({t.name: t for t in [*chain_tools, *extra]}.values())
    rnd.shuffle(offered)
    live = not any(s.response.replayed_from_cache for s in steps)
    return Trajectory(
        id=record_id(request, steps), request=request, shape=plan.shape, n_steps=len(steps),
        slots=slots, tools=[function_spec(t) for t in offered], distractors=[t.name for t in extra],
        steps=steps, final_steps=[i + 1 for i in plan.finals], final_answer=answer, now=clock_iso(graph.settings),
        metadata=TrajectoryMeta(
            template_request=template_request, graph_snapshot=snapshot,
            verified_links=sorted({v["link"] for s in steps for v in s.provenance.values() if v["kind"] == "link"}),
            created_at=utcnow(), provenance="live" if live else "replayed_from_cache", seed=seed,
            engine=ENGINE_VERSION, trim_rule=TRIM_RULE, answered=answered, goals=goals,
            intermediate_goals=intermediate),
    )


def _shingles(text: str) -> set[str]:
    t = re.sub(r"\s+", "", text)
    return {t[i:i + 3] for i in range(max(1, len(t) - 2))}


def is_near_duplicate(record: Trajectory, kept: list[Trajectory], threshold: float = 0.9,
                      shingles: dict[str, set[str]] | None = None) -> bool:
    """Same tool chain with the same arguments, or the same chain with a near-identical request (`shingles`
    caches the kept requests' 3-gram sets by record id)."""
    cache = shingles if shingles is not None else {}
    chain = [s.tool for s in record.steps]
    args = [s.arguments for s in record.steps]
    sh = _shingles(record.request)
    for other in kept:
        if [s.tool for s in other.steps] == chain and [s.arguments for s in other.steps] == args:
            return True
        osh = cache.get(other.id)
        if osh is None:
            osh = cache[other.id] = _shingles(other.request)
        if len(sh & osh) / max(1, len(sh | osh)) >= threshold and [s.tool for s in other.steps] == chain:
            return True
    return False


def snapshot_id(graph: VerifiedGraph) -> str:
    return "g_" + hashlib.sha256(json.dumps(sorted(graph.links), ensure_ascii=False).encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------------- special samples

def _quota(extras: dict[str, float], count: int) -> dict[str, int]:
    return {k: round(max(0.0, min(1.0, v)) * count) for k, v in extras.items() if k in DEFAULT_EXTRAS}


def make_irrelevance(graph: VerifiedGraph, rnd: random.Random, *, seed: int, snapshot: str) -> Trajectory:
    """A request no offered tool serves: the assistant answers without calling."""
    names = sorted(graph.tools)
    offered = [graph.tools[n] for n in rnd.sample(names, min(DISTRACTORS + 1, len(names)))]
    request = irrelevant_request(rnd)
    answer = irrelevance_answer(offered, rnd)
    rid = "tr_" + hashlib.sha256(json.dumps([request, [t.name for t in offered]], ensure_ascii=False).encode()).hexdigest()[:16]
    return Trajectory(id=rid, request=request, shape="single", n_steps=0, tools=[function_spec(t) for t in offered],
                      distractors=[t.name for t in offered], steps=[], final_steps=[], final_answer=answer,
                      kind="irrelevance", now=clock_iso(graph.settings),
                      metadata=TrajectoryMeta(template_request=request, graph_snapshot=snapshot, created_at=utcnow(),
                                              seed=seed, engine=ENGINE_VERSION, trim_rule=TRIM_RULE, answered={}))


def make_clarification(record: Trajectory, graph: VerifiedGraph, rnd: random.Random) -> Trajectory | None:
    """The user leaves out the one input the first call needs; the assistant asks; a second turn supplies it."""
    if record.n_steps < 1 or record.kind != "normal":
        return None
    first = record.steps[0]
    slots = [(p, v["value"]) for p, v in first.provenance.items() if v["kind"] == "slot"]
    if len(slots) != 1:
        return None
    tool = graph.tools.get(first.tool)
    if tool is None:
        return None
    pname, value = slots[0]
    param = next((p for p in tool.params if p.name == pname), None)
    if param is None:
        return None
    turns = clarification_turns(record, param, value, rnd)
    if turns is None:
        return None
    opening, question, reply = turns
    bare = [goal(graph.tools[s.tool], {})[0] for s in record.steps if s.step in record.final_steps and s.tool in graph.tools]
    extra = record.metadata.model_extra or {}
    meta = record.metadata.model_copy(update={"goals": [*extra.get("goals", []), *bare]})
    return record.model_copy(update={"metadata": meta,
        "kind": "clarification", "request": reply, "id": record_id(opening + reply, record.steps),
        "preamble": [{"role": "user", "content": opening}, {"role": "assistant", "content": question}]})


async def make_error_recovery(record: Trajectory, graph: VerifiedGraph, executor: Executor) -> tuple[Trajectory | None, int]:
    """A real failed first call (a required input left out) that the assistant notices and repeats correctly."""
    if record.n_steps < 1 or record.kind != "normal":
        return None, 0
    first = record.steps[0]
    tool = graph.tools.get(first.tool)
    if tool is None:
        return None, 0
    droppable = [p for p, v in first.provenance.items() if v["kind"] in ("slot", "link", "clock")
                 and any(q.name == p and q.required for q in tool.params)]
    if not droppable:
        return None, 0
    bad = {k: v for k, v in first.arguments.items() if k != droppable[-1]}
    result = await executor.call(tool, bad)
    spent = 0 if result.cached else 1
    if result.ok:
        return None, spent
    error = f"{result.outcome}: {result.reason}".strip(": ") or result.outcome
    attempt = FailedAttempt(before_step=1, tool=tool.name, arguments=bad, error=error[:300])
    return record.model_copy(update={"kind": "error_recovery", "attempts": [attempt]}), spent


def make_hard_negative(record: Trajectory, graph: VerifiedGraph, rnd: random.Random) -> Trajectory | None:
    """Offer the source tool of a refuted link into one of the record's linked parameters: a tempting wrong
    chain is available, the record takes the verified one."""
    if record.n_steps < 2 or record.kind != "normal":
        return None
    used = {s.tool for s in record.steps}
    offered = {t["function"]["name"] for t in record.tools}
    options = []
    for s in record.steps:
        for pname, prov in s.provenance.items():
            if prov["kind"] != "link":
                continue
            for lk in graph.refuted:
                if lk.target_tool == s.tool and lk.target_param.split(":", 1)[-1] == pname and lk.source_tool not in used:
                    options.append((s.step, pname, lk))
    if not options:
        return None
    step, pname, lk = rnd.choice(sorted(options, key=lambda o: (o[0], o[1], o[2].id)))
    tools = list(record.tools)
    distractors = list(record.distractors)
    if lk.source_tool not in offered:
        if distractors:
            drop = distractors.pop()
            tools = [t for t in tools if t["function"]["name"] != drop]
        tools.append(function_spec(graph.tools[lk.source_tool]))
        rnd.shuffle(tools)
    distractors.append(lk.source_tool)
    meta = record.metadata.model_copy(update={"hard_negative": {
        "refuted_link": lk.id, "tempting_tool": lk.source_tool, "tempting_field": lk.source_field,
        "step": step, "param": pname}})
    return record.model_copy(update={"kind": "hard_negative", "tools": tools, "distractors": distractors,
                                     "metadata": meta})


async def synthesize(store: GraphStore, settings: Settings, executor: Executor, *, count: int,
                     shapes: tuple[str, ...] = SHAPES, min_steps: int = 1, max_steps: int = 6, seed: int = 7,
                     api_ids: list[str] | None = None, progress: Any = None, unverified: bool = False,
                     extras: dict[str, float] | None = None,
                     guard: BenchFingerprints | None = None) -> dict[str, Any]:
    """Sample, execute and record up to `count` trajectories; failures are discarded with their reason and the
    links that failed inside a trajectory are queued for re-verification. Plans run in waves until enough are
    kept, so no call is spent beyond need. `extras` sets the shares of irrelevance, clarification,
    error-recovery and hard-negative samples (DEFAULT_EXTRAS when None; {} for none). `guard` (the benchmark's
    fingerprints) discards any trajectory that reproduces a benchmark task: same tool sequence with the same user
    values, or a near-duplicate request."""
    graph = VerifiedGraph(store, settings, api_ids, unverified=unverified)
    snap = snapshot_id(graph)
    kept: list[Trajectory] = []
    shingles: dict[str, set[str]] = {}
    discarded: list[dict[str, str]] = []
    calls = await graph.harvest(executor)
    quota = _quota(DEFAULT_EXTRAS if extras is None else extras, count)
    normal_needed = max(1, count - quota.get("irrelevance", 0)) if count > 1 else count
    pool = sample_plans(graph, int(count * 1.6) + 5, shapes=shapes, min_steps=min_steps, max_steps=max_steps, seed=seed)
    pool = [with_conversions(p, graph.tools) for p in pool]  # projections become conversion-tool steps
    sem = asyncio.Semaphore(settings.verify.concurrency)

    async def one(i: int, plan: Plan) -> tuple[int, Plan, Outcome, random.Random]:
        local = random.Random(f"{seed}-{i}")
        async with sem:
            return i, plan, await execute_plan(plan, executor, local, graph=graph), local

    flagged: set[str] = set()
    wave = max(8, settings.verify.concurrency * 2)
    attempted = 0
    for start in range(0, len(pool), wave):
        if len(kept) >= normal_needed:
            break
        chunk = list(enumerate(pool))[start:start + wave]
        results = await asyncio.gather(*(one(i, p) for i, p in chunk))
        for _i, plan, outcome, local in sorted(results, key=lambda r: r[0]):
            attempted += 1
            calls += outcome.calls
            if outcome.steps is None:
                discarded.append({"plan": plan.key, "reason": outcome.reason})
                flagged.update(outcome.failed_links)
                continue
            if len(kept) >= normal_needed:
                continue
            try:
                record = build_record(plan, outcome, graph, local, seed=seed, snapshot=snap)
            except RecordError as exc:
                discarded.append({"plan": plan.key, "reason": str(exc)})
                continue
            if is_near_duplicate(record, kept, shingles=shingles):
                discarded.append({"plan": plan.key, "reason": "near duplicate"})
                continue
            leak = guard.is_contaminated(record) if guard is not None else None
            if leak:
                discarded.append({"plan": plan.key, "reason": f"benchmark overlap: {leak}"})
                continue
            kept.append(record)
    rnd = random.Random(f"{seed}-extras")
    made: Counter[str] = Counter()
    if kept and len(kept) < normal_needed:  # the graph gave fewer: keep the configured shares of what there is
        scale = len(kept) / normal_needed
        quota = {k: round(v * scale) for k, v in quota.items()}
    # special samples never take the first record's place, so readers that look at one example see a plain one
    order = list(range(1, len(kept)))
    rnd.shuffle(order)
    for i in order:
        rec = kept[i]
        if made["hard_negative"] < quota.get("hard_negative", 0) and rec.n_steps >= 2:
            hn = make_hard_negative(rec, graph, rnd)
            if hn is not None:
                kept[i] = hn
                made["hard_negative"] += 1
                continue
        if made["clarification"] < quota.get("clarification", 0):
            cl = make_clarification(rec, graph, rnd)
            if cl is not None:
                kept[i] = cl
                made["clarification"] += 1
                continue
        if made["error_recovery"] < quota.get("error_recovery", 0):
            er, spent = await make_error_recovery(rec, graph, executor)
            calls += spent
            if er is not None:
                kept[i] = er
                made["error_recovery"] += 1
    if len(kept) > 1 or count > 1:
        while len(kept) < count and made["irrelevance"] < quota.get("irrelevance", 0) and kept:
            pos = 1 + rnd.randrange(len(kept))
            kept.insert(pos, make_irrelevance(graph, rnd, seed=seed, snapshot=snap))
            made["irrelevance"] += 1
    for n, rec in enumerate(kept):
        rec.seq = n
        if progress:
            progress(rec)
    for link_id in (set() if unverified else flagged):
        link = store.get_link(link_id)
        if link is not None and link.status == "verified":
            history = [*link.history, {"at": utcnow(), "run": "synthesis", "status": "verified",
                                       "reason": "failed inside a trajectory; queued for re-verification"}]
            store.save_link(link.model_copy(update={"needs_reverify": True, "history": history[-20:]}))
    return {"records": kept, "discarded": discarded, "calls": calls, "snapshot": snap,
            "requeued_links": sorted(flagged), "planned": len(pool), "attempted": attempted,
            "extras": dict(made), "extras_wanted": quota,
            "extras_configured": dict(DEFAULT_EXTRAS if extras is None else extras), "pools": {f"{t}.{p}": len(v) for (t, p), v in graph.pools.items()}}


def distribution(records: list[Trajectory], graph_links: int, graph_tools: int) -> dict[str, Any]:
    shapes = Counter(r.shape for r in records)
    lengths = Counter(r.n_steps for r in records)
    tools = Counter(s.tool for r in records for s in r.steps)
    links = Counter(lk for r in records for lk in r.metadata.verified_links)
    kinds = Counter(r.kind for r in records)
    return {"trajectories": len(records), "shapes": dict(shapes), "lengths": dict(sorted(lengths.items())),
            "kinds": dict(kinds), "tools_used": len(tools), "tool_coverage": round(len(tools) / max(1, graph_tools), 3),
            "links_used": len(links), "link_coverage": round(len(links) / max(1, graph_links), 3),
            "most_used_tools": tools.most_common(5), "tool_counts": dict(tools)}
