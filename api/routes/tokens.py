"""/v1/tokens: bearer tokens for admins — list (never the secrets), mint (the secret is shown once), revoke."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from api.deps import AdminDep, KopaRoute, StoreDep, errors
from api.security import new_token, parse_duration
from core.errors import NotFound
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
        return cls(
            id=record.id,
            name=record.name,
            role=record.role,
            created_at=record.created_at,
            expires_at=record.expires_at,
            revoked_at=record.revoked_at,
            state=record.state(),
        )


class TokenRequest(BaseModel):
    role: Role
    name: str = Field("", max_length=100, pattern=r"^[\w.\- ]*$", description="label and team (default: the role)")
    expires_in: str | None = Field(
        None,
        pattern=r"^[0-9]{1,6}[smhdwSMHDW]$",
        description="e.g. 30d, 12h, 90m, 2w (at most 3650d); absent: never expires",
    )


class TokenCreated(TokenInfo):
    token: str = Field(description="the bearer secret; shown once, only its hash is stored")


@router.get(
    "",
    response_model=list[TokenInfo],
    summary="List tokens (ids, names, roles, expiry; never secrets)",
    responses=errors(401, 403, 503),
)
def list_tokens(store: StoreDep, _: AdminDep) -> list[TokenInfo]:
    return [TokenInfo.of(t) for t in store.list_tokens()]


@router.post(
    "",
    status_code=201,
    response_model=TokenCreated,
    summary="Mint a token (the secret is shown once)",
    responses=errors(400, 401, 403, 413, 422, 503),
)
def create_token(body: TokenRequest, store: StoreDep, _: AdminDep) -> TokenCreated:
    expires = parse_duration(body.expires_in) if body.expires_in else None
    secret, record = new_token(body.role, body.name.strip(), expires)
    store.add_token(record)
    return TokenCreated(**TokenInfo.of(record).model_dump(), token=secret)


@router.delete(
    "/{token_id}",
    response_model=TokenInfo,
    summary="Revoke a token (idempotent; it stays listed)",
    responses=errors(401, 403, 404, 422, 503),
)
def revoke_token(token_id: TokenId, store: StoreDep, _: AdminDep) -> TokenInfo:
    record = store.revoke_token(token_id)
    if record is None:
        raise NotFound(f"no token {token_id!r}; GET /v1/tokens lists them")
    return TokenInfo.of(record)
