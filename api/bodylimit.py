"""Request body size limits at the ASGI layer, before any route, dependency or authentication reads the body.

A declared Content-Length over the limit is answered 413 at once (nothing is read); a body without one (chunked)
is counted as it streams and the request stops at the limit. Memory stays bounded by the limit whoever sends.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from core.errors import KopaError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyTooLarge(KopaError):
    status_code = 413
    code = "body_too_large"


class BodyLimit:
    """`default` bytes for every request; `per_prefix` maps a path prefix (e.g. "/v1/apis") to its own limit."""

    def __init__(self, app: ASGIApp, default: int, per_prefix: dict[str, int] | None = None) -> None:
        self.app = app
        self.default = default
        self.per_prefix = sorted((per_prefix or {}).items(), key=lambda kv: -len(kv[0]))

    def limit_for(self, path: str) -> int:
        for prefix, limit in self.per_prefix:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                return limit
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(str(scope.get("path", "")))
        declared = [v for k, v in scope.get("headers", []) if k.lower() == b"content-length"]
        if declared:
            try:
                length = int(declared[0])
                if length < 0 or len(set(declared)) > 1:
                    raise ValueError
            except ValueError:
                await _reply(send, 400, "invalid_content_length", "Content-Length must be one non-negative integer")
                return
            if length > limit:
                await _reply(send, 413, BodyTooLarge.code, _detail(limit))
                return
        received = 0
        started = False
        over = False  # the body passed the limit: whatever the app answers (400 from a JSON parser, 500), it is 413

        async def limited_receive() -> Message:
            nonlocal received, over
            if over:
                raise BodyTooLarge(_detail(limit))
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    over = True
                    raise BodyTooLarge(_detail(limit))
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if over:
                if not started:
                    started = True
                    await _reply(send, 413, BodyTooLarge.code, _detail(limit))
                return  # the app's own answer to a body it could not finish reading is dropped
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except Exception:
            if not over:
                raise
        if over and not started:
            await _reply(send, 413, BodyTooLarge.code, _detail(limit))


def _detail(limit: int) -> str:
    size = (
        f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 and limit % (1024 * 1024) == 0 else f"{limit:,} bytes"
    )
    return f"request bodies are limited to {size} here"


async def _reply(send: Send, status: int, code: str, detail: str) -> None:
    body = json.dumps({"error": code, "detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
