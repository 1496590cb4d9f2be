"""`kopa verify`: verify candidate links by executing them, in process or through Celery workers."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer

from cli.common import fail, guarded, open_configured_store
from cli.progress import verify_inprocess
from core.settings import get_settings
from sandbox.inprocess import sandbox_mode
from verification.runs import fail_run, new_run, run_progress
from workers.tasks import start_round

#: The figures of a run's progress (verification.runs.RunProgress) `kopa verify` prints when it ends.
SUMMARY = {"id", "status", "message", "candidates", "verified", "refuted", "inconclusive", "candidate", "calls_spent"}
SUMMARY |= {"cache_hits", "calls_per_verified_link"}
SEND_RETRY = {"max_retries": 2, "interval_start": 0.1, "interval_step": 0.3, "interval_max": 0.5}


def unreachable_line(u: dict[str, Any]) -> str:
    """One tool the run could not call: what blocks it, why, what was tried and what would unblock it."""
    blocked = f"needs {', '.join(u['blocked_by'])}; " if u.get("blocked_by") else ""
    tried = f" (tried: {'; '.join(u['tried'])})" if u.get("tried") else ""
    unblock = f"; unblock: {u['unblock']}" if u.get("unblock") else ""
    return f"{u['tool']}: {blocked}{u.get('reason') or 'no reason recorded'}{tried}{unblock}"


@guarded
def verify_cmd(
    api: Annotated[list[str] | None, typer.Option(help="Only these API ids (repeatable).")] = None,
    budget: Annotated[int | None, typer.Option(help="Stop cleanly after this many upstream calls.")] = None,
    scope: Annotated[
        str, typer.Option(help="pending (new/inconclusive/flagged), stale (old verified), or all.")
    ] = "pending",
    celery: Annotated[bool, typer.Option("--celery", help="Queue the run for Celery workers and follow it.")] = False,
    sandbox: Annotated[
        bool, typer.Option("--sandbox", help="Call an in-process sandbox instead of the real hosts.")
    ] = False,
) -> None:
    """Verify candidate links by executing them; derives candidates first. Progress is shown as it goes.

    Examples: [bold]kopa verify --sandbox[/bold] (embedded, no servers), [bold]kopa verify --celery --budget 500[/bold].
    """
    if scope not in ("pending", "stale", "all"):
        fail("--scope must be pending, stale or all")
    if budget is not None and not 1 <= budget <= 10**9:
        fail("--budget must be between 1 and 1,000,000,000 calls")
    settings = get_settings()
    transport = None
    if sandbox:
        settings, transport = sandbox_mode(settings)
    if celery and not settings.redis_url:
        fail("--celery needs KOPA_REDIS_URL and running workers (kopa worker)")
    store = open_configured_store(settings)
    unknown = [a for a in api or [] if store.get_api(a) is None]
    if unknown:
        store.close()
        fail(f"no API {', '.join(map(repr, unknown))}; `kopa graph stats` counts the registered ones")
    run = new_run(api or [], budget, scope, "celery" if celery else "inprocess")
    if celery:
        store.save_run(run)
        try:
            start_round.apply_async((run.id,), retry=True, retry_policy=SEND_RETRY)
        except Exception as exc:  # the broker is away: the run must not stay queued
            fail_run(store, run.id, f"the task queue (Redis) is unreachable: {type(exc).__name__}")
            store.close()
            fail(
                f"cannot queue the run: Redis (KOPA_REDIS_URL) is unreachable ({type(exc).__name__}); "
                f"{run.id} was marked failed"
            )
        typer.echo(f"queued {run.id}; following it (Ctrl-C leaves it running)", err=True)
        while True:
            p = run_progress(store, store.get_run(run.id) or run)
            typer.echo(
                f"\r{p.status:9} verified {p.verified:4}  refuted {p.refuted:4}  "
                f"inconclusive {p.inconclusive:3}  calls {p.calls_spent:5}",
                nl=False,
                err=True,
            )
            if p.status in ("completed", "paused", "failed"):
                typer.echo("", err=True)
                break
            time.sleep(1)
    else:
        run = verify_inprocess(store, settings, run, transport)
    p = run_progress(store, store.get_run(run.id) or run)
    typer.echo(json.dumps(p.model_dump(include=SUMMARY), ensure_ascii=False))
    if p.unreachable:
        typer.echo(f"unreachable tools ({len(p.unreachable)}); their links stay candidate:", err=True)
        for u in p.unreachable:
            typer.echo(f"  {unreachable_line(u)}", err=True)
    store.close()
