"""KOPA-Bench tasks: the schema (pydantic models of bench/TASKS.md), the loader of a folder of YAML files, and the
task-set hash.

Every error names the file, the task id and the field, e.g.
`bench/tasks/chain.yaml: task chain-weather-001: gold[1].args.nx: 'from' names unknown step 'adr'`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.errors import KopaError

CATEGORIES = ("single", "chain", "fan_in", "parallel", "conditional", "error", "clarification", "irrelevance")
SHIPPED_TASKS = Path(__file__).resolve().parent / "tasks"
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class TaskError(KopaError):
    """A malformed task file or task (the message names the file, task and field)."""

    status_code = 422
    code = "invalid_task"


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Where(_M):
    where: dict[str, Any]


Row = int | Where


class UserArg(_M):
    user: Any


class ConstArg(_M):
    const: Any


class DateArg(_M):
    date: Literal["today", "tomorrow", "yesterday", "last_month_start", "last_month_end", "now"]
    format: str = "%Y%m%d"
    offset_days: int = 0


class FromArg(_M):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    from_: str = Field(alias="from")
    field: str
    row: Row = 0
    transform: dict[str, Any] | None = None


ArgSource = UserArg | ConstArg | DateArg | FromArg


class When(_M):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    from_: str = Field(alias="from")
    field: str
    row: Row = 0
    op: Literal[">=", "<=", "==", "!=", "in", ">", "<"]
    value: Any


class GoldStep(_M):
    id: str
    tool: str
    args: dict[str, ArgSource] = Field(default_factory=dict)
    when: When | None = None
    expect: Literal["ok", "error", "empty"] = "ok"

    @field_validator("args", mode="before")
    @classmethod
    def _args(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            raise ValueError("args must be a mapping of parameter -> source")
        for name, src in v.items():
            if not isinstance(src, dict) or len({"user", "const", "date", "from"} & set(src)) != 1:
                raise ValueError(f"argument {name!r} needs exactly one of user / const / date / from, got {src!r}")
        return v


class FactSpec(_M):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    kind: Literal["number", "text", "date", "count", "name"]
    from_: str | None = Field(None, alias="from")
    field: str | None = None
    #: a row (index or `where`), or `all`: every distinct value of `field` over the response, each a fact of its own
    #: (a question that asks for a list — "이름이 뭔지", "뭐가 있어?" — is answered by naming every item)
    row: Row | Literal["all"] = 0
    value: Any = None
    tolerance: float = Field(0.0, ge=0)
    unit: str | None = None
    label: str = ""

    @model_validator(mode="after")
    def _shape(self) -> FactSpec:
        if self.from_ is None and self.value is None:
            raise ValueError("a fact needs `from` (a gold step) or a literal `value`")
        if self.from_ is not None and self.kind != "count" and self.field is None:
            raise ValueError(f"a {self.kind} fact from a step needs `field`")
        if self.row == "all" and (self.from_ is None or self.kind not in ("name", "text")):
            raise ValueError("`row: all` lists the names or texts of a step's rows: it needs `from`, kind name or text")
        return self


class ToolsOffered(_M):
    offered: list[str] = Field(min_length=1)
    distractors: int = Field(0, ge=0, le=50)


class Clarify(_M):
    ask_keywords: list[str] = Field(min_length=1)


class Task(_M):
    id: str
    category: Literal["single", "chain", "fan_in", "parallel", "conditional", "error", "clarification", "irrelevance"]
    persona: Literal["citizen", "civil_servant", "analyst"]
    turns: list[str] = Field(min_length=1, max_length=2)
    tools: ToolsOffered
    gold: list[GoldStep] = Field(default_factory=list)
    facts: list[FactSpec] = Field(default_factory=list)
    must_call: list[str] | None = None
    must_not_call: list[str] = Field(default_factory=list)
    max_calls: int | None = Field(None, ge=0)
    clarify: Clarify | None = None
    notes: str = ""
    source: str = Field("", exclude=True, description="the file it was loaded from")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _ID.match(v):
            raise ValueError("id must match [a-z0-9-]+")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        self._check_gold_order()
        self._check_category()
        tools = {s.tool for s in self.gold}
        for name in self.must_call or []:
            if name not in tools:
                raise ValueError(f"must_call: {name!r} is not a tool of the gold program")
        if set(self.must_not_call) & set(self.must_call or []):
            raise ValueError("must_not_call: overlaps must_call")
        return self

    def _check_gold_order(self) -> None:
        """Every `from` names an earlier step, every user value is in a user turn, step ids are unique."""
        seen: list[str] = []
        for i, step in enumerate(self.gold):
            where = f"gold[{i}]"
            if step.id in seen:
                raise ValueError(f"{where}.id: duplicate step id {step.id!r}")
            for name, src in step.args.items():
                if isinstance(src, FromArg) and src.from_ not in seen:
                    raise ValueError(f"{where}.args.{name}: 'from' names unknown or later step {src.from_!r}")
                if isinstance(src, UserArg) and not _stated(src.user, self.turns):
                    raise ValueError(f"{where}.args.{name}: user value {src.user!r} does not appear in any user turn")
            if step.when is not None and step.when.from_ not in seen:
                raise ValueError(f"{where}.when: 'from' names unknown or later step {step.when.from_!r}")
            seen.append(step.id)
        for i, fact in enumerate(self.facts):
            if fact.from_ is not None and fact.from_ not in seen:
                raise ValueError(f"facts[{i}].from: unknown step {fact.from_!r}")

    def _check_category(self) -> None:
        """What each category requires of the gold program, the facts and the turns."""
        if self.category == "irrelevance":
            if self.gold:
                raise ValueError("gold: irrelevance tasks have an empty gold program")
            if any(f.from_ is not None for f in self.facts):
                raise ValueError("facts: irrelevance tasks have literal facts only")
        else:
            if not self.gold:
                raise ValueError("gold: only irrelevance tasks may have an empty gold program")
            if not self.facts and self.category != "clarification":
                raise ValueError("facts: a task must state at least one fact")
        if self.category == "clarification":
            if len(self.turns) != 2:
                raise ValueError("turns: clarification tasks have 2 user turns")
            if self.clarify is None:
                raise ValueError("clarify: clarification tasks need clarify.ask_keywords")
        elif len(self.turns) != 1:
            raise ValueError("turns: only clarification tasks have a second user turn")

    @property
    def limit(self) -> int:
        return self.max_calls if self.max_calls is not None else len(self.gold) + 2

    def user_values(self) -> list[Any]:
        return [src.user for s in self.gold for src in s.args.values() if isinstance(src, UserArg)]

    def request(self) -> str:
        return "\n".join(self.turns)


def _norm(s: Any) -> str:
    return re.sub(r"[\s\W_]+", "", unicodedata.normalize("NFKC", str(s)).lower())


def _stated(value: Any, turns: list[str]) -> bool:
    text = _norm(" ".join(turns))
    values = value if isinstance(value, list) else [value]
    return all(_norm(v) in text for v in values if not isinstance(v, dict)) and all(
        _stated(list(v.values()), turns) for v in values if isinstance(v, dict)
    )


def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("UserArg", "ConstArg", "DateArg", "FromArg", "int", "Where") or "[" in str(part):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out or "(task)"


def _describe(exc: ValidationError) -> str:
    msgs = []
    for err in exc.errors()[:3]:
        msg = str(err["msg"]).removeprefix("Value error, ")
        path = _field_path(tuple(err["loc"]))
        msgs.append(msg if path == "(task)" and ": " in msg else f"{path}: {msg}")
    return "; ".join(msgs)


@dataclass(frozen=True)
class InvalidTask:
    """A task (or a whole file) the loader refuses: `message` names the file, the task and the field."""

    source: str
    id: str
    category: str
    message: str


def _parse(data: Any, source: str) -> tuple[list[Task], list[InvalidTask]]:
    if not isinstance(data, list):
        return [], [InvalidTask(source, "", "", f"{source}: a task file holds a YAML list of tasks")]
    tasks: list[Task] = []
    invalid: list[InvalidTask] = []
    for i, raw in enumerate(data):
        tid = str(raw.get("id", f"#{i}")) if isinstance(raw, dict) else f"#{i}"
        category = str(raw.get("category", "")) if isinstance(raw, dict) else ""
        if not isinstance(raw, dict):
            invalid.append(InvalidTask(source, tid, category, f"{source}: task {tid}: a task is a mapping"))
            continue
        try:
            tasks.append(Task.model_validate({**raw, "source": source}))
        except ValidationError as exc:
            invalid.append(InvalidTask(source, tid, category, f"{source}: task {tid}: {_describe(exc)}"))
    return tasks, invalid


def load_task_report(folder: Path | str | None = None) -> tuple[list[Task], list[InvalidTask]]:
    """Every valid task under `folder` (default: the shipped tasks), sorted by id, and every task the loader refuses
    (a schema error, a duplicate id) or file it cannot read (not YAML, not a list): one bad task never hides the
    others. A missing folder raises TaskError."""
    root = Path(folder) if folder is not None else SHIPPED_TASKS
    if not root.is_dir():
        raise TaskError(f"{root}: no such task folder")
    tasks: list[Task] = []
    invalid: list[InvalidTask] = []
    for path in sorted([*root.rglob("*.yaml"), *root.rglob("*.yml")]):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            invalid.append(InvalidTask(str(path), "", "", f"{path}: not valid YAML: {str(exc).splitlines()[0]}"))
            continue
        if data is None:
            continue
        good, bad = _parse(data, str(path))
        tasks.extend(good)
        invalid.extend(bad)
    ids: dict[str, str] = {}
    unique: list[Task] = []
    for t in tasks:
        if t.id in ids:
            msg = f"{t.source}: task {t.id}: id: duplicate of a task in {ids[t.id]}"
            invalid.append(InvalidTask(t.source, t.id, t.category, msg))
            continue
        ids[t.id] = t.source
        unique.append(t)
    return sorted(unique, key=lambda t: t.id), invalid


def load_tasks(folder: Path | str | None = None) -> list[Task]:
    """Every task of every `*.yaml`/`*.yml` file under `folder` (default: the shipped tasks), sorted by id; the
    first refused task or file raises TaskError (`load_task_report` returns them all instead)."""
    tasks, invalid = load_task_report(folder)
    if invalid:
        raise TaskError(invalid[0].message)
    return tasks


def task_set_hash(tasks: list[Task]) -> str:
    """A content hash of the task set (independent of file layout and order)."""
    canon = [t.model_dump(mode="json", by_alias=True, exclude={"source"}) for t in sorted(tasks, key=lambda t: t.id)]
    return "ts_" + hashlib.sha256(json.dumps(canon, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def unknown_tool(name: str, registry: set[str] | list[str]) -> str:
    """`unknown tool 'x'`, with the closest registered name when one is near (`; did you mean 'y'?`)."""
    close = difflib.get_close_matches(name, sorted(registry), n=1, cutoff=0.6)
    return f"unknown tool {name!r}" + (f"; did you mean {close[0]!r}?" if close else "; `kopa bench tools` lists them")


def check_tools(tasks: list[Task], registry: set[str]) -> list[str]:
    """Errors for tool names a task uses that the registry lacks, each naming the closest registered tool."""
    errors = []
    for t in tasks:
        names = [*(n for n in t.tools.offered if n != "*"), *(s.tool for s in t.gold), *t.must_not_call]
        for n in dict.fromkeys(names):
            if n not in registry:
                errors.append(f"{t.source}: task {t.id}: tools: {unknown_tool(n, registry)}")
        if "*" not in t.tools.offered:
            for s in t.gold:
                if s.tool not in t.tools.offered:
                    errors.append(f"{t.source}: task {t.id}: tools.offered: gold tool {s.tool!r} is not offered")
    return errors
