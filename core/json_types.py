"""JSON values as mypy checks them: a document read or written as JSON whose shape is open (a response row, a
schema's example, a tool call's arguments). Records with fixed keys are dataclasses or TypedDicts instead."""

from __future__ import annotations

from typing import TypeAlias

JsonScalar: TypeAlias = str | int | float | bool | None
JsonValue: TypeAlias = "JsonScalar | list[JsonValue] | dict[str, JsonValue]"
#: A JSON object: its members are JSON values, so a reader narrows (`isinstance`) before using one.
JsonObject: TypeAlias = "dict[str, JsonValue]"
