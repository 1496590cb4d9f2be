"""Typed records of synthesis: the plan a trajectory is drawn from (`Plan`, `Step`, `Source`) and the executed
`Trajectory` that export, batches, training and the benchmark all read.

A `Trajectory` is written once by `synthesis.engine.build_record` and stored as its JSON dump; readers turn stored
or exported dicts back into the model with `as_trajectory`. `kind` marks the special samples: `irrelevance` (no
steps: the assistant answers without calling), `clarification` (`preamble` holds the user's first turn and the
assistant's question; `request` is the reply that supplies the missing input), `error_recovery` (`attempts`
holds a call that failed for real before step 1), `hard_negative` (a refuted link's source tool is offered;
`metadata.hard_negative` names it). Older records read with the defaults (`normal`, no preamble or attempts).

What a synthesis is asked for (`SynthesisRequest`: the CLI's options, the REST batch body, the stored batch a
worker runs) is validated by this one model, with one message per problem (`SynthesisRequest.parse`); what it
gives back is a `SynthesisResult`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, ValidationInfo, field_validator

from core.errors import invalid_input
from core.fields import ByKey, Integral
from graph.models import LinkRecord, ToolRecord
from synthesis.fact_terms import Fact

# ---------------------------------------------------------------------------------------------- requests

#: The plan shapes a synthesis draws (their one home: the sampler, the CLI, the REST schema and batches read it).
Shape = Literal["single", "chain", "fan_in", "parallel", "conditional"]
SHAPES: tuple[str, ...] = get_args(Shape)
#: Most calls in one trajectory.
MAX_STEPS = 6


class SynthesisRequest(BaseModel):
    """What one synthesis asks for, whichever entry asks (`kopa synth`, a REST batch, a Celery worker reading the
    stored batch): every rule that needs no server setting, so each entry refuses a bad request in the same words
    (`parse`); the count's upper bound is the entry's (`within`)."""

    count: Integral = Field(100, ge=1, description="how many trajectories")
    shapes: list[Shape] = Field(default_factory=list, description="plan shapes to draw (default: all)")
    min_steps: Integral = Field(1, ge=1, le=MAX_STEPS, description="fewest calls per trajectory (at most `max_steps`)")
    max_steps: Integral = Field(
        MAX_STEPS, ge=1, le=MAX_STEPS, description="most calls per trajectory (at least `min_steps`)"
    )
    api_ids: list[str] = Field(default_factory=list, max_length=1000, description="only tools of these APIs")
    seed: Integral = Field(7, ge=0, le=2**63 - 1, description="the same seed and graph give the same trajectories")
    on_demand: StrictBool = Field(
        False, description="verify the links the plans traverse before they run (no verification run needed first)"
    )

    @field_validator("max_steps")
    @classmethod
    def _not_below_min(cls, value: int, info: ValidationInfo) -> int:
        low = info.data.get("min_steps")
        if isinstance(low, int) and value < low:
            raise ValueError(f"must be at least min_steps ({low}): 1 <= min_steps <= max_steps <= {MAX_STEPS}")
        return value

    @classmethod
    def parse(cls, data: Mapping[str, Any], *, most: int, name: Callable[[str], str] = str) -> Self:
        """The request, or InvalidInput naming every problem (`name` spells a field as the entry does)."""
        try:
            request = cls.model_validate(data)
        except ValidationError as exc:
            raise invalid_input(exc.errors(), name=name) from None
        return request.within(most, name=name)

    def within(self, most: int, *, name: Callable[[str], str] = str) -> Self:
        """This request, or InvalidInput when it asks for more than `most` trajectories (the entry's bound)."""
        if self.count > most:
            problem = {"loc": ("count",), "msg": f"Input should be less than or equal to {most:,}"}
            raise invalid_input([problem], name=name)
        return self

    def shape_names(self) -> tuple[str, ...]:
        """The shapes asked for (all when none were named)."""
        return tuple(self.shapes) or SHAPES


# ---------------------------------------------------------------------------------------------- plans


@dataclass
class Source:
    """Where one argument of a planned step comes from: an earlier step through a verified link, a user slot, or a
    constant (enum, default, non-linkable parameter)."""

    kind: str  # "link" | "slot" | "clock" | "constant" | "mention"
    value: Any = None
    link: LinkRecord | None = None
    from_step: int = -1

    def provenance(self) -> dict[str, Any]:
        if self.kind == "link" and self.link is not None:
            return {
                "kind": "link",
                "link": self.link.id,
                "from_step": self.from_step,
                "field": self.link.source_field,
                "transform": self.link.transform,
            }
        return {"kind": self.kind, "value": self.value}


@dataclass
class Step:
    """One planned call. `names`: a row field the user names the wanted row by (a city's name in a code list, a
    complex's name in a 동's list) when nothing else singles it out; `narrow`: the optional parameter that takes
    that name, so the recorded call is the narrowed one."""

    tool: ToolRecord
    sources: dict[str, Source]
    depends_on: list[int] = field(default_factory=list)
    names: str = ""
    narrow: str = ""


@dataclass
class Condition:
    """A conditional plan's test: step `gate` runs only when the number `label` of step `step`'s result is `op`
    (`>=` or `<=`) `value`; set when the plan runs (a threshold of the condition's on either side of what the
    result says, so both branches occur), with `observed` and whether it `held`."""

    step: int
    gate: int
    label: str = ""
    unit: str = ""
    op: str = ">="
    value: float = 0.0
    observed: float = 0.0
    held: bool = False
    #: the gated step's tool (its goal is asked whether or not it runs)
    gate_tool: ToolRecord | None = None
    #: what the answer states of the deciding value (the judge's fact)
    fact: Fact | None = None
    #: the condition it asks (`synthesis.conditions`) and the hours its value covers ("06시~07시 예보 기준")
    rule: str = ""
    scope: str = ""


@dataclass
class Plan:
    shape: str
    steps: list[Step]
    finals: list[int]
    route: str = ""
    #: conditional plans: which step's result decides whether which later step runs
    when: Condition | None = None

    @property
    def key(self) -> str:
        return "|".join(s.tool.name for s in self.steps) + f"#{self.shape}"


# ---------------------------------------------------------------------------------------------- executed records


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepResponse(_Record):
    rows: int = Field(description="rows the query has in all: the provider's stated total, else the rows received")
    first: int = Field(1, description="1-based position of the first received row in the whole answer")
    next_token: str = Field("", description="the answer's token for its next page (cursor paging), '' when none")
    items: list[dict[str, Any]] = Field(description="the trimmed rows the model sees")
    shown: list[int] = Field(default_factory=list, description="0-based positions of the shown rows in the answer")
    chosen: int = Field(0, description="index in `items` of the row later steps and the answer use")
    selected: bool = Field(
        True,
        description="the query or the user's words single out `chosen` (else a final "
        "step answers about the set of rows)",
    )
    url: str = Field("", description="the request URL without any secret")
    replayed_from_cache: bool = False


class TrajectoryStep(_Record):
    step: int = Field(description="1-based position in the trajectory")
    tool: str
    arguments: dict[str, Any]
    provenance: dict[str, dict[str, Any]] = Field(description="per argument: link (with from_step), slot or constant")
    depends_on: list[int] = Field(default_factory=list, description="1-based steps this one is fed by")
    response: StepResponse
    mentions: dict[str, Any] = Field(
        default_factory=dict,
        description="row fields the user names, no argument (the city's name that picks its row of a code list)",
    )


class FactRecord(_Record):
    """One thing the final answer must state, in the benchmark's fact format (`synthesis.facts.Fact`)."""

    kind: Literal["number", "text", "date", "count", "name"]
    value: Any
    tolerance: float = 0.0
    unit: str | None = None
    label: str = Field("", description="what the value means (the field's meaning, the category, the aggregate)")

    def fact(self) -> Fact:
        return Fact(kind=self.kind, value=self.value, tolerance=self.tolerance, unit=self.unit, label=self.label)


class Question(_Record):
    """The question a trajectory answers: who asks, about which entity they know, and what they want stated."""

    persona: str = Field(description="citizen | civil | analyst")
    entity: str = Field(description="the entity in the user's words (an address, place, facility, company, date)")
    asks: list[str] = Field(
        description="per final step: row (one entity's values), table (an observation or "
        "forecast over the rows asked), count, list, highest, range"
    )
    route: str = Field("", description="why this plan answers it: the kind of entity each step's rows are")


class FailedAttempt(_Record):
    """A call that failed for real before the recorded step succeeded (error-recovery samples)."""

    before_step: int = Field(description="the 1-based step this attempt precedes")
    tool: str
    arguments: dict[str, Any]
    error: str = Field(description="what the provider answered")


class TrajectoryMeta(_Record):
    model_config = ConfigDict(extra="allow")

    template_request: str = ""
    graph_snapshot: str = ""
    verified_links: list[str] = Field(default_factory=list)
    created_at: str = ""
    provenance: Literal["live", "replayed_from_cache"] = "live"
    seed: int = 0
    engine: str = ""
    trim_rule: str = ""


class Trajectory(_Record):
    """One executed trajectory: request, offered tools, executed steps with argument provenance, final answer."""

    id: str
    request: str
    shape: str
    n_steps: int
    slots: dict[str, Any] = Field(default_factory=dict)
    tools: list[dict[str, Any]] = Field(description="OpenAI-style function definitions offered to the model")
    distractors: list[str] = Field(default_factory=list)
    steps: list[TrajectoryStep]
    final_steps: list[int] = Field(default_factory=list)
    final_answer: str
    metadata: TrajectoryMeta = Field(default_factory=TrajectoryMeta)
    seq: int | None = Field(None, description="position in its batch")
    kind: Literal["normal", "irrelevance", "clarification", "error_recovery", "hard_negative"] = "normal"
    preamble: list[dict[str, str]] = Field(default_factory=list, description="turns before `request` (clarification)")
    attempts: list[FailedAttempt] = Field(default_factory=list, description="failed calls the assistant recovered from")
    now: str = Field("", description="the conversation's clock (ISO, KST), stated in the system message")
    question: Question | None = Field(None, description="the question the trajectory answers (normal samples)")
    facts: list[FactRecord] = Field(default_factory=list, description="what the final answer must state")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def judge_facts(self) -> list[Fact]:
        """The facts as the judge (`synthesis.facts.check_answer`) takes them."""
        return [f.fact() for f in self.facts]


def as_trajectory(record: Trajectory | dict[str, Any]) -> Trajectory:
    """A `Trajectory` from a stored or exported record (a `Trajectory` passes through)."""
    if isinstance(record, Trajectory):
        return record
    return Trajectory.model_validate({k: v for k, v in record.items() if not k.startswith("_")})


class BenchmarkOverlap(BaseModel):
    """What the contamination guard did (synthesis.contamination): trajectories that reproduce a benchmark task
    are discarded, never kept."""

    benchmark_tasks: int
    kept_overlapping: int = 0
    discarded_as_overlapping: int = 0
    rule: str = "same tool sequence with the same user values, or a near-duplicate request"


@dataclass
class SynthesisResult(ByKey):
    """What one synthesis gave: the kept records, what was discarded and why, the upstream calls spent, and the
    figures export, reports, batches and the CLI state."""

    records: list[Trajectory]
    #: per discarded plan: {"plan": its key, "reason": why}
    discarded: list[dict[str, str]]
    calls: int
    #: "282 of 300 requested: ..." when fewer were kept than asked, else ""
    shortfall: str
    snapshot: str
    requeued_links: list[str] = field(default_factory=list)
    planned: int = 0
    attempted: int = 0
    #: special samples made, wanted (scaled to what was kept) and configured, by kind
    extras: dict[str, int] = field(default_factory=dict)
    extras_wanted: dict[str, int] = field(default_factory=dict)
    extras_configured: dict[str, float] = field(default_factory=dict)
    #: user values harvested per tool.parameter
    pools: dict[str, int] = field(default_factory=dict)
    #: links asked, verified, refuted, undecided and the calls verification spent (demand-driven synthesis only)
    verification: dict[str, int] | None = None
    #: set by the guarded path every entry takes (synthesis.batches.synthesize_guarded)
    benchmark_overlap: BenchmarkOverlap | None = None
