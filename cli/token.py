"""`kopa token create|list|revoke`: bearer tokens for the REST API."""

from __future__ import annotations

from typing import Annotated

import typer

from api.security import mint_token, parse_duration
from cli.common import fail, with_store
from core.errors import KopaError

app = typer.Typer(help="Bearer tokens for the REST API.", no_args_is_help=True)


@app.command("create")
def token_create(
    role: Annotated[
        str, typer.Option(help="admin (register/delete APIs, start runs) or reader (read, request batches).")
    ],
    name: Annotated[str, typer.Option(help="A label to recognise the token by; also the team of a reader.")] = "",
    expires_in: Annotated[
        str | None, typer.Option(help="Lifetime, e.g. 30d, 12h, 90m, 2w (default: no expiry).")
    ] = None,
) -> None:
    """Mint a bearer token. It is printed once; only its hash is stored."""
    if role not in ("admin", "reader"):
        fail("--role must be admin or reader")
    if len(name) > 100:
        fail("--name is limited to 100 characters")
    try:
        lifetime = parse_duration(expires_in) if expires_in is not None else None
    except KopaError as exc:
        fail(f"--expires-in: {exc.detail}")
    typer.echo(with_store(lambda store: mint_token(store, role, name, lifetime)))  # type: ignore[arg-type]


@app.command("list")
def token_list() -> None:
    """List tokens: id, role, name (team), state, created, expires. Secrets are never shown (not even stored)."""
    tokens = with_store(lambda store: store.list_tokens())
    typer.echo(f"{'id':12}  {'role':6}  {'state':7}  {'created':25}  {'expires':25}  name")
    for t in tokens:
        typer.echo(f"{t.id:12}  {t.role:6}  {t.state():7}  {t.created_at:25}  {t.expires_at or 'never':25}  {t.name}")


@app.command("revoke")
def token_revoke(token_id: Annotated[str, typer.Argument(help="The token's id (see `kopa token list`).")]) -> None:
    """Revoke a token: it is refused from now on (it stays listed as revoked)."""
    record = with_store(lambda store: store.revoke_token(token_id))
    if record is None:
        fail(f"no token with id {token_id!r}; `kopa token list` shows them")
    typer.echo(f"revoked {record.id} ({record.role}, {record.name}) at {record.revoked_at}")
