"""The special samples: irrelevance (no tool serves the request), clarification (the user leaves out the one input
the first call needs), error recovery (a real failed first call) and hard negatives (a refuted link's source
tool offered as a temptation). Clarification, error-recovery and hard-negative samples keep the question and the
facts of the record they are made from.
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import datetime

from core.clock import world_at
from core.settings import ENGINE_VERSION
from execution.executor import Executor
from graph.models import utcnow
from graph.specs import function_spec
from synthesis.build import DISTRACTORS, clock_iso, constant_passes, draw_instant, record_id
from synthesis.execute import TRIM_RULE
from synthesis.language import goal
from synthesis.plans import VerifiedGraph
from synthesis.records import FailedAttempt, Trajectory, TrajectoryMeta
from synthesis.special_turns import clarification_turns, irrelevance_answer, irrelevant_request

#: Shares of the special samples among the kept records (`synthesize(extras=...)`).
DEFAULT_EXTRAS: dict[str, float] = {
    "irrelevance": 0.05,
    "clarification": 0.05,
    "error_recovery": 0.05,
    "hard_negative": 0.05,
}


def _quota(extras: dict[str, float], count: int) -> dict[str, int]:
    return {k: round(max(0.0, min(1.0, v)) * count) for k, v in extras.items() if k in DEFAULT_EXTRAS}


def make_irrelevance(graph: VerifiedGraph, rnd: random.Random, *, seed: int, snapshot: str) -> Trajectory:
    """A request no offered tool serves: the assistant answers without calling."""
    names = sorted(graph.tools)
    offered = [graph.tools[n] for n in rnd.sample(names, min(DISTRACTORS + 1, len(names)))]
    request = irrelevant_request(rnd)
    instant = draw_instant(graph.settings, rnd)
    answer = irrelevance_answer(offered, rnd, request)
    rid = (
        "tr_"
        + hashlib.sha256(json.dumps([request, [t.name for t in offered]], ensure_ascii=False).encode()).hexdigest()[:16]
    )
    return Trajectory(
        id=rid,
        request=request,
        shape="single",
        n_steps=0,
        tools=[function_spec(t) for t in offered],
        distractors=[t.name for t in offered],
        steps=[],
        final_steps=[],
        final_answer=answer,
        kind="irrelevance",
        now=clock_iso(graph.settings) if instant is None else instant.isoformat(timespec="minutes"),
        metadata=TrajectoryMeta(
            template_request=request,
            graph_snapshot=snapshot,
            created_at=utcnow(),
            seed=seed,
            engine=ENGINE_VERSION,
            trim_rule=TRIM_RULE,
            answered={},
        ),
    )


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
    if constant_passes(record.facts, reply):
        return None  # the reply alone states what is asked (the 시도 of the address it gives): nothing to look up
    bare = [
        goal(graph.tools[s.tool], {})[0] for s in record.steps if s.step in record.final_steps and s.tool in graph.tools
    ]
    extra = record.metadata.model_extra or {}
    meta = record.metadata.model_copy(update={"goals": [*extra.get("goals", []), *bare]})
    return record.model_copy(
        update={
            "metadata": meta,
            "kind": "clarification",
            "request": reply,
            "id": record_id(opening + reply, record.steps),
            "preamble": [{"role": "user", "content": opening}, {"role": "assistant", "content": question}],
        }
    )


async def make_error_recovery(
    record: Trajectory, graph: VerifiedGraph, executor: Executor
) -> tuple[Trajectory | None, int]:
    """A real failed first call (a required input left out) that the assistant notices and repeats correctly."""
    if record.n_steps < 1 or record.kind != "normal":
        return None, 0
    first = record.steps[0]
    tool = graph.tools.get(first.tool)
    if tool is None:
        return None, 0
    droppable = [
        p
        for p, v in first.provenance.items()
        if v["kind"] in ("slot", "link", "clock") and any(q.name == p and q.required for q in tool.params)
    ]
    if not droppable:
        return None, 0
    bad = {k: v for k, v in first.arguments.items() if k != droppable[-1]}
    with world_at(datetime.fromisoformat(record.now) if record.now else None):  # asked at the record's instant
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
                if (
                    lk.target_tool == s.tool
                    and lk.target_param.split(":", 1)[-1] == pname
                    and lk.source_tool not in used
                ):
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
    meta = record.metadata.model_copy(
        update={
            "hard_negative": {
                "refuted_link": lk.id,
                "tempting_tool": lk.source_tool,
                "tempting_field": lk.source_field,
                "step": step,
                "param": pname,
            }
        }
    )
    return record.model_copy(
        update={"kind": "hard_negative", "tools": tools, "distractors": distractors, "metadata": meta}
    )
