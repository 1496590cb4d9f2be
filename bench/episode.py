"""One KOPA-Bench episode: the user turn(s), up to N model turns per user turn, parallel tool calls executed
through a backend (live or replay), malformed and unknown calls answered with an error tool message as a real
runtime would, tool results rendered by the one view (`execution.view`, the same text synthesis and training
show), and every turn recorded.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from bench.agents import Agent, AgentReply, EpisodeContext, ToolCall
from bench.backends import Backend
from bench.records import (
    CallRecord,
    CanonicalEpisode,
    ChatMessage,
    EpisodeRecord,
    FirstReply,
    Tokens,
    TurnRecord,
)
from bench.tasks import Task
from execution.canonical import canonical_call
from execution.result import CallResult, Outcome
from execution.seeds import KST
from execution.view import ToolLike, tool_view, visible
from graph.models import ToolRecord
from graph.specs import function_spec
from synthesis.formats import system_text

DEFAULT_MAX_TURNS = 8


def system_prompt(now: datetime) -> str:
    """The one system prompt (`synthesis.export.system_text`): training rows state their clock the same way."""
    return system_text(now if now.tzinfo else now.replace(tzinfo=KST))


@dataclass(frozen=True)
class Offered:
    """The function specs offered in a task and which of them are distractors."""

    specs: list[dict[str, Any]]
    distractors: list[str]


def offered_tools(task: Task, registry: dict[str, ToolRecord]) -> Offered:
    """The function specs offered in a task (named subset plus seeded distractors, or the whole registry)."""
    if "*" in task.tools.offered:
        names = sorted(registry)
        distractors: list[str] = []
    else:
        names = [n for n in dict.fromkeys(task.tools.offered) if n in registry]
        rnd = random.Random(task.id)
        others = sorted(n for n in registry if n not in names)
        distractors = rnd.sample(others, min(task.tools.distractors, len(others)))
        names = [*names, *distractors]
        rnd.shuffle(names)
    return Offered([function_spec(registry[n]) for n in names], distractors)


def tool_message(obs: CallResult, tool: ToolLike = None) -> str:
    """What the model reads back: the one view of the result (`execution.view`), with the tool's narrowing note."""
    return tool_view(
        obs.outcome,
        obs.items,
        reason=obs.reason,
        tool=tool,
        total=obs.total,
        first=obs.first,
        next_token=obs.next_token,
    )


def _assistant_message(reply: AgentReply, calls: list[ToolCall]) -> ChatMessage:
    msg: ChatMessage = {"role": "assistant", "content": reply.content or ""}
    if calls:
        msg["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": json.dumps(c.arguments, ensure_ascii=False) if c.arguments is not None else c.raw,
                },
            }
            for c in calls
        ]
    return msg


@dataclass
class _Tally:
    """What an episode accumulates over its turns (the record's behaviour fields)."""

    turns: list[TurnRecord] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    status: str = "answered"
    error: str = ""
    final: str = ""
    first_reply: FirstReply | None = None
    model_ms: float = 0.0
    tokens: Tokens = field(default_factory=lambda: Tokens(prompt=0, completion=0))
    seq: int = 0


async def run_episode(
    task: Task,
    agent: Agent,
    backend: Backend,
    registry: dict[str, ToolRecord],
    *,
    now: datetime,
    trial: int = 0,
    max_turns: int = DEFAULT_MAX_TURNS,
) -> EpisodeRecord:
    """Play one episode and return its record (JSON-ready). Never raises for anything the model does."""
    started = time.perf_counter()
    tools = offered_tools(task, registry)
    offered = {s["function"]["name"] for s in tools.specs}
    messages: list[ChatMessage] = [{"role": "system", "content": system_prompt(now)}]
    ctx = EpisodeContext(task=task, messages=messages, tools=tools.specs, now=now)
    tally = _Tally()
    for ui, user_text in enumerate(task.turns):
        messages.append({"role": "user", "content": user_text})
        ctx.user_turn = ui
        answered = await _user_turn(agent, backend, registry, ctx, messages, offered, tally, ui, max_turns)
        if tally.status != "answered":
            break
        if not answered:
            tally.status, tally.error = "loop", f"no final answer after {max_turns} model turns"
            break
    harness_ms = (time.perf_counter() - started) * 1000 - tally.model_ms
    return _episode_record(task, agent, backend, ctx, tally, offered, tools.distractors, trial, harness_ms)


async def _user_turn(
    agent: Agent,
    backend: Backend,
    registry: dict[str, ToolRecord],
    ctx: EpisodeContext,
    messages: list[ChatMessage],
    offered: set[str],
    tally: _Tally,
    ui: int,
    max_turns: int,
) -> bool:
    """Up to `max_turns` model turns for user turn `ui`; True once the model answers without calling a tool."""
    for mt in range(max_turns):
        reply = await agent.reply(ctx)
        turn = _record_turn(tally, reply, ui, mt)
        if reply.error:
            turn["error"] = reply.error
            tally.status, tally.error = "agent_error", reply.error
            return False
        batch = _unique_ids(reply.tool_calls, ctx, tally)
        turn["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments, "raw": c.raw, "error": c.error} for c in batch
        ]
        if not batch:
            tally.final = reply.content
            messages.append({"role": "assistant", "content": reply.content or ""})
            if tally.first_reply is None:
                tally.first_reply = {"user_turn": ui, "content": reply.content, "calls_before": len(tally.calls)}
            return True
        if tally.first_reply is None and ui == 0:
            tally.first_reply = {
                "user_turn": ui,
                "content": reply.content,
                "calls_before": len(tally.calls) + len(batch),
            }
        messages.append(_assistant_message(reply, batch))
        observations = await asyncio.gather(*(_execute(c, offered, backend) for c in batch))
        for c, obs in zip(batch, observations, strict=True):
            ctx.observations[c.id] = obs
            content = tool_message(obs, registry.get(c.name))
            messages.append({"role": "tool", "tool_call_id": c.id, "name": c.name, "content": content})
            _record_call(tally, turn, c, obs, content, registry, offered, ui)
    return False


def _record_turn(tally: _Tally, reply: AgentReply, ui: int, mt: int) -> TurnRecord:
    """Count the reply's time and tokens and append its (still empty) turn record."""
    tally.model_ms += reply.latency_ms
    tally.tokens["prompt"] += reply.prompt_tokens
    tally.tokens["completion"] += reply.completion_tokens
    turn: TurnRecord = {
        "user_turn": ui,
        "model_turn": mt,
        "content": reply.content,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "latency_ms": round(reply.latency_ms, 1),
        "tool_calls": [],
        "results": [],
    }
    tally.turns.append(turn)
    return turn


def _unique_ids(tool_calls: list[ToolCall], ctx: EpisodeContext, tally: _Tally) -> list[ToolCall]:
    """The reply's calls with ids unique within the episode, whatever the model sent."""
    batch: list[ToolCall] = []
    for c in tool_calls:
        tally.seq += 1
        cid = (
            c.id if c.id and c.id not in ctx.observations and all(b.id != c.id for b in batch) else f"call_{tally.seq}"
        )
        batch.append(ToolCall(cid, c.name, c.arguments, c.raw, c.error))
    return batch


def _record_call(
    tally: _Tally,
    turn: TurnRecord,
    c: ToolCall,
    obs: CallResult,
    content: str,
    registry: dict[str, ToolRecord],
    offered: set[str],
    ui: int,
) -> None:
    """Append one executed call to its turn's results and to the episode's calls."""
    turn["results"].append(
        {
            "id": c.id,
            "tool": c.name,
            "outcome": obs.outcome,
            "rows": len(obs.items),
            "miss": obs.miss,
            "content": content,
        }
    )
    tally.calls.append(
        {
            "id": c.id,
            "turn": len(tally.turns) - 1,
            "user_turn": ui,
            "tool": c.name,
            "args": canonical_call(None, c.arguments) if c.arguments is not None else None,
            "valid": not c.error and c.name in offered,
            "error": c.error,
            "outcome": obs.outcome,
            "rows": len(obs.items),
            "miss": obs.miss,
            "seen": visible(obs.items, tool=registry.get(c.name)) if obs.ok else [],
        }
    )


def _episode_record(
    task: Task,
    agent: Agent,
    backend: Backend,
    ctx: EpisodeContext,
    tally: _Tally,
    offered: set[str],
    distractors: list[str],
    trial: int,
    harness_ms: float,
) -> EpisodeRecord:
    return {
        "task": task.id,
        "category": task.category,
        "trial": trial,
        "agent": agent.name,
        "mode": backend.mode,
        "status": tally.status,
        "error": tally.error,
        "final_answer": tally.final,
        "first_reply": tally.first_reply,
        "offered": sorted(offered),
        "distractors": distractors,
        "turns": tally.turns,
        "calls": tally.calls,
        "replay_misses": sum(1 for c in tally.calls if c["miss"]),
        "tokens": tally.tokens,
        "agent_notes": {k: v for k, v in ctx.scratch.items() if isinstance(v, str)},
        "model_ms": round(tally.model_ms, 1),
        "harness_ms": round(max(0.0, harness_ms), 2),
    }


async def _execute(call: ToolCall, offered: set[str], backend: Backend) -> CallResult:
    if call.error or call.arguments is None:
        return CallResult(Outcome.MALFORMED, reason=f"malformed tool call: {call.error or 'unreadable arguments'}")
    if call.name not in offered:
        return CallResult(Outcome.UNKNOWN_TOOL, reason=f"unknown tool {call.name!r}: call one of the offered tools")
    try:
        return await backend.call(call.name, call.arguments)
    except Exception as exc:  # an upstream or backend failure is an error the model reads, never a crash
        return CallResult(Outcome.ERROR, reason=f"{type(exc).__name__}: the call failed")


#: Fields of an episode that depend on time, not on behaviour (left out when comparing live and replay).
TIMING_FIELDS = ("model_ms", "harness_ms", "mode")


def canonical_episode(ep: EpisodeRecord) -> CanonicalEpisode:
    """The episode without what depends on time (`TIMING_FIELDS` and each turn's latency)."""
    out = {k: v for k, v in ep.items() if k not in TIMING_FIELDS}
    out["turns"] = [{k: v for k, v in t.items() if k != "latency_ms"} for t in ep["turns"]]
    return cast(CanonicalEpisode, out)


__all__ = ["DEFAULT_MAX_TURNS", "canonical_episode", "offered_tools", "run_episode", "tool_message"]
