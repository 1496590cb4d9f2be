"""Trajectories from the verified graph: sample plans over verified links only (paths come from the store's
Cypher path query on Neo4j, or the same semantics on the embedded store), execute them for real through the
same executor as verification, and record every argument with its provenance.

Shapes: `single` (one call), `chain` (2-6 steps, each fed by the previous ones), `fan_in` (a step fed by two
different upstream tools), `parallel` (two calls fed by one root, combined in the answer).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from core.settings import ENGINE_VERSION, Settings
from execution.executor import Executor
from execution.seeds import seed_value
from graph import transforms as T
from graph.candidates import NON_LINKABLE
from graph.models import LinkRecord, ToolRecord, utcnow
from graph.paths import enumerate_paths
from graph.specs import function_spec
from graph.store import GraphStore, all_links
from synthesis.language import answer_text, paraphrase, request_text
from synthesis.records import Plan, Source, Step, StepResponse, Trajectory, TrajectoryMeta, TrajectoryStep

SHAPES = ("single", "chain", "fan_in", "parallel")
MAX_ROWS, MAX_FIELDS, MAX_CHARS = 3, 24, 200
TRIM_RULE = (f"responses keep their first {MAX_ROWS} rows, {MAX_FIELDS} fields per row, strings cut at "
             f"{MAX_CHARS} characters; the row count is recorded")


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
        self.tool_use: Counter[str] = Counter()
        self.link_use: Counter[str] = Counter()

    def slot_value(self, tool: ToolRecord, pname: str) -> Any:
        p = next(p for p in tool.params if p.name == pname)
        return seed_value(p, self.settings)

    def root_sources(self, tool: ToolRecord) -> dict[str, Source] | None:
        """A tool callable from user slots and constants alone (None if a required parameter has no value)."""
        out: dict[str, Source] = {}
        fmt = tool.format_param.split("=")[0] if tool.format_param else None
        for p in tool.params:
            if not p.required or p.name == fmt:
                continue
            value = seed_value(p, self.settings)
            if value is None:
                return None
            constant = p.enum or p.default is not None or p.name in NON_LINKABLE
            out[p.name] = Source("constant" if constant else "slot", value)
        return out

    def fed_sources(self, tool: ToolRecord, upstream: list[tuple[int, str]], rnd: random.Random) -> dict[str, Source] | None:
        """Sources for a step fed by earlier steps (index, tool): links where verified, else slots/constants."""
        base = self.root_sources(tool)
        if base is None:
            base = {}
        fed_any = False
        fmt = tool.format_param.split("=")[0] if tool.format_param else None
        for p in tool.params:
            if not p.required or p.name == fmt:
                continue
            options = [(i, lk) for i, up in upstream for lk in self.into.get((tool.name, p.key()), [])
                       if lk.source_tool == up]
            if options:
                options.sort(key=lambda o: (self.link_use[o[1].id], -o[1].score, o[1].id))
                best = [o for o in options if self.link_use[o[1].id] == self.link_use[options[0][1].id]]
                i, lk = rnd.choice(best)
                base[p.name] = Source("link", link=lk, from_step=i)
                fed_any = True
            elif p.name not in base:
                return None
        return base if fed_any else None

    def weight(self, names: list[str]) -> float:
        return 1.0 / (1.0 + sum(self.tool_use[n] for n in names))

    def paths(self, starts: list[str], min_hops: int, max_hops: int, per_start: int) -> list[list[str]]:
        """Verified graph: the store's path query (Cypher on Neo4j); candidate graph: the same walk in Python."""
        if self.unverified:
            return enumerate_paths(self.edges, starts, min_hops, max_hops, per_start)
        return self.store.sample_paths(starts, min_hops, max_hops, per_start)


def _choose(rnd: random.Random, options: list[Any], weights: list[float]) -> Any:
    return rnd.choices(options, weights=weights, k=1)[0]


def sample_plans(graph: VerifiedGraph, count: int, *, shapes: tuple[str, ...] = SHAPES, min_steps: int = 1,
                 max_steps: int = 6, seed: int = 7, max_tool_share: float = 0.25) -> list[Plan]:
    """Seeded, coverage-aware plans; every required parameter of every step is satisfiable."""
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
    seen: set[str] = set()
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
            plan = _fan_in(graph, rnd)
        elif shape == "parallel" and max_steps >= 3:
            plan = _parallel(graph, rnd, roots)
        if plan is None or plan.key in seen or any(graph.tool_use[s.tool.name] >= cap for s in plan.steps):
            failures[shape] += 1
            continue
        seen.add(plan.key)
        made[shape] += 1
        plans.append(plan)
        for s in plan.steps:
            graph.tool_use[s.tool.name] += 1
            for src in s.sources.values():
                if src.link is not None:
                    graph.link_use[src.link.id] += 1
    return plans


def _chain(graph: VerifiedGraph, names: list[str], rnd: random.Random) -> Plan | None:
    root = graph.root_sources(graph.tools[names[0]])
    if root is None:
        return None
    steps = [Step(graph.tools[names[0]], root)]
    for i, name in enumerate(names[1:], start=1):
        sources = graph.fed_sources(graph.tools[name], [(j, names[j]) for j in range(i)], rnd)
        if sources is None or not any(s.kind == "link" and s.from_step == i - 1 for s in sources.values()):
            return None
        steps.append(Step(graph.tools[name], sources, sorted({s.from_step for s in sources.values() if s.kind == "link"})))
    return Plan("chain", steps, [len(steps) - 1])


def _fan_in(graph: VerifiedGraph, rnd: random.Random) -> Plan | None:
    targets = sorted({t for ups in graph.edges.values() for t in ups})
    rnd.shuffle(targets)
    for target in targets[:40]:
        ups = sorted(s for s, ts in graph.edges.items() if target in ts and graph.root_sources(graph.tools[s]) is not None)
        if len(ups) < 2:
            continue
        a, b = rnd.sample(ups, 2)
        sources = graph.fed_sources(graph.tools[target], [(0, a), (1, b)], rnd)
        if sources is None:
            continue
        used = {s.from_step for s in sources.values() if s.kind == "link"}
        if used != {0, 1}:
            continue
        steps = [Step(graph.tools[a], graph.root_sources(graph.tools[a]) or {}),
                 Step(graph.tools[b], graph.root_sources(graph.tools[b]) or {}),
                 Step(graph.tools[target], sources, [0, 1])]
        return Plan("fan_in", steps, [2])
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

def trim(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in items[:MAX_ROWS]:
        trimmed = {}
        for k, v in list(row.items())[:MAX_FIELDS]:
            trimmed[k] = v[:MAX_CHARS] if isinstance(v, str) else v
        out.append(trimmed)
    return out


@dataclass
class Outcome:
    steps: list[TrajectoryStep] | None
    reason: str = ""
    failed_links: list[str] = field(default_factory=list)
    calls: int = 0


async def execute_plan(plan: Plan, executor: Executor, rnd: random.Random, *, tries: int = 3) -> Outcome:
    """Run a plan end to end; on failure retry with other upstream rows, then give up with the reason."""
    reason = ""
    failed: list[str] = []
    calls = 0
    for _ in range(tries):
        chosen_rows: list[dict[str, Any]] = []
        steps_out: list[TrajectoryStep] = []
        ok = True
        for idx, step in enumerate(plan.steps):
            args: dict[str, Any] = {}
            prov: dict[str, Any] = {}
            try:
                for pname, src in step.sources.items():
                    if src.kind == "link" and src.link is not None:
                        row = chosen_rows[src.from_step]
                        args[pname] = T.apply(src.link.transform, row.get(src.link.source_field), row)
                    else:
                        args[pname] = src.value
                    prov[pname] = src.provenance()
            except T.TransformError as exc:
                ok, reason = False, f"step {idx + 1} ({step.tool.name}): transform failed: {exc}"
                failed = [s.link.id for s in step.sources.values() if s.link is not None]
                break
            result = await executor.call(step.tool, args)
            calls += 0 if result.cached else 1
            if not result.ok:
                ok = False
                reason = f"step {idx + 1} ({step.tool.name}): {result.outcome} {result.reason}".strip()
                if result.definitive:
                    failed = [s.link.id for s in step.sources.values() if s.link is not None]
                break
            rows = [r for r in result.items if isinstance(r, dict)]
            chosen_rows.append(rnd.choice(rows[: max(1, min(len(rows), 10))]))
            steps_out.append(TrajectoryStep(
                step=idx + 1, tool=step.tool.name, arguments=args, provenance=prov,
                depends_on=[d + 1 for d in step.depends_on],
                response=StepResponse(rows=len(rows), items=trim(rows), url=result.url, replayed_from_cache=result.cached)))
        if ok:
            return Outcome(steps_out, calls=calls)
    return Outcome(None, reason, failed, calls)


def record_id(request: str, steps: list[TrajectoryStep]) -> str:
    raw = json.dumps([request, [(s.tool, s.arguments) for s in steps]], ensure_ascii=False, sort_keys=True, default=str)
    return "tr_" + hashlib.sha256(raw.encode()).hexdigest()[:16]


def build_record(plan: Plan, outcome: Outcome, graph: VerifiedGraph, rnd: random.Random, *, seed: int,
                 distractors: int = 3, snapshot: str = "") -> Trajectory:
    assert outcome.steps is not None
    steps = outcome.steps
    slots = {f"{s.tool}.{p}": v["value"] for s in steps for p, v in s.provenance.items() if v["kind"] == "slot"}
    request = request_text(plan, steps, rnd)
    template_request = request
    if graph.settings.batches.paraphrase_url:
        keep = [str(v) for v in slots.values() if isinstance(v, str | int | float)]
        request = paraphrase(request, graph.settings.batches.paraphrase_url, must_keep=keep)
    answer = answer_text(plan, steps)
    chain_tools = [s.tool for s in plan.steps]
    others = sorted(n for n in graph.tools if n not in {t.name for t in chain_tools})
    extra = [graph.tools[n] for n in rnd.sample(others, min(distractors, len(others)))]
    offered = [*chain_tools, *extra]
    rnd.shuffle(offered)
    live = not any(s.response.replayed_from_cache for s in steps)
    return Trajectory(
        id=record_id(request, steps), request=request, shape=plan.shape, n_steps=len(steps),
        slots=slots, tools=[function_spec(t) for t in offered], distractors=[t.name for t in extra],
        steps=steps, final_steps=[i + 1 for i in plan.finals], final_answer=answer,
        metadata=TrajectoryMeta(
            template_request=template_request, graph_snapshot=snapshot,
            verified_links=sorted({v["link"] for s in steps for v in s.provenance.values() if v["kind"] == "link"}),
            created_at=utcnow(), provenance="live" if live else "replayed_from_cache", seed=seed,
            engine=ENGINE_VERSION, trim_rule=TRIM_RULE),
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


async def synthesize(store: GraphStore, settings: Settings, executor: Executor, *, count: int,
                     shapes: tuple[str, ...] = SHAPES, min_steps: int = 1, max_steps: int = 6, seed: int = 7,
                     api_ids: list[str] | None = None, progress: Any = None, unverified: bool = False) -> dict[str, Any]:
    """Sample, execute and record up to `count` trajectories; failures are discarded with their reason and the
    links that failed inside a trajectory are queued for re-verification. Plans run in waves until enough are
    kept, so no call is spent beyond need."""
    graph = VerifiedGraph(store, settings, api_ids, unverified=unverified)
    snap = snapshot_id(graph)
    kept: list[Trajectory] = []
    shingles: dict[str, set[str]] = {}
    discarded: list[dict[str, str]] = []
    calls = 0
    pool = sample_plans(graph, int(count * 1.6) + 5, shapes=shapes, min_steps=min_steps, max_steps=max_steps, seed=seed)
    sem = asyncio.Semaphore(settings.verify.concurrency)

    async def one(i: int, plan: Plan) -> tuple[int, Plan, Outcome, random.Random]:
        local = random.Random(f"{seed}-{i}")
        async with sem:
            return i, plan, await execute_plan(plan, executor, local), local

    flagged: set[str] = set()
    wave = max(8, settings.verify.concurrency * 2)
    attempted = 0
    for start in range(0, len(pool), wave):
        if len(kept) >= count:
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
            if len(kept) >= count:
                continue
            record = build_record(plan, outcome, graph, local, seed=seed, snapshot=snap)
            if is_near_duplicate(record, kept, shingles=shingles):
                discarded.append({"plan": plan.key, "reason": "near duplicate"})
                continue
            record.seq = len(kept)
            kept.append(record)
            if progress:
                progress(record)
    for link_id in (set() if unverified else flagged):
        link = store.get_link(link_id)
        if link is not None and link.status == "verified":
            history = [*link.history, {"at": utcnow(), "run": "synthesis", "status": "verified",
                                       "reason": "failed inside a trajectory; queued for re-verification"}]
            store.save_link(link.model_copy(update={"needs_reverify": True, "history": history[-20:]}))
    return {"records": kept, "discarded": discarded, "calls": calls, "snapshot": snap,
            "requeued_links": sorted(flagged), "planned": len(pool), "attempted": attempted}


def distribution(records: list[Trajectory], graph_links: int, graph_tools: int) -> dict[str, Any]:
    shapes = Counter(r.shape for r in records)
    lengths = Counter(r.n_steps for r in records)
    tools = Counter(s.tool for r in records for s in r.steps)
    links = Counter(lk for r in records for lk in r.metadata.verified_links)
    return {"trajectories": len(records), "shapes": dict(shapes), "lengths": dict(sorted(lengths.items())),
            "tools_used": len(tools), "tool_coverage": round(len(tools) / max(1, graph_tools), 3),
            "links_used": len(links), "link_coverage": round(len(links) / max(1, graph_links), 3),
            "most_used_tools": tools.most_common(5), "tool_counts": dict(tools)}
