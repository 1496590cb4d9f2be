"""`kopa token create`: bearer tokens for the REST API."""

from __future__ import annotations

from typing import Annotated

import typer

from api.security import mint_token
from cli.common import fail, open_configured_store

app = typer.Typer(help="Bearer tokens for the REST API.", no_args_is_help=True)


@app.command("create")
def token_create(
    role: Annotated[str, typer.Option(help="admin (register/delete APIs, start runs) or reader (read, request batches).")],
    name: Annotated[str, typer.Option(help="A label to recognise the token by.")] = "",
) -> None:
    """Mint a bearer token. It is printed once; only its hash is stored."""
    if role not in ("admin", "reader"):
        fail("--role must be admin or reader")
    store = open_configured_store()
    typer.echo(mint_token(store, role, name))  # type: ignore[arg-type]
    store.close()
