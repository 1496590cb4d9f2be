"""The benchmark environment, composed in one place: the catalog's tools registered into a scratch store, the
backend their calls go to (live through the executor, or replayed from a snapshot, optionally recording one), the
benchmark clock, the agent and the tasks a command runs.

The caller chooses the upstream: settings that point the catalog's hosts at it, and a transport for one served in
process (the CLI passes the KOPA sandbox; bench/ never imports it).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench.agents import REFERENCE_AGENTS, Agent, OpenAIChatAgent, TransformersAgent
from bench.backends import LiveBackend, ReplayBackend, Snapshot, SnapshotError
from bench.check import CheckResult, check_tasks
from bench.gold import clock_now
from bench.records import EnvMeta
from bench.run import BenchEnv, BenchError
from bench.tasks import Task, TaskError, check_tools, load_tasks
from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.conversions import register_conversions
from graph.embedded_store import EmbeddedStore
from graph.models import ApiRecord, ToolRecord
from graph.registry import register
from graph.store import all_links

MODES = ("live", "replay")


def catalog_registry(
    settings: Settings, documents: Iterable[dict[str, Any]]
) -> tuple[dict[str, ToolRecord], dict[str, ApiRecord], str]:
    """The documents registered into a scratch embedded store: (tools, apis, graph snapshot id)."""
    with tempfile.TemporaryDirectory(prefix="kopa-bench-") as tmp:
        store = EmbeddedStore(Path(tmp) / "graph.sqlite3")
        for doc in documents:
            register(store, settings, doc)
        register_conversions(store, settings)  # the built-in kopa-convert tools, answered in process
        tools = {t.name: t for t in store.all_tools()}
        apis = {a.id: a for a in store.list_apis(limit=1000)[0]}
        verified = sorted(lk.id for lk in all_links(store, status="verified"))
        store.close()
    raw = json.dumps([sorted(f"{t.name}:{t.spec_hash}" for t in tools.values()), verified])
    return tools, apis, "g_" + hashlib.sha256(raw.encode()).hexdigest()[:12]


@asynccontextmanager
async def open_env(
    settings: Settings,
    documents: Iterable[dict[str, Any]],
    *,
    mode: str = "live",
    transport: httpx.AsyncBaseTransport | None = None,
    upstream: str = "",
    snapshot: Path | None = None,
    record: Path | None = None,
) -> AsyncIterator[BenchEnv]:
    """The benchmark's tools and backend: live through the executor (over `transport`, or the network where
    `settings` point), or replay from `snapshot`. With `record`, a live run writes every definitive response into a
    snapshot when the environment closes. `upstream` names the live upstream in the run's metadata."""
    if mode not in MODES:
        raise BenchError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    tools, apis, graph_snapshot = catalog_registry(settings, documents)
    now = clock_now(settings.verify.now)
    if mode == "replay":
        if snapshot is None:
            raise SnapshotError("replay mode needs --snapshot FILE (record one with a live run and --record)")
        snap = Snapshot.load(snapshot)
        # calls match recordings by the tools' specs
        yield BenchEnv(
            tools, ReplayBackend(snap, tools), now, _meta(f"replay of {snapshot}", graph_snapshot, now, snap.id)
        )
        return
    recorder = Snapshot() if record else None
    async with Executor(settings, MemoryEconomy(), apis, transport=transport) as executor:
        try:
            yield BenchEnv(
                tools, LiveBackend(executor, tools, record=recorder), now, _meta(upstream, graph_snapshot, now)
            )
        finally:
            if recorder is not None and record is not None:
                recorder.save(record)


def _meta(upstream: str, graph_snapshot: str, now: datetime, snapshot: str = "") -> EnvMeta:
    meta: EnvMeta = {
        "upstream": upstream,
        "snapshot": snapshot,
        "graph_snapshot": graph_snapshot,
        "clock": now.isoformat(),
    }
    if not snapshot:
        del meta["snapshot"]
    return meta


def select_tasks(tasks_dir: Path | None, only: str = "") -> list[Task]:
    """The tasks of a folder (default: the shipped ones), narrowed to comma-separated ids or categories."""
    try:
        tasks = load_tasks(tasks_dir)
    except TaskError as exc:
        raise BenchError(exc.detail) from None
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    if wanted:
        tasks = [t for t in tasks if t.id in wanted or t.category in wanted]
    if not tasks:
        raise BenchError(
            f"no tasks in {tasks_dir or 'the shipped task folder'}" + (f" matching {only}" if only else "")
        )
    return tasks


async def validate_tasks(tasks: list[Task], env: BenchEnv) -> tuple[dict[str, CheckResult], list[str]]:
    """`kopa bench check`: (check results of the tasks whose tools exist, one line per task naming a missing tool)."""
    errors = check_tools(tasks, set(env.registry))
    bad = {e.split(": task ")[1].split(":")[0] for e in errors if ": task " in e}
    results = await check_tasks([t for t in tasks if t.id not in bad], env.backend, env.now, env.registry)
    return results, errors


def make_agent(
    agent: str,
    *,
    url: str = "",
    model: str = "",
    model_dir: Path | None = None,
    temperature: float = 0.0,
    top_p: float | None = None,
    max_tokens: int = 1024,
    timeout: float = 120.0,
    seed: int = 0,
    api_key_env: str | None = None,
) -> Agent:
    """A reference agent by name, a model behind an OpenAI-compatible server, or a local transformers model."""
    if agent in REFERENCE_AGENTS:
        return REFERENCE_AGENTS[agent]()
    if agent == "openai":
        if not url or not model:
            raise BenchError("--agent openai needs --url (the server, e.g. http://127.0.0.1:8000/v1) and --model")
        return OpenAIChatAgent(
            url,
            model,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed=seed,
            timeout_s=timeout,
            api_key_env=api_key_env,
        )
    if agent == "transformers":
        if model_dir is None:
            raise BenchError("--agent transformers needs --model-dir (a local transformers model directory)")
        try:
            return TransformersAgent(
                model_dir, max_new_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed
            )
        except FileNotFoundError as exc:
            raise BenchError(str(exc)) from None
    raise BenchError(f"--agent must be one of {', '.join([*REFERENCE_AGENTS, 'openai', 'transformers'])}")
