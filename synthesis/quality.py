"""Data-quality figures of a set of trajectories, computed from the records alone (what a training engineer
would check before SFT/GRPO): requests that carry internal codes or list steps, sentence frames, slot value
diversity, argument schema violations, linked values not visible in an earlier tool message, arguments that need a
map projection outside a conversion tool (synthesis/conversions.py), cross-entity pairs, answers that state the
answered fields' values, unused steps, and the shares of special samples.

`quality(records)` returns the figures; `quality_lines(figures)` the few lines `kopa synth` / `kopa demo` and the
report print; `perf/data_quality.py` runs it over 1,000 trajectories.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from graph.concepts import KMA_CATEGORIES, PAIR_GROUPS, concepts_of
from graph.conversions import TOOL_NAMES as CONVERSION_TOOLS
from synthesis.answer_scope import AREA_LEVELS, area_name
from synthesis.conversions import projects
from synthesis.facts import check_answer
from synthesis.language import STEP_WORDS, answered_fields, fmt_value
from synthesis.records import Trajectory, TrajectoryStep, as_trajectory
from synthesis.routes import (
    PLACE_CONCEPTS,
    is_area_field,
    mentioned,
    row_area,
    row_entity_names,
    row_identified,
    user_row,
)
from synthesis.row_facts import table_facts

#: Answers a model could give without doing the work (a number dump, a refusal, a generic reply): facts one of
#: them passes do not show that an answer did the work.
CONSTANT_ANSWERS = (
    "0 1 2 3 4 5 6 7 8 9 10 11 12",
    "확인해 보니 해당 정보를 찾을 수 없습니다.",
    "네, 조회 결과 정상입니다. 자세한 내용은 기관에 문의하세요.",
)
_FIRST_OF = ("첫 번째는", "중 첫 번째", "첫 번째 결과")

#: Words that name a system code; a request that states one (outside the goal the user asks for) leaks it.
CODE_WORDS = ("코드", "ID", "id", "좌표", "격자", "발표시각", "발표일자", "요양기호", "콘텐츠", "일련번호", "예보지점")
#: A slot parameter counts for diversity once it is used this often.
MIN_USES = 3


def _user_turns(r: Trajectory) -> list[str]:
    return [m["content"] for m in r.preamble if m.get("role") == "user"] + [r.request]


def _masked(r: Trajectory) -> str:
    text = r.request
    for g in sorted(r.metadata.model_extra.get("goals", []) if r.metadata.model_extra else [], key=len, reverse=True):
        text = text.replace(g, "{G}")
    for name, value in sorted(r.slots.items(), key=lambda kv: -len(str(kv[1]))):
        for form in {fmt_value(name.split(".", 1)[-1], value), str(value)}:
            if form:
                text = text.replace(form, "{V}")
    return re.sub(r"\d+", "{N}", text)


def _code_leak(r: Trajectory) -> bool:
    goals = (r.metadata.model_extra or {}).get("goals", [])
    for turn in _user_turns(r):
        text = turn
        for g in goals:
            text = text.replace(g, " ")
        for name, value in r.slots.items():
            text = text.replace(fmt_value(name.split(".", 1)[-1], value), " ").replace(str(value), " ")
        if any(w in text for w in CODE_WORDS):
            return True
        for s in r.steps:
            for p, prov in s.provenance.items():
                value = str(s.arguments[p])
                # a code the user's own words already contain (a dong name inside their address) is theirs
                if (
                    prov["kind"] in ("link", "clock")
                    and len(value) >= 3
                    and value in turn
                    and not any(value in fmt_value(k.split(".", 1)[-1], v) for k, v in r.slots.items())
                ):
                    return True
    return False


def _lists_steps(r: Trajectory) -> bool:
    inter = (r.metadata.model_extra or {}).get("intermediate_goals", [])
    goals = (r.metadata.model_extra or {}).get("goals", [])
    text = r.request
    for g in sorted(goals, key=len, reverse=True):
        text = text.replace(g, " ")
    # an earlier goal inside what the final step is asked ("버스 노선" in "버스 노선의 경유 정류소") names no step
    return any(w in text for w in STEP_WORDS) or any(g and g in text and not any(g in f for f in goals) for g in inter)


def _words(r: Trajectory) -> list[str]:
    return [str(v) for v in r.slots.values()] + [
        str(v) for s in r.steps for p, v in s.arguments.items() if s.provenance.get(p, {}).get("kind") == "slot"
    ]


def arbitrary_rows(r: Trajectory) -> int:
    """Final steps that answer about one row of many that neither the query nor the user's words single out."""
    asks = r.question.asks if r.question else []
    n = 0
    for k, step in enumerate(s for s in r.steps if s.step in r.final_steps):
        items = step.response.items
        if step.response.rows <= 1 or not items or "category" in items[0]:
            continue
        ask = (
            asks[k]
            if k < len(asks)
            else ("row" if any(w in r.final_answer for w in _FIRST_OF) or not r.question else "set")
        )
        if ask != "row":
            continue
        if user_row(items, len(items), _words(r)) != step.response.chosen:
            n += 1
    return n


def _place_param(r: Trajectory, tool: str, param: str, transform: dict[str, Any] | None) -> bool:
    if (transform or {}).get("kind") == "coord":
        return True
    spec: dict[str, Any] = next((t["function"] for t in r.tools if t["function"]["name"] == tool), {})
    desc = str(((spec.get("parameters") or {}).get("properties") or {}).get(param, {}).get("description", ""))
    text = f"{param} {desc}".lower()
    return bool(concepts_of(param, desc) & PLACE_CONCEPTS) or any(
        w in text for w in ("좌표", "위도", "경도", "gps", "행정구역", "지역코드")
    )


def unasked_entity(r: Trajectory) -> bool:
    """A chain that takes only the location (coordinates, area codes) of a named thing the question never
    mentions: the first hospital of a 동 for its weather."""
    said = " ".join([*(m["content"] for m in r.preamble if m.get("role") == "user"), r.request])
    for s in r.steps:
        feeds = [
            (later.tool, p, prov)
            for later in r.steps
            for p, prov in later.provenance.items()
            if prov["kind"] == "link" and prov["from_step"] == s.step - 1
        ]
        if not feeds or not s.response.items:
            continue
        row = s.response.items[min(s.response.chosen, len(s.response.items) - 1)]
        names = row_entity_names(row)
        if not names or any(mentioned(v, said) for v in names) or row_identified(row, said):
            continue
        if all(_place_param(r, tool, p, prov.get("transform")) for tool, p, prov in feeds):
            return True
    return False


def constant_passes(r: Trajectory) -> bool:
    """No facts, or facts that a constant answer (or the request echoed) states."""
    facts = r.judge_facts()
    if not facts:
        return True
    return any(check_answer(a, facts).hits == len(facts) for a in (*CONSTANT_ANSWERS, r.request))


def facts_confirmed(r: Trajectory) -> bool:
    facts = r.judge_facts()
    return bool(facts) and check_answer(r.final_answer, facts).hits == len(facts)


def _slot_values(recs: list[Trajectory]) -> tuple[dict[str, set[str]], list[str]]:
    """The distinct values per slot parameter used at least MIN_USES times."""
    values: dict[str, set[str]] = defaultdict(set)
    uses: Counter[str] = Counter()
    for r in recs:
        for key, value in r.slots.items():
            values[key].add(json.dumps(value, ensure_ascii=False, sort_keys=True))
            uses[key] += 1
    counted = [k for k in values if uses[k] >= MIN_USES]
    return {k: values[k] for k in counted}, counted


def _asked_with(r: Trajectory, s: TrajectoryStep, group: frozenset[str], origins: list[int]) -> bool:
    """A group fed from two steps where the later one was asked with the very values the earlier one gives this
    step (a fan-in: a stop looked up with the city's code, and that code sent with the stop's id), so both belong
    to one entity."""
    first = {p: prov["field"] for p, prov in s.provenance.items() if p in group and prov.get("from_step") == origins[0]}
    return all(
        any(
            (q := r.steps[o].provenance.get(p)) is not None and q.get("from_step") == origins[0] and q.get("field") == f
            for p, f in first.items()
        )
        for o in origins[1:]
    )


@dataclass
class _StepFigures:
    """Counts over the steps of records with tool calls: arguments and their schema violations, linked values
    and how they were passed, cross-entity pairs, unused steps, answers that state the answered values."""

    violations: list[str] = field(default_factory=list)
    invisible: int = 0
    cross: int = 0
    unused: int = 0
    arguments: int = 0
    projected: int = 0
    conversion_steps: int = 0
    answered_ok: int = 0
    answered_total: int = 0

    def add(self, r: Trajectory) -> None:
        specs = {t["function"]["name"]: t["function"].get("parameters") or {"type": "object"} for t in r.tools}
        for s in r.steps:
            self._arguments(r, s, specs)
            self._links(r, s)
        finals = set(r.final_steps)
        for s in r.steps:
            feeds = any(
                prov["kind"] == "link" and prov["from_step"] == s.step - 1
                for later in r.steps
                for prov in later.provenance.values()
            )
            if s.step not in finals and not feeds:
                self.unused += 1
        self.answered_total += 1
        self.answered_ok += self._answered(r, finals)

    def _arguments(self, r: Trajectory, s: TrajectoryStep, specs: dict[str, Any]) -> None:
        self.arguments += len(s.arguments)
        self.conversion_steps += s.tool in CONVERSION_TOOLS
        # a link whose transform projects coordinates: the model would compute it in its head
        self.projected += sum(
            1 for prov in s.provenance.values() if prov["kind"] == "link" and projects(prov.get("transform"))
        )
        errors = list(jsonschema.Draft202012Validator(specs.get(s.tool, {"type": "object"})).iter_errors(s.arguments))
        if errors:
            self.violations.append(f"{r.id} step {s.step} {s.tool}: {errors[0].message[:80]}")

    def _links(self, r: Trajectory, s: TrajectoryStep) -> None:
        for prov in s.provenance.values():
            if prov["kind"] != "link":
                continue
            up = r.steps[prov["from_step"]]
            if not any(str(item.get(prov["field"])) == str(prov.get("source_value")) for item in up.response.items):
                self.invisible += 1
            pair = (prov.get("transform") or {}).get("pair")
            if pair and not any(pair in item for item in up.response.items):
                self.invisible += 1
        for group in PAIR_GROUPS:
            origins = sorted(
                {prov["from_step"] for p, prov in s.provenance.items() if p in group and prov["kind"] == "link"}
            )
            if len(origins) > 1 and not _asked_with(r, s, group, origins):
                self.cross += 1

    @staticmethod
    def _answered(r: Trajectory, finals: set[int]) -> bool:
        if r.facts:
            return facts_confirmed(r)
        expected = [
            v for s in r.steps if s.step in finals for _, v in answered_fields(s.response.items, s.response.chosen)
        ]
        return bool(expected) and all(v.rstrip(".") in r.final_answer for v in expected)


def start_area(r: Trajectory) -> str:
    """The 시도 and 시군구 a trajectory starts from: the user's words, else the row its first call used."""
    said = row_area({k: v for k, v in r.slots.items() if isinstance(v, str)})
    first = r.steps[0].response
    return said or (row_area(first.items[min(first.chosen, len(first.items) - 1)]) if first.items else "")


AREA_CONCEPTS = {c for _, cs in AREA_LEVELS for c in cs}
_EXTREME = re.compile(r"^(최저|최고) |최고$")


def _same(value: Any, text: Any) -> bool:
    """A fact's value and a response value are one (as numbers when both are: 26 and "26.0")."""
    a, b = str(value).replace(",", ""), str(text).replace(",", "")
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def extreme_seen(r: Trajectory, s: TrajectoryStep, label: str, value: Any) -> bool:
    """Whether an extreme (`최고 기온`, `미세먼지 최고`) stated from step `s` holds: its value is in the shown rows
    and either every row of the response is shown, or the rows are an observation or forecast table whose shown
    hours the answer names ("6시~7시"), so it is the extreme of those hours."""
    res = s.response
    if not any(_same(value, v) for row in res.items for v in row.values()):
        return False
    if res.rows <= len(res.items):
        return True
    name = _EXTREME.sub("", label).strip()
    rows = [x for x in res.items if KMA_CATEGORIES.get(str(x.get("category")), ("",))[0] == name]
    span = table_facts(rows)[1] if rows else ""
    return bool(span) and span in r.final_answer


def wider_count(r: Trajectory, s: TrajectoryStep) -> bool:
    """A count of a query confined only by a 시군구 or 시도 (a region code or name, besides dates) while the user
    named a narrower place or thing, and the answer does not say it counts the whole area ("전체")."""
    spec: dict[str, Any] = next((t["function"] for t in r.tools if t.get("function", {}).get("name") == s.tool), {})
    props = spec.get("parameters", {}).get("properties", {})
    for name, prov in s.provenance.items():
        desc = str(props.get(name, {}).get("description", ""))
        found = concepts_of(name, desc)
        fine = found & {"umd_code", "umd_name"} or ("bjd_code" in found and len(str(s.arguments.get(name))) > 5)
        if prov.get("kind") in ("slot", "link", "mention") and (
            fine or not (is_area_field(name, desc) or found & (AREA_CONCEPTS | {"date", "year_month", "city_code"}))
        ):
            return False  # a 동, a name, a point or another filter narrows the count
    said = [str(v) for v in [*r.slots.values(), *(m for st in r.steps for m in st.mentions.values())]]
    given = set(map(str, s.arguments.values()))
    areas = [v for v in said if v in (area_name([v], "sgg"), area_name([v], "sido"))]
    narrower = [v for v in said if not v.isdigit() and v not in given and v not in areas]
    return bool(narrower) and "전체" not in r.final_answer


COUNT_NOT_TOTAL = "a count that is not the provider's total, or the total of a wider query than asked, unsaid"
EXTREME_UNSEEN = "an extreme over a response not seen whole, with no hours it covers said"


def scope_problems(r: Trajectory) -> list[str]:
    """Per count or extreme fact of the answer that is not true of the whole response the user asked about, why."""
    finals = [r.steps[i - 1] for i in (r.final_steps or [len(r.steps)]) if 0 < i <= len(r.steps)]
    out = []
    for f in r.facts:
        counted = [s for s in finals if f.label == "건수" and float(f.value) == s.response.rows]
        if f.label == "건수" and (not counted or all(wider_count(r, s) for s in counted)):
            out.append(COUNT_NOT_TOTAL)
        if _EXTREME.search(f.label) and not any(extreme_seen(r, s, f.label, f.value) for s in finals):
            out.append(EXTREME_UNSEEN)
    return out


def world_figures(recs: Sequence[Trajectory]) -> dict[str, Any]:
    """How much of the world the records cover, and whether their counts and extremes hold for the whole response:
    distinct clocks, tools, shapes and (final tool, asked facts) pairs; count facts that are not the rows the
    provider states in all or count a wider area than the user named without saying so (`wider_count`); extremes
    stated over a response with rows the model never saw and no hours said (`extreme_seen`), of every answer a model
    learns from."""
    plain = [r for r in recs if r.steps and r.kind == "normal"]
    pairs = {
        (r.steps[i - 1].tool, tuple(sorted({f.label for f in r.facts})))
        for r in plain
        for i in (r.final_steps or [len(r.steps)])
        if 0 < i <= len(r.steps)
    }
    not_total = partial_extremes = 0
    for r in (r for r in recs if r.steps and r.facts):  # every answer a model learns from, hard negatives too
        problems = scope_problems(r)
        not_total += problems.count(COUNT_NOT_TOTAL)
        partial_extremes += problems.count(EXTREME_UNSEEN)
    shapes = Counter(r.shape if r.kind == "normal" else r.kind for r in recs)
    cells = {
        (str(s.arguments["nx"]), str(s.arguments["ny"]))
        for r in recs
        for s in r.steps
        if "nx" in s.arguments and "ny" in s.arguments and s.tool not in CONVERSION_TOOLS
    }
    places = {start_area(r) for r in recs if r.steps} - {""}
    return {
        "clocks": len({r.now for r in recs}),
        "tools_used": len({s.tool for r in recs for s in r.steps}),
        "grid_cells": len(cells),
        "places": len(places),
        "shapes": dict(sorted(shapes.items())),
        "asked_pairs": len(pairs),
        "counts_not_total": not_total,
        "extremes_over_partial_rows": partial_extremes,
    }


def quality(
    records: Sequence[Trajectory | dict[str, Any]],
    *,
    extras: dict[str, float] | None = None,
    lengths: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The figures (counts over the given records). `extras` is the configured share per special kind;
    `lengths` optional rendered lengths (characters, tools included) by record id."""
    recs = [as_trajectory(r) for r in records]
    n = len(recs)
    plain = [r for r in recs if r.steps]
    values, counted = _slot_values(recs)
    single_valued = sorted(k for k in counted if len(values[k]) == 1)
    steps = _StepFigures()
    for r in plain:
        steps.add(r)
    kinds = Counter(r.kind for r in recs)
    share = {
        k: round(kinds.get(k, 0) / max(1, n), 3)
        for k in ("irrelevance", "clarification", "error_recovery", "hard_negative")
    }
    diversity = {k: len(values[k]) for k in sorted(counted)}
    chains = [r for r in plain if len(r.steps) >= 2]
    unasked = sum(unasked_entity(r) for r in chains)
    spoken = [r for r in recs if r.kind != "irrelevance"]
    out: dict[str, Any] = {
        "trajectories": n,
        "code_words_in_requests": sum(_code_leak(r) for r in recs if r.kind != "irrelevance"),
        "requests_listing_steps": sum(_lists_steps(r) for r in recs),
        "sentence_frames": len({_masked(r) for r in recs if r.kind != "irrelevance"}),
        "slot_parameters": len(counted),
        "slot_parameters_single_value": len(single_valued),
        "single_valued": single_valued[:20],
        "argument_schema_violations": len(steps.violations),
        "violations": steps.violations[:10],
        "linked_values_not_visible": steps.invisible,
        "cross_entity_pairs": steps.cross,
        "unused_steps": steps.unused,
        "arguments": steps.arguments,
        "arguments_projected_outside_conversion_tool": steps.projected,
        "conversion_steps": steps.conversion_steps,
        "answers_with_answered_values": round(steps.answered_ok / max(1, steps.answered_total), 3),
        "answers_about_arbitrary_row": sum(arbitrary_rows(r) for r in plain),
        "chains": len(chains),
        "chains_through_unasked_entity": unasked,
        "chains_through_unasked_entity_share": round(unasked / max(1, len(chains)), 3),
        "records_with_facts": sum(bool(r.facts) for r in plain),
        "facts_confirmed_on_own_answer": sum(facts_confirmed(r) for r in plain),
        "facts_a_constant_answer_passes": sum(constant_passes(r) for r in plain),
        "request_phrasings_per_100": round(100 * len({_masked(r) for r in spoken}) / max(1, len(spoken)), 1),
        "shares": share,
        "shares_configured": extras or {},
        "value_diversity": diversity,
        "fewest_values": sorted(diversity.items(), key=lambda kv: (kv[1], kv[0]))[:3],
        "world": world_figures(recs),
    }
    if lengths:
        ls = sorted(lengths.values())
        out["rendered_chars"] = {"min": ls[0], "median": int(statistics.median(ls)), "max": ls[-1]}
    return out


def quality_lines(q: dict[str, Any]) -> list[str]:
    """The figures as short lines for a terminal or a report."""
    low = [tuple(x) for x in q.get("fewest_values", [])]
    lines = [
        f"data quality over {q['trajectories']} trajectories:",
        f"  requests with internal codes {q['code_words_in_requests']}, listing steps {q['requests_listing_steps']}, "
        f"sentence frames {q['sentence_frames']}",
        f"  slot parameters {q['slot_parameters']}, with a single value {q['slot_parameters_single_value']} "
        f"(fewest values: {', '.join(f'{k} {v}' for k, v in low) or 'n/a'})",
        f"  argument schema violations {q['argument_schema_violations']}, linked values not visible "
        f"{q['linked_values_not_visible']}, cross-entity pairs "
        f"{q['cross_entity_pairs']}, unused steps {q['unused_steps']}",
        "  arguments needing a projection outside a conversion tool "
        f"{q.get('arguments_projected_outside_conversion_tool', 0)}"
        f" of {q.get('arguments', 0)} (conversion-tool steps {q.get('conversion_steps', 0)})",
        f"  answers stating the answered values {q['answers_with_answered_values']:.1%}",
        f"  answers about an arbitrary row of many {q['answers_about_arbitrary_row']}, chains through an entity the "
        f"question does not mention {q['chains_through_unasked_entity']} of {q['chains']} "
        f"({q['chains_through_unasked_entity_share']:.1%})",
        f"  trajectories with facts {q['records_with_facts']}, confirmed by the judge on their answer "
        f"{q['facts_confirmed_on_own_answer']}, passed by a constant answer {q['facts_a_constant_answer_passes']}; "
        f"distinct request phrasings per 100: {q['request_phrasings_per_100']}",
        "  shares "
        + ", ".join(
            f"{k} {v:.1%}"
            + (f" (configured {q['shares_configured'][k]:.0%})" if k in q.get("shares_configured", {}) else "")
            for k, v in q["shares"].items()
        ),
    ]
    if "world" in q:
        w = q["world"]
        n = max(1, q["trajectories"])
        lines.append(
            f"  world: clocks {w['clocks']}, tools {w['tools_used']}, KMA grid cells {w.get('grid_cells', 0)}, "
            f"places (시도 시군구 started from) {w.get('places', 0)}, (tool, asked facts) pairs {w['asked_pairs']}, "
            "shapes " + ", ".join(f"{k} {v} ({v / n:.0%})" for k, v in w["shapes"].items())
        )
        lines.append(
            f"  counts that are not the provider's total {w['counts_not_total']}, extremes over rows not all seen "
            f"{w['extremes_over_partial_rows']}"
        )
    if "rendered_chars" in q:
        t = q["rendered_chars"]
        lines.append(
            f"  rendered conversation (tools included) min {t['min']}, median {t['median']}, max {t['max']} characters"
        )
    return lines


def question_targets(q: dict[str, Any]) -> list[str]:
    """The issue 21 figures that miss their targets (empty when all hold)."""
    misses = []
    if q["answers_about_arbitrary_row"] != 0:
        misses.append(f"answers_about_arbitrary_row = {q['answers_about_arbitrary_row']} (target 0)")
    if q["chains_through_unasked_entity_share"] > 0.02:
        misses.append(f"chains_through_unasked_entity = {q['chains_through_unasked_entity_share']:.1%} (target <= 2%)")
    if q["facts_a_constant_answer_passes"] != 0:
        misses.append(f"facts_a_constant_answer_passes = {q['facts_a_constant_answer_passes']} (target 0)")
    if q["facts_confirmed_on_own_answer"] != q["records_with_facts"] or q["records_with_facts"] == 0:
        misses.append(
            f"facts confirmed on own answer {q['facts_confirmed_on_own_answer']} of "
            f"{q['records_with_facts']} with facts"
        )
    return misses
