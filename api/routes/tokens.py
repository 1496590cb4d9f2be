"""/v1/tokens: bearer tokens for admins — list (never the secrets), mint (the secret is shown once), revoke."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from api.deps import AdminDep, KopaRoute, StoreDep, errors, found
from api.security import new_token, parse_duration
from core.errors import InvalidInput
from graph.models import Role, TokenRecord

router = APIRouter(prefix="/v1/tokens", tags=["tokens"], route_class=KopaRoute)
TokenId = Annotated[str, Path(min_length=1, max_length=64, description="the token's id (from GET /v1/tokens)")]


class TokenInfo(BaseModel):
    id: str
    name: str = Field(description="also the team whose batches the token sees")
    role: Role
    created_at: str
    expires_at: str = Field(description='ISO instant, "" = never')
    revoked_at: str = Field(description='ISO instant, "" = not revoked')
    state: Literal["active", "expired", "revoked"]

    @classmethod
    def of(cls, record: TokenRecord) -> TokenInfo:
        return cls.model_validate({**record.model_dump(include=set(cls.model_fields)), "state": record.state()})


#: A positive duration of at most ten years (api.security.MAX_EXPIRY), written N followed by its unit, no leading
#: zero: any 1-6 digits of seconds or minutes (999999m is under two years), up to 87600h, 3650d or 521w. The
#: schema states the bound, so every value it allows is minted and every other one is refused with 422.
EXPIRES_IN = (
    r"^(?:[1-9][0-9]{0,5}[smSM]"
    r"|(?:[1-9][0-9]{0,3}|[1-7][0-9]{4}|8[0-6][0-9]{3}|87[0-5][0-9]{2}|87600)[hH]"
    r"|(?:[1-9][0-9]{0,2}|[12][0-9]{3}|3[0-5][0-9]{2}|36[0-4][0-9]|3650)[dD]"
    r"|(?:[1-9][0-9]?|[1-4][0-9]{2}|5[01][0-9]|52[01])[wW])$"
)
#: Token names (a reader's team): ASCII letters, digits, `_`, `.`, `-` and spaces, as the schema says (`\w` would
#: be Unicode to the server and ASCII to a JSON Schema validator).
TOKEN_NAME = r"^[A-Za-z0-9_.\- ]*$"


def _expiry_pattern(schema: dict[str, Any]) -> None:
    """EXPIRES_IN on the string branch of `expires_in`'s schema (a string or null)."""
    for branch in schema.get("anyOf", []):
        if isinstance(branch, dict) and branch.get("type") == "string":
            branch["pattern"] = EXPIRES_IN


class TokenRequest(BaseModel):
    role: Role
    name: str = Field(
        "",
        max_length=100,
        pattern=TOKEN_NAME,
        description="label and team (default: the role): ASCII letters, digits, _ . - and spaces",
    )
    expires_in: str | None = Field(
        None,
        json_schema_extra=_expiry_pattern,
        description="N followed by s, m, h, d or w, e.g. 30d, 12h, 90m, 2w: at least 1 (no leading zero), at most "
        "ten years (87600h, 3650d, 521w; seconds and minutes up to 6 digits); absent: never expires",
    )


def _expiry(value: str) -> timedelta:
    """The schema's pattern (EXPIRES_IN) in the words of `parse_duration`: a zero, a malformed or a too long expiry
    is refused with 422 and a sentence for people, never the regular expression."""
    if not re.fullmatch(EXPIRES_IN, value):
        parse_duration(value)  # the reason: zero, not a duration, or over ten years
        raise InvalidInput(  # what parse_duration takes and the schema does not: a leading zero
            f"expiry {value[:40]!r} is not written like 30d, 12h, 90m, 2w or 3600s (no leading zero)",
            locations=[{"pointer": "/expires_in", "message": "does not match the documented pattern"}],
        )
    return parse_duration(value)


class TokenCreated(TokenInfo):
    token: str = Field(description="the bearer secret; shown once, only its hash is stored")


@router.get(
    "",
    summary="List tokens (ids, names, roles, expiry; never secrets)",
    responses=errors(401, 403, 503),
)
def list_tokens(store: StoreDep, _: AdminDep) -> list[TokenInfo]:
    return [TokenInfo.of(t) for t in store.list_tokens()]


@router.post(
    "",
    status_code=201,
    summary="Mint a token (the secret is shown once)",
    responses=errors(400, 401, 403, 413, 422, 503),
)
def create_token(body: TokenRequest, store: StoreDep, _: AdminDep) -> TokenCreated:
    expires = _expiry(body.expires_in) if body.expires_in is not None else None
    secret, record = new_token(body.role, body.name.strip(), expires)
    store.add_token(record)
    return TokenCreated(**TokenInfo.of(record).model_dump(), token=secret)


@router.delete(
    "/{token_id}",
    summary="Revoke a token (idempotent; it stays listed)",
    responses=errors(401, 403, 404, 422, 503),
)
def revoke_token(token_id: TokenId, store: StoreDep, _: AdminDep) -> TokenInfo:
    return TokenInfo.of(found(store.revoke_token(token_id), f"no token {token_id!r}; GET /v1/tokens lists them"))
