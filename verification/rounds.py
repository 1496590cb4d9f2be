"""The rounds of a verification run: which links a run decides (`select_links`), the values that reach tools
no sample reached (`propagation_seeds`), a round prepared, resumed and repeated while it grows the graph
(`prepare_round`, `resume`, `another_round`, `run_rounds`), over the per-link engine of verification.engine."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from core.settings import Settings
from execution import sampling
from graph import transforms
from graph.candidates import derive_candidates
from graph.models import LinkRecord, RunRecord, ToolRecord
from graph.store import GraphStore, all_links
from verification.engine import Engine
from verification.trials import (
    diverse,
)


def select_links(
    store: GraphStore, run: RunRecord, tool_names: set[str], settings: Settings, source: str | None = None
) -> list[LinkRecord]:
    """Links this run should decide: pending ones (candidate, inconclusive, flagged), stale ones, or all."""
    links = all_links(store, tool=source)
    stale_before = (datetime.now(UTC) - timedelta(hours=settings.verify.reverify_after_h)).isoformat(timespec="seconds")
    out = []
    for lk in links:
        if source is not None and lk.source_tool != source:
            continue
        if lk.source_tool not in tool_names or lk.target_tool not in tool_names:
            continue
        if lk.last_run == run.id and lk.status != "inconclusive":
            continue  # decided by this run already (a redelivered task, a resumed run)
        if run.scope == "all" and lk.last_run != run.id:
            out.append(lk)
        elif run.scope == "stale":
            if lk.needs_reverify or (lk.status == "verified" and (lk.verified_at or "") < stale_before):
                out.append(lk)
        elif lk.status in ("candidate", "inconclusive") or lk.needs_reverify:
            out.append(lk)
    return out


def propagation_seeds(store: GraphStore, engine: Engine) -> dict[str, dict[str, list[str]]]:
    """Values for unreachable tools, taken through verified links from sampled tools: for the parameters that block
    them, and for the optional filters of a tool refused for want of a filter (code 11). Up to three values per
    parameter, from distinct source rows, so a first value of the wrong level does not leave a tool unreachable."""
    extra: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for name, info in engine.unreachable.items():
        tool = engine.tools.get(name)
        blocked = list(info.get("blocked_by", []))
        wanted = blocked or (
            [p.name for p in sampling.filters(tool)] if tool and not info.get("transient") and info.get("tried") else []
        )
        if not wanted or info.get("fed") == _fed_key(store, name):
            continue
        page, _ = store.list_links(status="verified", tool=name, limit=500)
        for pname in wanted:
            values = extra[name].setdefault(pname, [])
            for lk in page:
                if lk.target_tool != name or lk.target_param.split(":", 1)[1] != pname:
                    continue
                # in the order links are tried (finest code level first): a 시도 code is the one a target of
                # districts and dongs answers with nothing
                for row in diverse(engine.samples.get(lk.source_tool, []), lk.source_field):
                    try:
                        value = transforms.apply(lk.transform, row.get(lk.source_field), row)
                    except transforms.TransformError:
                        continue
                    if value not in (None, "") and not isinstance(value, list) and str(value) not in values:
                        values.append(str(value))
                    if len(values) >= 3:
                        break
                if len(values) >= 3:
                    break
            if not values:
                del extra[name][pname]
    out = {}
    for k, v in extra.items():
        needed = set(engine.unreachable[k].get("blocked_by", []))
        if v and set(v) >= needed:
            out[k] = v
    return out


def _fed_key(store: GraphStore, name: str) -> int:
    return store.list_links(status="verified", tool=name, limit=1)[1]


async def prepare_round(engine: Engine, tools: list[ToolRecord]) -> dict[str, list[LinkRecord]]:
    """Sample every tool (cached calls), feed blocked tools through verified links, derive candidates, and
    return this round's links grouped by source tool, best first."""
    run = engine.run
    await engine.profile_many([t for t in tools if t.name not in engine.samples])
    extra: dict[str, dict[str, list[str]]] = {}
    for _ in range(len(tools)):
        # until nothing more can be fed: a tool fed in this pass may feed the next one through links verified in an
        # earlier round, so an engine that starts afresh (each Celery round) reaches what the in-process one did
        more = {n: v for n, v in propagation_seeds(engine.store, engine).items() if n not in extra}
        if not more:
            break
        await asyncio.gather(*(engine.profile_fed(engine.tools[n], values) for n, values in more.items()))
        for n in more:
            if n in engine.unreachable:
                engine.unreachable[n]["fed"] = _fed_key(engine.store, n)
        extra.update(more)
    run.extra_seeds = extra
    candidates = derive_candidates(tools, engine.samples)
    if engine.samples:
        # a link out of a tool not sampled yet cannot be tried this round, and its transform was chosen without a
        # value seen (a ten-digit code passed as is where two digits are wanted): it is derived again, from values,
        # in the round that samples its source
        candidates = [c for c in candidates if c.source_tool in engine.samples]
    run.candidates = len(candidates)
    await asyncio.to_thread(engine.store.upsert_candidates, candidates)
    links = select_links(engine.store, run, {t.name for t in tools}, engine.settings)
    by_source: dict[str, list[LinkRecord]] = defaultdict(list)
    for lk in links:
        if lk.source_tool in engine.samples:
            by_source[lk.source_tool].append(lk)
    order = sorted(by_source, key=lambda s: -max(lk.score for lk in by_source[s]))
    run.unreachable = sorted(engine.unreachable.values(), key=lambda u: str(u["tool"]))
    return {s: by_source[s] for s in order}


async def resume(engine: Engine, tools: list[ToolRecord]) -> None:
    """Give an engine in a fresh process (a Celery task) the whole run's state as the round left it: the tools the
    round could not reach (with what blocks them and which verified links already fed them), and the samples of
    the others (cache hits: the round sampled them). `another_round` then decides exactly as it does in process."""
    run = engine.run
    recorded = {str(u["tool"]): dict(u) for u in run.unreachable}
    await engine.profile_many([t for t in tools if t.name not in recorded], run.extra_seeds)
    # the round's record decides what was reached: a sample the cache has since dropped does not undo that
    engine.unreachable = recorded


def another_round(engine: Engine, round_no: int) -> bool:
    """Go round again while links are inconclusive or blocked tools can now be fed, within limits."""
    if round_no + 1 >= engine.settings.verify.max_rounds or not engine.executor.budget_left:
        return False
    if engine.store.run_counts(engine.run.id).get("inconclusive", 0):
        return True
    blocked = [u for u in engine.unreachable.values() if u.get("blocked_by") or u.get("transient")]
    return bool(blocked) and bool(propagation_seeds(engine.store, engine) or any(u.get("transient") for u in blocked))


async def run_rounds(engine: Engine, tools: list[ToolRecord]) -> RunRecord:
    """The whole run in this process: rounds of sample, derive, verify, until nothing is left to decide."""
    run = engine.run
    for round_no in range(engine.settings.verify.max_rounds):
        run.round = round_no
        groups = await prepare_round(engine, tools)
        run.pending_sources = list(groups)
        await asyncio.to_thread(engine.store.save_run, run)
        await asyncio.gather(*(engine.verify_source(s, links) for s, links in groups.items()))
        run.pending_sources = []
        if not another_round(engine, round_no):
            break
        for name, info in list(engine.unreachable.items()):
            if info.get("transient"):
                engine.samples.pop(name, None)
        await asyncio.sleep(engine.settings.verify.backoff_s * (2**round_no))
    return run
