"""Bearer tokens with roles, optional expiry and revocation. Only SHA-256 hashes are stored; a token is shown
once, when it is minted."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from core.errors import Forbidden, InvalidInput, Unauthorized
from core.settings import Settings
from graph.models import Role, TokenRecord
from graph.store import TokenStore

ROLE_RANK = {"reader": 1, "admin": 2}
#: Longest token accepted in a header (minted tokens are 48 characters); longer ones are refused unhashed.
MAX_TOKEN = 512
MAX_EXPIRY = timedelta(days=3650)
_DURATION = re.compile(r"^\s*(\d{1,6})\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@dataclass(frozen=True)
class Principal:
    """Who calls: the role and the team (the token's name; batches are visible to their team and to admins)."""

    role: Role
    team: str
    token_id: str = ""

    def sees_team(self, team: str) -> bool:
        return self.role == "admin" or team == self.team


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def parse_duration(text: str) -> timedelta:
    """'30d', '12h', '90m', '3600s', '2w' -> a timedelta (at most ten years). Raises InvalidInput otherwise."""
    m = _DURATION.match(text or "")
    if m and int(m.group(1)) == 0:  # a token that expires as it is minted is never what was meant
        raise InvalidInput(
            f"expiry {text!r} is zero: a token must live at least 1 second; leave expires_in out for "
            "a token that never expires",
            locations=[{"pointer": "/expires_in", "message": "zero"}],
        )
    if not m:
        raise InvalidInput(
            f"expiry {text!r} is not a duration like 30d, 12h, 90m, 2w or 3600s",
            locations=[{"pointer": "/expires_in", "message": "expected N followed by s, m, h, d or w"}],
        )
    delta = timedelta(**{_UNITS[m.group(2).lower()]: int(m.group(1))})
    if delta > MAX_EXPIRY:
        raise InvalidInput(
            "expiry is limited to ten years (3650d)", locations=[{"pointer": "/expires_in", "message": "too long"}]
        )
    return delta


def new_token(role: Role, name: str = "", expires_in: timedelta | None = None) -> tuple[str, TokenRecord]:
    """A fresh secret and the record to store for it (the secret itself is never stored)."""
    token = "kopa_" + secrets.token_urlsafe(32)
    expires = (datetime.now(UTC) + expires_in).isoformat(timespec="seconds") if expires_in else ""
    record = TokenRecord(
        id=uuid.uuid4().hex[:12], name=name or role, role=role, token_hash=hash_token(token), expires_at=expires
    )
    return token, record


def mint_token(store: TokenStore, role: Role, name: str = "", expires_in: timedelta | None = None) -> str:
    token, record = new_token(role, name, expires_in)
    store.add_token(record)
    return token


def bearer(header: str | None) -> str:
    """The token of an `Authorization: Bearer <token>` header, or Unauthorized saying what is wrong with it."""
    if not header or not header.strip():
        raise Unauthorized(
            "missing bearer token: send 'Authorization: Bearer <token>' (mint one with `kopa token create`)"
        )
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise Unauthorized(f"unsupported authorization scheme {scheme[:20]!r}: send 'Authorization: Bearer <token>'")
    token = rest.strip()
    if not token:
        raise Unauthorized("empty bearer token: send 'Authorization: Bearer <token>'")
    if len(token) > MAX_TOKEN or any(c.isspace() for c in token):
        raise Unauthorized("malformed bearer token")
    return token


def principal(store: TokenStore, settings: Settings, header: str | None) -> Principal:
    token = bearer(header)
    boot = settings.bootstrap_token.get_secret_value() if settings.bootstrap_token else ""
    if boot and hmac.compare_digest(token.encode("utf-8", "surrogateescape"), boot.encode("utf-8", "surrogateescape")):
        return Principal("admin", "bootstrap")
    record = store.find_token(hash_token(token))
    if record is None:
        raise Unauthorized("unknown or revoked token")
    state = record.state()
    if state == "revoked":
        raise Unauthorized("unknown or revoked token")
    if state == "expired":
        raise Unauthorized("the token has expired; mint a new one with `kopa token create`")
    return Principal(record.role, record.name, record.id)


def require(role: Role, actual: Role) -> None:
    if ROLE_RANK[actual] < ROLE_RANK[role]:
        raise Forbidden(f"this needs the {role} role; your token has {actual}")
