"""The main job's report: Markdown plus PNG plots (verified graph, yield, shapes and coverage) and the
data-quality figures of the trajectories (`synthesis.quality`, carried in the distribution under `quality`)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from synthesis.quality import quality_lines
from synthesis.records import SynthesisResult


def _bar(path: Path, labels: list[str], values: list[float], title: str, ylabel: str, color: str = "#4C8EDA") -> Path:
    fig, ax = plt.subplots(figsize=(7, 3.6), dpi=110)
    ax.bar(labels, values, color=color)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:g}", ha="center", va="bottom", fontsize=8)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def quality_section(dist: dict[str, Any]) -> str:
    """The data-quality lines of a distribution (empty when it has none)."""
    q = dist.get("quality")
    if not q:
        return "- not computed"
    kinds = dist.get("kinds", {})
    bfcl = dist.get("bfcl", {})
    lines = [f"- {line.strip()}" for line in quality_lines(q)[1:]]
    lines.append(
        f"- sample kinds {json.dumps(kinds, ensure_ascii=False)}; BFCL items "
        f"{json.dumps(bfcl.get('items', {}))}, multi-step records left out {bfcl.get('left_out_multi_step', 'n/a')}"
    )
    return "\n".join(lines)


def write_report(
    out: Path,
    *,
    stats: dict[str, Any],
    run: dict[str, Any],
    naive: dict[str, Any] | None,
    synth: SynthesisResult,
    dist: dict[str, Any],
    exports: dict[str, str],
    config: dict[str, Any],
) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    links = stats["links"]
    _bar(
        out / "graph.png",
        list(links),
        [float(v) for v in links.values()],
        "Links by verdict (verified by execution)",
        "links",
        "#2ECC71",
    )
    edge_cost, yields = _yields(run, naive)
    _dist_plots(out, yields, dist)
    path = out / "report.md"
    path.write_text(_markdown(stats, run, synth, dist, exports, config, edge_cost, yields), encoding="utf-8")
    return path


def _yields(run: dict[str, Any], naive: dict[str, Any] | None) -> tuple[Any, dict[str, Any]]:
    """EDGE's calls per verified link, and the yields to plot (the naive baseline's where it verified any)."""
    edge_cost = run["calls_per_verified_link"] or 0
    yields = {"EDGE (cache, one upstream call per tool)": edge_cost}
    if naive and naive.get("verified"):
        yields["naive (fresh upstream call per link)"] = round(naive["calls_spent"] / naive["verified"], 2)
    return edge_cost, yields


def _dist_plots(out: Path, yields: dict[str, Any], dist: dict[str, Any]) -> None:
    """The yield, shape, coverage and length plots."""
    _bar(out / "yield.png", list(yields), list(yields.values()), "API calls per verified link", "calls", "#F79767")
    shapes = dist["shapes"]
    _bar(out / "shapes.png", list(shapes), [float(v) for v in shapes.values()], "Trajectories by shape", "trajectories")
    usage = Counter({k: v for k, v in dist.get("tool_counts", {}).items()})
    top = usage.most_common(15)
    _bar(
        out / "coverage.png",
        [k for k, _ in top],
        [float(v) for _, v in top],
        "Most used tools (coverage)",
        "steps",
        "#C990C0",
    )
    lengths = dist["lengths"]
    _bar(
        out / "lengths.png",
        [str(k) for k in lengths],
        [float(v) for v in lengths.values()],
        "Trajectory lengths",
        "trajectories",
        "#57C7E3",
    )


def _markdown(
    stats: dict[str, Any],
    run: dict[str, Any],
    synth: SynthesisResult,
    dist: dict[str, Any],
    exports: dict[str, str],
    config: dict[str, Any],
    edge_cost: Any,
    yields: dict[str, Any],
) -> str:
    """The report's Markdown text."""
    links = stats["links"]
    shapes = dist["shapes"]
    lengths = dist["lengths"]
    ratio = (
        f"{yields['naive (fresh upstream call per link)'] / edge_cost:.2f}x" if len(yields) > 1 and edge_cost else "n/a"
    )
    return f"""# KOPA EDGE run report

## Verified graph
- APIs {stats["apis"]}, tools {stats["active_tools"]}; links: {json.dumps(links, ensure_ascii=False)}
- Verification run `{run["id"]}`: {run["verified"]} verified, {run["refuted"]} refuted,
  {run["inconclusive"]} inconclusive of {run["candidates"]} candidates,
  {run["calls_spent"]} upstream calls ({run["cache_hits"]} cache hits).

![links](graph.png)

## Yield
- EDGE: {edge_cost} calls per verified link;
  naive baseline: {yields.get("naive (fresh upstream call per link)", "n/a")}; ratio {ratio}.

![yield](yield.png)

## Trajectories
- {dist["trajectories"]} executed trajectories kept, {len(synth.discarded)} discarded
  ({json.dumps(Counter(d["reason"].split(":")[0] for d in synth.discarded).most_common(5), ensure_ascii=False)}),
  {synth.calls} upstream calls; graph snapshot `{synth.snapshot}`.
- Shapes {json.dumps(shapes, ensure_ascii=False)}; lengths {json.dumps(lengths)}.
- Coverage: {dist["tools_used"]} tools ({dist["tool_coverage"]:.0%}), {dist["links_used"]} verified links
  ({dist["link_coverage"]:.0%}).

![shapes](shapes.png) ![lengths](lengths.png) ![coverage](coverage.png)

## Data quality
{quality_section(dist)}

## Exports
{chr(10).join(f"- {k}: `{v}`" for k, v in exports.items())}

## Config
```json
{json.dumps(config, ensure_ascii=False, indent=1)}
```
"""
