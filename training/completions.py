"""A GRPO completion as the rewards read it: the calls the model made (tool-call blocks in any family's format,
or trl's tool messages) with the results the environment returned for those it executed, and the final answer;
and the reward functions' shared reading of trl's keyword columns."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from execution.canonical import call_key

Completion = list[dict[str, Any]] | str

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


@dataclass
class Call:
    name: str
    arguments: dict[str, Any]
    result: str | None = None
    #: tool results seen before this call (for provenance)
    seen_before: list[tuple[str, str]] = field(default_factory=list)

    @property
    def executed(self) -> bool:
        return self.result is not None

    @property
    def failed(self) -> bool:
        if self.result is None:
            return True
        try:
            doc = json.loads(self.result)
        except ValueError:
            return self.result.startswith("{'error'")
        return isinstance(doc, dict) and "error" in doc


@dataclass
class Parsed:
    #: every call the model made, executed or not
    attempts: list[Call]
    malformed: int
    answer: str

    @property
    def calls(self) -> list[Call]:
        """The executed calls (a tool result came back)."""
        return [c for c in self.attempts if c.executed]

    @property
    def results(self) -> list[tuple[str, str]]:
        """(tool, result text) of every executed call that did not fail."""
        return [(c.name, c.result or "") for c in self.calls if not c.failed]


def _parse_block(text: str) -> tuple[str, dict[str, Any]] | None:
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        return None
    args = doc.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    return (doc["name"], args) if isinstance(args, dict) else None


def parse_completion(completion: Completion, environment: Any = None) -> Parsed:
    """Calls (with their results and what was seen before them), malformed call attempts and the final answer.
    With the rollout's `environment`, a call counts as executed only when the environment recorded it."""
    if isinstance(completion, str):
        completion = [{"role": "assistant", "content": completion}]
    calls: list[Call] = []
    malformed = 0
    answer = ""
    seen: list[tuple[str, str]] = []
    pending: list[Call] = []
    for msg in completion:
        role = msg.get("role")
        if role == "assistant":
            content = str(msg.get("content") or "")
            for tc in msg.get("tool_calls") or []:
                fn = tc.get("function", tc)
                args = fn.get("arguments", {})
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        malformed += 1
                        continue
                call = Call(str(fn.get("name", "")), args if isinstance(args, dict) else {}, seen_before=list(seen))
                calls.append(call)
                pending.append(call)
            for block in _BLOCK.findall(content):
                got = _parse_block(block)
                if got is None:
                    malformed += 1
                else:  # a text-only completion: a call nobody executed
                    calls.append(Call(got[0], got[1], seen_before=list(seen)))
            malformed += content.count("<tool_call>") - len(_BLOCK.findall(content))
            text = _BLOCK.sub("", content).replace("<tool_call>", "").strip()
            if not msg.get("tool_calls"):
                answer = text
        elif role == "tool":
            content = str(msg.get("content") or "")
            match = next((c for c in pending if c.name == msg.get("name")), pending[0] if pending else None)
            if match is not None:
                match.result = content
                pending.remove(match)
            seen.append((str(msg.get("name", "")), content))
    if environment is not None:
        _confirm(calls, list(getattr(environment, "calls", []) or []))
    return Parsed(calls, malformed, answer)


def key_of(call: Call, schemas: dict[str, Any] | None = None) -> str:
    """A call's key: the one canonical call (`execution.canonical.call_key`), by the offered schema when known."""
    return call_key(call.name, (schemas or {}).get(call.name), call.arguments)


def _confirm(calls: list[Call], recorded: list[dict[str, Any]]) -> None:
    """Keep a result only for calls the environment executed (same tool, the same canonical call), in order."""
    left = list(recorded)
    for call in calls:
        key = key_of(call)
        hit = next(
            (r for r in left if key_of(Call(str(r.get("tool", "")), dict(r.get("arguments") or {}))) == key), None
        )
        if hit is None:
            call.result = None
            continue
        left.remove(hit)
        if hit.get("result") is not None:
            call.result = str(hit["result"])


def parsed(completions: list[Completion], kwargs: dict[str, Any]) -> list[Parsed]:
    envs = kwargs.get("environments")
    envs = list(envs) if envs is not None else [None] * len(completions)
    return [parse_completion(c, e) for c, e in zip(completions, envs, strict=True)]


def column(kwargs: dict[str, Any], name: str, n: int) -> list[Any]:
    values = kwargs.get(name)
    if values is None:
        return [None] * n
    return list(values)


def loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
