"""Verification by execution: plain async functions, used in process (embedded default, `kopa verify`) and by the
thin Celery tasks in workers.tasks.

For each source tool: one sampling call (cached) gives rows; for each candidate link out of it, k distinct values
of the field are transformed and fed to the target tool (its other required parameters from seeds); each call is
judged, and the link becomes verified, refuted (definitive, with a reason) or inconclusive (transient trouble,
retried later, never refuted).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from core.settings import ENGINE_VERSION, Settings
from execution.executor import CallResult, Executor
from execution.seeds import profile_args, seed_args
from graph import transforms as T
from graph.candidates import derive_candidates
from graph.concepts import signals, stem
from graph.models import LinkRecord, RunRecord, ToolRecord, utcnow
from graph.store import GraphStore, all_links

log = logging.getLogger("kopa.verify")
MAX_HISTORY = 20
Progress = Callable[[LinkRecord], None]


def _cell(v: Any) -> Any:
    if v is None or isinstance(v, str | list | dict):
        return "" if v is None else v
    return str(v) if not isinstance(v, float) or not v.is_integer() else str(int(v))


def normalise_rows(items: list[dict[str, Any]], limit: int = 30) -> list[dict[str, Any]]:
    return [{k: _cell(v) for k, v in row.items()} for row in items[:limit]]


def _trim(row: dict[str, Any], n: int = 8) -> dict[str, Any]:
    out = {}
    for k, v in list(row.items())[:n]:
        out[k] = v[:80] + "…" if isinstance(v, str) and len(v) > 80 else v
    return out


@dataclass
class Trial:
    source_value: Any
    inputs: dict[str, Any]
    result: CallResult


@dataclass
class Engine:
    store: GraphStore
    settings: Settings
    executor: Executor
    run: RunRecord
    tools: dict[str, ToolRecord] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    unreachable: dict[str, dict[str, Any]] = field(default_factory=dict)
    progress: Progress | None = None
    #: The naive baseline: a fresh upstream call for every link (use with a cache-less economy).
    naive: bool = False

    # ------------------------------------------------------------------ calls
    async def call(self, tool: ToolRecord, args: dict[str, Any]) -> CallResult:
        """One judged call, retrying transient failures with exponential backoff and jitter. A daily-quota
        answer (22) that persists through the retries marks the API exhausted for this run."""
        result = await self.executor.call(tool, args)
        attempt = 0
        while (result.outcome == "transient" and result.code != "budget" and tool.api_id not in self.executor.exhausted_apis
               and attempt < self.settings.verify.retries):
            attempt += 1
            delay = self.settings.verify.backoff_s * (2 ** (attempt - 1))
            await asyncio.sleep(delay * (0.5 + random.random()))
            result = await self.executor.call(tool, args)
        if result.quota and result.code in ("22", "022"):
            self.executor.mark_exhausted(tool.api_id)
        if result.outcome == "transient" and result.reason.startswith("unreadable response") and attempt >= self.settings.verify.retries:
            result.outcome, result.reason = "hostile", f"response never readable after {attempt + 1} tries: {result.reason}"
        return result

    # ------------------------------------------------------------------ sampling
    async def profile(self, tool: ToolRecord, extra: dict[str, list[str]] | None = None) -> None:
        args, missing = profile_args(tool, self.settings, extra)
        if missing:
            self.unreachable[tool.name] = {"tool": tool.name, "blocked_by": missing,
                                           "reason": "no seed, example, default or verified link for these parameters"}
            return
        result = await self.call(tool, args)
        if result.ok:
            self.samples[tool.name] = normalise_rows(result.items)
            self.unreachable.pop(tool.name, None)
        else:
            self.unreachable[tool.name] = {"tool": tool.name, "blocked_by": [], "reason": f"{result.outcome}: {result.reason}",
                                           "transient": result.outcome == "transient"}

    async def profile_many(self, tools: list[ToolRecord], extra: dict[str, dict[str, list[str]]] | None = None) -> None:
        await asyncio.gather(*(self.profile(t, (extra or {}).get(t.name)) for t in tools))

    # ------------------------------------------------------------------ links
    def _partner(self, link: LinkRecord, target: ToolRecord, row: dict[str, Any]) -> tuple[str, Any] | None:
        """For a coordinate link, the other axis of the same point (nx needs ny)."""
        t = link.transform
        if t.get("kind") != "coord":
            return None
        pname = link.target_param.split(":", 1)[1]
        psig = signals(pname, "", "string")
        for p in target.params:
            s = signals(p.name, p.description, p.type)
            if p.name != pname and s.axis and s.axis != t["axis"] and stem(p.name) == psig.stem:
                other = {**t, "axis": s.axis, "pair": link.source_field}
                return p.name, T.apply(other, row.get(t["pair"]), row)
        return None

    def _joints(self, link: LinkRecord, target: ToolRecord, siblings: list[LinkRecord]) -> list[dict[str, LinkRecord]]:
        """Ways to fill the target's other required parameters from the same source row: the two best candidates
        per parameter (by score only, so the outcome does not depend on which round decided what), at most four
        combinations, in a fixed order."""
        required = {p.key() for p in target.params if p.required} - {link.target_param}
        options: dict[str, list[LinkRecord]] = {}
        for s in sorted(siblings, key=lambda s: (-s.score, s.id)):
            if s.target_tool == target.name and s.target_param in required and len(options.setdefault(s.target_param, [])) < 2:
                options[s.target_param].append(s)
        if not options:
            return []
        combos: list[dict[str, LinkRecord]] = [{}]
        for param in sorted(options):
            combos = [{**c, param: s} for c in combos for s in options[param]]
        return combos[:4]

    def _args(self, link: LinkRecord, target: ToolRecord, row: dict[str, Any],
              joint: dict[str, LinkRecord]) -> dict[str, Any]:
        base, _ = seed_args(target, self.settings)
        pname = link.target_param.split(":", 1)[1]
        base[pname] = T.apply(link.transform, row.get(link.source_field), row)
        partner = self._partner(link, target, row)
        if partner:
            base[partner[0]] = partner[1]
        for key, other in joint.items():
            base[key.split(":", 1)[1]] = T.apply(other.transform, row.get(other.source_field), row)
        return base

    async def _trials(self, link: LinkRecord, target: ToolRecord, rows: list[dict[str, Any]],
                      joint: dict[str, LinkRecord]) -> list[Trial]:
        k, k_max = self.settings.verify.k, self.settings.verify.k_max
        trials: list[Trial] = []
        for row in rows[:k_max]:
            ok = sum(t.result.ok for t in trials)
            definitive = sum(t.result.definitive for t in trials)
            if (self._convincing(trials) and len(trials) >= min(k, len(rows))) or ok >= 2:
                break
            if definitive >= k and ok == 0:
                break
            value = row.get(link.source_field)
            try:
                args = self._args(link, target, row, joint)
            except T.TransformError as exc:
                trials.append(Trial(value, {}, CallResult("invalid", reason=f"transform failed: {exc}")))
                continue
            result = await self.call(target, args)
            trials.append(Trial(value, args, result))
            if result.quota and (result.code == "budget" or target.api_id in self.executor.exhausted_apis):
                break
        return trials

    async def verify_link(self, link: LinkRecord, rows: list[dict[str, Any]], siblings: list[LinkRecord]) -> LinkRecord:
        target = self.tools[link.target_tool]
        distinct: list[dict[str, Any]] = []
        seen: set[str] = set()
        for row in rows:
            v = row.get(link.source_field)
            key = repr(v)
            if v in (None, "", [], {}) or key in seen:
                continue
            seen.add(key)
            distinct.append(row)
        if not distinct:
            reason = (f"field {link.source_field!r} is absent from {link.source_tool}'s responses (schema drift?)"
                      if rows and all(link.source_field not in r for r in rows) else
                      f"field {link.source_field!r} is always empty in the sampled responses")
            return self._decide(link, [], "refuted" if rows else "inconclusive", reason, "solo")
        trials = await self._trials(link, target, distinct, {})
        mode = "solo"
        if not self._convincing(trials) and all(t.result.definitive for t in trials):
            # other required parameters may have to come from the same row (sigunguCd with bjdongCd, ...)
            doubt: list[Trial] = []
            for joint in self._joints(link, target, siblings):
                joint_trials = await self._trials(link, target, distinct, joint)
                doubt += [t for t in joint_trials if not t.result.definitive]
                if self._rate(joint_trials) > self._rate(trials):
                    trials, mode = joint_trials, "joint"
                if self._convincing(trials):
                    break
            if not self._convincing(trials):
                # a joint value lost to a transient fault might have worked: keep that doubt in the verdict
                trials = trials + doubt
        return self._judge(link, trials, mode)

    @staticmethod
    def _rate(trials: list[Trial]) -> float:
        definitive = [t for t in trials if t.result.definitive]
        return sum(t.result.ok for t in definitive) / len(definitive) if definitive else 0.0

    def _convincing(self, trials: list[Trial]) -> bool:
        ok = sum(t.result.ok for t in trials)
        return ok >= 2 or (ok >= 1 and self._rate(trials) >= 0.34)

    def _judge(self, link: LinkRecord, trials: list[Trial], mode: str) -> LinkRecord:
        ok = [t for t in trials if t.result.ok]
        definitive = [t for t in trials if t.result.definitive]
        transient = [t for t in trials if not t.result.definitive]
        # for the rate, transient trials count as failures: a fault can never tip a link into "verified"
        if len(ok) >= 2 or (ok and len(ok) / len(trials) >= 0.34):
            return self._decide(link, trials, "verified", f"{len(ok)} of {len(definitive)} values worked", mode)
        if transient or not trials:
            # a value lost to a transient fault might have worked: never refute on it, go round again
            why = transient[-1].result.reason if transient else "no trial"
            return self._decide(link, trials, "inconclusive", f"transient: {why}", mode)
        if ok:
            return self._decide(link, trials, "refuted", f"worked for only {len(ok)} of {len(definitive)} values", mode)
        reasons = Counter(t.result.reason or t.result.outcome for t in definitive)
        return self._decide(link, trials, "refuted", f"{reasons.most_common(1)[0][0]} ({len(definitive)} values)", mode)

    def _decide(self, link: LinkRecord, trials: list[Trial], status: str, reason: str, mode: str) -> LinkRecord:
        now = utcnow()
        ok = [t for t in trials if t.result.ok]
        calls = [t for t in trials if t.inputs]
        evidence = {
            "run_id": self.run.id, "engine": ENGINE_VERSION, "at": now, "mode": mode, "transform": link.transform,
            "trials": len(trials), "successes": len(ok),
            "latency_ms": round(sum(t.result.latency_ms for t in calls) / len(calls), 1) if calls else None,
            "response_hash": (ok[0] if ok else trials[0]).result.response_hash if trials else "",
            "examples": [{"source_value": t.source_value, "input": t.inputs, "outcome": t.result.outcome,
                          "reason": t.result.reason, "rows": len(t.result.items), "url": t.result.url,
                          "first_row": _trim(t.result.items[0]) if t.result.items else None} for t in trials[:3]],
        }
        history = [*link.history, {"at": now, "run": self.run.id, "status": status, "reason": reason}][-MAX_HISTORY:]
        return link.model_copy(update={
            "status": status, "reason": reason, "evidence": evidence, "history": history, "last_run": self.run.id,
            "needs_reverify": status == "inconclusive", "updated_at": now,
            "verified_at": now if status == "verified" else link.verified_at,
        })

    async def verify_source(self, source: str, links: list[LinkRecord]) -> list[LinkRecord]:
        """Verify links out of one source tool from its one sampling call; saves each outcome as it lands."""
        rows = self.samples.get(source, [])
        if not rows:
            return []
        # every link out of this source may help fill a joint call, whatever round decided it
        siblings = [lk for lk in await asyncio.to_thread(all_links, self.store, None, source) if lk.source_tool == source]
        done: list[LinkRecord] = []

        async def one(link: LinkRecord) -> None:
            if not self.executor.budget_left:
                return
            if link.target_tool not in self.tools:
                return
            link_rows = rows
            if self.naive:
                await self.profile(self.tools[source], self.run.extra_seeds.get(source))
                link_rows = self.samples.get(source, rows)
            outcome = await self.verify_link(link, link_rows, siblings)
            await asyncio.to_thread(self.store.save_link, outcome)
            done.append(outcome)
            if self.progress:
                self.progress(outcome)

        await asyncio.gather(*(one(lk) for lk in sorted(links, key=lambda lk: -lk.score)))
        return done


def select_links(store: GraphStore, run: RunRecord, tool_names: set[str], settings: Settings,
                 source: str | None = None) -> list[LinkRecord]:
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
    """Values for unreachable tools' blocking parameters, taken through verified links from sampled tools."""
    extra: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for name, info in engine.unreachable.items():
        blocked = info.get("blocked_by", [])
        if not blocked:
            continue
        page, _ = store.list_links(status="verified", tool=name, limit=500)
        for pname in blocked:
            for lk in page:
                if lk.target_tool != name or lk.target_param.split(":", 1)[1] != pname:
                    continue
                for row in engine.samples.get(lk.source_tool, []):
                    try:
                        value = T.apply(lk.transform, row.get(lk.source_field), row)
                    except T.TransformError:
                        continue
                    if value not in (None, "") and not isinstance(value, list):
                        extra[name].setdefault(pname, []).append(str(value))
                        break
                if pname in extra[name]:
                    break
    return {k: v for k, v in extra.items() if set(v) >= set(engine.unreachable[k]["blocked_by"])}


async def prepare_round(engine: Engine, tools: list[ToolRecord]) -> dict[str, list[LinkRecord]]:
    """Sample every tool (cached calls), feed blocked tools through verified links, derive candidates, and
    return this round's links grouped by source tool, best first."""
    run = engine.run
    await engine.profile_many([t for t in tools if t.name not in engine.samples])
    extra = propagation_seeds(engine.store, engine)
    if extra:
        await engine.profile_many([engine.tools[n] for n in extra], extra)
    run.extra_seeds = extra
    candidates = derive_candidates(tools, engine.samples)
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
        await asyncio.sleep(engine.settings.verify.backoff_s * (2 ** round_no))
    return run
