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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.json_types import JsonObject
from core.settings import Settings
from execution import sampling
from execution.canonical import call_key
from execution.executor import Executor
from execution.result import CallResult, Outcome
from execution.seeds import PAGE_SIZE_PARAMS
from graph import meaning, transforms
from graph.concepts import norm, signals, stem
from graph.models import LinkRecord, RunRecord, ToolRecord
from graph.store import GraphStore, all_links
from verification.controls import control, without
from verification.trials import (
    FINE_FAILURES,
    Trial,
    another_place,
    blank_numbering,
    diverse,
    elsewhere,
    fine_level,
    interleave,
    level,
    level_alternative,
    levels_coincide,
    levels_empty,
    normalise_rows,
    places_named,
    row_set,
    undocumented,
    vocabularies,
)
from verification.verdicts import convincing, decide, judge, rate

log = logging.getLogger("kopa.verify")
Progress = Callable[[LinkRecord], None]
#: Values of one link a target must refuse with one and the same answer before it is learnt as a refusal of the
#: request's form (`Engine._learn_refusal`).
FORM_VALUES = 3


@dataclass
class Engine:
    store: GraphStore
    settings: Settings
    executor: Executor
    run: RunRecord
    tools: dict[str, ToolRecord] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: The arguments of the sampling call whose rows `samples` holds (values the tool answered rows for).
    sample_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    unreachable: dict[str, dict[str, Any]] = field(default_factory=dict)
    sample_paths: dict[str, str] = field(default_factory=dict)
    progress: Progress | None = None
    #: The naive baseline: a fresh upstream call for every link (use with a cache-less economy).
    naive: bool = False
    #: Answers of this engine's successful calls per tool (inputs, rows): what shows a parameter is honoured.
    answers: dict[str, list[tuple[dict[str, str], frozenset[str]]]] = field(default_factory=dict)
    #: (tool, required parameter) pairs shown to select: a value of the same shape answered differently.
    honoured: set[tuple[str, str]] = field(default_factory=set)
    control_locks: dict[tuple[str, str], asyncio.Lock] = field(default_factory=dict)
    #: Inputs of this engine's sampling calls per tool: a value whose call the sampling made costs nothing more.
    #: (Sampling calls only: they are made before any link is tried, so the order of values does not depend on
    #: which concurrent link or which retried fault came first.)
    called: dict[str, set[str]] = field(default_factory=dict)  # the canonical calls made, by tool
    #: (tool, parameter) -> (code, reason, link id): the one refusal every value of a refuted link got, read as the
    #: target's answer to the request's form (a mandatory field missing: data.go.kr 11, NTS 411), not to a value.
    #: `refusals` is what trials consult; `learnt` collects during a call of `verify`, merged by `settle`.
    refusals: dict[tuple[str, str], tuple[str, str, str]] = field(default_factory=dict)
    learnt: dict[tuple[str, str], tuple[str, str, str]] = field(default_factory=dict)
    _profile_locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    # ------------------------------------------------------------------ calls
    async def call(self, tool: ToolRecord, args: dict[str, Any]) -> CallResult:
        """One judged call, retrying transient failures with exponential backoff and jitter. A daily-quota
        answer (22) that persists through the retries marks the API exhausted for this run."""
        result = await self.executor.call(tool, args)
        attempt = 0
        while (
            result.outcome == "transient"
            and result.code not in ("budget", "blocked")
            and tool.api_id not in self.executor.exhausted_apis
            and tool.api_id not in self.executor.blocked_apis
            and attempt < self.settings.verify.retries
        ):
            attempt += 1
            delay = self.settings.verify.backoff_s * (2 ** (attempt - 1))
            await asyncio.sleep(delay * (0.5 + random.random()))
            result = await self.executor.call(tool, args)
        if result.quota and result.code in ("22", "022"):
            self.executor.mark_exhausted(tool.api_id)
        if result.ok:
            seen = self.answers.setdefault(tool.name, [])
            if len(seen) < 200:
                seen.append(({k: str(v) for k, v in args.items()}, frozenset(row_set(result.items))))
        if (
            result.outcome == "transient"
            and result.reason.startswith("unreadable response")
            and attempt >= self.settings.verify.retries
        ):
            result.outcome, result.reason = (
                Outcome.HOSTILE,
                f"response never readable after {attempt + 1} tries: {result.reason}",
            )
        return result

    # ------------------------------------------------------------------ sampling
    async def profile(self, tool: ToolRecord, extra: dict[str, list[str]] | None = None) -> None:
        """Sample a tool from its document: required parameters first; when the provider says a filter is needed
        (code 11, "하나 이상"), one optional filter at a time; a filter documented as narrowing ("없으면 시도 목록")
        adds a second sample, so rows of more than one level feed its links."""
        args, missing = sampling.sampling_args(tool, self.settings, extra)
        for p in tool.params:
            if p.name in PAGE_SIZE_PARAMS:
                args[p.name] = PAGE_SIZE_PARAMS[p.name]
        if missing:
            self.unreachable[tool.name] = {
                "tool": tool.name,
                "blocked_by": missing,
                "reason": "no seed, example, default, described example or verified link for these parameters",
                "unblock": f"a verified link into {', '.join(missing)}, an example in the document, or a seed "
                f"(KOPA_VERIFY__SEEDS) for {', '.join(missing)}",
            }
            return
        options = sampling.filter_options(tool, self.settings, extra)
        plans = [args]
        if sampling.says_filter_needed(tool) and not any(k in args for k, _ in options):
            # the document says a filter is needed: no call without one
            plans = [{**args, k: v} for k, v in options] or [args]
        result: CallResult | None = None
        tried: list[str] = []
        used = args
        for i, plan in enumerate(plans):
            result = await self.call(tool, plan)
            if result.definitive:
                self.called.setdefault(tool.name, set()).add(call_key(tool.name, tool, plan))
            tried.append(",".join(sorted(k for k in plan if k not in args)) or "(no filter)")
            if result.ok:
                used = plan
                break
            if i == len(plans) - 1 and sampling.refused_for_filter(result.code, result.reason) and options:
                plans.extend({**args, k: v} for k, v in options if k not in args and {**args, k: v} not in plans)
        assert result is not None
        if not result.ok:
            filters = [p.name for p in sampling.filters(tool)]
            key_problem = self.executor.blocked_apis.get(tool.api_id)
            self.unreachable[tool.name] = {
                "tool": tool.name,
                "blocked_by": [],
                "reason": f"{result.outcome}: {result.reason}",
                # a missing or refused key will not heal by the next round: no retry round for it
                "transient": result.outcome == "transient" and key_problem is None,
                "tried": tried,
                "unblock": key_problem
                if key_problem
                else (
                    "a value for one of the filters " + ", ".join(filters) + " (an example in the document, a "
                    "seed, or a verified link into it)"
                )
                if filters and result.outcome != "transient"
                else "the upstream answering again (retried next round)"
                if result.outcome == "transient"
                else "inputs the provider accepts (see the reason)",
            }
            return
        rows = [result.items]
        for name, value in options:
            p = next(p for p in tool.params if p.name == name)
            if name not in used and sampling.narrows(p):
                wider = await self.call(tool, {**used, name: value})
                if wider.definitive:
                    self.called.setdefault(tool.name, set()).add(call_key(tool.name, tool, {**used, name: value}))
                if wider.ok:
                    rows.append(wider.items)
        self.samples[tool.name] = normalise_rows(interleave(rows))
        self.sample_args[tool.name] = dict(used)
        self.sample_paths[tool.name] = result.items_path
        self.unreachable.pop(tool.name, None)

    async def profile_fed(self, tool: ToolRecord, values: dict[str, list[str]]) -> None:
        """Sample a tool with values taken through verified links, the next value of each when one fails."""
        for i in range(max(len(v) for v in values.values())):
            await self.profile(tool, {k: v[i % len(v) :] + v[: i % len(v)] for k, v in values.items()})
            if tool.name in self.samples:
                return

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
                return p.name, transforms.apply(other, row.get(t["pair"]), row)
        return None

    def _other_axis(self, link: LinkRecord, target: ToolRecord, siblings: list[LinkRecord]) -> dict[str, LinkRecord]:
        """For a link into one axis of a point the target requires whole (gpsLati with gpsLong, xPos with yPos, nx
        with ny), the sibling link from the same row into the other axis (the best by score): the link is tried
        with it from the start, since one real axis beside a seed value of the other names no point. Empty when
        there is none, or a `coord` transform brings the other axis itself (`_partner`)."""
        if link.transform.get("kind") == "coord":
            return {}
        pname = link.target_param.split(":", 1)[1]
        axis = signals(pname, "", "string").axis
        if not axis:
            return {}
        others = {
            p.key()
            for p in target.params
            if p.required and p.name != pname and signals(p.name, p.description, p.type).axis not in (None, axis)
        }
        fits = sorted(
            (s for s in siblings if s.target_tool == target.name and s.target_param in others),
            key=lambda s: (-s.score, s.id),
        )
        return {fits[0].target_param: fits[0]} if fits else {}

    def _joints(self, link: LinkRecord, target: ToolRecord, siblings: list[LinkRecord]) -> list[dict[str, LinkRecord]]:
        """Ways to fill the target's other required parameters from the same source row: the two best candidates
        per parameter (by score only, so the outcome does not depend on which round decided what), at most four
        combinations, in a fixed order. Beside a date link, another date of the target (the other bound of a range:
        fromMonth beside toMonth) may also keep its documented value: a range from one row's month to the same
        month may hold nothing yet where the documented range does."""
        required = {p.key(): p for p in target.params if p.required}
        required.pop(link.target_param, None)
        options: dict[str, list[LinkRecord]] = {}
        for s in sorted(siblings, key=lambda s: (-s.score, s.id)):
            if (
                s.target_tool == target.name
                and s.target_param in required
                and len(options.setdefault(s.target_param, [])) < 2
            ):
                options[s.target_param].append(s)
        if not options:
            return []
        dated = link.transform.get("kind") == "date"
        combos: list[dict[str, LinkRecord]] = [{}]
        for param in sorted(options):
            prm = required[param]
            seeded = dated and meaning.is_date(prm.name, prm.description, prm.format)
            combos = [{**c, param: s} for c in combos for s in options[param]] + (combos if seeded else [])
        return [c for c in combos if c][:4]

    def _args(
        self, link: LinkRecord, target: ToolRecord, row: dict[str, Any], joint: dict[str, LinkRecord]
    ) -> JsonObject:
        base, _ = sampling.required_args(target, self.settings)
        for p in target.params:
            if p.name in PAGE_SIZE_PARAMS:
                # the page the sampling call asked for: a trial with the values a sample was taken with is that
                # call again (a cache hit), and an answer of one page size compares with another of the same
                base[p.name] = PAGE_SIZE_PARAMS[p.name]
        pname = link.target_param.split(":", 1)[1]
        base[pname] = transforms.apply(link.transform, row.get(link.source_field), row)
        partner = self._partner(link, target, row)
        if partner:
            base[partner[0]] = partner[1]
        for key, other in joint.items():
            base[key.split(":", 1)[1]] = transforms.apply(other.transform, row.get(other.source_field), row)
        return base

    async def trials(
        self, link: LinkRecord, target: ToolRecord, rows: list[dict[str, Any]], joint: dict[str, LinkRecord]
    ) -> list[Trial]:
        k, k_max = self.settings.verify.k, self.settings.verify.k_max
        trials: list[Trial] = []
        pname = link.target_param.split(":", 1)[1]
        optional = any(p.name == pname and not p.required for p in target.params)
        pool, src = rows, link.source_field
        done = self.called.get(target.name, set())
        refusal = self.refusals.get((target.name, link.target_param)) if not joint else None

        def known(row: dict[str, Any]) -> bool:
            try:
                return call_key(target.name, target, self._args(link, target, row, joint)) in done
            except transforms.TransformError:
                return False

        # values whose calls the sampling made already first, the diverse order kept among the rest: the same
        # evidence, paid for once
        rows = sorted(rows, key=lambda r: not known(r))
        for row in rows[:k_max]:
            ok = sum(t.result.ok for t in trials)
            definitive = sum(t.result.definitive for t in trials)
            if (convincing(trials) and len(trials) >= min(k, len(rows))) or (ok >= 2 and convincing(trials)):
                break
            if ok == 0 and definitive >= min(k, 3) and (definitive >= k or not levels_empty(trials)):
                # three failures of values of different kinds settle it; when codes of several levels all
                # answered "no rows", one more value of the deepest level (data may exist for another one)
                break
            value = row.get(link.source_field)
            try:
                args = self._args(link, target, row, joint)
            except transforms.TransformError as exc:
                trials.append(
                    Trial(value, {}, CallResult(Outcome.INVALID, reason=f"transform failed: {exc}"), row, pool, src)
                )
                continue
            result = await self.call(target, args)
            trials.append(Trial(value, args, result, row, pool, src))
            if refusal and result.outcome == Outcome.INVALID and (result.code, result.reason) == refusal[:2]:
                break  # the refusal another link's every value got: the request's form, not this value
            if result.quota and (result.code == "budget" or target.api_id in self.executor.exhausted_apis):
                break
            if result.ok and optional and sum(t.result.ok for t in trials) == 1:
                # an optional filter: the control call (cached, reused by controls.control) shows at once whether the
                # answer depends on it; more values of a vacuous filter would prove nothing
                outcome, _, _ = await without(self, target, trials[-1], pname)
                if outcome == "same":
                    break
        return trials

    async def _know(self, target: ToolRecord) -> None:
        """The target's sampling calls, for the order of values: an engine that did not sample it this round (a
        Celery task verifies one source) samples it again, a cache hit, so its values are tried in the order the
        in-process run tries them."""
        async with self._profile_locks.setdefault(target.name, asyncio.Lock()):
            if target.name not in self.called and target.name not in self.unreachable:
                await self.profile(target, self.run.extra_seeds.get(target.name))

    async def verify_link(self, link: LinkRecord, rows: list[dict[str, Any]], siblings: list[LinkRecord]) -> LinkRecord:
        target = self.tools[link.target_tool]
        await self._know(target)
        distinct: list[dict[str, Any]] = []
        seen: set[str] = set()
        for row in rows:
            v = row.get(link.source_field)
            key = repr(v)
            if v in (None, "", [], {}) or key in seen:
                continue
            seen.add(key)
            distinct.append(row)
        distinct = diverse(distinct, link.source_field)
        if not distinct:
            reason = (
                f"field {link.source_field!r} is absent from {link.source_tool}'s responses (schema drift?)"
                if rows and all(link.source_field not in r for r in rows)
                else f"field {link.source_field!r} is always empty in the sampled responses"
            )
            return decide(self.run.id, link, [], "refuted" if rows else "inconclusive", reason, "solo")
        why = await self._untellable(link, target, rows, distinct)
        if why:
            # what the samples already show: no value of the source could tell the link from a coincidence
            return decide(self.run.id, link, [], "refuted", why, "solo")
        # a date is proposed only beside an entity link from the same row (graph.candidates._date_links): it is
        # called jointly from the start, a date alone cannot name the record
        joint_only = link.transform.get("kind") == "date" and any(
            p.required for p in target.params if p.key() != link.target_param
        )
        joint_only = joint_only and bool(self._joints(link, target, siblings))
        point = {} if joint_only else self._other_axis(link, target, siblings)
        trials = [] if joint_only else await self.trials(link, target, distinct, point)
        mode = "joint" if point else "solo"
        if not convincing(trials) and all(t.result.definitive for t in trials):
            # other required parameters may have to come from the same row (sigunguCd with bjdongCd, ...)
            doubt: list[Trial] = []
            for joint in self._joints(link, target, siblings):
                joint_trials = await self.trials(link, target, distinct, joint)
                doubt += [t for t in joint_trials if not t.result.definitive]
                if rate(joint_trials) > rate(trials) or (joint_only and not trials):
                    trials, mode = joint_trials, "joint"
                if convincing(trials):
                    break
            if not convincing(trials):
                # a joint value lost to a transient fault might have worked: keep that doubt in the verdict
                trials = trials + doubt
        if mode == "solo" and link.transform.get("kind", "identity") == "identity" and fine_level(trials):
            trials += await self._finer(link, target, distinct, trials)
        verdict = judge(self.run.id, link, trials, mode)
        if verdict.status == "verified":
            # codes of two systems that coincide where they were tried: told apart by the target's documented
            # table of codes, or by the level where they differ
            param = next((p for p in target.params if p.key() == link.target_param), None)
            codes = frozenset(meaning.code_table(param.description) or ()) if param else frozenset()
            why = (
                undocumented(link, trials, codes)
                or levels_coincide(link, trials)
                or another_place(link, trials, self.samples.get(target.name, []))
            )
            if why:
                verdict = decide(self.run.id, link, trials, "refuted", why, mode)
        if verdict.status == "verified":
            verdict = await self._elsewhere(link, target, trials, verdict, mode)
        if verdict.status == "verified":
            verdict = await control(self, verdict, target, trials, link, distinct, siblings)
        elif verdict.status == "refuted":
            verdict = self._learn_refusal(verdict, trials)
        return verdict

    async def _untellable(
        self, link: LinkRecord, target: ToolRecord, rows: list[dict[str, Any]], distinct: list[dict[str, Any]]
    ) -> str | None:
        """Why no trial of the link could tell it from a coincidence, read off the samples (no trial call; an engine
        that did not sample the target's API this round samples it again, cache hits): region names
        fed into a parameter whose own values (those the target's API answers under its name) are another
        vocabulary that shares some of them (`vocabularies`), or a field that is a zero-padded zero in every
        record (`blank_numbering`). None when trials can tell."""
        pname = link.target_param.split(":", 1)[1]
        param = next((p for p in target.params if p.key() == link.target_param), None)
        own = [str(r.get(link.source_field)) for r in distinct]
        siblings = [tool for tool in self.tools.values() if tool.api_id == target.api_id]
        for tool in siblings:  # an engine verifying one source (a Celery task) knows them as the round does
            await self._know(tool)
        theirs = [
            str(v)
            for tool in siblings
            for row in self.samples.get(tool.name, [])
            for f, v in row.items()
            if norm(f) == norm(pname) and not isinstance(v, list | dict)
        ]
        return vocabularies(link, own, theirs) or blank_numbering(link, rows, bool(param and param.enum))

    async def _elsewhere(
        self, link: LinkRecord, target: ToolRecord, trials: list[Trial], verdict: LinkRecord, mode: str
    ) -> LinkRecord:
        """A link verified alone (no other input from the row) on one value of the source, where the source's own
        document codes other places in the same field (`meaning.place_codes` of the parameter or field of that
        name: "110000 서울, 220000 인천"): up to two of those codes, of places the target's sample is about or lists,
        are tried through the same transform, the rest of the call unchanged. All of them failing refutes the
        link (`elsewhere`: the two code systems coincide for the sampled place only); a transient failure leaves
        it inconclusive; one working keeps it verified."""
        worked = [t for t in trials if t.result.ok]
        if mode != "solo" or len({repr(t.source_value) for t in worked}) != 1 or not self.executor.budget_left:
            # (in a joint call the rest of the call comes from the sampled row: it names the sampled place too)
            return verdict
        source = self.tools.get(link.source_tool)
        if source is None:
            return verdict
        described = [p.description for p in source.params if norm(p.name) == norm(link.source_field)]
        described += [f.description for f in source.fields if f.name == link.source_field]
        names: dict[str, str] = {}
        for text in described:
            names = names or meaning.place_codes(text)
        first, pname = worked[0], link.target_param.split(":", 1)[1]
        if str(first.source_value) not in names:
            return verdict
        # only places the target shows it has data for (rows about them in its sample, or a list naming them):
        # a code of such a place that fails is read otherwise by the target, not a place without data
        served = places_named(self.samples.get(target.name, []))
        others: list[Trial] = []
        for code in [c for c, where in names.items() if c != str(first.source_value) and where in served][:2]:
            row = {**first.row, link.source_field: code}
            try:
                fed = transforms.apply(link.transform, code, row)
            except transforms.TransformError:
                continue
            if str(fed) == str(first.inputs.get(pname)):
                continue
            args = {**first.inputs, pname: fed}
            others.append(Trial(code, args, await self.call(target, args), row, first.pool, link.source_field))
        lost = next((t for t in others if not t.result.definitive), None)
        if lost is not None:
            return decide(self.run.id, link, trials + others, "inconclusive", f"transient: {lost.result.reason}", mode)
        why = elsewhere(link, first, others, names)
        return decide(self.run.id, link, trials + others, "refuted", why, mode) if why else verdict

    async def _finer(
        self, link: LinkRecord, target: ToolRecord, rows: list[dict[str, Any]], trials: list[Trial]
    ) -> list[Trial]:
        """More values of the finest level a region code was tried at, where that level failed and a coarser one
        worked (`fine_level`): up to FINE_FAILURES in all, so one code without data does not decide."""
        tried = {repr(t.source_value) for t in trials}
        finest = min(level(str(t.source_value)) for t in trials if t.result.definitive)
        have = sum(1 for t in trials if t.result.definitive and level(str(t.source_value)) == finest)
        more: list[Trial] = []
        for row in rows:
            if have + len(more) >= FINE_FAILURES or not self.executor.budget_left:
                break
            value = row.get(link.source_field)
            if repr(value) in tried or level(str(value)) != finest:
                continue
            try:
                args = self._args(link, target, row, {})
            except transforms.TransformError:
                continue
            result = await self.call(target, args)
            more.append(Trial(value, args, result, row, rows, link.source_field))
            if result.ok:
                break  # a value of the finest level works: the codes agree there
        return more

    def _learn_refusal(self, verdict: LinkRecord, trials: list[Trial]) -> LinkRecord:
        """A refuted link whose every value (three or more) got one and the same refusal (`INVALID`, the same code
        and text) teaches the target's answer to the request's form: a later link into the same parameter whose
        first value gets that very refusal is refuted on it (`trials`), its reason naming this link. A refusal
        that depends on the value (a date out of range, an unknown code) names it or answers some values
        otherwise, and is not learnt."""
        key = (verdict.target_tool, verdict.target_param)
        answers = {(t.result.code, t.result.reason) for t in trials}
        invalid = all(t.result.outcome == Outcome.INVALID for t in trials)
        if invalid and len(answers) == 1:
            ((code, reason),) = answers
            known = self.refusals.get(key)
            if known and known[:2] == (code, reason) and len(trials) < FORM_VALUES:
                return verdict.model_copy(
                    update={
                        "reason": f"{verdict.reason}; the refusal every value of {known[2]} got: the target "
                        "answers the request's form so, whatever the value"
                    }
                )
            if len(trials) >= FORM_VALUES and key not in self.refusals:
                self.learnt.setdefault(key, (code, reason, verdict.id))
        return verdict

    def settle(self) -> None:
        """What links decided so far learnt (`learnt`) is consulted from now on: between calls of the demand
        verifier, so a link's verdict does not depend on which concurrent link was decided first."""
        for key, refusal in sorted(self.learnt.items()):
            self.refusals.setdefault(key, refusal)
        self.learnt.clear()

    async def verify_source(self, source: str, links: list[LinkRecord]) -> list[LinkRecord]:
        """Verify links out of one source tool from its one sampling call; saves each outcome as it lands."""
        rows = self.samples.get(source, [])
        if not rows:
            return []
        # every link out of this source may help fill a joint call, whatever round decided it
        siblings = [
            lk for lk in await asyncio.to_thread(all_links, self.store, None, source) if lk.source_tool == source
        ]
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
            alternative = level_alternative(outcome)
            if alternative is not None and self.executor.budget_left:
                # the codes agree at the 시군구 level: that level of each row's code is tried as a link of its own
                await asyncio.to_thread(self.store.upsert_candidates, [alternative])
                second = await self.verify_link(alternative, link_rows, siblings)
                await asyncio.to_thread(self.store.save_link, second)
                done.append(second)
                if self.progress:
                    self.progress(second)

        await asyncio.gather(*(one(lk) for lk in sorted(links, key=lambda lk: -lk.score)))
        return done
