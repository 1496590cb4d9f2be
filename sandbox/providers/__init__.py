"""The emulated providers. Each module declares its operations (parameters, fields, behaviour)."""

from __future__ import annotations

from sandbox.providers import airkorea, hira, juso, kma, mfds, molit, nts, regions, tago, tour
from sandbox.spec import Operation


def all_operations() -> list[Operation]:
    ops: list[Operation] = []
    for module in (regions, juso, molit, kma, airkorea, tago, tour, hira, mfds, nts):
        ops.extend(module.OPERATIONS)
    return ops
