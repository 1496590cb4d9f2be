"""Solvable by construction: the checks `kopa bench check` applies to every task after executing its gold program.

A task is **refused** when a model reading what the harness shows could not do it, or could pass it without doing it:

* `spec`: a gold argument the tool's spec (as the model sees it) does not have, a required argument missing, or a
  constant outside the parameter's documented values;
* `view`: a fact, a linked argument or a `when` condition taken from a row or field the view of the gold response
  (`execution.view`, what the model reads) does not show; the gold program must narrow with the API's own filters
  and paging, as a careful agent would;
* `where`: a `{where: ...}` row that matches more than one row of the response (the model cannot know which one);
* `projection`: a gold argument computed by a coordinate projection (`coord` transform) instead of a conversion-tool
  step (a model cannot project in its head);
* `fact`: a text or name fact that is trivially short (one character after normalisation) or already in the request;
* `constant`: a constant answer passes the fact check (`synthesis.facts.check_answer`): a run of small numbers, the
  request echoed, or both;
* `irrelevance`: an irrelevance task asking for something a model does itself (translation, arithmetic, writing),
  rather than for data no offered tool provides;
* `oracle`: the reference answer fails the task: the oracle agent (`bench.agents.OracleAgent`, what
  `kopa bench run --agent oracle` runs) plays the episode through the same backend, renders its final answer from
  the facts, and `bench.scores.score_episode` scores it as any model's; a task the oracle fails (a fact the judge
  cannot read without a `label`, a `must_call` the oracle never makes, ...) is one no model could be expected to pass.

Every problem is one line naming the task, the class and what to change.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bench.agents import OracleAgent
from bench.backends import Backend
from bench.episode import run_episode
from bench.gold import GoldError, GoldResult, execute_gold
from bench.scores import score_episode
from bench.tasks import ConstArg, FromArg, Task, When, Where
from execution.view import ToolLike, parameters, visible
from synthesis.answer_values import normalise_name
from synthesis.fact_terms import Fact
from synthesis.facts import check_answer, fact_hit

#: Constant answers no task may pass: small numbers in a row, the request echoed, both.
NUMBER_RUN = " ".join(str(i) for i in range(13))
#: Requests a model fulfils itself (no tool needed): translation, arithmetic, writing and rewriting text.
SELF_DOABLE = re.compile(
    r"번역|영어로|영문으로|일본어로|중국어로|translate|"
    r"\d\s*[+×*/÷]\s*\d|\d\s+-\s+\d|더하면|곱하면|나누면|빼면|합계를?\s*계산|평균을?\s*계산|"
    r"시를?\s*(?:써|지어)|작문|요약해|맞춤법|문장을?\s*(?:다듬|고쳐)",
    re.IGNORECASE,
)
MIN_TEXT = 2
REFUSAL_CLASSES = ("spec", "view", "where", "projection", "fact", "constant", "irrelevance", "oracle")


@dataclass
class CheckResult:
    task: str
    problems: list[str] = field(default_factory=list)
    calls: int = 0

    @property
    def refused(self) -> bool:
        return bool(self.problems)


def spec_problems(task: Task, tools: Mapping[str, ToolLike]) -> list[str]:
    """Arguments against each gold tool's spec as the model sees it (names, required, documented values)."""
    out: list[str] = []
    for step in task.gold:
        schema = parameters(tools.get(step.tool))
        props: dict[str, Any] = schema.get("properties") or {}
        for name in step.args:
            if name not in props:
                out.append(f"spec: step {step.id!r} ({step.tool}) sends {name!r}, which its spec does not have")
        for name in schema.get("required") or []:
            if name not in step.args:
                out.append(f"spec: step {step.id!r} ({step.tool}) misses the required argument {name!r}")
        for name, src in step.args.items():
            enum = (props.get(name) or {}).get("enum")
            if isinstance(src, ConstArg) and enum and str(src.const) not in {str(e) for e in enum}:
                out.append(f"spec: step {step.id!r} ({step.tool}) {name}={src.const!r} is not one of {enum}")
            if isinstance(src, FromArg) and src.transform and src.transform.get("kind") == "coord":
                out.append(
                    f"projection: step {step.id!r} ({step.tool}) {name} is projected ({src.transform.get('src')}"
                    f" -> {src.transform.get('dst')}); call a conversion tool (kopa_convert_*) instead"
                )
    return out


def irrelevance_problems(task: Task) -> list[str]:
    if task.category != "irrelevance":
        return []
    m = SELF_DOABLE.search(task.request())
    if m:
        return [
            f"irrelevance: the request ({m.group()!r}) is something a model does itself; ask for data no "
            "offered tool provides"
        ]
    return []


def _ref(
    step_id: str,
    row: int | Where,
    fld: str | None,
    what: str,
    task: Task,
    gold: GoldResult,
    tools: Mapping[str, ToolLike],
) -> list[str]:
    """Problems with one reference to a gold response: ambiguous `where`, a row or field outside the view."""
    call = next((c for c in gold.calls if c.step == step_id), None)
    if call is None:
        return []  # a step whose `when` did not hold: nothing was shown
    items = call.observation.items
    if isinstance(row, Where):
        matches = [i for i, it in enumerate(items) if all(str(it.get(k)) == str(v) for k, v in row.where.items())]
        if len(matches) > 1:
            return [
                f"where: {what} {row.where} matches {len(matches)} rows of step {step_id!r}; add fields that pick one"
            ]
        if not matches:
            return []  # execute_gold already refuses a missing row
        idx = matches[0]
        keys = list(row.where)
    else:
        idx = row if row >= 0 else len(items) + row
        keys = []
    shown = visible(items, tool=tools.get(call.tool))
    if idx >= len(shown):
        return [
            f"view: {what} uses row {idx + 1} of {len(items)} of step {step_id!r} ({call.tool}), but the view "
            f"shows the first {len(shown)}; narrow the call with the API's filters or paging"
        ]
    full, seen = items[idx], shown[idx]
    for k in [*keys, *([fld] if fld else [])]:
        if k not in seen or seen[k] != full.get(k):
            return [
                f"view: {what} needs field {k!r} of row {idx + 1} of step {step_id!r} ({call.tool}), which the "
                "view does not show whole"
            ]
    return []


def view_problems(task: Task, gold: GoldResult, tools: Mapping[str, ToolLike]) -> list[str]:
    """Every linked argument, `when` and fact visible in the view of the gold responses; every `where` unique."""
    out: list[str] = []
    for step in task.gold:
        for name, src in step.args.items():
            if isinstance(src, FromArg):
                out += _ref(src.from_, src.row, src.field, f"step {step.id!r} argument {name!r}", task, gold, tools)
        if isinstance(step.when, When):
            out += _ref(step.when.from_, step.when.row, step.when.field, f"step {step.id!r} when", task, gold, tools)
    for i, spec in enumerate(task.facts):
        if spec.from_ is None or (spec.kind == "count" and spec.field is None):
            continue
        call = next((c for c in gold.calls if c.step == spec.from_), None)
        rows = range(len(call.observation.items) if call else 0) if spec.row == "all" else [spec.row]
        for row in rows:
            out += _ref(spec.from_, row, spec.field, f"facts[{i}]", task, gold, tools)
    return out


def fact_problems(task: Task, facts: list[Fact]) -> list[str]:
    """Text and name facts that are trivially short or already in the request; facts a constant answer passes."""
    out: list[str] = []
    request = task.request()
    for i, f in enumerate(facts):
        if f.kind not in ("text", "name"):
            continue
        if len(normalise_name(str(f.value))) < MIN_TEXT:
            out.append(f"fact: facts[{i}] {f.value!r} is trivially short; state a longer phrase")
        elif fact_hit(request, f):
            out.append(f"fact: facts[{i}] {f.value!r} is already in the request; an echo would state it")
    if facts:
        for answer in (NUMBER_RUN, request, f"{request} {NUMBER_RUN}"):
            if check_answer(answer, facts).score == 1.0:
                shown = answer if len(answer) <= 40 else answer[:37] + "..."
                out.append(
                    f"constant: the constant answer {shown!r} passes every fact; add or change facts so "
                    "only a grounded answer passes"
                )
                break
    return out


def check_task(task: Task, gold: GoldResult, tools: Mapping[str, ToolLike]) -> CheckResult:
    """Every refusal of one task whose gold program executed (see the module docstring)."""
    problems = [
        *spec_problems(task, tools),
        *irrelevance_problems(task),
        *view_problems(task, gold, tools),
        *fact_problems(task, gold.facts),
    ]
    return CheckResult(task.id, [f"task {task.id}: {p}" for p in dict.fromkeys(problems)], len(gold.calls))


async def oracle_problems(
    task: Task, gold: GoldResult, backend: Backend, registry: Mapping[str, Any], now: datetime
) -> list[str]:
    """The oracle's episode of the task, scored as a model's (`score_episode`): one `oracle:` problem when it fails."""
    ep = await run_episode(task, OracleAgent(), backend, dict(registry), now=now)
    scored = score_episode(task, gold.to_json(), ep, dict(registry), now=now)
    if scored["passed"]:
        return []
    why = [f"failed {', '.join(scored['failed_checks'])}"]
    if scored.get("missing"):
        why.append(f"facts not read: {', '.join(scored['missing'])}")
    if scored.get("rejected"):
        why.append(f"rejected: {scored['rejected']}")
    answer = str(ep.get("final_answer") or ep.get("error") or "")
    shown = answer if len(answer) <= 120 else answer[:117] + "..."
    return [
        f"oracle: the oracle's answer {shown!r} fails the task ({'; '.join(why)}); give the fact a `label` the "
        "answer names, or change the facts or must_call so the reference answer passes"
    ]


async def check_tasks(
    tasks: list[Task],
    backend: Backend,
    now: datetime,
    tools: Mapping[str, ToolLike],
    *,
    concurrency: int = 8,
    oracle: bool = True,
) -> dict[str, CheckResult]:
    """Execute every task's gold program and check it: a result per task (refused when it has problems). With
    `oracle` (the default; `tools` must then be the registry's ToolRecords), the oracle's answer is rendered and
    scored too, and a task it fails is refused (`oracle:`)."""
    sem = asyncio.Semaphore(concurrency)
    out: dict[str, CheckResult] = {}

    async def one(t: Task) -> None:
        async with sem:
            try:
                gold = await execute_gold(t, backend, now)
            except GoldError as exc:
                out[t.id] = CheckResult(t.id, [exc.detail])
                return
            result = check_task(t, gold, tools)
            if oracle:
                result.problems += [f"task {t.id}: {p}" for p in await oracle_problems(t, gold, backend, tools, now)]
            out[t.id] = result

    await asyncio.gather(*(one(t) for t in tasks))
    return out


__all__ = [
    "NUMBER_RUN",
    "REFUSAL_CLASSES",
    "SELF_DOABLE",
    "CheckResult",
    "check_task",
    "check_tasks",
    "fact_problems",
    "irrelevance_problems",
    "oracle_problems",
    "spec_problems",
    "view_problems",
]
