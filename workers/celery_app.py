"""The Celery application (Redis broker). Start workers with

    kopa worker --concurrency 2                    # every queue
    kopa worker --queues verification              # or one queue per Deployment, so each scales on its own
    kopa beat                                      # exactly one: re-verifies stale links on a schedule

Verification tasks go to the `verification` queue, batch synthesis to `synthesis`. Tasks are thin
(workers.tasks): they take ids and call the plain functions of verification/ and synthesis/.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from celery import Celery
from celery.apps.beat import Beat
from celery.signals import beat_init, worker_init
from kombu import Queue  # type: ignore[attr-defined]
from kombu.utils.objects import cached_property

from core.errors import ConfigurationError
from core.settings import Settings, get_settings

QUEUES = ("kopa", "verification", "synthesis")


class GuardedBeat(Beat):  # type: ignore[misc]
    """`celery -A workers.celery_app beat` (and `kopa beat`): the production guard runs as the scheduler is built,
    before Celery prints its banner (`beat_init` fires only after it), so a refused start is one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _production_guard()
        super().__init__(*args, **kwargs)


class KopaCelery(Celery):  # type: ignore[misc]
    """The Celery application whose beat is `GuardedBeat`."""

    @cached_property
    def Beat(self) -> type[GuardedBeat]:  # Celery's name for it
        cls: type[GuardedBeat] = self.subclass_with_self(GuardedBeat, name="Beat", reverse="Beat")
        return cls


def make_celery(settings: Settings) -> Celery:
    url = settings.redis_url or "redis://127.0.0.1:6379/0"
    app = KopaCelery("kopa", broker=url, include=["workers.tasks"])
    vt = settings.verify.visibility_timeout_s
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=False,  # an unexpected failure leaves the message for redelivery
        worker_prefetch_multiplier=1,
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        task_default_queue="kopa",
        task_queues=[Queue(q) for q in QUEUES],  # type: ignore[no-untyped-call]  # a worker without --queues consumes all of them
        task_routes={
            "kopa.synthesize_batch": {"queue": "synthesis"},
            "kopa.start_round": {"queue": "verification"},
            "kopa.verify_source": {"queue": "verification"},
            "kopa.reverify_stale": {"queue": "verification"},
        },
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": vt},
        visibility_timeout=vt,
        task_time_limit=vt - 30,
        task_soft_time_limit=vt - 60,
        worker_hijack_root_logger=False,
        beat_schedule={
            "reverify-stale-links": {"task": "kopa.reverify_stale", "schedule": 3600.0},
        },
    )
    return app


try:
    celery_app = make_celery(get_settings())
except ConfigurationError as _exc:  # every process imports this module first: one line, then exit
    raise SystemExit(f"kopa: {_exc}") from None


def _production_guard(**_: object) -> None:
    """`celery -A workers.celery_app worker|beat` started directly (not through `kopa worker`): the same
    production guard, one line and a non-zero exit."""
    try:
        get_settings().check_production()
    except ConfigurationError as exc:
        sys.stderr.write(f"error: {exc.detail}\n")
        sys.stderr.flush()
        os._exit(2)  # SystemExit would be caught and logged by Celery's start-up with a traceback


worker_init.connect(_production_guard, weak=False)  # fires before the worker's banner
beat_init.connect(_production_guard, weak=False)  # a beat built some other way (GuardedBeat checks first)
