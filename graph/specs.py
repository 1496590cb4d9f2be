"""The model-facing view of a tool: the OpenAI/trl-style function definition that models, exports and the
benchmark all see."""

from __future__ import annotations

from typing import Any

from graph.models import ToolRecord


def function_spec(tool: ToolRecord) -> dict[str, Any]:
    """The OpenAI/trl-style function definition of a tool."""
    description = tool.summary or tool.description_en
    if tool.description and tool.description != tool.summary:
        description = f"{description}. {tool.description}" if description else tool.description
    return {
        "type": "function",
        "function": {"name": tool.name, "description": description, "parameters": tool.json_schema},
    }
