"""Small helpers shared by provider handlers."""

from __future__ import annotations

import math
from datetime import date, datetime

from sandbox.spec import ProviderError, Request


def invalid(msg: str = "INVALID_REQUEST_PARAMETER_ERROR") -> ProviderError:
    return ProviderError("10", msg)


def as_float(value: str, name: str) -> float:
    try:
        out = float(value)
    except ValueError as exc:
        raise invalid() from exc
    if math.isnan(out) or math.isinf(out):
        raise invalid()
    return out


def as_int(value: str, name: str) -> int:
    if not value.lstrip("-").isdigit():
        raise invalid()
    return int(value)


def parse_ymd(value: str) -> date:
    try:
        return datetime.strptime(value, "%Y%m%d").date()
    except ValueError as exc:
        raise invalid() from exc


def page_args(
    req: Request, page_name: str = "pageNo", rows_name: str = "numOfRows", default_rows: int = 10
) -> tuple[int, int]:
    """Page number and size as the framework parsed them (handlers that paginate themselves)."""
    page = int(req.params.get(page_name) or 1)
    rows = int(req.params.get(rows_name) or default_rows)
    return page, rows
