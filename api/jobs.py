"""Background work for routes: queue a Celery task, or run the work in this process after the response."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request


async def dispatch(request: Request, celery: bool, task_name: str, args: list[Any],
                   local: Callable[[], Coroutine[Any, Any, Any]]) -> None:
    """Queue a Celery task through the app's one Celery client (workers share the store and the call economy),
    or run the work in this process after the response; local work is cancelled at shutdown."""
    state = request.app.state.kopa
    if celery:
        if state.celery is None:
            raise RuntimeError("Celery dispatch needs KOPA_REDIS_URL")
        await asyncio.to_thread(state.celery.send_task, task_name, args=args)
        return
    tasks: set[asyncio.Task[Any]] = state.background
    task = asyncio.create_task(local())
    tasks.add(task)
    task.add_done_callback(tasks.discard)
