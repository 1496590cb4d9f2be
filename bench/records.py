"""The JSON records of KOPA-Bench, typed: what a run writes (run.json, gold.json, episodes.jsonl, results.json) and
reads back, the chat messages an episode holds and sends, and the lines the CLI prints. They are `TypedDict`s,
plain dicts at run time, so the files stay byte for byte what they were; mypy checks every key shipped code
writes or reads.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, NotRequired, TypedDict, TypeVar

# ---------------------------------------------------------------------------------------------- chat messages


class WireFunction(TypedDict):
    name: str
    arguments: str  # a JSON object's text, as an OpenAI-compatible server takes it


class WireToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: WireFunction


class ChatMessage(TypedDict):
    """One message of an episode's conversation in the OpenAI wire shape (system, user, assistant or tool)."""

    role: str
    content: str
    tool_calls: NotRequired[list[WireToolCall]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]


class TemplateFunction(TypedDict):
    name: str
    arguments: dict[str, Any]  # an object, as tool-aware chat templates read it


class TemplateToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: TemplateFunction


class TemplateMessage(TypedDict):
    """A message as a chat template renders it: tool-call arguments as objects."""

    role: str
    content: str
    tool_calls: NotRequired[list[TemplateToolCall]]
    tool_call_id: NotRequired[str]
    name: NotRequired[str]


class AgentInfo(TypedDict):
    """What an agent says of itself (`Agent.describe`), written into run.json as `model`."""

    adapter: str
    model: str
    endpoint: NotRequired[str]
    model_dir: NotRequired[str]
    options: NotRequired[dict[str, Any]]
    timeout_s: NotRequired[float]


# ---------------------------------------------------------------------------------------------- episodes


class TurnCall(TypedDict):
    id: str
    name: str
    arguments: dict[str, Any] | None
    raw: str
    error: str


class TurnResult(TypedDict):
    id: str
    tool: str
    outcome: str
    rows: int
    miss: bool
    content: str


class CanonicalTurn(TypedDict):
    """One model turn of an episode, without its timing."""

    user_turn: int
    model_turn: int
    content: str
    prompt_tokens: int
    completion_tokens: int
    tool_calls: list[TurnCall]
    results: list[TurnResult]
    error: NotRequired[str]


class TurnRecord(CanonicalTurn):
    latency_ms: float


class CallRecord(TypedDict):
    """One call the model made, as scoring reads it."""

    id: str
    turn: int
    user_turn: int
    tool: str
    args: dict[str, Any] | None
    valid: bool
    error: str
    outcome: str
    rows: int
    miss: bool
    seen: list[Any]


class FirstReply(TypedDict):
    user_turn: int
    content: str
    calls_before: int


class Tokens(TypedDict):
    prompt: int
    completion: int


TurnT = TypeVar("TurnT", CanonicalTurn, TurnRecord)


class _Episode(TypedDict, Generic[TurnT]):
    task: str
    category: str
    trial: int
    agent: str
    status: str
    error: str
    final_answer: str
    first_reply: FirstReply | None
    offered: list[str]
    distractors: list[str]
    turns: list[TurnT]
    calls: list[CallRecord]
    replay_misses: int
    tokens: Tokens
    agent_notes: dict[str, str]


class CanonicalEpisode(_Episode[CanonicalTurn]):
    """An episode's behaviour: what live and replayed runs of one agent must agree on."""


class EpisodeRecord(_Episode[TurnRecord]):
    """One line of episodes.jsonl."""

    mode: str
    model_ms: float
    harness_ms: float


# ---------------------------------------------------------------------------------------------- gold and scores


class GoldCallRecord(TypedDict):
    step: str
    tool: str
    args: dict[str, Any]
    outcome: str
    rows: int


class FactRecord(TypedDict):
    kind: str
    value: Any
    tolerance: float
    unit: str | None
    label: str
    field: str
    category: str
    about: list[str]
    rivals: list[dict[str, Any]]


class GoldRecord(TypedDict):
    """A task's executed gold program (gold.json), as scoring reads it."""

    task: str
    skipped: list[str]
    calls: list[GoldCallRecord]
    facts: list[FactRecord]


class ScoredEpisode(TypedDict):
    task: str
    trial: int
    category: str
    passed: bool
    checks: dict[str, bool]
    failed_checks: list[str]
    failure: str | None
    facts_hit: int
    facts_total: int
    rejected: str
    missing: list[str]
    calls: int
    gold_calls: int
    invalid_calls: int
    tool_precision: float
    tool_recall: float
    arg_accuracy: float | None
    provenance_accuracy: float | None
    refused: bool
    tokens: int
    model_ms: float
    harness_ms: float
    status: str
    replay_misses: int
    providers: list[str]


class Summary(TypedDict):
    """The aggregates of a group of scored episodes."""

    tasks: int
    episodes: int
    pass_hat_k: float
    pass_hat_k_ci: tuple[float, float]
    pass_at_k: float
    pass_at_k_ci: tuple[float, float]
    success_rate: float
    tool_precision: float | None
    tool_recall: float | None
    arg_accuracy: float | None
    provenance_accuracy: float | None
    calls_per_task: float | None
    gold_calls_per_task: float | None
    calls_vs_gold: float | None
    invalid_calls: int
    tokens_per_task: float | None
    model_ms_per_task: float | None
    harness_ms_per_task: float | None
    agent_errors: int
    loops: int
    replay_misses: int
    replay_miss_episodes: int
    failures: dict[str, int]


class Scores(TypedDict):
    k: int
    overall: Summary
    by_category: dict[str, Summary]
    by_provider: dict[str, Summary]
    by_gold_calls: dict[str, Summary]
    irrelevance_refusal_rate: float | None


# ---------------------------------------------------------------------------------------------- runs


class EnvMeta(TypedDict):
    """Where a run's tools answered from and its clock (`BenchEnv.meta`)."""

    upstream: str
    snapshot: NotRequired[str]
    graph_snapshot: str
    clock: str


class RunMeta(EnvMeta):
    """run.json: what ran."""

    agent: str
    model: AgentInfo
    mode: str
    task_set_hash: str
    tasks: int
    k: int
    max_turns: int
    seed: int
    started_at: str


class RunInfo(RunMeta):
    """results.json's `run`: run.json and how the run went."""

    finished_at: str
    wall_s: float
    resumed_episodes: int
    episodes: int
    refused_tasks: int


class ResultsDoc(TypedDict):
    """results.json."""

    run: RunInfo
    scores: Scores
    refused: dict[str, str]
    gold: dict[str, GoldRecord]
    scored: list[ScoredEpisode]
    episodes: list[EpisodeRecord]


class RunSummary(TypedDict):
    """The one JSON line `kopa bench run` prints."""

    agent: str
    mode: str
    refused_tasks: int
    by_category: dict[str, float]  # pass^k per category
    # the run's overall `Summary` figures:
    tasks: int
    episodes: int
    pass_hat_k: float
    pass_at_k: float
    failures: dict[str, int]
    replay_misses: int
    replay_miss_episodes: int
    harness_ms_per_task: float | None


# ---------------------------------------------------------------------------------------------- serving


class Usage(TypedDict):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class Choice(TypedDict):
    index: int
    message: ChatMessage
    finish_reason: Literal["tool_calls", "stop"]


class ChatCompletion(TypedDict):
    """An OpenAI-compatible chat completion, as `bench.serve_local` answers it."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[Choice]
    usage: Usage


class ModelCard(TypedDict):
    id: str
    object: Literal["model"]
    owned_by: str


class ModelList(TypedDict):
    object: Literal["list"]
    data: list[ModelCard]


# ---------------------------------------------------------------------------------------------- BFCL


class CategoryScore(TypedDict):
    accuracy: float
    correct: int
    total: int


class BfclOverall(TypedDict):
    bfcl_overall: float | None
    counted_as_zero: list[str]
    note: str


class BfclSummary(TypedDict):
    """The results JSON of one `kopa bench bfcl` run (`bench.bfcl.results`)."""

    benchmark: Literal["bfcl"]
    bfcl_eval_version: str | None
    model: str | None
    registry_name: str
    endpoint: str | None
    mode: str | None
    limit_per_category: int | None
    partial: bool
    wall_s: float | None
    categories: dict[str, CategoryScore]
    not_run: dict[str, str]
    groups: dict[str, float | None]
    overall: BfclOverall
    csv: dict[str, dict[str, str]]


class CheckSummary(TypedDict):
    """The one JSON line `kopa bench check` prints."""

    tasks: int
    valid: int
    refused: int
    invalid: int
    by_category: dict[str, int]
    refusals: dict[str, int]
    three_plus_calls: int
    task_set_hash: str
