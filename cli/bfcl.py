"""`kopa bench bfcl`: the Berkeley Function Calling Leaderboard against a model behind an OpenAI-compatible endpoint,
offline, generated and scored by bfcl-eval itself (in its own venv, created on first use)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, cast

import typer

from bench.bfcl.categories import resolve
from bench.bfcl.env import BfclEnvError
from bench.bfcl.results import render_table
from bench.bfcl.run import BfclRequest, run_bfcl
from cli.common import fail
from core.errors import KopaError


def bfcl_cmd(
    endpoint: str = typer.Option(..., "--endpoint", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1"),
    model: str = typer.Option(..., "--model", help="the model name the endpoint serves (vLLM --served-model-name)"),
    categories: str | None = typer.Option(
        None,
        "--categories",
        help="comma-separated BFCL categories or groups (offline, non_live, live, multi_turn, memory, "
        "single_turn, irrelevance, ...); default: every category that runs offline",
    ),
    limit_per_category: int | None = typer.Option(
        None, "--limit-per-category", min=1, help="score only the first N entries of each category (partial run)"
    ),
    out: Path | None = typer.Option(None, "--out", help="run folder (default .kopa/bfcl/<model>-<UTC time>)"),
    venv: Path | None = typer.Option(
        None, "--venv", help="bfcl-eval venv (default $KOPA_BFCL_VENV or .kopa/bfcl-venv)"
    ),
    mode: str = typer.Option("fc", "--mode", help="fc (the server's tool calling) or prompt (BFCL's prompt format)"),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="environment variable holding the endpoint's key"
    ),
    threads: int = typer.Option(8, "--threads", min=1, help="concurrent requests to the endpoint"),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, help="max_tokens per completion"),
    json_out: bool = typer.Option(False, "--json", help="print the results JSON instead of the table"),
) -> None:
    """Run BFCL (bfcl-eval 2026.3.23) offline against an endpoint; writes results.json into the run folder."""
    if mode not in ("fc", "prompt"):
        fail(f"--mode must be fc or prompt, not {mode!r}")
    try:
        request = BfclRequest(
            endpoint=endpoint,
            model=model,
            categories=resolve(categories),
            out=out,
            limit_per_category=limit_per_category,
            venv=venv,
            mode=cast(Literal["fc", "prompt"], mode),
            api_key_env=api_key_env,
            num_threads=threads,
            max_tokens=max_tokens,
        )
        summary = run_bfcl(request, log=lambda line: typer.echo(line, err=True))
    except (KopaError, BfclEnvError) as exc:
        fail(str(exc), code=1)
    typer.echo(json.dumps(summary, indent=1, ensure_ascii=False) if json_out else render_table(summary))
