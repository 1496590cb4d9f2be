"""Sampling calls built from the document: values for a tool's parameters read off its examples, defaults, enums,
descriptions ("예: DT_0012") and date formats ("YYYYMMDD" means today), and the order in which a tool is tried
when it answers "a filter is needed".

Korean public APIs often document every search filter as optional yet refuse a call without one (code 11
NO_MANDATORY_REQUEST_PARAMETERS_ERROR, "…중 하나는 필수", "하나 이상 필요"); others accept no filter and return only
the top level (시도 without a 시도명). So a tool is tried with its required parameters first, then with one
optional filter at a time, each from a value the document gives.
"""

from __future__ import annotations

import re
from typing import Any

from core.settings import Settings
from execution.seeds import configured, expand, now, seed_args, seed_value
from graph import envelopes, meaning, providers
from graph.models import ParamRecord, ToolRecord

_EXAMPLE = re.compile(r"(?:예\s*[:)]|예시\s*[:)]|e\.g\.|ex\)|ex:)\s*([^\s,)]+)", re.IGNORECASE)
_DATE_FORMATS = (("YYYYMMDDHH", "%Y%m%d%H"), ("YYYY-MM-DD", "%Y-%m-%d"), ("YYYYMMDD", "%Y%m%d"), ("YYYYMM", "%Y%m"))
#: A provider's way of saying that some optional filter must be given.
NEEDS_FILTER = meaning.NEEDS_FILTER


def described_example(p: ParamRecord) -> str | None:
    """The example a description gives in words: '관측소 번호 (예: DT_0012)'."""
    m = _EXAMPLE.search(p.description or "")
    if not m:
        return None
    value = m.group(1).strip(".;:'\"")
    return value or None


def date_format(p: ParamRecord) -> str | None:
    """The strftime format a date-typed parameter documents (description, format or pattern), if any."""
    text = f"{p.description} {p.format or ''}".upper()
    for word, fmt in _DATE_FORMATS:
        if word in text.replace(".", ""):
            return fmt
    if (
        p.pattern
        and p.pattern.strip("^$") in (r"[0-9]{8}", r"\d{8}")
        and re.search(r"일자|날짜|date|dt$", f"{p.name} {p.description}", re.IGNORECASE)
    ):
        return "%Y%m%d"
    return None


def doc_value(p: ParamRecord, settings: Settings, extra: dict[str, list[str]] | None = None) -> Any:
    """A value for one parameter from the document (seeds, examples, defaults, enums, described examples, today
    in a documented date format); None when the document gives nothing."""
    value = seed_value(p, settings, extra)
    if value is not None:
        return value
    example = described_example(p)
    if example is not None:
        return example
    fmt = date_format(p)
    if fmt is not None:
        return now(settings).strftime(fmt)
    return None


def required_args(
    tool: ToolRecord, settings: Settings, extra: dict[str, list[str]] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """(arguments for the required parameters, required parameters nothing could fill). Optional filters are left
    out: a verification call must not succeed because of another filter."""
    fmt = tool.format_name
    args: dict[str, Any] = {}
    missing: list[str] = []
    for p in tool.params:
        if p.name == fmt or not p.required:
            continue
        value = doc_value(p, settings, extra)
        if value is None:
            missing.append(p.name)
        else:
            args[p.name] = value
    return args, missing


def filters(tool: ToolRecord) -> list[ParamRecord]:
    """A tool's optional query parameters that narrow its answer: not its format switch, presentation
    (`graph.providers.presentation`) or paging (`graph.envelopes.pages`)."""
    typed = [(p.name, p.type) for p in tool.params]
    return [
        p
        for p in tool.params
        if not p.required
        and p.name != tool.format_name
        and not providers.presentation(p.name)
        and not envelopes.pages(p.name, typed)
        and p.location != "path"
    ]


def says_filter_needed(tool: ToolRecord) -> bool:
    text = f"{tool.summary} {tool.description}".lower()
    return bool(filters(tool)) and not any(p.required for p in tool.params) and any(w in text for w in NEEDS_FILTER)


def refused_for_filter(code: str, reason: str) -> bool:
    """The provider says that a filter (some optional parameter) is needed."""
    return code in providers.NEEDS_FILTER_CODES or any(w in reason.lower() for w in NEEDS_FILTER)


def filter_options(
    tool: ToolRecord, settings: Settings, extra: dict[str, list[str]] | None = None
) -> list[tuple[str, Any]]:
    """(parameter, value) for each optional filter the document (or the run's extra values) can fill."""
    out = []
    for p in filters(tool):
        value = doc_value(p, settings, extra)
        if value is not None:
            out.append((p.name, value))
    return out


def sampling_args(
    tool: ToolRecord, settings: Settings, extra: dict[str, list[str]] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Arguments of the first sampling call: the seeds' own choice (configured optional seeds included), plus the
    document's values for required parameters that seeds leave empty."""
    args, _ = seed_args(tool, settings, extra=extra)
    base, missing = required_args(tool, settings, extra)
    for name, value in base.items():
        args.setdefault(name, value)
    for name, values in configured(settings).items():
        if any(p.name == name for p in tool.params) and name not in args and values:
            args[name] = expand(values[0], settings)
    return args, missing


def narrows(p: ParamRecord) -> bool:
    return meaning.narrows(p.description)
