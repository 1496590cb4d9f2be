"""The request of one tool call as the executor builds it, before httpx sends it."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

import httpx


class RequestParts(TypedDict):
    """The keyword arguments of `httpx.AsyncClient.build_request` for one call (`Executor._request`)."""

    method: str
    url: str
    params: dict[str, str]
    headers: dict[str, str]
    extensions: NotRequired[dict[str, Any]]  # the key, for the transport to put on the wire copy only
    data: NotRequired[dict[str, Any]]  # a form body
    files: NotRequired[list[tuple[str, tuple[None, Any]]]]  # a multipart body
    json: NotRequired[Any]  # a JSON body


def redacted_url(req: RequestParts) -> str:
    """The request URL as evidence: built from the request without its secret extension, so it never held a key."""
    return str(httpx.URL(req["url"], params=req["params"]))
