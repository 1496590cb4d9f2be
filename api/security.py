"""Bearer tokens with roles. Only SHA-256 hashes are stored; a token is shown once, when it is minted."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid

from core.errors import Forbidden, Unauthorized
from core.settings import Settings
from graph.models import Role, TokenRecord
from graph.store import GraphStore

ROLE_RANK = {"reader": 1, "admin": 2}


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def mint_token(store: GraphStore, role: Role, name: str = "") -> str:
    token = "kopa_" + secrets.token_urlsafe(32)
    store.add_token(TokenRecord(id=uuid.uuid4().hex[:12], name=name or role, role=role, token_hash=hash_token(token)))
    return token


def principal(store: GraphStore, settings: Settings, header: str | None) -> tuple[Role, str]:
    """(role, team): the team is the token's name, used for per-team batch limits."""
    if not header or not header.lower().startswith("bearer "):
        raise Unauthorized("missing bearer token: send 'Authorization: Bearer <token>' (mint one with `kopa token create`)")
    token = header.split(None, 1)[1].strip()
    boot = settings.bootstrap_token.get_secret_value() if settings.bootstrap_token else ""
    if boot and hmac.compare_digest(token, boot):
        return "admin", "bootstrap"
    record = store.find_token(hash_token(token))
    if record is None:
        raise Unauthorized("unknown or revoked token")
    return record.role, record.name


def authenticate(store: GraphStore, settings: Settings, header: str | None) -> Role:
    return principal(store, settings, header)[0]


def require(role: Role, actual: Role) -> None:
    if ROLE_RANK[actual] < ROLE_RANK[role]:
        raise Forbidden(f"this needs the {role} role; your token has {actual}")
