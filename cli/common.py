"""What every command group shares: one-line errors, checks of inputs made before any work starts, reading a
document file safely, and the configured store."""

from __future__ import annotations

import codecs
import functools
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, ParamSpec, TypeVar

import typer

from core.errors import KopaError, StoreUnavailable
from core.settings import Settings, get_settings
from graph.store import GraphStore, open_store

P = ParamSpec("P")
R = TypeVar("R")
#: Largest document file `kopa register` reads (the REST API has the same limit).
MAX_DOCUMENT_BYTES = 20 * 1024 * 1024


def one_line(message: str, limit: int = 400) -> str:
    text = " ".join(str(message).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one red `error:` line and exit non-zero."""
    typer.secho(f"error: {one_line(message, 1000)}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """A command whose domain errors (store away, bad input found late) end in one line, not a traceback."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except KopaError as exc:
            fail(exc.detail)
        except (ConnectionError, TimeoutError) as exc:
            fail(f"{type(exc).__name__}: {exc}")

    return run


def open_configured_store(settings: Settings | None = None) -> GraphStore:
    settings = settings or get_settings()
    try:
        store = open_store(settings)
        store.init_schema()
    except StoreUnavailable as exc:
        fail(f"{exc.detail}; start Neo4j with `bash scripts/services.sh start`, or use KOPA_STORE=embedded")
    except OSError as exc:  # an embedded file that cannot be created or opened
        fail(f"cannot open the graph store: {exc}")
    return store


def with_store(use: Callable[[GraphStore], R]) -> R:
    """`use` on the configured store, closed after; a domain error it raises ends the command in one line."""
    store = open_configured_store()
    try:
        return use(store)
    except KopaError as exc:
        fail(exc.detail)
    finally:
        store.close()


def option(field: str) -> str:
    """A request field as the CLI spells its option: `min_steps` -> `--min-steps` (`shapes[0]` -> `--shapes`)."""
    return "--" + field.split("[")[0].split(".")[0].replace("_", "-")


def check_writable_dir(option: str, path: Path) -> None:
    """Create `path` if needed and prove a file can be written there, before any work starts."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".kopa-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        fail(f"{option} {path} is not a writable folder: {exc.strerror or exc}")


def read_text_document(path: Path) -> str:
    """A document file as text: UTF-8 (with or without BOM) or UTF-16/32 with a BOM. Raises ValueError with a
    one-line reason for anything else (binary, Latin-1, too large, not a file)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from exc
    if not path.is_file():
        raise ValueError("not a regular file")
    if size > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{size:,} bytes; documents are limited to {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from exc
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if raw.startswith(bom):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise ValueError(f"starts with a {encoding} byte-order mark but is not valid {encoding}") from exc
    if b"\x00" in raw[:8192]:
        raise ValueError("binary data (NUL bytes), not a JSON or YAML document")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"not UTF-8 text (byte {exc.start}: 0x{raw[exc.start]:02x}); save the document as UTF-8"
        ) from exc
