"""Reports over verification: yield (what calls bought) and drift (what changed, and when)."""

from __future__ import annotations

from typing import Any

from graph.models import RunRecord
from graph.store import GraphStore, all_apis, all_links
from verification.runs import run_progress


def yield_report(store: GraphStore, limit: int = 10, runs: list[RunRecord] | None = None) -> dict[str, Any]:
    """What calls bought, over the newest `limit` runs (or over `runs`, those the caller may see)."""
    rows = []
    quotas = {a.id: a.daily_quota for a in all_apis(store) if a.daily_quota}
    for run in store.list_runs(limit) if runs is None else runs:
        p = run_progress(store, run)
        decided = p["verified"] + p["refuted"] + p["inconclusive"]
        rows.append(
            {
                "run": run.id,
                "status": run.status,
                "scope": run.scope,
                "calls": p["calls_spent"],
                "cache_hits": p["cache_hits"],
                "candidates_evaluated": decided,
                "verified": p["verified"],
                "calls_per_verified_link": p["calls_per_verified_link"],
                "calls_per_candidate": round(p["calls_spent"] / decided, 3) if decided else None,
                "quota_use": {api: round(n / quotas[api], 4) for api, n in p["calls_by_api"].items() if api in quotas},
                "finished_at": run.finished_at,
            }
        )
    stats = store.stats()
    return {"links": stats["links"], "runs": rows}


def drift_report(store: GraphStore, limit: int = 200) -> dict[str, Any]:
    """Links whose verdict changed between runs, links flagged by a changed API, and vanished fields."""
    changes, flagged, vanished = [], [], []
    for lk in all_links(store):
        statuses = [h["status"] for h in lk.history]
        for before, after, h in zip(statuses, statuses[1:], lk.history[1:], strict=False):
            if before != after and "inconclusive" not in (before, after):
                changes.append(
                    {
                        "link": lk.id,
                        "source": f"{lk.source_tool}.{lk.source_field}",
                        "target": f"{lk.target_tool}.{lk.target_param}",
                        "from": before,
                        "to": after,
                        "at": h["at"],
                        "run": h["run"],
                        "reason": h.get("reason", ""),
                    }
                )
        if lk.needs_reverify and lk.status != "inconclusive":
            flagged.append(
                {
                    "link": lk.id,
                    "status": lk.status,
                    "source": f"{lk.source_tool}.{lk.source_field}",
                    "target": f"{lk.target_tool}.{lk.target_param}",
                }
            )
        if "absent from" in lk.reason:
            vanished.append(
                {
                    "link": lk.id,
                    "field": f"{lk.source_tool}.{lk.source_field}",
                    "reason": lk.reason,
                    "at": lk.updated_at,
                }
            )
    changes.sort(key=lambda c: c["at"], reverse=True)
    return {
        "changes": changes[:limit],
        "flagged_for_reverification": flagged[:limit],
        "vanished_fields": vanished[:limit],
        "counts": {"changes": len(changes), "flagged": len(flagged), "vanished": len(vanished)},
    }
