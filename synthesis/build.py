"""A typed training record from an executed plan: arguments checked against their schemas and their grounding, the
question and answer composed from what the shown rows state (`synthesis.language.compose`), the facts the answer
must state checked with the benchmark's judge (`synthesis.facts.check_answer`): confirmed on the answer, not
passed by a constant answer or by echoing the request. Near-duplicates and the graph snapshot id live here too.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from datetime import datetime, timedelta
from typing import Any

import jsonschema

from core.settings import ENGINE_VERSION, Settings
from execution.seeds import now
from graph.models import ToolRecord, utcnow
from graph.specs import function_spec
from synthesis.execute import TRIM_RULE, Outcome
from synthesis.facts import check_answer
from synthesis.language import compose, goal
from synthesis.paraphrase import paraphrase
from synthesis.plans import VerifiedGraph
from synthesis.records import FactRecord, Plan, Trajectory, TrajectoryMeta, TrajectoryStep

DISTRACTORS = 2
#: Budget for a record's estimated rendered length (characters, tools included), with room for the template's
#: text and the special samples' extra turns: every rendered conversation stays under
#: `synthesis.export.SFT_MAX_LENGTH` characters, hence tokens (chat tokenizers spend at most one per character).
#: Tool messages are the one view (`execution.view`, up to 6000 characters each), never cut further for length:
#: 16000 keeps 3-4 calls with ordinary responses.
MAX_RENDERED_CHARS = 16000
#: Rendered characters a step costs beyond its arguments and rows (the call and tool-message wrappers, the view's
#: total and paging note, the longer request and answer of more steps): 80 left 3,000 records of `kopa synth` up to
#: 763 characters over the estimate at 5 steps (16,515 rendered, over SFT_MAX_LENGTH); 280 covers them.
STEP_OVERHEAD = 280
#: Answers a model could give without doing the work; a record whose facts one of them passes teaches nothing.
CONSTANT_ANSWERS = (
    "0 1 2 3 4 5 6 7 8 9 10 11 12",
    "확인해 보니 해당 정보를 찾을 수 없습니다.",
    "네, 조회 결과 정상입니다. 자세한 내용은 기관에 문의하세요.",
)


def constant_passes(facts: list[FactRecord], request: str) -> str | None:
    """The constant answer (or the request itself) that states every fact, if one does."""
    wanted = [f.fact() for f in facts]
    for answer in (*CONSTANT_ANSWERS, request):
        if wanted and check_answer(answer, wanted).hits == len(wanted):
            return answer
    return None


class RecordError(ValueError):
    """A trajectory that executed but cannot become a training record (the reason says why)."""


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
                raise RecordError(
                    f"grounding: step {st.step} {pname} uses a value the tool message of step {up.step} does not show"
                )


def clock_iso(settings: Settings) -> str:
    return now(settings).isoformat(timespec="minutes")


#: How often people ask at each hour of the day (KST): little at night, most in the day and evening.
ASK_HOURS = (1, 1, 1, 1, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 3, 2)


def draw_instant(settings: Settings, rnd: random.Random) -> datetime | None:
    """A conversation's instant: a day of the `batch.clock_days` before the clock (never the clock's own day, the
    benchmark's), an hour as people ask, any minute; None when trajectories stay at the clock."""
    days = settings.batches.clock_days
    if days <= 0:
        return None
    base = now(settings)
    day = base - timedelta(days=rnd.randint(1, days))
    hour = rnd.choices(range(24), weights=ASK_HOURS)[0]
    return day.replace(hour=hour, minute=rnd.randrange(60), second=0, microsecond=0)


def build_record(
    plan: Plan,
    outcome: Outcome,
    graph: VerifiedGraph,
    rnd: random.Random,
    *,
    seed: int,
    distractors: int = DISTRACTORS,
    snapshot: str = "",
) -> Trajectory:
    """The typed record; raises RecordError when an argument breaks its schema or a linked value is not
    visible in the earlier tool message."""
    assert outcome.steps is not None
    steps = outcome.steps
    _check(plan, steps)
    slots = {f"{s.tool}.{p}": v["value"] for s in steps for p, v in s.provenance.items() if v["kind"] == "slot"}
    slots.update({f"{s.tool}.{f}": v for s in steps for f, v in s.mentions.items()})  # rows the user names
    chain_tools = [s.tool for s in plan.steps]
    others = sorted(n for n in graph.tools if n not in {t.name for t in chain_tools})
    extra = [graph.tools[n] for n in rnd.sample(others, min(distractors, len(others)))]
    spec_len = {t.name: len(json.dumps(function_spec(t), ensure_ascii=False)) for t in [*chain_tools, *extra]}

    def size() -> int:
        return (
            1300
            + sum(
                len(json.dumps(s.arguments, ensure_ascii=False))
                + STEP_OVERHEAD
                + len(json.dumps(s.response.items, ensure_ascii=False))
                for s in steps
            )
            + sum(spec_len.values())
        )

    while extra and size() > MAX_RENDERED_CHARS:
        spec_len.pop(extra.pop().name, None)  # fewer distractors; the tool messages stay the one view
    if size() > MAX_RENDERED_CHARS:
        raise RecordError(f"too long: about {size()} characters rendered (limit {MAX_RENDERED_CHARS})")
    needs: list[str] = []
    request, answer, facts, question = compose(plan, steps, rnd, used=needs)
    template_request = request
    if graph.settings.batches.paraphrase_url:
        keep = [str(v) for v in slots.values() if isinstance(v, str | int | float)]
        request = paraphrase(request, graph.settings.batches.paraphrase_url, must_keep=keep)
    if not facts or not request:
        raise RecordError("no facts: the answer states nothing the rows shown give")
    missing = check_answer(answer, [f.fact() for f in facts]).missing
    if missing:
        raise RecordError(f"the answer does not state its fact {missing[0].label}={missing[0].value}")
    guess = constant_passes(facts, request)
    if guess is not None:
        raise RecordError(f"facts a constant answer passes: {guess[:40]}")
    answered = {f"{i + 1}.{f.label}": str(f.value) for i in plan.finals for f in facts}
    goals = [
        goal(plan.steps[i].tool, {p: v["value"] for p, v in steps[i].provenance.items() if v["kind"] == "slot"})[0]
        for i in plan.finals
    ]
    intermediate = [goal(s.tool, {})[0] for i, s in enumerate(plan.steps) if i not in plan.finals]
    offered = list({t.name: t for t in [*chain_tools, *extra]}.values())
    rnd.shuffle(offered)
    live = not any(s.response.replayed_from_cache for s in steps)
    return Trajectory(
        id=record_id(request, steps),
        request=request,
        shape=plan.shape,
        n_steps=len(steps),
        slots=slots,
        tools=[function_spec(t) for t in offered],
        distractors=[t.name for t in extra],
        steps=steps,
        final_steps=[i + 1 for i in plan.finals],
        final_answer=answer,
        now=clock_iso(graph.settings),
        question=question,
        facts=facts,
        metadata=TrajectoryMeta(
            template_request=template_request,
            graph_snapshot=snapshot,
            verified_links=sorted({v["link"] for s in steps for v in s.provenance.values() if v["kind"] == "link"}),
            created_at=utcnow(),
            provenance="live" if live else "replayed_from_cache",
            seed=seed,
            engine=ENGINE_VERSION,
            trim_rule=TRIM_RULE,
            answered=answered,
            goals=goals,
            intermediate_goals=intermediate,
            route=plan.route,
            needs=needs,
            **({"condition": _condition(plan)} if plan.when is not None else {}),
        ),
    )


def _condition(plan: Plan) -> dict[str, Any]:
    """A conditional record's test as readers see it (1-based steps)."""
    c = plan.when
    assert c is not None
    return {
        "step": c.step + 1,
        "gate": c.gate + 1,
        "label": c.label,
        "op": c.op,
        "value": c.value,
        "unit": c.unit,
        "observed": c.observed,
        "held": c.held,
    }


def _shingles(text: str) -> set[str]:
    t = re.sub(r"\s+", "", text)
    return {t[i : i + 3] for i in range(max(1, len(t) - 2))}


def is_near_duplicate(
    record: Trajectory, kept: list[Trajectory], threshold: float = 0.9, shingles: dict[str, set[str]] | None = None
) -> bool:
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
