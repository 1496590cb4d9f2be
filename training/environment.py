"""The tool environment of GRPO rollouts: each record's own offered tools, executed for real.

trl exposes one tool list to every prompt when given `tools=`; per-record tool sets need `environment_factory` as
a dict `{name: factory}` with an `environment` column in the dataset (`training.datasets.toolset_key`). Here every
distinct set of offered tools becomes one environment class whose public tools are exactly those tools, each the
record's own function spec (`ToolMethod`/`BoundTool`): trl renders an environment's tools into the prompt with
`apply_chat_template(tools=...)`, which takes a dict as the spec itself, so a GRPO prompt shows the very specs an SFT
row (`record.tools`) and a benchmark episode (`bench.episode.offered_tools`) show, `pattern`, `format` and all.

A call goes to a backend:

* `LiveBackend` — through `execution.executor.Executor` against the configured upstream (the sandbox in tests and
  demos): per-API rate limits, daily quotas, the response cache and the call counter of the economy all apply, and
  the service key is added to the outgoing request only;
* `ReplayBackend` — the recorded responses, looked up as the benchmark's replay looks them up
  (`execution.replay.Recordings`: the one canonical call of `execution.canonical`, else a page a recorded listing
  holds; the record's own steps first, then any record's), anything else gets an error; a built-in conversion
  tool (graph/conversions.py) is computed, as live, for whatever arguments the model sends.

Each rollout may make at most `max_calls` tool calls (further calls get an error without executing); trl's
`max_tool_calling_iterations` bounds the turns. Results are the one view of a tool result (`execution.view`: the
text SFT records and benchmark episodes show for the same response), with every secret value known to the settings
replaced by `***`.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import Counter
from collections.abc import Coroutine, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime
from typing import Any, Protocol, TypeVar

import httpx

from core.clock import world_at
from core.settings import Settings
from execution.executor import Executor
from execution.limits import Economy, economy_for
from execution.replay import Listing, Recordings
from execution.result import CallResult
from execution.view import BUDGET, Budget, render, view_object
from graph.conversions import TOOL_NAMES as CONVERSION_TOOLS
from graph.conversions import answer as conversion_answer
from graph.conversions import conversion_tools
from graph.models import ApiRecord, ToolRecord
from synthesis.records import StepResponse, Trajectory
from training.datasets import toolset_key

T = TypeVar("T")
#: A recorded step's response and the function spec its record offered (the view shows rows by it).
Recorded = tuple[StepResponse, dict[str, Any] | None]


class Backend(Protocol):
    def run(self, trajectory_id: str, name: str, args: dict[str, Any], *, now: str = "") -> dict[str, Any]: ...


class ReplayBackend:
    """Answers calls from the recorded responses of the trajectories through `execution.replay.Recordings`, as
    the benchmark's replay does: the recording of the same canonical call (argument order, `1` and `"1"` for an
    integer, surrounding whitespace, `pageNo=1` sent or omitted do not matter), else a page a recorded listing
    holds; the record's own steps first, then any record's.

    Calls compare by the tools' records when `tools` (the registry) is given, as the benchmark's replay does
    (documented defaults such as `numOfRows=10`, auth parameters); else by the offered function specs, whose
    schemas state types but no defaults beyond the first page."""

    def __init__(
        self, records: Sequence[Trajectory], *, budget: Budget = BUDGET, tools: dict[str, ToolRecord] | None = None
    ) -> None:
        self.budget = budget
        self.tools = tools or {}
        self.by_record: dict[str, Recordings[Recorded]] = {}
        self.shared: Recordings[Recorded] = Recordings()
        self.specs: dict[str, dict[str, Any]] = {}
        self.record_specs: dict[str, dict[str, dict[str, Any]]] = {}
        for r in records:
            own = self.by_record.setdefault(r.id, Recordings())
            specs = self.record_specs.setdefault(r.id, {t["function"]["name"]: t for t in r.tools})
            self.specs.update(specs)
            for s in r.steps:
                resp = s.response
                # trimmed rows serve other pages only when they are the received rows in order
                whole = resp.shown == list(range(len(resp.items)))
                listing = Listing(list(resp.items), resp.first, empty=not resp.items) if whole else None
                for book in (own, self.shared):
                    book.add(s.tool, self._described(r.id, s.tool), s.arguments, (resp, specs.get(s.tool)), listing)

    def _described(self, trajectory_id: str, name: str) -> ToolRecord | dict[str, Any] | None:
        return self.tools.get(name) or self.record_specs.get(trajectory_id, {}).get(name) or self.specs.get(name)

    def run(self, trajectory_id: str, name: str, args: dict[str, Any], *, now: str = "") -> dict[str, Any]:
        if name in CONVERSION_TOOLS:  # deterministic: computed for whatever the model sends, as live
            ans = conversion_answer(name, {k: v for k, v in args.items() if v is not None})
            spec = self.record_specs.get(trajectory_id, {}).get(name) or self.specs.get(name)
            return view_object(ans.outcome, ans.items, reason=ans.reason, tool=spec, budget=self.budget)
        described = self._described(trajectory_id, name)
        own = self.by_record.get(trajectory_id)
        hit = (own.find(name, described, args) if own is not None else None) or self.shared.find(name, described, args)
        if hit is None:
            return {"error": "replay: no recorded response for these arguments"}
        resp, shown_with = hit.value
        rows, first = (hit.page.rows, hit.page.first) if hit.page is not None else (resp.items, resp.first)
        return view_object(
            "ok", rows, total=resp.rows, first=first, tool=shown_with, budget=self.budget, next_token=resp.next_token
        )


class LiveBackend:
    """Executes calls through the execution layer on a private event loop (trl calls sync tools from its thread)."""

    def __init__(
        self,
        settings: Settings,
        tools: dict[str, ToolRecord],
        apis: dict[str, ApiRecord],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        economy: Economy | None = None,
        timeout_s: float = 60.0,
        budget: Budget = BUDGET,
    ) -> None:
        self.budget = budget
        # the built-in conversion tools are callable even where a graph has not registered them
        self.tools = {**{t.name: t for t in conversion_tools()}, **tools}
        self.timeout_s = timeout_s
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kopa-train-tools", daemon=True)
        self._thread.start()
        economy = economy or economy_for(settings)

        async def make() -> Executor:
            return Executor(settings, economy, apis, transport=transport, run_id="training")

        self.executor = self._submit(make())

    def _submit(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(self.timeout_s)

    def run(self, trajectory_id: str, name: str, args: dict[str, Any], *, now: str = "") -> dict[str, Any]:
        """One call at the rollout's clock (`now`, the record's instant its prompt states; a world that can be asked
        about another instant answers at it, a real API at real time)."""
        tool = self.tools.get(name)
        if tool is None:
            return {"error": f"unknown tool {name}"}
        instant = datetime.fromisoformat(now) if now else None
        kept = {k: v for k, v in args.items() if v is not None}

        async def call() -> CallResult:
            with world_at(instant):  # set inside the loop's task: a context does not cross threads
                return await self.executor.call(tool, kept)

        try:
            result = self._submit(call())
        except FutureTimeout:
            return {"error": "the upstream did not answer in time"}
        return view_object(
            result.outcome,
            [r for r in result.items if isinstance(r, dict)],
            reason=result.reason,
            tool=tool,
            total=result.total,
            first=result.first,
            budget=self.budget,
            next_token=result.next_token,
        )

    def close(self) -> None:
        if self._loop.is_running():
            self._submit(self.executor.aclose())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)


def secret_values(settings: Settings, apis: Sequence[ApiRecord] = ()) -> list[str]:
    """Values of every secret the settings or the APIs name (to scrub from tool results)."""
    names = {settings.verify.key_secret, *(a.auth.secret for a in apis if a.auth.secret)}
    return sorted({v for n in names if n and (v := os.environ.get(n)) and len(v) >= 4}, key=len, reverse=True)


class ToolEnvironment:
    """Base of the generated environments. One instance per rollout; trl calls `reset(**row)` before each."""

    backend: Backend
    max_calls: int
    secrets: Sequence[str]
    counter: Counter[str]

    def __init__(self) -> None:
        self.trajectory_id = ""
        self.now = ""
        self.calls: list[dict[str, Any]] = []

    def reset(self, **row: Any) -> None:
        self.trajectory_id = str(row.get("trajectory_id", ""))
        self.now = str(row.get("now") or "")  # the clock the prompt states: live tools answer at it
        self.calls = []

    def _invoke(self, name: str, args: dict[str, Any]) -> str:
        if len(self.calls) >= self.max_calls:
            out: dict[str, Any] = {"error": f"tool call limit of {self.max_calls} for this task reached"}
        else:
            out = self.backend.run(self.trajectory_id, name, args, now=self.now)
            self.counter[name] += 1
        text = render(out)
        for secret in self.secrets:
            text = text.replace(secret, "***")
        # what the rewards read as executed (training.rewards: only recorded calls and results count)
        self.calls.append({"tool": name, "arguments": args, "ok": "error" not in out, "result": text})
        return text


class BoundTool(dict[str, Any]):
    """One environment instance's tool as trl and transformers see it: the function spec itself (a dict, which
    `apply_chat_template(tools=...)` renders as given, so the prompt shows exactly the spec an SFT row and a benchmark
    episode show) that is also callable (trl's tool loop calls it with the model's arguments)."""

    __name__: str

    def __init__(self, spec: dict[str, Any], env: ToolEnvironment) -> None:
        super().__init__(spec)
        self.__name__ = str(spec["function"]["name"])
        self._env = env

    def __call__(self, **kwargs: Any) -> str:
        return self._env._invoke(self.__name__, kwargs)


class ToolMethod:
    """A tool as an environment class attribute. trl lists an environment's tools as the class's functions
    (`inspect.getmembers(cls, inspect.isfunction)`) and then reads them from the instance: on the class this is a
    plain function (so it is listed), on an instance a `BoundTool` (so the prompt renders the spec, not a schema
    re-derived from a signature and docstring, which drops `pattern`, `format`, examples and nested schemas)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        fn = spec.get("function") or {}
        name = fn.get("name")
        if spec.get("type") != "function" or not isinstance(name, str) or not name:
            raise ValueError(f"not a function spec with a name: {str(spec)[:120]}")
        if not isinstance(fn.get("parameters", {}), dict):
            raise ValueError(f"tool {name}: parameters must be a JSON schema object")
        self.spec = spec
        self.name = name

        def tool(env: ToolEnvironment, **kwargs: Any) -> str:
            return env._invoke(name, kwargs)

        tool.__name__ = tool.__qualname__ = name
        tool.__doc__ = str(fn.get("description") or name)
        self.function = tool

    def __get__(self, env: ToolEnvironment | None, owner: type | None = None) -> Any:
        return self.function if env is None else BoundTool(self.spec, env)


def environment_factories(
    records: Sequence[Trajectory], backend: Backend, *, max_calls: int = 6, secrets: Sequence[str] = ()
) -> tuple[dict[str, type[ToolEnvironment]], Counter[str]]:
    """One environment class per distinct set of offered tools, keyed like the dataset's `environment` column,
    and the shared counter of executed calls per tool (for the run's tool-call frequency)."""
    counter: Counter[str] = Counter()
    classes: dict[str, type[ToolEnvironment]] = {}
    for r in records:
        key = toolset_key(r)
        if key in classes:
            continue
        methods = {m.name: m for m in map(ToolMethod, r.tools)}
        bad = [n for n in methods if n.startswith("_") or n in ("reset", "get_reward")]
        if bad:
            raise ValueError(f"tool names cannot be used as environment methods: {bad}")
        classes[key] = type(
            f"Env_{key}",
            (ToolEnvironment,),
            {**methods, "backend": backend, "max_calls": max_calls, "secrets": tuple(secrets), "counter": counter},
        )
    return classes, counter
