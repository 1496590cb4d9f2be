"""Inputs for calling a tool without a user: configured seeds (with dynamic dates), spec examples, defaults and
enums. Outputs of verified upstream links add more (see verification.engine)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from core.clock import world_now
from core.settings import Settings
from graph import envelopes
from graph.models import ParamRecord, ToolRecord

KST = timezone(timedelta(hours=9))
#: The page size a sampling call asks for, where a tool has a portal's page size: more rows, more distinct values.
SAMPLE_ROWS = "30"


class _SampleSizes(Mapping[str, str]):
    """Page-size parameter name (any case) -> `SAMPLE_ROWS`, for the sizes of the portals' page pairs
    (`graph.envelopes.portal_size`, read at each look-up, so a pair added there counts here)."""

    def __getitem__(self, name: str) -> str:
        if envelopes.portal_size(name):
            return SAMPLE_ROWS
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(p.size for p in envelopes.PAGE_PAIRS if not p.generic))

    def __len__(self) -> int:
        return sum(1 for _ in self)


PAGE_SIZE_PARAMS: Mapping[str, str] = _SampleSizes()
_DYNAMIC = re.compile(r"\{(now|today)([+-]\d+[dhm])?:([^}]+)\}")
_VILAGE = (2, 5, 8, 11, 14, 17, 20, 23)


def now(settings: Settings) -> datetime:
    """The clock of the current conversation: the instant synthesis set for it (`core.clock.world_at`), else the
    configured `verify.now`, else the machine clock, in KST."""
    instant = world_now()
    if instant is not None:
        return instant.astimezone(KST)
    if settings.verify.now:
        dt = datetime.fromisoformat(settings.verify.now)
        return dt if dt.tzinfo else dt.replace(tzinfo=KST)
    return datetime.now(KST)


def kma_base(kind: str, at: datetime) -> tuple[str, str]:
    """Latest issue (base_date, base_time) available at `at` for a KMA short-term product."""
    if kind == "ncst":
        t = at - timedelta(minutes=40)
        return t.strftime("%Y%m%d"), t.strftime("%H00")
    if kind == "fcst":
        t = at - timedelta(minutes=45)
        return t.strftime("%Y%m%d"), t.strftime("%H30")
    t = at - timedelta(minutes=10)
    hour = max((h for h in _VILAGE if h <= t.hour), default=None)
    if hour is None:
        t -= timedelta(days=1)
        hour = 23
    return t.strftime("%Y%m%d"), f"{hour:02d}00"


def expand(value: str, settings: Settings) -> str:
    """Expand dynamic seeds: {now:%Y%m%d}, {now-1d:%Y%m%d}, {now:kma_vilage_time}..."""

    def repl(m: re.Match[str]) -> str:
        at = now(settings)
        if m.group(2):
            n, unit = int(m.group(2)[:-1]), m.group(2)[-1]
            at += {"d": timedelta(days=n), "h": timedelta(hours=n), "m": timedelta(minutes=n)}[unit]
        fmt = m.group(3)
        if fmt.startswith("kma_"):
            kind, part = fmt[4:].rsplit("_", 1)
            date, time = kma_base(kind, at)
            return date if part == "date" else time
        return at.strftime(fmt)

    return _DYNAMIC.sub(repl, value)


def configured(settings: Settings) -> dict[str, list[str]]:
    if not settings.verify.seeds:
        return {}
    data: dict[str, Any] = json.loads(settings.verify.seeds)
    return {k: [str(x) for x in (v if isinstance(v, list) else [v])] for k, v in data.items()}


def seed_value(p: ParamRecord, settings: Settings, extra: dict[str, list[str]] | None = None) -> Any:
    for source in (extra or {}, configured(settings)):
        if source.get(p.name):
            return expand(source[p.name][0], settings)
    if p.example not in (None, ""):
        return p.example if p.type == "array" and isinstance(p.example, list) else str(p.example)
    if p.default not in (None, ""):
        return str(p.default)
    if p.enum:
        return p.enum[0]
    return None


def seed_args(
    tool: ToolRecord, settings: Settings, *, include_optional: bool = False, extra: dict[str, list[str]] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """(arguments, required parameters nothing could fill)."""
    args: dict[str, Any] = {}
    missing: list[str] = []
    fmt = tool.format_name
    for p in tool.params:
        if p.name == fmt:
            continue
        if (
            not p.required
            and not include_optional
            and p.name not in configured(settings)
            and p.name not in (extra or {})
        ):
            continue
        value = seed_value(p, settings, extra)
        if value is None:
            if p.required:
                missing.append(p.name)
            continue
        args[p.name] = value
    return args, missing


def profile_args(
    tool: ToolRecord, settings: Settings, extra: dict[str, list[str]] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Arguments for the one sampling call of a tool: seeds, and a larger page for more distinct values."""
    args, missing = seed_args(tool, settings, extra=extra)
    for p in tool.params:
        if p.name in PAGE_SIZE_PARAMS:
            args[p.name] = PAGE_SIZE_PARAMS[p.name]
    return args, missing


# ---------------------------------------------------------------------------------------------- typed values


def _type_of(schema: dict[str, Any]) -> str:
    t = schema.get("type", "string")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    return str(t)


def coerce(value: Any, schema: dict[str, Any] | None) -> Any:
    """A value typed as its JSON Schema says: integers as int, numbers as int/float, booleans, arrays (a scalar
    is wrapped), strings as text. A value that cannot take the type is returned unchanged (validation then
    reports it)."""
    if schema is None or value is None:
        return value
    kind = _type_of(schema)
    try:
        if kind == "integer":
            if isinstance(value, bool):
                return value
            if isinstance(value, int):
                return value
            number = float(str(value).replace(",", "").strip())
            return int(number) if number.is_integer() else value
        if kind == "number":
            if isinstance(value, int | float) and not isinstance(value, bool):
                return value
            text = str(value).replace(",", "").strip()
            number = float(text)
            return int(number) if re.fullmatch(r"-?\d+", text) else number
        if kind == "boolean":
            if isinstance(value, bool):
                return value
            return {"true": True, "false": False, "y": True, "n": False, "1": True, "0": False}.get(
                str(value).strip().lower(), value
            )
        if kind == "array":
            items = value if isinstance(value, list) else [value]
            sub = schema.get("items") if isinstance(schema.get("items"), dict) else None
            return [coerce(v, sub) for v in items]
        if kind == "string":
            if (
                isinstance(value, float)
                and value.is_integer()
                and not schema.get("pattern", "").startswith("^-?\\d+\\.")
            ):
                return str(value)
            return (
                value
                if isinstance(value, str)
                else (json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value))
            )
    except (TypeError, ValueError):
        return value
    return value


def param_schema(tool: ToolRecord, name: str) -> dict[str, Any] | None:
    props = tool.json_schema.get("properties") if isinstance(tool.json_schema, dict) else None
    if isinstance(props, dict) and isinstance(props.get(name), dict):
        return props[name]  # type: ignore[no-any-return]
    return None


# ---------------------------------------------------------------------------------------------- user dates


def user_date(name: str, description: str, settings: Settings, rnd: Any) -> str | None:
    """A date a user would ask about, across the range the API serves, resolved against the clock: months
    (YYYYMM) over the last year, past days (YYYYMMDD) over the last month for period starts and ends."""
    n = name.lower()
    text = description.lower()
    at = now(settings)
    if "ymd" in n and (("yyyymm" in text and "yyyymmdd" not in text) or "년월" in text):
        months = rnd.randint(1, 12)
        y, m = at.year, at.month - months
        while m <= 0:
            y, m = y - 1, m + 12
        return f"{y}{m:02d}"
    if "yyyymmdd" in text or n.endswith(("dt", "date", "de")):
        if n.startswith("end") or "종료" in text:
            return (at - timedelta(days=rnd.randint(1, 3))).strftime("%Y%m%d")
        if n.startswith("start") or "시작" in text:
            return (at - timedelta(days=rnd.randint(7, 28))).strftime("%Y%m%d")
    return None
