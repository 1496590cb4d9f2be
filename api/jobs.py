"""Background work for routes: queue a Celery task, or run the work in this process after the response.

Either way the work never stays `queued` or `running` because of us: when the queue cannot be reached the record
is marked failed with the reason (which also frees the team's concurrency slot) and the caller gets a 503; when
in-process work crashes or is cancelled at shutdown, it is marked failed too."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request

from core.errors import KopaError

log = logging.getLogger("kopa.api.jobs")
#: Publishing retries when the broker is away: a few quick tries (about a second), then the caller hears 503.
SEND_RETRY = {"max_retries": 2, "interval_start": 0.1, "interval_step": 0.3, "interval_max": 0.5}
Fail = Callable[[str], object]


class QueueUnavailable(KopaError):
    status_code = 503
    code = "queue_unavailable"


def _record_failure(on_failure: Fail, reason: str) -> None:
    try:
        on_failure(reason)
    except Exception:  # the store may be down as well; the reason is in the log then
        log.exception("could not mark the work failed (%s)", reason)


async def dispatch(
    request: Request,
    celery: bool,
    task_name: str,
    args: list[Any],
    local: Callable[[], Coroutine[Any, Any, Any]],
    on_failure: Fail,
) -> None:
    """Queue a Celery task through the app's one Celery client (workers share the store and the call economy),
    or run the work in this process after the response; local work is cancelled at shutdown.
    `on_failure(reason)` marks the work failed (it must leave finished work alone)."""
    state = request.app.state.kopa
    if celery:
        if state.celery is None:
            reason = "Celery dispatch needs KOPA_REDIS_URL"
            await asyncio.to_thread(_record_failure, on_failure, reason)
            raise QueueUnavailable(reason)
        try:
            await asyncio.to_thread(state.celery.send_task, task_name, args=args, retry=True, retry_policy=SEND_RETRY)
        except Exception as exc:
            reason = f"the task queue (Redis) is unreachable: {type(exc).__name__}"
            log.warning("dispatch of %s failed: %s", task_name, exc)
            await asyncio.to_thread(_record_failure, on_failure, reason)
            raise QueueUnavailable(f"{reason}; nothing was queued and the request was marked failed") from exc
        return

    async def guarded() -> None:
        try:
            await local()
        except asyncio.CancelledError:
            _record_failure(on_failure, "cancelled: the server stopped before the work finished")
            raise
        except Exception as exc:
            log.exception("in-process %s failed", task_name)
            await asyncio.to_thread(_record_failure, on_failure, f"{type(exc).__name__}: {exc}"[:500])

    tasks: set[asyncio.Task[Any]] = state.background
    task = asyncio.create_task(guarded())
    tasks.add(task)
    task.add_done_callback(tasks.discard)
