"""One domain error hierarchy. The HTTP layer renders every KopaError once as {"error", "detail"}."""

from __future__ import annotations

from typing import Any


class KopaError(Exception):
    status_code = 500
    code = "internal_error"

    def __init__(self, detail: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra or {}

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.code, "detail": self.detail, **self.extra}


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
        super().__init__(detail, extra={"locations": locations or []})
        self.locations = locations or []


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
