"""Date links: dates of one tool's records into the date parameters of another, with the format transform.
Dates alone are no evidence (any date fits any date parameter): see date_links for when one is proposed."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from graph import meaning, transforms
from graph.link_scoring import NON_LINKABLE, link_id
from graph.models import FieldRecord, LinkRecord, ParamRecord, ToolRecord

#: Date links proposed per (source tool, target tool): a record's own dates only.
MAX_DATE_LINKS = 2
#: Source tools proposed per date parameter that any date answers (a calendar by year and month, a forecast by its
#: date): the target's own API first, then one tool of every other API before a second of any (see `_ranked`).
MAX_DATE_SOURCES = 32
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
#: Parts of a date a field may hold alone (RTMS dealYear/dealMonth, a statement's fiscal year).
PARTS = ("YYYY", "MM", "DD")
#: Words of a date that belongs to the data about a record (when it was entered, changed, published), not to the
#: record itself (a founding, a holiday, a measurement): proposed after the record's own dates.
_META_WORDS = (
    "수정",
    "변경",
    "갱신",
    "등록",
    "생성",
    "작성",
    "최종",
    "입력",
    "update",
    "modif",
    "change",
    "creat",
    "regist",
)
_META_TOKENS = {"chg", "crtn", "reg", "upd", "mod"}
#: A date parameter that bounds a range or matches part of a value is no query by one date.
_BOUND_WORDS = {"begin", "end", "start", "from", "to", "bgn", "min", "max", "since", "until", "like"}
_BOUND_TEXT = ("시작", "종료", "부터", "까지", "이상", "이하", "이전", "이후", "크거나", "작은", "보다", "포함")
#: How a description says a date parameter is the date the query is about ("조회 날짜", "검색일").
_QUERY_DATE = re.compile(r"(조회|검색)\s*(날짜|일자|일)(?![가-힣])|search date|query date", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Dated:
    """A date field of a tool: its format (a whole date or a part), observed values, and whether it is a date of
    the data about the record rather than of the record."""

    field: FieldRecord
    fmt: str
    values: tuple[str, ...]
    meta: bool


def date_transform(src: str, dst: str) -> transforms.Transform | None:
    """The transform from a date of format `src` to a parameter of format `dst` (a part: YYYY, MM, DD), None
    when the source is coarser than the parameter."""
    if src not in transforms.WHOLE_DATES or dst not in GRANULARITY or GRANULARITY[src] < GRANULARITY[dst]:
        return None
    return dict(transforms.IDENTITY) if src == dst else {"kind": "date", "src": src, "dst": dst}


def part_transform(src: str, dst: str, values: tuple[str, ...] | list[str]) -> transforms.Transform | None:
    """The transform from a field holding one part of a date (YYYY, MM, DD) to a parameter of that same part: as
    is, or zero-padded to two digits where the values are written without the leading zero (a month "9" into a
    parameter that takes "09"). None for another part or a whole date."""
    if src not in PARTS or src != dst:
        return None
    if src != "YYYY" and any(len(str(v).strip()) == 1 for v in values):
        return {"kind": "zfill", "width": 2}
    return dict(transforms.IDENTITY)


def _transform(d: _Dated, dst: str) -> transforms.Transform | None:
    return part_transform(d.fmt, dst, d.values) if d.fmt in PARTS else date_transform(d.fmt, dst)


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


def _words(name: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return {w for w in re.split(r"[^0-9a-zA-Z]+", spaced.lower()) if w}


def is_meta_date(name: str, description: str) -> bool:
    """A date of the data about a record (최종수정일시, 등록일, CHANGE_DATE, updateDe, crtnDay), not of the record."""
    text = f"{name} {description}".lower()
    return any(w in text for w in _META_WORDS) or bool(_words(name) & _META_TOKENS)


def _dated_fields(tools: list[ToolRecord], samples: Mapping[str, list[dict[str, str]]]) -> dict[str, list[_Dated]]:
    """Each tool's date fields with their format (a whole date, or a part: a year, a month, a day), read off
    names, descriptions and observed values; a record's own dates before the dates of the data about it."""
    dates_of: dict[str, list[_Dated]] = {}
    for t in tools:
        rows = samples.get(t.name, [])
        found: list[_Dated] = []
        for fld in t.fields:
            values = [str(r.get(fld.name)).strip() for r in rows if r.get(fld.name) not in (None, "")]
            values = [v for v in values if v]
            named = meaning.is_date(fld.name, fld.description)
            if not named and not values:
                continue
            fmt = meaning.date_format(fld.description, None, None, values, fld.name)
            if fmt not in transforms.WHOLE_DATES:
                # a part only where the name says so and the values show it ("강수량 (mm)" states no month)
                fmt = meaning.date_part(fld.name, fld.description, values) if named else None
            if fmt is not None and (values or named):
                found.append(_Dated(fld, fmt, tuple(values[:12]), is_meta_date(fld.name, fld.description)))
        dates_of[t.name] = sorted(found, key=lambda d: d.meta)  # stable: the document's order among equals
    return dates_of


def _bounds(prm: ParamRecord) -> bool:
    """A parameter that bounds a range (inqBginDt, endBasDt, 시작일) or matches part of a value (likeBasDt)."""
    return bool(_words(prm.name) & _BOUND_WORDS) or any(w in prm.description for w in _BOUND_TEXT)


def _linkable(t: ToolRecord) -> list[ParamRecord]:
    return [p for p in t.params if p.name not in NON_LINKABLE and p.name != t.format_name]


def _query_date(t: ToolRecord, dated: list[tuple[ParamRecord, str]]) -> list[tuple[ParamRecord, str]]:
    """The date parameter of a tool that a date alone answers though nothing is required: no required parameter
    but constants, and one date parameter (no range bound) documented as the date the query is about ("조회 날짜",
    "검색일") or as narrowing the answer ("생략하면 최근 한 달"). Empty for any other tool: an optional date among
    other filters (a record's change date, a range) is no query by date."""
    if any(p.required and not p.enum and p.default is None for p in _linkable(t)):
        return []
    exact = [(p, f) for p, f in dated if not _bounds(p)]
    if len(exact) != 1:
        return []
    prm = exact[0][0]
    tool_text = f"{t.summary} {t.description}"
    lead = re.split(r"[\s(（,.;:·\[]", prm.description.strip(), maxsplit=1)[0]
    omitted = bool(lead) and lead in tool_text and any(w in tool_text for w in ("생략", "없으면", "미입력"))
    return exact if _QUERY_DATE.search(prm.description) or meaning.narrows(prm.description) or omitted else []


def _dated_params(
    tools: list[ToolRecord],
) -> tuple[dict[str, list[tuple[ParamRecord, str]]], dict[str, list[tuple[ParamRecord, str]]]]:
    """Each tool's date parameters with their format, and the date parameters that any date answers: those of a
    tool whose every required parameter is a date (a calendar by year and month, a daily statistic), or the one
    date a tool without required inputs is queried by (`_query_date`)."""
    params_of: dict[str, list[tuple[ParamRecord, str]]] = {}
    open_: dict[str, list[tuple[ParamRecord, str]]] = {}
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
            open_[t.name] = params_of[t.name]
        elif params_of[t.name]:
            query = _query_date(t, params_of[t.name])
            if query:
                open_[t.name] = query
    return params_of, open_


def _ranked(
    offers: list[tuple[ToolRecord, list[tuple[_Dated, transforms.Transform]]]], target: ToolRecord
) -> list[tuple[ToolRecord, list[tuple[_Dated, transforms.Transform]]]]:
    """Source tools for a date parameter any date answers, at most MAX_DATE_SOURCES: the target's own API first
    (a service's own dates), then one tool of every other API before a second of any, APIs whose tools give a
    record's own date before those that give only the dates of the data about records."""
    by_api: dict[str, list[tuple[ToolRecord, list[tuple[_Dated, transforms.Transform]]]]] = defaultdict(list)
    for offer in offers:
        by_api[offer[0].api_id].append(offer)
    for group in by_api.values():
        group.sort(key=lambda o: (all(d.meta for d, _ in o[1]), o[0].name))
    own = by_api.pop(target.api_id, [])
    # a record's own date before dates of the data about records; a date of the parameter's own form (a day for
    # a day) before one that needs a conversion
    others = sorted(
        by_api.values(),
        key=lambda g: (
            all(d.meta for o in g for d, _ in o[1]),
            all(t.get("kind") != "identity" for o in g for _, t in o[1]),
            g[0][0].api_id,
        ),
    )
    out = list(own)
    for depth in range(max((len(g) for g in others), default=0)):
        out.extend(g[depth] for g in others if depth < len(g))
    return out[:MAX_DATE_SOURCES]


def date_links(
    tools: list[ToolRecord], samples: Mapping[str, list[dict[str, str]]], found: list[LinkRecord], min_score: float
) -> list[LinkRecord]:
    """Dates into date parameters, with the format transform (formats read off descriptions, schema formats and
    patterns, and observed values; parts by name: a year parameter takes YYYY, a month MM; a field holding one
    part feeds a parameter of that part, zero-padded where it needs to be).

    Dates alone are no evidence (any date fits any date parameter), so a date link is proposed
    * into a required date parameter of a tool that names a record through other required parameters only beside
      an entity link from the same source into that tool (a company's founding date as the reference date of
      that company's history, a facility's opening date as the month of its programmes); the pair is then called
      jointly;
    * into the date parameters that any date answers (every required parameter of the tool a date: a calendar by
      year and month, a daily statistic; or the one date a tool without required inputs is documented to be
      queried by: a forecast by its date), from the dates of other tools, at most MAX_DATE_SOURCES of them."""
    by_name = {t.name: t for t in tools}
    feeds = _entity_feeds(tools, found)
    dates_of = _dated_fields(tools, samples)
    params_of, open_ = _dated_params(tools)
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
        if target_name in open_:
            continue
        for prm, dst in params_of[target_name]:
            if not prm.required or prm.name in fed:
                continue
            for d in dates_of[source_name][:MAX_DATE_LINKS]:
                transform = _transform(d, dst)
                if transform is not None:
                    add(source_name, d.field, target_name, prm, transform, 0.6)
    for target_name in sorted(open_):
        target = by_name[target_name]
        for prm, dst in open_[target_name]:
            offers = []
            for t in tools:
                if t.name == target_name or t.method not in ("GET", "POST"):
                    continue
                links = [(d, tr) for d in dates_of[t.name] if (tr := _transform(d, dst)) is not None]
                if links:
                    offers.append((t, links[:MAX_DATE_LINKS]))
            for t, links in _ranked(offers, target):
                for d, transform in links:
                    add(t.name, d.field, target_name, prm, transform, 0.55 if prm.required else 0.5)
    return out
