"""Reports over verification: yield (what calls bought) and drift (what changed, and when)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.fields import ByKey
from graph.models import RunRecord
from graph.store import GraphStore, all_apis, all_links
from verification.runs import run_progress


class YieldRow(BaseModel, ByKey):
    """What one run's calls bought."""

    run: str
    status: str
    scope: str
    calls: int
    cache_hits: int
    candidates_evaluated: int
    verified: int
    calls_per_verified_link: float | None
    calls_per_candidate: float | None
    quota_use: dict[str, float] = Field(description="per API: the share of its daily quota the run spent")
    finished_at: str


class YieldReport(BaseModel, ByKey):
    links: dict[str, int] = Field(description="links by status")
    runs: list[YieldRow]


def yield_report(store: GraphStore, limit: int = 10, runs: list[RunRecord] | None = None) -> YieldReport:
    """What calls bought, over the newest `limit` runs (or over `runs`, those the caller may see)."""
    rows = []
    quotas = {a.id: a.daily_quota for a in all_apis(store) if a.daily_quota}
    for run in store.list_runs(limit) if runs is None else runs:
        p = run_progress(store, run)
        decided = p.verified + p.refuted + p.inconclusive
        rows.append(
            YieldRow(
                run=run.id,
                status=run.status,
                scope=run.scope,
                calls=p.calls_spent,
                cache_hits=p.cache_hits,
                candidates_evaluated=decided,
                verified=p.verified,
                calls_per_verified_link=p.calls_per_verified_link,
                calls_per_candidate=round(p.calls_spent / decided, 3) if decided else None,
                quota_use={api: round(n / quotas[api], 4) for api, n in p.calls_by_api.items() if api in quotas},
                finished_at=run.finished_at,
            )
        )
    return YieldReport(links=store.stats()["links"], runs=rows)


class VerdictChange(BaseModel, ByKey):
    """A link whose verdict changed between runs (changes to or from `inconclusive` are left out)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    link: str
    source: str = Field(description="tool.field the value comes from")
    target: str = Field(description="tool.parameter it feeds")
    before: str = Field(alias="from")
    after: str = Field(alias="to")
    at: str
    run: str
    reason: str = ""


class FlaggedLink(BaseModel, ByKey):
    """A decided link a changed API flagged for re-verification."""

    link: str
    status: str
    source: str
    target: str


class VanishedField(BaseModel, ByKey):
    """A link's source field the provider no longer answers with."""

    link: str
    field: str
    reason: str
    at: str


class DriftReport(BaseModel, ByKey):
    changes: list[VerdictChange] = Field(description="the newest first")
    flagged_for_reverification: list[FlaggedLink]
    vanished_fields: list[VanishedField]
    counts: dict[str, int] = Field(description="changes, flagged and vanished in all (the lists stop at the limit)")


def drift_report(store: GraphStore, limit: int = 200) -> DriftReport:
    """Links whose verdict changed between runs, links flagged by a changed API, and vanished fields."""
    changes: list[VerdictChange] = []
    flagged: list[FlaggedLink] = []
    vanished: list[VanishedField] = []
    for lk in all_links(store):
        source, target = f"{lk.source_tool}.{lk.source_field}", f"{lk.target_tool}.{lk.target_param}"
        statuses = [h["status"] for h in lk.history]
        for before, after, h in zip(statuses, statuses[1:], lk.history[1:], strict=False):
            if before != after and "inconclusive" not in (before, after):
                changes.append(
                    VerdictChange(
                        link=lk.id,
                        source=source,
                        target=target,
                        before=before,
                        after=after,
                        at=h["at"],
                        run=h["run"],
                        reason=h.get("reason") or "",
                    )
                )
        if lk.needs_reverify and lk.status != "inconclusive":
            flagged.append(FlaggedLink(link=lk.id, status=lk.status, source=source, target=target))
        if "absent from" in lk.reason:
            vanished.append(VanishedField(link=lk.id, field=source, reason=lk.reason, at=lk.updated_at))
    changes.sort(key=lambda c: c.at, reverse=True)
    return DriftReport(
        changes=changes[:limit],
        flagged_for_reverification=flagged[:limit],
        vanished_fields=vanished[:limit],
        counts={"changes": len(changes), "flagged": len(flagged), "vanished": len(vanished)},
    )
