"""Conversion steps in plans: where a verified link projects coordinates (a `coord` transform from WGS84, UTM-K or
TM to the KMA grid or to another system), the model would otherwise have to compute the projection in its head.
`with_conversions` rewrites such a plan before it is executed: the source row's visible coordinates go into a
built-in conversion tool (graph/conversions.py), and the target takes the tool's answer unchanged. The conversion
step is executed and recorded like any other step (through the executor, answered in process).

The links of the rewritten steps keep the id of the verified link they stand for (so coverage and re-verification
still name that link) with an identity transform: x and y are the source fields as shown, nx/ny (or x/y) are the
conversion's fields.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from graph import transforms
from graph.conversions import API_ID, CONVERT, TO_KMA_GRID, conversion_tools
from graph.models import LinkRecord, ToolRecord
from synthesis.records import Plan, Source, Step


def projects(transform: dict[str, Any] | None) -> bool:
    """A transform that needs a map projection (what a model cannot do reliably in its head)."""
    t = transform or {}
    return t.get("kind") == "coord" and t.get("src") != t.get("dst")


def _tool(tools: dict[str, ToolRecord], name: str) -> ToolRecord:
    """The registered conversion tool, else the built-in document's (the executor answers either in process)."""
    found = tools.get(name)
    if found is not None and found.api_id == API_ID:
        return found
    return next(t for t in conversion_tools() if t.name == name)


def _param_key(tool: ToolRecord, name: str) -> str:
    return next(p.key() for p in tool.params if p.name == name)


def with_conversions(plan: Plan, tools: dict[str, ToolRecord]) -> Plan:
    """The plan with a conversion step before every step that a projecting link feeds (one per upstream step and
    coordinate pair, shared by the steps it feeds); a plan without one is returned unchanged."""
    if not any(
        src.kind == "link" and src.link is not None and projects(src.link.transform)
        for s in plan.steps
        for src in s.sources.values()
    ):
        return plan
    steps: list[Step] = []
    index: dict[int, int] = {}  # old step -> new step
    made: dict[tuple[int, str, str, str, str], int] = {}  # (new source step, x field, y field, src, dst) -> step
    for old, step in enumerate(plan.steps):
        sources: dict[str, Source] = {}
        for pname, src in step.sources.items():
            link = src.link
            if src.kind != "link" or link is None:
                sources[pname] = src
                continue
            origin = index[src.from_step]
            if not projects(link.transform):
                sources[pname] = Source("link", link=link, from_step=origin)
                continue
            t = link.transform
            axis, pair = str(t["axis"]), str(t["pair"])
            xf, yf = (link.source_field, pair) if axis == "x" else (pair, link.source_field)
            key = (origin, xf, yf, str(t["src"]), str(t["dst"]))
            if key not in made:
                made[key] = len(steps)
                steps.append(_conversion_step(tools, steps[origin].tool, link, origin, xf, yf, key[3], key[4]))
            conv = steps[made[key]]
            out_field = ("nx" if axis == "x" else "ny") if key[4] == "KMA_GRID" else axis
            fed = link.model_copy(
                update={
                    "source_tool": conv.tool.name,
                    "source_field": out_field,
                    "transform": dict(transforms.IDENTITY),
                }
            )
            sources[pname] = Source("link", link=fed, from_step=made[key])
        index[old] = len(steps)
        deps = sorted({s.from_step for s in sources.values() if s.kind == "link"})
        steps.append(Step(step.tool, sources, deps, step.names, step.narrow))
    when = (
        dataclasses.replace(plan.when, step=index[plan.when.step], gate=index[plan.when.gate])
        if plan.when is not None
        else None
    )
    return Plan(plan.shape, steps, [index[i] for i in plan.finals], plan.route, when)


def _conversion_step(
    tools: dict[str, ToolRecord],
    source: ToolRecord,
    link: LinkRecord,
    origin: int,
    xf: str,
    yf: str,
    src: str,
    dst: str,
) -> Step:
    """The conversion call: the source row's x and y as shown, the systems as constants."""
    tool = _tool(tools, TO_KMA_GRID if dst == "KMA_GRID" else CONVERT)

    def feed(field: str, param: str) -> Source:
        return Source(
            "link",
            from_step=origin,
            link=link.model_copy(
                update={
                    "source_tool": source.name,
                    "source_field": field,
                    "target_tool": tool.name,
                    "target_param": _param_key(tool, param),
                    "transform": dict(transforms.IDENTITY),
                }
            ),
        )

    sources = {"x": feed(xf, "x"), "y": feed(yf, "y")}
    if dst == "KMA_GRID":
        sources["crs"] = Source("constant", src)
    else:
        sources["from_crs"], sources["to_crs"] = Source("constant", src), Source("constant", dst)
    return Step(tool, sources, [origin])
