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
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from core.settings import ENGINE_VERSION, Settings
from execution import sampling
from execution.executor import Executor
from execution.result import CallResult, Outcome
from execution.seeds import PAGE_SIZE_PARAMS
from graph import transforms as T
from graph.candidates import derive_candidates
from graph.concepts import norm, signals, stem, value_shape
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


def _interleave(groups: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rows of several sampling calls, taken in turn, so the first values tried span every call's level."""
    out: list[dict[str, Any]] = []
    for i in range(max((len(g) for g in groups), default=0)):
        out.extend(g[i] for g in groups if i < len(g))
    return out


def _diverse(rows: list[dict[str, Any]], field_name: str) -> list[dict[str, Any]]:
    """Rows reordered so the first values tried differ in kind, level and entity: grouped by value shape and by
    the trailing zeros that mark the level of a hierarchical code (1100000000 시도, 1111000000 시군구, 1111010100
    읍면동 in 법정동/행정동 codes), the groups taken in turn; inside a group the entities (see `_entity`) taken in
    turn, each in its sampled order, so two values tried first are never two districts of one province."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        text = str(row.get(field_name, ""))
        groups.setdefault((value_shape(text), _level(text)), []).append(row)
    spread = []
    for group in groups.values():
        by_entity: dict[str, list[dict[str, Any]]] = {}
        for row in group:
            by_entity.setdefault(_entity(row.get(field_name)), []).append(row)
        spread.append(_interleave(list(by_entity.values())))
    # the finest level first: a 읍면동 code is where two code systems differ, and a 시도 code is the one a
    # district-level target does not take
    levels = [_level(str(g[0].get(field_name, ""))) for g in groups.values()]
    return _interleave([g for _, g in sorted(zip(levels, spread, strict=True), key=lambda x: x[0])])


def _entity(value: Any) -> str:
    """The entity a source value stands for, as far as a link must hold across entities: a region code (five or
    ten digits: 시군구, 법정동 and 행정동 codes) by its two-digit head, the province (codes of one province are
    where two code systems coincide: an agency's own 시도 numbering equals the legal-dong prefix for 서울 only;
    행정동 and 법정동 codes are equal at province and district level); anything else (a company, a date, a
    station, a name) by its value."""
    text = str(value if value is not None else "").strip()
    if text.isdigit() and len(text) in (5, 10) and _as_date(text) is None:
        return text[:2]
    return text


def _level(value: Any) -> int:
    """The level of a hierarchical code, read off its trailing zeros in pairs (the parts of 법정동/행정동 codes are
    two or three digits wide, so 1111010100 and 1111011000 are both 읍면동 rows)."""
    text = str(value)
    return (len(text) - len(text.rstrip("0"))) // 2 if text.isdigit() and len(text) >= 5 else 0


def _levels_empty(trials: list[Trial]) -> bool:
    return all(t.result.outcome == "empty" for t in trials) and len({_level(t.source_value) for t in trials}) > 1


def _row_set(rows: list[dict[str, Any]]) -> set[str]:
    return {repr(sorted((k, str(v)) for k, v in r.items())) for r in rows}


def _other_values(param: Any, value: Any) -> list[str]:
    """Up to two values of the same shape as `value` that should select something else: the enumeration's other
    members from its end (the first member is often the catch-all, 전국 or 전체), a date a day before and after,
    the digits shifted by one and by five, or the text reversed."""
    text = str(value if value is not None else "")
    if param is not None and param.enum:
        return [str(e) for e in reversed(param.enum) if str(e) != text][:2]
    if not text:
        return []
    day = _as_date(text)
    if day is not None:  # a date: the day before and after (shifted digits would be no date at all)
        fmt = "%Y-%m-%d" if "-" in text else "%Y%m%d"
        return [(day + timedelta(days=n)).strftime(fmt) for n in (-1, 1)]
    if any(c.isdigit() for c in text):
        return ["".join(str((int(c) + n) % 10) if c.isdigit() else c for c in text) for n in (1, 5)]
    flipped = text[::-1]
    return [flipped] if flipped != text else []


def _as_date(text: str) -> datetime | None:
    """A YYYYMMDD or YYYY-MM-DD date, else None."""
    fmt = "%Y%m%d" if len(text) == 8 and text.isdigit() else "%Y-%m-%d" if len(text) == 10 else None
    try:
        return datetime.strptime(text, fmt) if fmt else None
    except ValueError:
        return None


def _same(a: CallResult, b: CallResult) -> bool:
    return a.response_hash == b.response_hash or _row_set(a.items) == _row_set(b.items)


def _kinds(trials: list[Trial]) -> str:
    """Which kinds of source values worked: ' (digits10 2/3, hangul 1/1)'."""
    kinds: dict[str, list[int]] = {}
    for t in trials:
        if not t.result.definitive:
            continue
        k = kinds.setdefault(value_shape(str(t.source_value)), [0, 0])
        k[0] += t.result.ok
        k[1] += 1
    return " (" + ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(kinds.items())) + ")" if kinds else ""


@dataclass
class Trial:
    source_value: Any
    inputs: dict[str, Any]
    result: CallResult
    #: The source row the value was drawn from (what echo consistency compares the answer with).
    row: dict[str, Any] = field(default_factory=dict)
    #: The source rows (one per distinct value of the linked field) the trial's value was drawn among.
    pool: list[dict[str, Any]] = field(default_factory=list)
    source_field: str = ""


def _echoes(rows: list[dict[str, Any]], inputs: dict[str, Any]) -> dict[str, list[str]]:
    """For each input, the fields of the answer that carry its value in every row (the provider echoing the
    parameter), those named like the parameter first."""
    out: dict[str, list[str]] = {}
    if not rows:
        return out
    for name, value in inputs.items():
        text = str(value).strip()
        if not text or isinstance(value, list | dict):
            continue
        fields = [f for f in rows[0] if all(str(r.get(f, "")).strip() == text for r in rows)]
        if fields:
            out[name] = sorted(fields, key=lambda f: norm(f) != norm(name))
    return out


def _inputs_key(args: dict[str, Any]) -> frozenset[tuple[str, str]]:
    return frozenset((k, str(v)) for k, v in args.items())


def _class(value: Any) -> tuple[str, int]:
    text = str(value if value is not None else "")
    return value_shape(text), _level(text)


def _entities(trials: list[Trial], ok: bool = False) -> int:
    """Distinct entities among the values tried (those that worked, with ok)."""
    return len({_entity(t.source_value) for t in trials if t.result.ok or not ok})


def _spread(trials: list[Trial]) -> int:
    """How many entities the source offered of the kinds of value that worked (a value's shape and level): one
    where every row is of one province, or only one 시군구 code among 시도 codes the target does not take."""
    first = next((t for t in trials if t.pool), None)
    if first is None:
        return 0
    values = [r.get(first.source_field) for r in first.pool]
    kinds = {_class(t.source_value) for t in trials if t.result.ok}
    return max((len({_entity(v) for v in values if _class(v) == k}) for k in kinds), default=0)


def _swapped(link: LinkRecord, trial: Trial) -> str | None:
    """A value that lands in another field: the answer echoes the linked parameter as one field and carries the
    source field's own name as the echo of another parameter (`ny` fed into `nx` of a service that echoes both:
    every grid value answers, but the rows say the value was taken as nx, and ny has its own parameter)."""
    pname = link.target_param.split(":", 1)[1]
    src = link.source_field
    rows = trial.result.items
    echoes = _echoes(rows, {k: v for k, v in trial.inputs.items() if k not in PAGE_SIZE_PARAMS})
    mine = echoes.get(pname)
    if not mine or not rows or src not in rows[0]:
        return None
    landed = mine[0]
    if norm(landed) == norm(src):
        return None
    for other, fields in echoes.items():
        if other != pname and norm(other) == norm(src) and src in fields:
            return (
                f"the value of {src} lands in {landed}: the answer echoes {pname} as {landed} and {other} as "
                f"{src}, so {src} feeds {other}, not {pname}"
            )
    return None


_CODE_END = re.compile(r"_?(cd|code|id|no)$", re.IGNORECASE)
_NAME_END = re.compile(r"_?(nm|name)$", re.IGNORECASE)


def _name_of(code_field: str, field_name: str) -> bool:
    """`field_name` names what `code_field` codes, by the standard terms' Cd/Nm pairing (ctprvnCd/ctprvnNm,
    sido_cd/sido_nm, stationCode/stationName)."""
    stem_ = _CODE_END.sub("", code_field)
    return (
        bool(stem_)
        and stem_ != code_field
        and _NAME_END.sub("", field_name).lower() == stem_.lower()
        and (_NAME_END.search(field_name) is not None)
    )


def _dependent_fields(rows: list[dict[str, Any]], field_name: str) -> list[str]:
    """The name fields of the source rows that the linked code names (ctprvnCd 26 → ctprvnNm 부산광역시): one
    value of the code, one value of the name, two values or more."""
    seen: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for row in rows:
        key = str(row.get(field_name, ""))
        if not key:
            continue
        for f, v in row.items():
            if f != field_name and not isinstance(v, list | dict) and str(v).strip():
                seen[f][key].add(str(v).strip())
    out = []
    for f, by_key in seen.items():
        values = set().union(*by_key.values())
        if (
            _name_of(field_name, f)
            and len(by_key) >= 2
            and len(values) >= 2
            and all(len(v) == 1 for v in by_key.values())
        ):
            out.append(f)
    return out


def _coincides(link: LinkRecord, trials: list[Trial]) -> str | None:
    """Codes of two systems that coincide for some entities only: the answers carry a field of the source's
    entity (the same name, one value per answer), which agrees with the source row for one entity and names
    another entity for another (a legal-dong 시도 code 11 is 서울 to the statistics agency as well, but 26 is
    부산 in one system and 울산 in the other)."""
    pool = next((t.pool for t in trials if t.pool), [])
    dependent = _dependent_fields(pool, link.source_field)
    if not dependent:
        return None
    inputs = {str(v).strip() for t in trials for v in t.inputs.values()}
    for f in dependent:
        agree: list[str] = []
        differ: list[tuple[str, str, str]] = []
        if value_shape(str(pool[0].get(f, ""))) != "hangul":
            continue  # names are one across systems; codes are what differs between them
        for t in trials:
            if not t.result.ok or f not in t.row or f not in t.result.items[0]:
                continue
            got = {str(r.get(f, "")).strip() for r in t.result.items}
            if len(got) != 1:
                continue
            answer, own = got.pop(), str(t.row[f]).strip()
            if answer in inputs and answer != own:
                continue  # the echo of another input, not a statement about the entity
            if answer == own:
                agree.append(str(t.source_value))
            else:
                differ.append((str(t.source_value), own, answer))
        if agree and differ:
            value, own, answer = differ[0]
            return (
                f"the codes coincide for some entities only: for {link.source_field}={agree[0]} the answer's {f} "
                f"is the source's, for {link.source_field}={value} it is {answer!r} where the source says {own!r}"
            )
    return None


@dataclass
class Engine:
    store: GraphStore
    settings: Settings
    executor: Executor
    run: RunRecord
    tools: dict[str, ToolRecord] = field(default_factory=dict)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    unreachable: dict[str, dict[str, Any]] = field(default_factory=dict)
    sample_paths: dict[str, str] = field(default_factory=dict)
    progress: Progress | None = None
    #: The naive baseline: a fresh upstream call for every link (use with a cache-less economy).
    naive: bool = False
    #: Answers of this engine's successful calls per tool (inputs, rows): what shows a parameter is honoured.
    answers: dict[str, list[tuple[dict[str, str], frozenset[str]]]] = field(default_factory=dict)
    #: (tool, required parameter) pairs shown to select: a value of the same shape answered differently.
    honoured: set[tuple[str, str]] = field(default_factory=set)
    _control_locks: dict[tuple[str, str], asyncio.Lock] = field(default_factory=dict)
    #: Inputs of this engine's sampling calls per tool: a value whose call the sampling made costs nothing more.
    #: (Sampling calls only: they are made before any link is tried, so the order of values does not depend on
    #: which concurrent link or which retried fault came first.)
    called: dict[str, set[frozenset[tuple[str, str]]]] = field(default_factory=dict)
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
                seen.append(({k: str(v) for k, v in args.items()}, frozenset(_row_set(result.items))))
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
                self.called.setdefault(tool.name, set()).add(_inputs_key(plan))
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
                    self.called.setdefault(tool.name, set()).add(_inputs_key({**used, name: value}))
                if wider.ok:
                    rows.append(wider.items)
        self.samples[tool.name] = normalise_rows(_interleave(rows))
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
                return p.name, T.apply(other, row.get(t["pair"]), row)
        return None

    def _joints(self, link: LinkRecord, target: ToolRecord, siblings: list[LinkRecord]) -> list[dict[str, LinkRecord]]:
        """Ways to fill the target's other required parameters from the same source row: the two best candidates
        per parameter (by score only, so the outcome does not depend on which round decided what), at most four
        combinations, in a fixed order."""
        required = {p.key() for p in target.params if p.required} - {link.target_param}
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
        combos: list[dict[str, LinkRecord]] = [{}]
        for param in sorted(options):
            combos = [{**c, param: s} for c in combos for s in options[param]]
        return combos[:4]

    def _args(
        self, link: LinkRecord, target: ToolRecord, row: dict[str, Any], joint: dict[str, LinkRecord]
    ) -> dict[str, Any]:
        base, _ = sampling.required_args(target, self.settings)
        for p in target.params:
            if p.name in PAGE_SIZE_PARAMS:
                # the page the sampling call asked for: a trial with the values a sample was taken with is that
                # call again (a cache hit), and an answer of one page size compares with another of the same
                base[p.name] = PAGE_SIZE_PARAMS[p.name]
        pname = link.target_param.split(":", 1)[1]
        base[pname] = T.apply(link.transform, row.get(link.source_field), row)
        partner = self._partner(link, target, row)
        if partner:
            base[partner[0]] = partner[1]
        for key, other in joint.items():
            base[key.split(":", 1)[1]] = T.apply(other.transform, row.get(other.source_field), row)
        return base

    async def _trials(
        self, link: LinkRecord, target: ToolRecord, rows: list[dict[str, Any]], joint: dict[str, LinkRecord]
    ) -> list[Trial]:
        k, k_max = self.settings.verify.k, self.settings.verify.k_max
        trials: list[Trial] = []
        pname = link.target_param.split(":", 1)[1]
        optional = any(p.name == pname and not p.required for p in target.params)
        pool, src = rows, link.source_field
        done = self.called.get(target.name, set())

        def known(row: dict[str, Any]) -> bool:
            try:
                return _inputs_key(self._args(link, target, row, joint)) in done
            except T.TransformError:
                return False

        # values whose calls the sampling made already first, the diverse order kept among the rest: the same
        # evidence, paid for once
        rows = sorted(rows, key=lambda r: not known(r))
        for row in rows[:k_max]:
            ok = sum(t.result.ok for t in trials)
            definitive = sum(t.result.definitive for t in trials)
            if (self._convincing(trials) and len(trials) >= min(k, len(rows))) or (
                ok >= 2 and self._convincing(trials)
            ):
                break
            if ok == 0 and definitive >= min(k, 3) and (definitive >= k or not _levels_empty(trials)):
                # three failures of values of different kinds settle it; when codes of several levels all
                # answered "no rows", one more value of the deepest level (data may exist for another one)
                break
            value = row.get(link.source_field)
            try:
                args = self._args(link, target, row, joint)
            except T.TransformError as exc:
                trials.append(
                    Trial(value, {}, CallResult(Outcome.INVALID, reason=f"transform failed: {exc}"), row, pool, src)
                )
                continue
            result = await self.call(target, args)
            trials.append(Trial(value, args, result, row, pool, src))
            if result.quota and (result.code == "budget" or target.api_id in self.executor.exhausted_apis):
                break
            if result.ok and optional and sum(t.result.ok for t in trials) == 1:
                # an optional filter: the control call (cached, reused by _control) shows at once whether the
                # answer depends on it; more values of a vacuous filter would prove nothing
                outcome, _, _ = await self._without(target, trials[-1], pname)
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
        distinct = _diverse(distinct, link.source_field)
        if not distinct:
            reason = (
                f"field {link.source_field!r} is absent from {link.source_tool}'s responses (schema drift?)"
                if rows and all(link.source_field not in r for r in rows)
                else f"field {link.source_field!r} is always empty in the sampled responses"
            )
            return self._decide(link, [], "refuted" if rows else "inconclusive", reason, "solo")
        # a date is proposed only beside an entity link from the same row (graph.candidates._date_links): it is
        # called jointly from the start, a date alone cannot name the record
        joint_only = link.transform.get("kind") == "date" and any(
            p.required for p in target.params if p.key() != link.target_param
        )
        joint_only = joint_only and bool(self._joints(link, target, siblings))
        trials = [] if joint_only else await self._trials(link, target, distinct, {})
        mode = "solo"
        if not self._convincing(trials) and all(t.result.definitive for t in trials):
            # other required parameters may have to come from the same row (sigunguCd with bjdongCd, ...)
            doubt: list[Trial] = []
            for joint in self._joints(link, target, siblings):
                joint_trials = await self._trials(link, target, distinct, joint)
                doubt += [t for t in joint_trials if not t.result.definitive]
                if self._rate(joint_trials) > self._rate(trials) or (joint_only and not trials):
                    trials, mode = joint_trials, "joint"
                if self._convincing(trials):
                    break
            if not self._convincing(trials):
                # a joint value lost to a transient fault might have worked: keep that doubt in the verdict
                trials = trials + doubt
        verdict = self._judge(link, trials, mode)
        if verdict.status == "verified":
            verdict = await self._control(verdict, target, trials, link, distinct, siblings)
        return verdict

    async def _control(
        self,
        verdict: LinkRecord,
        target: ToolRecord,
        trials: list[Trial],
        before: LinkRecord,
        rows: list[dict[str, Any]],
        siblings: list[LinkRecord],
    ) -> LinkRecord:
        """An optional filter proves nothing when the call answers the same without it (a provider that ignores an
        unknown or mistyped filter, an all-optional search whose other filter did the work): the control call
        drops the linked parameter; the same rows mean the link is vacuous, not verified. Before calling it
        vacuous: a filter that works only in a pair (xPos with yPos, a 시군구 code with its 시도 code) is tried
        with its partner from the same row, and an enumerated filter whose value is the provider's default is
        controlled with another value of its enumeration."""
        pname = verdict.target_param.split(":", 1)[1]
        param = next((p for p in target.params if p.name == pname), None)
        evidence = dict(verdict.evidence)
        first = next(t for t in trials if t.result.ok)
        if param is None or param.required:
            return await self._control_required(verdict, before, trials, first, param, evidence)
        outcome, control, args = await self._without(target, first, pname)
        doubt = ""  # a control lost to a transient fault might have told the filter works: never refute on it
        if outcome == "same":
            # the same answer without the filter: the provider ignores it, or our value is consistent with the
            # rest of the call (a 시도 code of the very point searched around). A value of the same shape tells.
            other = next(iter(_other_values(param, first.inputs.get(pname))), None)
            if other is not None:
                alt = await self.call(target, {**first.inputs, pname: other})
                if not alt.definitive:
                    doubt = f"control call with {pname}={other} failed transiently: {alt.reason}"
                if alt.definitive and not (alt.ok and _same(alt, first.result)):
                    evidence["control"] = {
                        "kind": "other_value",
                        "input": {**first.inputs, pname: other},
                        "outcome": alt.outcome,
                        "rows": len(alt.items),
                        "same_answer": False,
                    }
                    return verdict.model_copy(
                        update={
                            "evidence": evidence,
                            "reason": verdict.reason
                            + (
                                f"; same answer without {pname}, but {pname}={other} "
                                f"answers {alt.outcome}: the filter is "
                                "honoured and the linked value agrees with the rest of the call"
                            ),
                        }
                    )
        if outcome == "same":
            for joint in self._pairs(verdict, target, siblings):
                joint_trials = await self._trials(before, target, rows[:2], joint)
                lost = next((t for t in joint_trials if not t.result.definitive), None)
                if lost is not None:
                    doubt = doubt or f"a joint trial with {', '.join(joint)} failed transiently: {lost.result.reason}"
                ok = next((t for t in joint_trials if t.result.ok), None)
                if ok is None or not self._convincing(joint_trials):
                    continue
                outcome, control, args = await self._without(target, ok, pname)
                if outcome == "transient":
                    doubt = doubt or f"control call without {pname} failed transiently: {control.reason}"
                    outcome = "same"
                if outcome == "differs":
                    trials = joint_trials
                    verdict = self._judge(before, joint_trials, "joint")
                    evidence = dict(verdict.evidence)
                    break
        evidence["control"] = {
            "kind": "without",
            "input": args,
            "outcome": control.outcome,
            "rows": len(control.items),
            "same_answer": outcome == "same",
        }
        if outcome == "transient" or (outcome == "same" and doubt):
            return verdict.model_copy(
                update={
                    "evidence": evidence,
                    "status": "inconclusive",
                    "needs_reverify": True,
                    "verified_at": before.verified_at,
                    "reason": doubt or f"control call without {pname} failed transiently: {control.reason}",
                }
            )
        if outcome == "same":
            return verdict.model_copy(
                update={
                    "evidence": evidence,
                    "status": "refuted",
                    "verified_at": before.verified_at,
                    "reason": f"vacuous: the call answers the same without {pname}",
                }
            )
        return verdict.model_copy(
            update={"evidence": evidence, "reason": verdict.reason + f"; without {pname}: {control.outcome}"}
        )

    async def _control_required(
        self,
        verdict: LinkRecord,
        before: LinkRecord,
        trials: list[Trial],
        first: Trial,
        param: Any,
        evidence: dict[str, Any],
    ) -> LinkRecord:
        """A required parameter cannot be dropped, but its value can be ignored (a provider that answers the same
        list whatever the code). Trials that answered differently for different values already show that the value
        selects; otherwise one call with a value of the same shape must answer differently, or the link is vacuous."""
        target, pname = self.tools[verdict.target_tool], verdict.target_param.split(":", 1)[1]
        # one control at a time per parameter: the first that shows it honoured spares the calls of the others
        async with self._control_locks.setdefault((target.name, pname), asyncio.Lock()):
            return await self._control_required_locked(verdict, before, trials, first, param, evidence)

    async def _control_required_locked(
        self,
        verdict: LinkRecord,
        before: LinkRecord,
        trials: list[Trial],
        first: Trial,
        param: Any,
        evidence: dict[str, Any],
    ) -> LinkRecord:
        target, pname = self.tools[verdict.target_tool], verdict.target_param.split(":", 1)[1]
        answers = {frozenset(_row_set(t.result.items)) for t in trials if t.result.ok}
        if len(answers) >= 2 or self._honoured(target.name, pname, first):
            self.honoured.add((target.name, pname))
            evidence["control"] = {
                "kind": "values_differ",
                "answers": max(2, len(answers)),
                "note": f"{pname} is required; another value of it, the rest of the call the same, gave another answer",
            }
            return verdict.model_copy(update={"evidence": evidence})
        others = _other_values(param, first.inputs.get(pname))
        if not others:
            evidence["control"] = {
                "kind": "required",
                "note": f"{pname} is required and has no value of the same shape to compare with",
            }
            return verdict.model_copy(update={"evidence": evidence})
        for other in others:
            # vacuous only when every value of the same shape answers exactly like the linked one
            args = {**first.inputs, pname: other}
            alt = await self.call(target, args)
            same = alt.ok and _same(alt, first.result)
            evidence["control"] = {
                "kind": "other_value",
                "input": args,
                "outcome": alt.outcome,
                "rows": len(alt.items),
                "same_answer": same,
            }
            if not alt.definitive:
                return verdict.model_copy(
                    update={
                        "evidence": evidence,
                        "status": "inconclusive",
                        "needs_reverify": True,
                        "verified_at": before.verified_at,
                        "reason": f"control call with {pname}={other} failed transiently: {alt.reason}",
                    }
                )
            if not same:
                self.honoured.add((target.name, pname))
                return verdict.model_copy(
                    update={
                        "evidence": evidence,
                        "reason": verdict.reason + (f"; {pname}={other}: {alt.outcome}, another answer"),
                    }
                )
        return verdict.model_copy(
            update={
                "evidence": evidence,
                "status": "refuted",
                "verified_at": before.verified_at,
                "reason": f"vacuous: {pname}={', '.join(others)} answer the same as the "
                "linked value (the provider ignores it)",
            }
        )

    def _honoured(self, tool: str, pname: str, trial: Trial) -> bool:
        """Whether `tool` is known to honour `pname`: this run has seen it (a property of the provider, not of one
        link: a control of another link into it answered differently), every row of the answer carries the value,
        or a call made shows it (the same call with another value of it, every other input equal, answered
        differently)."""
        if (tool, pname) in self.honoured:
            return True
        value = str(trial.inputs.get(pname))
        rows = trial.result.items
        if len(value) >= 2 and rows and all(any(str(v) == value for v in r.values()) for r in rows):
            # every row answered carries the value asked for: another value could not get these rows back
            return True
        mine = frozenset(_row_set(trial.result.items))
        paging = {k: str(v) for k, v in trial.inputs.items() if k in PAGE_SIZE_PARAMS}
        rest = {k: str(v) for k, v in trial.inputs.items() if k != pname and k not in PAGE_SIZE_PARAMS}
        for inputs, answer in self.answers.get(tool, []):
            if pname not in inputs or inputs[pname] == value:
                continue
            if {k: v for k, v in inputs.items() if k != pname and k not in PAGE_SIZE_PARAMS} != rest:
                continue
            # the same page: any other answer; a page of another size (the tool's sample): rows it could not hold,
            # since a provider that ignored the value would answer with rows of the same list
            same_page = {k: v for k, v in inputs.items() if k in PAGE_SIZE_PARAMS} == paging
            if (answer != mine) if same_page else not mine <= answer:
                return True
        return False

    async def _without(self, target: ToolRecord, trial: Trial, pname: str) -> tuple[str, CallResult, dict[str, Any]]:
        args = {k: v for k, v in trial.inputs.items() if k != pname}
        control = await self.call(target, args)
        if not control.definitive:
            return "transient", control, args
        return ("same" if control.ok and _same(control, trial.result) else "differs"), control, args

    def _pairs(self, link: LinkRecord, target: ToolRecord, siblings: list[LinkRecord]) -> list[dict[str, LinkRecord]]:
        """Partners for an optional filter: the best sibling link into another optional parameter of the target,
        those of the same stem (xPos/yPos) or the same concept family first; two at most."""
        pname = link.target_param.split(":", 1)[1]
        optional = {p.key(): p for p in target.params if not p.required and p.name != pname}
        mine = stem(pname)
        options = [
            s
            for s in siblings
            if s.target_tool == target.name
            and s.target_param in optional
            and s.source_field != link.source_field
            and s.source_tool == link.source_tool
        ]
        options = [s for s in options if stem(s.target_param.split(":", 1)[1]) == mine]
        options.sort(key=lambda s: (-s.score, s.id))
        out: list[dict[str, LinkRecord]] = []
        for s in options:
            if all(s.target_param not in j for j in out):
                out.append({s.target_param: s})
            if len(out) >= 2:
                break
        return out

    @staticmethod
    def _rate(trials: list[Trial]) -> float:
        definitive = [t for t in trials if t.result.definitive]
        return sum(t.result.ok for t in definitive) / len(definitive) if definitive else 0.0

    def _convincing(self, trials: list[Trial]) -> bool:
        ok = sum(t.result.ok for t in trials)
        if _spread(trials) >= 2:
            # the source offers values of several entities of the kind that worked: values of one entity do not
            # convince, another entity's must work too (see _judge for a source of two entities)
            return _entities(trials, ok=True) >= 2
        return ok >= 2 or (ok >= 1 and self._rate(trials) >= 0.34)

    def _judge(self, link: LinkRecord, trials: list[Trial], mode: str) -> LinkRecord:
        ok = [t for t in trials if t.result.ok]
        definitive = [t for t in trials if t.result.definitive]
        transient = [t for t in trials if not t.result.definitive]
        conflict = next((why for t in ok if (why := _swapped(link, t))), None) or _coincides(link, trials)
        if conflict:
            return self._decide(link, trials, "refuted", f"echo: {conflict}", mode)
        # values of several entities tried: one entity whose values worked among three or more is where two code
        # systems coincide; two entities of which one worked may be a target with data for some entities only
        several = _spread(trials) >= 2 and _entities(trials) >= 3
        # for the rate, transient trials count as failures: a fault can never tip a link into "verified"
        if (_entities(trials, ok=True) >= 2) if several else (len(ok) >= 2 or (ok and len(ok) / len(trials) >= 0.34)):
            return self._decide(
                link, trials, "verified", f"{len(ok)} of {len(definitive)} values worked{_kinds(trials)}", mode
            )
        if several and ok and not transient:
            return self._decide(
                link,
                trials,
                "refuted",
                f"worked for one entity only ({_entity(ok[0].source_value)}) "
                f"of {_entities(trials)} tried: the values coincide there",
                mode,
            )
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
            "run_id": self.run.id,
            "engine": ENGINE_VERSION,
            "at": now,
            "mode": mode,
            "transform": link.transform,
            "trials": len(trials),
            "successes": len(ok),
            # the entities of the source the values were drawn from (a province, a company, a date) and how each
            # fared: a link holds across entities, not for the one where two code systems coincide
            "entities": [
                {
                    "entity": e,
                    "values": [str(t.source_value) for t in trials if _entity(t.source_value) == e][:3],
                    "worked": sum(t.result.ok for t in trials if _entity(t.source_value) == e),
                }
                for e in dict.fromkeys(_entity(t.source_value) for t in trials)
            ],
            "latency_ms": round(sum(t.result.latency_ms for t in calls) / len(calls), 1) if calls else None,
            "response_hash": (ok[0] if ok else trials[0]).result.response_hash if trials else "",
            "examples": [
                {
                    "source_value": t.source_value,
                    "input": t.inputs,
                    "outcome": t.result.outcome,
                    "reason": t.result.reason,
                    "rows": len(t.result.items),
                    "url": t.result.url,
                    "first_row": _trim(t.result.items[0]) if t.result.items else None,
                }
                for t in trials[:3]
            ],
        }
        history = [*link.history, {"at": now, "run": self.run.id, "status": status, "reason": reason}][-MAX_HISTORY:]
        return link.model_copy(
            update={
                "status": status,
                "reason": reason,
                "evidence": evidence,
                "history": history,
                "last_run": self.run.id,
                "needs_reverify": status == "inconclusive",
                "updated_at": now,
                "verified_at": now if status == "verified" else link.verified_at,
            }
        )

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

        await asyncio.gather(*(one(lk) for lk in sorted(links, key=lambda lk: -lk.score)))
        return done


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
                for row in _diverse(engine.samples.get(lk.source_tool, []), lk.source_field):
                    try:
                        value = T.apply(lk.transform, row.get(lk.source_field), row)
                    except T.TransformError:
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
