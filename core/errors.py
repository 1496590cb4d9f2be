"""One domain error hierarchy. The HTTP layer renders every KopaError once as {"error", "detail"}."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict


class ErrorJson(TypedDict):
    """The body every error is answered with."""

    error: str
    detail: str
    locations: NotRequired[list[dict[str, str]]]  # InvalidInput: JSON pointers into the offending document


class KopaError(Exception):
    status_code = 500
    code = "internal_error"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def to_dict(self) -> ErrorJson:
        return {"error": self.code, "detail": self.detail}


class NotFound(KopaError):
    status_code = 404
    code = "not_found"


class Conflict(KopaError):
    status_code = 409
    code = "conflict"


class InvalidInput(KopaError):
    """Bad input. `locations` carries JSON pointers into the offending document."""

    status_code = 422
    code = "invalid_input"

    def __init__(self, detail: str, *, locations: list[dict[str, str]] | None = None) -> None:
        super().__init__(detail)
        self.locations = locations or []

    def to_dict(self) -> ErrorJson:
        return {**super().to_dict(), "locations": self.locations}


#: Problems a detail names (all of them are in `locations`).
SHOWN = 5
#: Where a web framework says a value came from (the first element of its error locations), not part of the field.
_SOURCES = ("body", "query", "path", "header", "cookie")


def _field(loc: Sequence[str | int]) -> str:
    """`shapes[0]`, `count`: a field as the request names it (a framework's source dropped)."""
    parts = list(loc[1:] if loc and loc[0] in _SOURCES else loc)
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def invalid_input(
    errors: Iterable[Mapping[str, Any]], *, name: Callable[[str], str] = lambda field: field
) -> InvalidInput:
    """The one message of a record that failed validation (pydantic's `errors()`), whichever entry validated it:
    the REST route, the CLI (`name` spells a field as its option: `count` -> `--count`) or a worker reading it
    back. The detail names each field and what is wrong (never the value: it may be a secret); `locations`
    point into the document."""
    locations, parts = [], []
    for e in errors:
        loc = tuple(e.get("loc", ()))
        msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
        locations.append({"pointer": "/" + "/".join(str(p) for p in loc), "message": msg})
        field = _field(loc)
        parts.append(f"{name(field)}: {msg}" if field else msg)
    more = f"; and {len(parts) - SHOWN} more (see locations)" if len(parts) > SHOWN else ""
    return InvalidInput("; ".join(parts[:SHOWN]) + more or "the request is invalid", locations=locations)


class Unauthorized(KopaError):
    status_code = 401
    code = "unauthorized"


class Forbidden(KopaError):
    status_code = 403
    code = "forbidden"


class DisallowedHost(KopaError):
    status_code = 422
    code = "host_not_allowed"


class StoreUnavailable(KopaError):
    status_code = 503
    code = "store_unavailable"


class StoreBusy(StoreUnavailable):
    """The store answers, but every pooled connection stayed in use for the acquisition timeout: retry shortly
    (503 with Retry-After), unlike StoreUnavailable, which means the store is not reachable."""

    code = "store_busy"
    retry_after_s = 2


class ConfigurationError(KopaError):
    """The process must not start with this configuration (e.g. default secrets with KOPA_ENV=production)."""

    status_code = 500
    code = "configuration_error"


class TooManyRequests(KopaError):
    """Refused for now, not for good: too many at once, or a budget spent until it renews (429 with Retry-After,
    in seconds)."""

    status_code = 429
    code = "too_many_requests"

    def __init__(self, detail: str, *, retry_after_s: int = 1) -> None:
        super().__init__(detail)
        self.retry_after_s = max(1, int(retry_after_s))


class BudgetExhausted(TooManyRequests):
    """A team's daily budget of upstream calls is spent; it renews at 00:00 UTC (Retry-After says when)."""

    code = "budget_exhausted"
