"""Hostile arguments (NaN, 5,000-digit integers, the pole, lone surrogates, 100 kB strings, lists where numbers go)
get `invalid` and what to fix from the conversion tools (core/conversions.py, graph/conversions.py) and the executor
(execution/executor.py argument_problem), never an exception; the executor refuses them before any quota or rate
limit is taken."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import pytest

from core.conversions import ConversionError, convert_rows, from_kma_grid_rows, to_kma_grid_rows
from core.geo import kma_grid_to_wgs84, wgs84_to_kma_grid
from core.settings import Settings
from execution.executor import MAX_ARGUMENT_BYTES, Executor, argument_problem
from execution.limits import MemoryEconomy
from graph.conversions import CONVERT, FROM_KMA_GRID, TO_KMA_GRID, answer, conversion_tools
from graph.models import RegistrationMeta
from graph.openapi import parse_document
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode

DOCS = shipped_documents()


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text")

    def __repr__(self) -> str:
        raise ValueError("no text")


#: What a model, a replayed recording or a fuzzer may put where a number or a coordinate system goes.
HOSTILE = [
    None,
    True,
    False,
    [],
    {},
    [126.9, 37.5],
    {"value": 126.9},
    (1, 2),
    {1, 2},
    math.nan,
    math.inf,
    -math.inf,
    "nan",
    "inf",
    "-Infinity",
    "1e400",
    "-1e400",
    10**309,
    -(10**309),
    10**5000,
    "9" * 400,
    "1" * 100_000,
    " " * 100_000,
    "\ud800",
    "12\udfff",
    "126.9\ud83d",
    "１２６.９",
    "126,978",
    "0x7e",
    "1_26",
    b"126.9",
    1e308,
    -1e308,
    5e-324,
    "",
    "WGS84" * 20_000,
    Unprintable(),
]
#: Points that are numbers but no place the projections can answer for.
EDGES = [
    (0, -90),
    (126.9, -90),
    (0, 90),
    (180, -90),
    (-180, 90),
    (126.9, -89.9999999999),
    (1e308, 1e308),
    (-1e308, 1e308),
    (1e300, -1e300),
    (5e15, -5e15),
]
TOOLS: dict[str, dict[str, Any]] = {
    TO_KMA_GRID: {"x": 126.9779692, "y": 37.5662952, "crs": "WGS84"},
    CONVERT: {"x": 126.9779692, "y": 37.5662952, "from_crs": "WGS84", "to_crs": "TM"},
    FROM_KMA_GRID: {"nx": 60, "ny": 127},
}
HANDLERS: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
    TO_KMA_GRID: to_kma_grid_rows,
    CONVERT: convert_rows,
    FROM_KMA_GRID: from_kma_grid_rows,
}


def _hostile_calls() -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    for name, good in TOOLS.items():
        for param in good:
            calls.extend((name, {**good, param: value}) for value in HOSTILE)
    for x, y in EDGES:
        for crs in ("WGS84", "UTMK", "TM"):
            calls.append((TO_KMA_GRID, {"x": x, "y": y, "crs": crs}))
            calls.extend((CONVERT, {"x": x, "y": y, "from_crs": crs, "to_crs": dst}) for dst in ("WGS84", "UTMK", "TM"))
    calls.extend(
        (FROM_KMA_GRID, {"nx": nx, "ny": ny})
        for nx, ny in [(10**400, 1), (1e308, 1), (43, 136), (0, 0), (-1, -1), (149.0, 253.0)]
    )
    calls.extend(
        [
            (TO_KMA_GRID, {**TOOLS[TO_KMA_GRID], "\ud800": 1}),
            (TO_KMA_GRID, {**TOOLS[TO_KMA_GRID], "z" * 10_000: 1}),
            (TO_KMA_GRID, {**TOOLS[TO_KMA_GRID], **{f"p{i}": i for i in range(1000)}}),
            (CONVERT, {}),
        ]
    )
    return calls


def _reason_ok(reason: str) -> bool:
    reason.encode("utf-8")  # no lone surrogate in what a model or a log reads
    return 0 < len(reason) <= 600


def test_hostile_arguments_get_answers_never_exceptions() -> None:
    calls = _hostile_calls()
    assert len(calls) >= 50
    outcomes: dict[str, int] = {}
    for name, args in calls:
        ans = answer(name, args)  # raises nothing
        outcomes[ans.outcome] = outcomes.get(ans.outcome, 0) + 1
        assert ans.outcome in ("ok", "invalid"), (name, ans)
        if ans.outcome == "invalid":
            assert ans.status == 400 and ans.code and ans.items == [] and _reason_ok(ans.reason), (name, ans)
        else:
            assert all(isinstance(v, str) or math.isfinite(v) for row in ans.items for v in row.values()), ans
        try:  # the handlers themselves raise nothing but ConversionError
            HANDLERS[name](args)
        except ConversionError as exc:
            assert _reason_ok(exc.message) and exc.code
    assert outcomes.get("invalid", 0) >= 50, outcomes
    assert answer(TO_KMA_GRID, [1, 2]).code == "bad_arguments"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args,code,words",
    [
        ({"x": 0, "y": -90, "crs": "WGS84"}, "outside_grid", "outside the KMA forecast grid"),
        ({"x": 10**309, "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a finite number"),
        ({"x": 126.9, "y": math.nan, "crs": "WGS84"}, "not_a_number", "y must be a finite number"),
        ({"x": [126.9], "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"x": None, "y": 37.5, "crs": "WGS84"}, "missing_parameter", "x is required"),
        ({"x": "1" * 100_000, "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"x": "12\udfff", "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"x": 126.9, "y": 37.5, "crs": ["WGS84"]}, "bad_crs", "crs must be one of WGS84, UTMK, TM"),
        ({"x": 126.9, "y": 37.5, "crs": 10**5000}, "bad_crs", "crs must be one of WGS84, UTMK, TM"),
    ],
)
def test_hostile_arguments_say_what_to_fix(args: dict[str, Any], code: str, words: str) -> None:
    ans = answer(TO_KMA_GRID, args)
    assert (ans.outcome, ans.code) == ("invalid", code), ans
    assert words in ans.reason and _reason_ok(ans.reason), ans.reason


def test_the_grid_projection_refuses_what_it_cannot_place() -> None:
    with pytest.raises(ValueError, match="no place"):
        wgs84_to_kma_grid(-90, 126.9)
    with pytest.raises(ValueError, match="no place"):
        wgs84_to_kma_grid(math.nan, 126.9)
    assert wgs84_to_kma_grid(37.5665, 126.9780) == (60, 127)  # unchanged where it can
    assert kma_grid_to_wgs84(60, 127) == pytest.approx((37.5, 126.97), abs=0.1)


class Spy(MemoryEconomy):
    """Counts what the executor takes from the economy: quota and rate-limit tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.taken: list[str] = []

    def take_quota(self, key: str, limit: int | None) -> bool:
        self.taken.append(f"quota {key}")
        return super().take_quota(key, limit)

    async def acquire(self, api: str, rate_per_s: float | None) -> None:
        self.taken.append(f"rate {api}")
        await super().acquire(api, rate_per_s)


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


EXECUTOR_HOSTILE: list[Any] = [
    "x" * 70_000,
    "가" * 30_000,
    "가" * 20_000,  # 60 kB of text: 180 kB once percent-encoded in the URL, over httpx's limit
    "\ud800",
    "a\udfffb",
    ["ok", "\ud800"],
    {"k": "\ud800"},
    {"\udc80": "v"},
    math.nan,
    math.inf,
    -math.inf,
    10**5000,
    10**400,
    _nested(100),
    _nested(5000),
    ["x" * 1000] * 100,
    b"bytes",
    Unprintable(),
    object(),
    {1: "non-text key"},
]


def test_the_executor_refuses_hostile_arguments_before_any_quota_or_limit() -> None:
    settings, sandbox = sandbox_mode(Settings(verify=Settings().verify.model_copy(update={"default_rate_per_s": 50})))
    api, tools = parse_document(DOCS["StanReginCd"], RegistrationMeta(api_id="stan"))
    for t in tools:
        t.api_id = api.id
    api.daily_quota = 1000
    tool = tools[0]
    name = "locatadd_nm"
    header_tool = tool.model_copy(
        update={"params": [p.model_copy(update={"location": "header"}) if p.name == name else p for p in tool.params]}
    )
    locals_ = {t.name: t for t in conversion_tools()}
    spy = Spy()
    calls: list[tuple[Any, dict[str, Any]]] = []
    for value in EXECUTOR_HOSTILE:
        calls.append((tool, {name: value}))
        calls.append((locals_[TO_KMA_GRID], {"x": value, "y": 37.5, "crs": "WGS84"}))
    calls.append((tool, {f"p{i}": "y" * 4000 for i in range(20)}))  # each small, 80 kB together
    calls.append((tool, {"\ud800": "1"}))
    calls.append((header_tool, {name: "서울특별시"}))  # a header that is not Latin-1 makes no request
    calls.append((header_tool, {name: "a\r\nX-Injected: 1"}))

    async def go() -> list[Any]:
        executor = Executor(settings, spy, {"stan": api}, transport=sandbox, run_id="hostile")
        try:
            return [await executor.call(t, args) for t, args in calls]
        finally:
            await executor.aclose()

    results = asyncio.run(go())  # raises nothing
    assert len(results) >= 40
    assert all(r.outcome == "invalid" and _reason_ok(r.reason) for r in results), [
        (r.outcome, r.reason[:80]) for r in results if r.outcome != "invalid"
    ]
    assert spy.taken == [], spy.taken  # no quota, no rate-limit token for any of them
    assert not spy.calls("hostile").get("calls"), spy.calls("hostile")
    sized = [r.reason for r in results[:2]]
    assert f"{MAX_ARGUMENT_BYTES:,}" in sized[0] and "lone surrogate" in results[6].reason, sized

    async def fine() -> Any:
        executor = Executor(settings, spy, {"stan": api}, transport=sandbox, run_id="fine")
        try:
            return await executor.call(tool, {name: "서울특별시"})
        finally:
            await executor.aclose()

    assert asyncio.run(fine()).outcome in ("ok", "empty")  # a plain call still goes, and takes its quota once
    assert [t for t in spy.taken if t.startswith("quota")] == ["quota KOPA_SERVICE_KEY:stan"]


def test_argument_problem_accepts_what_apis_take() -> None:
    for args in (
        {},
        {"q": "서울특별시 종로구", "n": 10, "f": 1.5, "b": True, "none": None},
        {"ids": ["a", "b", 3], "body": {"statements": [{"statement": "x"}]}},
        {"big": "x" * (MAX_ARGUMENT_BYTES - 100)},
        {"num": 10**300},
    ):
        assert argument_problem(args) is None, args
    assert argument_problem(["not", "a", "dict"])
