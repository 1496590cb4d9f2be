"""Date links: dates of one tool's records into the date parameters of another, with the format transform.
Dates alone are no evidence (any date fits any date parameter): see date_links for when one is proposed."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from graph import meaning, transforms
from graph.link_scoring import NON_LINKABLE, link_id
from graph.models import FieldRecord, LinkRecord, ParamRecord, ToolRecord

#: Date links proposed per (source tool, target tool): a record's own dates only.
MAX_DATE_LINKS = 2
#: Source tools proposed per date parameter of a tool that a date alone answers (a calendar by year and month).
MAX_DATE_SOURCES = 12
#: How fine a date format is: a source may feed a parameter of its own granularity or a coarser one (a day gives
#: its month and year), never a finer one (a month is no day).
GRANULARITY = {
    "YYYYMMDDHHMM": 5,
    "YYYY-MM-DD HH:MM": 5,
    "YYYYMMDDHH": 4,
    "YYYYMMDD": 3,
    "YYYY-MM-DD": 3,
    "YYYYMM": 2,
    "YYYY-MM": 2,
    "YYYY": 1,
    "MM": 2,
    "DD": 3,
}


def date_transform(src: str, dst: str) -> transforms.Transform | None:
    """The transform from a date of format `src` to a parameter of format `dst` (a part: YYYY, MM, DD), None
    when the source is coarser than the parameter."""
    if src not in transforms.WHOLE_DATES or dst not in GRANULARITY or GRANULARITY[src] < GRANULARITY[dst]:
        return None
    return dict(transforms.IDENTITY) if src == dst else {"kind": "date", "src": src, "dst": dst}


def _entity_feeds(tools: list[ToolRecord], found: list[LinkRecord]) -> dict[tuple[str, str], set[str]]:
    """(source tool, target tool) -> the required parameters of the target an entity link of `found` feeds."""
    first: dict[tuple[str, str], ParamRecord] = {}
    for t in tools:
        for p in t.params:
            first.setdefault((t.name, p.key()), p)
    required = {k: p.name for k, p in first.items() if p.required}
    feeds: dict[tuple[str, str], set[str]] = defaultdict(set)
    for lk in found:
        name = required.get((lk.target_tool, lk.target_param))
        if name is not None:
            feeds[(lk.source_tool, lk.target_tool)].add(name)
    return feeds


def _dated_fields(
    tools: list[ToolRecord], samples: Mapping[str, list[dict[str, str]]]
) -> dict[str, list[tuple[FieldRecord, str]]]:
    """Each tool's date fields with their whole-date format, read off names, descriptions and observed values."""
    dates_of: dict[str, list[tuple[FieldRecord, str]]] = {}
    for t in tools:
        rows = samples.get(t.name, [])
        dates_of[t.name] = []
        for fld in t.fields:
            values = [str(r.get(fld.name)) for r in rows if r.get(fld.name) not in (None, "")]
            if not meaning.is_date(fld.name, fld.description) and not values:
                continue
            fmt = meaning.date_format(fld.description, None, None, values, fld.name)
            if fmt in transforms.WHOLE_DATES and (values or meaning.is_date(fld.name, fld.description)):
                dates_of[t.name].append((fld, fmt))
    return dates_of


def _dated_params(tools: list[ToolRecord]) -> tuple[dict[str, list[tuple[ParamRecord, str]]], set[str]]:
    """Each tool's date parameters with their format, and the tools a date alone answers (every required
    parameter a date)."""
    params_of: dict[str, list[tuple[ParamRecord, str]]] = {}
    alone: set[str] = set()
    for t in tools:
        params_of[t.name] = []
        for prm in t.params:
            if prm.name in NON_LINKABLE or prm.enum or not meaning.is_date(prm.name, prm.description, prm.format):
                continue
            dst = meaning.date_format(prm.description, prm.format, prm.pattern, [], prm.name)
            if dst is not None:
                params_of[t.name].append((prm, dst))
        dated = {p.name for p, _ in params_of[t.name]}
        needed = [p for p in t.params if p.required and p.name not in NON_LINKABLE]
        if dated and all(p.name in dated for p in needed) and any(p.required for p, _ in params_of[t.name]):
            alone.add(t.name)
    return params_of, alone


def date_links(
    tools: list[ToolRecord], samples: Mapping[str, list[dict[str, str]]], found: list[LinkRecord], min_score: float
) -> list[LinkRecord]:
    """Dates into date parameters, with the format transform (formats read off descriptions, schema formats and
    patterns, and observed values; parts by name: solYear takes YYYY, solMonth MM).

    Dates alone are no evidence (any date fits any date parameter), so a date link is proposed
    * into a required date parameter of a tool that names a record through other required parameters only beside
      an entity link from the same source into that tool (a company's founding date as the reference date of
      that company's history, a facility's opening date as the month of its programmes); the pair is then called
      jointly;
    * into the date parameters of a tool that a date alone answers (every required parameter a date: a calendar
      by year and month, a daily statistic), from the dates of other tools, at most MAX_DATE_SOURCES of them."""
    by_name = {t.name: t for t in tools}
    feeds = _entity_feeds(tools, found)
    dates_of = _dated_fields(tools, samples)
    params_of, alone = _dated_params(tools)
    out: list[LinkRecord] = []

    def add(
        source_name: str,
        fld: FieldRecord,
        target_name: str,
        prm: ParamRecord,
        transform: transforms.Transform,
        score: float,
    ) -> None:
        if score >= min_score:
            out.append(
                LinkRecord(
                    id=link_id(source_name, fld.name, target_name, prm.key(), transform),
                    source_tool=source_name,
                    source_field=fld.name,
                    target_tool=target_name,
                    target_param=prm.key(),
                    transform=transform,
                    score=score,
                )
            )

    for (source_name, target_name), fed in sorted(feeds.items()):
        if target_name in alone:
            continue
        for prm, dst in params_of[target_name]:
            if not prm.required or prm.name in fed:
                continue
            for fld, src in dates_of[source_name][:MAX_DATE_LINKS]:
                transform = date_transform(src, dst)
                if transform is not None:
                    add(source_name, fld, target_name, prm, transform, 0.6)
    for target_name in sorted(alone):
        for prm, dst in params_of[target_name]:
            n = 0
            for t in tools:
                if t.name == target_name or n >= MAX_DATE_SOURCES or by_name[t.name].method not in ("GET", "POST"):
                    continue
                links = [
                    (fld, tr)
                    for fld, src in dates_of[t.name][:MAX_DATE_LINKS]
                    if (tr := date_transform(src, dst)) is not None
                ]
                for fld, transform in links:
                    add(t.name, fld, target_name, prm, transform, 0.55 if prm.required else 0.5)
                n += bool(links)
    return out
