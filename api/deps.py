"""Dependencies shared by the routes: the store, the settings, the caller (role and team), paging bounds, and the
one documented error model."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, ClassVar, TypeVar

from fastapi import Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from api.security import Principal, principal, require
from core.errors import NotFound, TooManyRequests
from core.settings import Settings
from graph.models import Role
from graph.store import GraphStore

T = TypeVar("T")


def found(value: T | None, missing: str) -> T:
    """`value`, or 404 with `missing` (what was asked for and where to look) when the store has none."""
    if value is None:
        raise NotFound(missing)
    return value


#: Paging bounds of every list route (documented in the OpenAPI document): offsets past the last item give an
#: empty page; offsets above MAX_OFFSET are refused with 422.
MAX_OFFSET = 10_000_000

bearer_scheme = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    bearerFormat="opaque",
    description="`Authorization: Bearer <token>`; mint tokens with `kopa token create --role admin|reader` "
    "(or POST /v1/tokens as an admin). Readers read and request batches; admins also write.",
)


class ErrorLocation(BaseModel):
    pointer: str = Field(description="JSON pointer into the request (or the posted document)")
    message: str


class ErrorBody(BaseModel):
    """Every error answer: a stable code, a sentence for people, and where the input was wrong (422)."""

    error: str = Field(description="stable code, e.g. unauthorized, forbidden, not_found, invalid_input")
    detail: str
    locations: list[ErrorLocation] | None = None


_DESCRIPTIONS = {
    400: "malformed request",
    401: "missing, empty, malformed, unknown, revoked or expired bearer token",
    403: "the token's role may not do this",
    404: "no such resource (or not visible to your team)",
    409: "conflict with the current state",
    413: "request body too large",
    422: "invalid input, with JSON-pointer locations",
    429: "too many at once, or a daily budget spent: ask again after `Retry-After` seconds (the detail says why)",
    502: "an upstream call failed",
    503: "the graph store, Redis or the task queue is unreachable",
}


_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer", "minimum": 1}, "description": "seconds to wait"}}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` entries for the given error statuses, all with the one error model (429 says when to retry)."""
    return {
        code: {
            "model": ErrorBody,
            "description": _DESCRIPTIONS[code],
            **({"headers": _RETRY_AFTER} if code == 429 else {}),
        }
        for code in codes
    }


READ_ERRORS = (401, 422, 503)
WRITE_ERRORS = (400, 401, 403, 413, 422, 503)


def get_store(request: Request) -> GraphStore:
    store: GraphStore = request.app.state.kopa.store
    return store


def get_app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.kopa.settings
    return settings


StoreDep = Annotated[GraphStore, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_app_settings)]


def caller(
    request: Request, _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)] = None
) -> Principal:
    """The caller, from the raw header (so an empty or malformed one gets a 401 that says what is wrong)."""
    state = request.app.state.kopa
    return principal(state.store, state.settings, request.headers.get("authorization"))


def reader_principal(who: Annotated[Principal, Depends(caller)]) -> Principal:
    require("reader", who.role)
    return who


def reader(who: Annotated[Principal, Depends(reader_principal)]) -> Role:
    return who.role


def admin(who: Annotated[Principal, Depends(caller)]) -> Role:
    require("admin", who.role)
    return who.role


def team(who: Annotated[Principal, Depends(reader_principal)]) -> str:
    return who.team


ReaderDep = Annotated[Role, Depends(reader)]
AdminDep = Annotated[Role, Depends(admin)]
TeamDep = Annotated[str, Depends(team)]
PrincipalDep = Annotated[Principal, Depends(reader_principal)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description=f"items to skip (0..{MAX_OFFSET:,})")]


#: Seconds a caller refused a stream slot is told to wait (Retry-After).
STREAM_RETRY_S = 2


class StreamSlots:
    """The streams each token holds open in this process (`/v1/trajectory-batches/{id}/items`): `take` refuses a
    token that already holds `per_token` (429 with Retry-After) and gives back the function that frees the slot."""

    def __init__(self) -> None:
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def held(self, key: str) -> int:
        with self._lock:
            return self._held.get(key, 0)

    def take(self, key: str, per_token: int) -> Callable[[], None]:
        with self._lock:
            held = self._held.get(key, 0)
            if held >= per_token:
                raise TooManyRequests(
                    f"this token already has {held} item streams open (at most {per_token} at once per token, "
                    "KOPA_BATCHES__ITEM_STREAMS_PER_TOKEN); read or close one, then ask again",
                    retry_after_s=STREAM_RETRY_S,
                )
            self._held[key] = held + 1
        freed = False

        def release() -> None:
            nonlocal freed
            with self._lock:
                if freed:
                    return
                freed = True
                left = self._held.get(key, 1) - 1
                if left > 0:
                    self._held[key] = left
                else:
                    self._held.pop(key, None)

        return release


_SLOTS_LOCK = threading.Lock()


def stream_slots(request: Request) -> StreamSlots:
    """The app's one StreamSlots (made on first use)."""
    state = request.app.state
    with _SLOTS_LOCK:
        slots: StreamSlots | None = getattr(state, "kopa_streams", None)
        if slots is None:
            slots = StreamSlots()
            state.kopa_streams = slots
    return slots


def slot_key(who: Principal) -> str:
    """One token's key for its stream slots (the bootstrap token has no id: its role and name)."""
    return who.token_id or f"{who.role}:{who.team}"


class KopaRoute(APIRoute):
    """Routes that answer methods they do not serve honestly: OPTIONS gives 204 with the `Allow` header, any
    other method 405 with `Allow` listing every method served at that path (not only one route's) and the error
    model as body."""

    #: methods served per path pattern, over every KopaRoute (routers carry their prefix in the route's path)
    served: ClassVar[dict[str, set[str]]] = {}

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        KopaRoute.served.setdefault(self.path_regex.pattern, set()).update(self.methods or ())

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """FastAPI's own HTTP errors (400 'error parsing the body', ...) in the one error model."""
        handler = super().get_route_handler()

        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except StarletteHTTPException as exc:
                code = {
                    400: "bad_request",
                    401: "unauthorized",
                    403: "forbidden",
                    404: "not_found",
                    413: "payload_too_large",
                }.get(exc.status_code, "http_error")
                return JSONResponse(
                    {"error": code, "detail": str(exc.detail)},
                    status_code=exc.status_code,
                    headers=dict(exc.headers or {}),
                )

        return run

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method", "")
        if scope["type"] != "http" or not self.methods or method in self.methods:
            await super().handle(scope, receive, send)
            return
        path = scope.get("path", "")
        allowed = set(self.methods)
        for pattern, methods in KopaRoute.served.items():
            if re.match(pattern, path):
                allowed |= methods
        allow = ", ".join(sorted(allowed | {"OPTIONS"}))
        response: Response
        if method == "OPTIONS":
            response = Response(status_code=204, headers={"Allow": allow})
        else:
            response = JSONResponse(
                {"error": "method_not_allowed", "detail": f"{method} is not served at this path; allowed: {allow}"},
                status_code=405,
                headers={"Allow": allow},
            )
        await response(scope, receive, send)
