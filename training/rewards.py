"""Execution-grounded rewards for GRPO: pure functions `f(prompts, completions, **columns) -> list[float]`.

A completion is what trl hands a reward function for conversational data: the list of messages the model
produced in one rollout (`assistant` turns with `tool_calls`, the `tool` results trl appended, the final
`assistant` answer); a plain string (non-conversational data) is parsed for `<tool_call>` blocks. The columns are
those of the GRPO dataset (`training.datasets.grpo_row`), one value per completion: `gold_calls`, `facts`,
`offered`, `tool_schemas`, `refuted_links`. Each function ignores the columns it does not need.

Rewards (each in [0, 1]):

Only **executed** calls count: a call is executed when its tool result follows it in the rollout (trl appends it)
and, when trl hands the rollout's environments (`environments`, `training.environment.ToolEnvironment`), when that
environment recorded it. A `<tool_call>` block written as text and never executed is an attempt that earns nothing.

* `well_formed_calls` — share of attempted calls that were executed as tool calls (an unparsed or never-executed
  `<tool_call>` block counts as an attempt); 0 when the model calls nothing;
* `schema_valid_arguments` — share of calls whose arguments validate against the offered tool's JSON schema;
* `right_tools` — F1 of the called tool names against the gold ones (as multisets);
* `gold_arguments` — share of gold arguments matched in the one canonical call (`execution.canonical`, as the
  cache and both replays compare calls: `"60"` is `60` for an integer, a documented default its absence); an
  argument the gold trajectory took from an earlier result (provenance `link`) gets credit only when it was
  derived in this rollout: the value appeared in an earlier tool result, or is the link's transform of an earlier
  result's value (a grid from coordinates), or came out of any earlier executed tool (a conversion tool); a right
  value that appears out of nowhere earns 0;
* `executed_calls` — share of distinct calls whose tool result was not an error;
* `answer_facts` — share of the answered facts the final answer commits to, as KOPA-Bench's judge decides on what
  the rollout saw (`synthesis.facts.check_answer` with its `Seen`, failed calls' results included), **each either
  held by a tool result of this rollout** (directly, or through a conversion tool or a date/number form of it) **or
  told by the gold calls once the rollout ran them with the gold arguments** (an absence, a verdict such as 일치);
  0 without an executed call, for an empty answer and for a dump. Records without gold calls (irrelevance) earn
  it for an honest refusal without calls.

Penalties (each in [-1, 0]):

* `invented_tools` — share of calls to tools the task did not offer;
* `refuted_links` — share of calls that pass a value taken from an earlier result along a link execution refuted;
* `excess_calls` — calls beyond the gold count, relative to the gold count (capped at 1);
* `repeated_calls` — share of calls that repeat an identical earlier call.

`REWARDS` maps names to functions; `DEFAULT_WEIGHTS` are the weights `training.config` starts from (a config's
`grpo.rewards` is merged onto them). With these weights every way of calling more than needed (spraying every
offered tool, repeating a call, inventing tools) totals less than the direct correct trajectory.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jsonschema

from execution.canonical import canonical_call, scalar_text
from graph import transforms
from graph.concepts import AIR_GRADES, KMA_CODES
from synthesis.answer_dates import as_date, time_values
from synthesis.fact_terms import Fact
from synthesis.facts import check_answer, refusal
from synthesis.seen import Seen
from training.completions import Call, Completion, column, key_of, loads, parsed

RewardFn = Callable[..., list[float]]

# ---------------------------------------------------------------------------------------------- rewards


def well_formed_calls(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """Share of attempted tool calls that parsed as calls; 0 when nothing was called."""
    out = []
    for p in parsed(completions, kwargs):
        attempts = len(p.attempts) + p.malformed
        out.append(len(p.calls) / attempts if attempts else 0.0)
    return out


def schema_valid_arguments(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """Share of calls whose arguments validate against the offered tool's JSON schema (`tool_schemas`)."""
    out = []
    for p, schemas in zip(parsed(completions, kwargs), column(kwargs, "tool_schemas", len(completions)), strict=True):
        schemas = loads(schemas) or {}
        calls = p.calls
        if not calls:
            out.append(0.0)
            continue
        valid = 0
        for call in calls:  # (`calls`: executed only)
            schema = schemas.get(call.name)
            if schema is None:
                continue
            try:
                jsonschema.validate(call.arguments, schema)
                valid += 1
            except (jsonschema.ValidationError, jsonschema.SchemaError):
                pass
        out.append(valid / len(calls))
    return out


def right_tools(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """F1 of the called tool names against the gold calls' tools (multisets)."""
    out = []
    for p, gold in zip(parsed(completions, kwargs), column(kwargs, "gold_calls", len(completions)), strict=True):
        want = Counter(g["tool"] for g in loads(gold) or [])
        got = Counter(call.name for call in p.calls)
        hit = sum((want & got).values())
        if not hit:
            out.append(0.0)
            continue
        precision, recall = hit / sum(got.values()), hit / sum(want.values())
        out.append(2 * precision * recall / (precision + recall))
    return out


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?:\D|$))")


def value_text(value: Any) -> str:
    """A value as text for comparing a result's values with facts and arguments: its canonical scalar text
    (`execution.canonical.scalar_text`: trimmed, `1.0` as `1`, flags as true/false), a list's items joined."""
    if isinstance(value, list | tuple):
        return ",".join(value_text(v) for v in value)
    return str(scalar_text(value))


def same_value(a: Any, b: Any) -> bool:
    """A value of a tool result equals a fact's or an argument's value: the same text, or the same number unless
    a leading zero makes them codes (amounts as providers write them, `62,700`), or the same text but for case.
    Two calls' arguments compare by the canonical call instead (`_matching`)."""
    x, y = value_text(a), value_text(b)
    if x == y:
        return True
    try:  # thousands separators as providers write amounts (`62,700`)
        fx, fy = float(_THOUSANDS.sub("", x)), float(_THOUSANDS.sub("", y))
    except ValueError:
        return x.casefold() == y.casefold()
    leading = any(len(s) > 1 and s.lstrip("-")[0] == "0" and not s.lstrip("-").startswith("0.") for s in (x, y))
    return not leading and fx == fy


def _matching(schema: Any, sent: dict[str, Any], gold: dict[str, Any]) -> set[str]:
    """The gold arguments a call's arguments match, both as the one canonical call of the tool's schema
    (`execution.canonical`, as the executor's cache and both replays compare calls): a documented default matches
    its absence, `"60"` matches `60` for an integer parameter, a text keeps its zeros."""
    got, want = canonical_call(schema, sent), canonical_call(schema, gold)
    return {k for k in gold if got.get(k) == want.get(k)}


def _rows(content: str) -> list[dict[str, Any]]:
    try:
        doc = json.loads(content)
    except ValueError:
        return []
    items = doc.get("items", []) if isinstance(doc, dict) else []
    rows = [r for r in items if isinstance(r, dict)] if isinstance(items, list) else []
    if isinstance(doc, dict) and not rows and "error" not in doc:
        rows = [doc]  # a conversion tool's plain object
    return rows


def _observed(value: Any, source_tool: str, source_field: str, seen: list[tuple[str, str]]) -> bool:
    """The value appeared in an earlier result of `source_tool` (in `source_field` when named)."""
    for name, content in seen:
        if source_tool and name != source_tool:
            continue
        for row in _rows(content):
            if source_field and source_field not in row:
                continue
            candidates = [row[source_field]] if source_field in row else list(row.values())
            if any(same_value(v, value) or value_text(value) in value_text(v) for v in candidates):
                return True
    return False


def _derived(value: Any, prov: dict[str, Any], source_tool: str, seen: list[tuple[str, str]]) -> bool:
    """The value is the link's transform of an earlier result's value (a grid from coordinates, a zero-padded
    code), or came out of any earlier executed tool (a conversion tool)."""
    transform = prov.get("transform")
    fld = str(prov.get("field", ""))
    if isinstance(transform, dict) and transform.get("kind", "identity") != "identity" and fld:
        for name, content in seen:
            if source_tool and name != source_tool:
                continue
            for row in _rows(content):
                if fld not in row:
                    continue
                try:
                    got = transforms.apply(transform, row[fld], row)
                except (transforms.TransformError, KeyError, ValueError, TypeError):
                    continue
                if same_value(got, value):
                    return True
    return any(_observed(value, name, "", [(name, content)]) for name, content in seen if name != source_tool)


def gold_arguments(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """Share of gold arguments the model's executed calls match; a linked argument counts only when derived."""
    out = []
    n = len(completions)
    for p, gold, schemas in zip(
        parsed(completions, kwargs), column(kwargs, "gold_calls", n), column(kwargs, "tool_schemas", n), strict=True
    ):
        schemas = loads(schemas) or {}
        gold_calls = loads(gold) or []
        calls = list(p.calls)
        total = sum(len(g["arguments"]) for g in gold_calls)
        if not total:
            out.append(0.0)
            continue
        by_step = {g["step"]: g["tool"] for g in gold_calls}
        credit = 0.0
        for g in gold_calls:
            candidates = [call for call in calls if call.name == g["tool"]]
            if not candidates:
                continue
            schema = schemas.get(g["tool"])

            def score(
                call: Call, g: dict[str, Any] = g, by_step: dict[int, str] = by_step, schema: Any = schema
            ) -> float:
                s = 0.0
                same = _matching(schema, call.arguments, g["arguments"])
                for k, v in g["arguments"].items():
                    if k not in same:
                        continue
                    prov = (g.get("provenance") or {}).get(k, {})
                    if prov.get("kind") == "link":
                        src = by_step.get(int(prov.get("from_step", -1)) + 1, "")
                        seen = [x for x in call.seen_before if not _failed_text(x[1])]
                        if _observed(v, src, str(prov.get("field", "")), seen) or _derived(v, prov, src, seen):
                            s += 1.0
                    else:
                        s += 1.0
                return s

            best = max(candidates, key=score)
            credit += score(best)
            calls.remove(best)
        out.append(credit / total)
    return out


def _failed_text(content: str) -> bool:
    return Call("", {}, content).failed


def executed_calls(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """Share of distinct attempted calls that executed without an error (repeats and text-only calls earn
    nothing)."""
    out = []
    n = len(completions)
    for p, schemas in zip(parsed(completions, kwargs), column(kwargs, "tool_schemas", n), strict=True):
        distinct: dict[str, Call] = {}
        for call in p.attempts:
            distinct.setdefault(key_of(call, loads(schemas)), call)
        out.append(sum(not x.failed for x in distinct.values()) / len(distinct) if distinct else 0.0)
    return out


def _facts(value: Any) -> list[Fact]:
    return [
        Fact(
            kind=f["kind"],
            value=f["value"],
            tolerance=float(f.get("tolerance") or 0.0),
            unit=f.get("unit"),
            label=str(f.get("label", "") or ""),
            field=str(f.get("field", "") or ""),
            category=str(f.get("category", "") or ""),
            about=[str(x) for x in f.get("about") or []],
            rivals=[r for r in f.get("rivals") or [] if isinstance(r, dict)],
        )
        for f in loads(value) or []
    ]


def _squeezed(text: str) -> str:
    return re.sub(r"[\s\u200b]+|<br\s*/?>", "", text).casefold()


def _scalars(x: Any, out: list[Any]) -> None:
    """Every leaf value of a JSON document (booleans and nulls left out), in document order."""
    if isinstance(x, dict):
        for v in x.values():
            _scalars(v, out)
    elif isinstance(x, list):
        for v in x:
            _scalars(v, out)
    elif x is not None and not isinstance(x, bool):
        out.append(x)


def _decoded(row: dict[str, Any]) -> set[str]:
    """The words the documented code tables give the row's coded values (KMA's SKY 1 is 맑음, AirKorea's grade 1
    is 좋음)."""
    words: set[str] = set()
    if str(row.get("category")) in KMA_CODES:
        value = str(row.get("fcstValue", row.get("obsrValue", ""))).strip()
        if word := KMA_CODES[str(row["category"])].get(value):
            words.add(word)
    words.update(
        AIR_GRADES[str(v).strip()]
        for k, v in row.items()
        if k.lower().endswith(("grade", "grade1h")) and str(v).strip() in AIR_GRADES
    )
    return words


@dataclass(frozen=True)
class Evidence:
    """What a rollout's successful tool results offer as grounds for an answer, parsed once per completion."""

    #: every leaf value of every result (a result that is not JSON counts as one text value)
    values: list[Any]
    #: words that decode a coded value of a result row: an answer that decodes a code states a returned value
    decoded_words: set[str]
    #: per JSON object result: its tool, its `rows` field and the length of its `items` list (None when not a list)
    counts: list[tuple[str, Any, int | None]]

    @classmethod
    def of(cls, results: list[tuple[str, str]]) -> Evidence:
        values: list[Any] = []
        words: set[str] = set()
        counts: list[tuple[str, Any, int | None]] = []
        for tool, content in results:
            try:
                doc = json.loads(content)
            except ValueError:
                values.append(content)
                continue
            _scalars(doc, values)
            if not isinstance(doc, dict):
                continue
            items = doc.get("items")
            counts.append((tool, doc.get("rows"), len(items) if isinstance(items, list) else None))
            for row in items if isinstance(items, list) else []:
                if isinstance(row, dict):
                    words |= _decoded(row)
        return cls(values, words, counts)

    def grounds(self, fact: Fact, tools: frozenset[str] = frozenset()) -> bool:
        """The fact's value came from these results (the same value, as a number, a date or a time in any form; a
        conversion tool's output counts like any result; a count as a result's `rows` or its number of items, of one
        of `tools` where given: the tools whose response the count is of)."""
        row_count = fact.label == "건수" and fact.unit == "건"  # synthesis's count of a response's rows (its total)
        if fact.kind == "count" or row_count:
            counted = any(
                same_value(rows, fact.value) or (n is not None and n == float(fact.value))
                for tool, rows, n in self.counts
                if not tools or tool in tools
            )
            if counted or row_count:  # a total is grounded by a result's total, not by any figure equal to it
                return counted
        if fact.kind == "date":
            want = as_date(fact.value)
            return want is not None and any(as_date(v) == want for v in self.values if isinstance(v, str | int))
        want_t = time_values(fact.value)
        if want_t is not None:  # the time, or the end of a range that holds it (`19:00` in `10:00~19:00`)
            return any(set(want_t) <= set(time_values(v) or ()) for v in self.values if isinstance(v, str | int))
        text = value_text(fact.value)
        if fact.kind in ("name", "text") and str(fact.value).strip() in self.decoded_words:
            return True
        for v in self.values:
            if same_value(v, fact.value):
                return True
            if (
                fact.kind in ("name", "text")
                and len(text) >= 2
                and isinstance(v, str)
                and _squeezed(text) in _squeezed(value_text(v))
            ):  # the answer may re-space a quoted text
                return True
        return False


def grounded(fact: Fact, results: list[tuple[str, str]] | Evidence) -> bool:
    """The fact's value came from an executed tool result of this rollout (`Evidence.grounds`); pass the
    `Evidence` when checking several facts against the same results."""
    evidence = results if isinstance(results, Evidence) else Evidence.of(results)
    return evidence.grounds(fact)


_CLOCK_LINE = re.compile(r"현재 시각:\s*(\d{4}-\d{2}-\d{2} \d{2}:\d{2})")


def seen_of(prompt: Any, results: list[tuple[str, str]], sent: tuple[str, ...] = ()) -> Seen:
    """What the model of a rollout saw, for the judge: its executed tool results, the arguments it sent, the
    user's turns of the prompt and the clock its system prompt states."""
    messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": str(prompt or "")}]
    user = tuple(str(m.get("content") or "") for m in messages if isinstance(m, dict) and m.get("role") == "user")
    system = " ".join(
        str(m.get("content") or "") for m in messages if isinstance(m, dict) and m.get("role") == "system"
    )
    clock = _CLOCK_LINE.search(system)
    now = datetime.strptime(clock.group(1), "%Y-%m-%d %H:%M") if clock else None
    return Seen(results=tuple(content for _, content in results), user=user, now=now, sent=sent)


def _ran(calls: list[Call], gold: dict[str, Any], schemas: dict[str, Any]) -> bool:
    """The rollout executed the gold call: its tool with every gold argument's value (whatever came back)."""
    want = gold.get("arguments") or {}
    schema = schemas.get(str(gold.get("tool")))
    return any(c.name == gold.get("tool") and _matching(schema, c.arguments, want) == set(want) for c in calls)


def answer_facts(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """Share of the facts the final answer commits to whose values came from this rollout's executed results."""
    out = []
    n = len(completions)
    for prompt, p, facts, gold, schemas in zip(
        prompts,
        parsed(completions, kwargs),
        column(kwargs, "facts", n),
        column(kwargs, "gold_calls", n),
        column(kwargs, "tool_schemas", n),
        strict=True,
    ):
        wanted = _facts(facts)
        answer = p.answer
        # the model saw every executed call's result, failures included (an error task's answer reports one)
        read = [(c.name, c.result or "") for c in p.calls]
        seen = seen_of(prompt, read, tuple(str(v) for c in p.calls for v in c.arguments.values()))
        gold_calls = loads(gold) or []
        if not gold_calls and gold is not None:  # an irrelevance record: the honest refusal
            out.append(1.0 if not p.attempts and answer.strip() and refusal(answer, [], seen) else 0.0)
            continue
        if not answer.strip() or not wanted or not p.calls:
            out.append(0.0)
            continue
        check = check_answer(answer, wanted, seen)
        if check.rejected:
            out.append(0.0)
            continue
        # the judge's decision, for a value this rollout's results hold, or for what the gold tools tell once run
        # (an absence, a verdict such as 일치, a service's limit): never for an answer without the calls
        evidence = Evidence.of(p.results)
        ran = all(_ran(p.calls, c, loads(schemas) or {}) for c in gold_calls if isinstance(c, dict))
        # a count is of a final call's response (one that feeds no later call), never of a lookup on the way
        fed = {d for c in gold_calls if isinstance(c, dict) for d in c.get("depends_on") or ()}
        counted = frozenset(str(c["tool"]) for c in gold_calls if isinstance(c, dict) and c.get("step") not in fed)
        hit = [f for f in wanted if f not in check.missing and (evidence.grounds(f, counted) or ran)]
        out.append(len(hit) / len(wanted))
    return out


# ---------------------------------------------------------------------------------------------- penalties


def invented_tools(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """Minus the share of calls to tools the task did not offer."""
    out = []
    for p, offered in zip(parsed(completions, kwargs), column(kwargs, "offered", len(completions)), strict=True):
        names = set(loads(offered) or [])
        calls = p.attempts
        out.append(-sum(call.name not in names for call in calls) / len(calls) if calls else 0.0)
    return out


def refuted_links(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """Minus the share of calls feeding a parameter with a value from an earlier result along a refuted link."""
    out = []
    for p, refuted in zip(parsed(completions, kwargs), column(kwargs, "refuted_links", len(completions)), strict=True):
        links = loads(refuted) or []
        calls = p.attempts
        bad = 0
        for call in calls:
            for link in links:
                if link["target_tool"] != call.name or link["target_param"] not in call.arguments:
                    continue
                if _observed(
                    call.arguments[link["target_param"]], link["source_tool"], link["source_field"], call.seen_before
                ):
                    bad += 1
                    break
        out.append(-bad / len(calls) if calls else 0.0)
    return out


def excess_calls(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """Minus the calls beyond the gold count, relative to it (at most -1)."""
    out = []
    for p, gold in zip(parsed(completions, kwargs), column(kwargs, "gold_calls", len(completions)), strict=True):
        want = max(1, len(loads(gold) or []))
        extra = max(0, len(p.attempts) - want)
        out.append(-min(1.0, extra / want))
    return out


def repeated_calls(prompts: list[Any], completions: list[Completion], **kwargs: Any) -> list[float]:
    """Minus the share of calls that repeat an earlier call: the same tool and the same canonical call
    (`execution.canonical.call_key` by the offered schema)."""
    out = []
    n = len(completions)
    for p, schemas in zip(parsed(completions, kwargs), column(kwargs, "tool_schemas", n), strict=True):
        schemas = loads(schemas) or {}
        keys = [key_of(x, schemas) for x in p.attempts]
        out.append(-(len(keys) - len(set(keys))) / len(keys) if keys else 0.0)
    return out


REWARDS: dict[str, RewardFn] = {
    "well_formed_calls": well_formed_calls,
    "schema_valid_arguments": schema_valid_arguments,
    "right_tools": right_tools,
    "gold_arguments": gold_arguments,
    "executed_calls": executed_calls,
    "answer_facts": answer_facts,
    "invented_tools": invented_tools,
    "refuted_links": refuted_links,
    "excess_calls": excess_calls,
    "repeated_calls": repeated_calls,
}
#: Why each weight: the outcome dominates (`answer_facts` 4.0 is more than every shape reward together, 3.5, so an
#: answer the bench passes earns more than any trajectory whose answer fails, and an honest refusal on an
#: irrelevance prompt more than any call); the shape rewards are a gradient towards it for groups that all fail the
#: answer (the right tools with the right arguments above a wrong call, a wrong but well-formed call above none or
#: a malformed one, which earn 0); the penalties keep calling more than needed below the direct trajectory.
DEFAULT_WEIGHTS: dict[str, float] = {
    "well_formed_calls": 0.5,
    "schema_valid_arguments": 0.5,
    "right_tools": 1.0,
    "gold_arguments": 1.0,
    "executed_calls": 0.5,
    "answer_facts": 4.0,
    "invented_tools": 1.0,
    "refuted_links": 1.0,
    "excess_calls": 0.5,
    "repeated_calls": 0.5,
}


def selected(weights: dict[str, float]) -> tuple[list[RewardFn], list[float]]:
    """The reward functions with non-zero weight and their weights, in a stable order (for GRPOConfig)."""
    unknown = set(weights) - set(REWARDS)
    if unknown:
        raise ValueError(f"unknown rewards: {sorted(unknown)} (known: {', '.join(REWARDS)})")
    names = [n for n in REWARDS if weights.get(n, 0.0)]
    return [REWARDS[n] for n in names], [float(weights[n]) for n in names]
