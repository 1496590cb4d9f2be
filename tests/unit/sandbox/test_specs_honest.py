"""Honest specs: every sandbox operation, called with arguments that follow its function spec as the model sees it
(graph/specs.function_spec: types, item types, enums, patterns, formats), gets a data answer. A value the spec does not
give (a code, a name) is the document's own example for that parameter, and it must fit the spec the model reads: a
spec that says one shape while only another works (nts_validate's `businesses` once said "array of strings") fails
here, and the fix belongs in the document or the spec, not in this test."""

from __future__ import annotations

import asyncio
import json
from datetime import date, timedelta
from typing import Any

import jsonschema
import pytest

from bench.environment import catalog_registry
from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.conversions import TOOL_NAMES as CONVERSION_TOOLS
from graph.models import ToolRecord
from graph.specs import function_spec
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode

SETTINGS, TRANSPORT = sandbox_mode(Settings())
TOOLS, APIS, _ = catalog_registry(SETTINGS, shipped_documents().values())
NOW = SETTINGS.verify.now[:10].replace("-", "")
YESTERDAY = (date.fromisoformat(SETTINGS.verify.now[:10]) - timedelta(days=1)).strftime("%Y%m%d")
#: Words of a spec that say the data ends the day before (a model then asks for yesterday, not today).
UNTIL_YESTERDAY = ("전날", "어제", "전일")


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    return value is not None and jsonschema.Draft202012Validator(schema).is_valid(value)


def value_for(tool: ToolRecord, name: str, schema: dict[str, Any]) -> Any:
    """A value for one parameter from what the spec says (an enum's first value; a date format: the clock's day, or
    yesterday where the spec says the data ends the day before), else the document's example when it fits the
    spec."""
    if schema.get("enum"):
        return schema["enum"][0]
    fmt = schema.get("format")
    text = json.dumps(function_spec(tool), ensure_ascii=False)
    day = YESTERDAY if any(w in text for w in UNTIL_YESTERDAY) else NOW
    if fmt == "yyyymmdd":
        return day
    if fmt == "yyyymm":
        return day[:6]
    example = next((p.example for p in tool.params if p.name == name), None)
    if _fits(example, schema):
        return example
    if schema.get("type") == "array" and _fits([example], schema):
        return [example]
    raise AssertionError(
        f"{tool.name}.{name}: the spec the model sees ({schema}) admits neither the document's "
        f"example {example!r} nor any value it names"
    )


def arguments(tool: ToolRecord) -> dict[str, Any]:
    params = function_spec(tool)["function"]["parameters"]
    props: dict[str, Any] = params.get("properties") or {}
    args = {n: value_for(tool, n, props[n]) for n in params.get("required") or []}
    jsonschema.validate(args, params)
    return args


@pytest.mark.parametrize("name", sorted(n for n in TOOLS if n not in CONVERSION_TOOLS))
def test_every_operation_answers_data_to_arguments_built_from_its_spec(name: str) -> None:
    tool = TOOLS[name]
    args = arguments(tool)

    async def go() -> Any:
        ex = Executor(SETTINGS, MemoryEconomy(), APIS, transport=TRANSPORT)
        try:
            return await ex.call(tool, args)
        finally:
            await ex.aclose()

    result = asyncio.run(go())
    assert result.outcome == "ok" and result.items, (
        f"{name}({args}) -> {result.outcome} {result.status} {result.reason}"
    )


def test_nts_validate_documents_the_object_form_it_takes() -> None:
    spec = function_spec(TOOLS["nts_validate"])["function"]["parameters"]["properties"]["businesses"]
    assert spec["items"]["type"] == "object"
    assert all(k in spec["description"] for k in ("b_no", "start_dt", "p_nm"))
