"""From trials to a verdict: when trials convince, and the verified, refuted or inconclusive link they make, with
its evidence (the entities tried, examples, latency) and its history. Pure functions."""

from __future__ import annotations

from collections import Counter

from core.settings import ENGINE_VERSION
from graph.models import LinkRecord, utcnow
from verification.trials import Trial, coincides, entities, entity, kinds, spread, swapped, trim

#: Verdicts a link keeps in its history, newest last.
MAX_HISTORY = 20


def rate(trials: list[Trial]) -> float:
    definitive = [t for t in trials if t.result.definitive]
    return sum(t.result.ok for t in definitive) / len(definitive) if definitive else 0.0


def convincing(trials: list[Trial]) -> bool:
    ok = sum(t.result.ok for t in trials)
    if spread(trials) >= 2:
        # the source offers values of several entities of the kind that worked: values of one entity do not
        # convince, another entity's must work too (see judge for a source of two entities)
        return entities(trials, ok=True) >= 2
    return ok >= 2 or (ok >= 1 and rate(trials) >= 0.34)


def judge(run_id: str, link: LinkRecord, trials: list[Trial], mode: str) -> LinkRecord:
    ok = [t for t in trials if t.result.ok]
    definitive = [t for t in trials if t.result.definitive]
    transient = [t for t in trials if not t.result.definitive]
    conflict = next((why for t in ok if (why := swapped(link, t))), None) or coincides(link, trials)
    if conflict:
        return decide(run_id, link, trials, "refuted", f"echo: {conflict}", mode)
    # values of several entities tried: one entity whose values worked among three or more is where two code
    # systems coincide; two entities of which one worked may be a target with data for some entities only
    several = spread(trials) >= 2 and entities(trials) >= 3
    # for the rate, transient trials count as failures: a fault can never tip a link into "verified"
    if (entities(trials, ok=True) >= 2) if several else (len(ok) >= 2 or (ok and len(ok) / len(trials) >= 0.34)):
        return decide(
            run_id, link, trials, "verified", f"{len(ok)} of {len(definitive)} values worked{kinds(trials)}", mode
        )
    if several and ok and not transient:
        return decide(
            run_id,
            link,
            trials,
            "refuted",
            f"worked for one entity only ({entity(ok[0].source_value)}) "
            f"of {entities(trials)} tried: the values coincide there",
            mode,
        )
    if transient or not trials:
        # a value lost to a transient fault might have worked: never refute on it, go round again
        why = transient[-1].result.reason if transient else "no trial"
        return decide(run_id, link, trials, "inconclusive", f"transient: {why}", mode)
    if ok:
        return decide(run_id, link, trials, "refuted", f"worked for only {len(ok)} of {len(definitive)} values", mode)
    reasons = Counter(t.result.reason or t.result.outcome for t in definitive)
    return decide(run_id, link, trials, "refuted", f"{reasons.most_common(1)[0][0]} ({len(definitive)} values)", mode)


def decide(run_id: str, link: LinkRecord, trials: list[Trial], status: str, reason: str, mode: str) -> LinkRecord:
    now = utcnow()
    ok = [t for t in trials if t.result.ok]
    calls = [t for t in trials if t.inputs]
    evidence = {
        "run_id": run_id,
        "engine": ENGINE_VERSION,
        "at": now,
        "mode": mode,
        "transform": link.transform,
        "trials": len(trials),
        "successes": len(ok),
        # the entities of the source the values were drawn from (a province, a company, a date) and how each
        # fared: a link holds across entities, not for the one where two code systems coincide
        "entities": [
            {
                "entity": e,
                "values": [str(t.source_value) for t in trials if entity(t.source_value) == e][:3],
                "worked": sum(t.result.ok for t in trials if entity(t.source_value) == e),
            }
            for e in dict.fromkeys(entity(t.source_value) for t in trials)
        ],
        "latency_ms": round(sum(t.result.latency_ms for t in calls) / len(calls), 1) if calls else None,
        "response_hash": (ok[0] if ok else trials[0]).result.response_hash if trials else "",
        "examples": [
            {
                "source_value": t.source_value,
                "input": t.inputs,
                "outcome": t.result.outcome,
                "reason": t.result.reason,
                "rows": len(t.result.items),
                "url": t.result.url,
                "first_row": trim(t.result.items[0]) if t.result.items else None,
            }
            for t in trials[:3]
        ],
    }
    history = [*link.history, {"at": now, "run": run_id, "status": status, "reason": reason}][-MAX_HISTORY:]
    return link.model_copy(
        update={
            "status": status,
            "reason": reason,
            "evidence": evidence,
            "history": history,
            "last_run": run_id,
            "needs_reverify": status == "inconclusive",
            "updated_at": now,
            "verified_at": now if status == "verified" else link.verified_at,
        }
    )
