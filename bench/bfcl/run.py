"""Run BFCL against a model behind an OpenAI-compatible endpoint: bfcl-eval's own generation and checkers, run as a
subprocess in the bfcl-eval venv (bench/bfcl/runner.py), with BFCL_PROJECT_ROOT inside the run folder.

Run folder layout:  run.json (what was asked, no secrets) · config.json (for the runner) · bfcl.log ·
bfcl/result/<registry>/... · bfcl/score/<registry>/... + data_*.csv (bfcl-eval's) · results.json (bfcl_summary).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

import httpx

from bench.bfcl.categories import not_run
from bench.bfcl.env import BFCL_EVAL_VERSION, default_venv, ensure_venv, venv_python
from bench.bfcl.results import bfcl_summary, write_summary
from bench.records import BfclSummary
from core.errors import InvalidInput, KopaError

RUNNER = Path(__file__).with_name("runner.py")


class BfclRunError(KopaError):
    status_code = 502
    code = "bfcl_failed"


@dataclass
class BfclRequest:
    endpoint: str
    model: str
    categories: list[str]
    out: Path | None = None
    limit_per_category: int | None = None
    venv: Path | None = None
    mode: Literal["fc", "prompt"] = "fc"
    api_key_env: str | None = None
    num_threads: int = 8
    temperature: float = 0.001
    max_tokens: int | None = None
    request_timeout_s: float = 600.0
    extra_env: dict[str, str] = field(default_factory=dict)


def registry_name(model: str) -> str:
    """The key the model is registered under in bfcl-eval for this run: no '/' or '_' (bfcl-eval turns result
    folder names back into model names by swapping '_' for '/')."""
    slug = re.sub(r"[^A-Za-z0-9.-]+", "-", model).strip("-.")
    if not slug:
        raise InvalidInput(f"model name {model!r} has no usable characters")
    return slug if slug.startswith("kopa-") else f"kopa-{slug}"


def normalise_endpoint(endpoint: str) -> str:
    """http(s)://host:port[/v1] -> the OpenAI base URL ending in /v1."""
    url = urlparse(endpoint.strip())
    if url.scheme not in ("http", "https") or not url.netloc:
        raise InvalidInput(f"endpoint must be an http(s) URL such as http://127.0.0.1:8000/v1, got {endpoint!r}")
    path = url.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return f"{url.scheme}://{url.netloc}{path}"


def check_endpoint(base_url: str, model: str, api_key: str | None) -> None:
    """Fail early, in one line, when nothing answers at the endpoint or it does not serve the model."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(f"{base_url}/models", headers=headers, timeout=15)
    except httpx.HTTPError as exc:
        raise InvalidInput(
            f"nothing answers at {base_url} ({type(exc).__name__}); start the model server first"
        ) from None
    if response.status_code != 200:
        raise InvalidInput(f"{base_url}/models answered HTTP {response.status_code}")
    try:
        served = [str(m.get("id")) for m in response.json().get("data", [])]
    except (ValueError, AttributeError):
        raise InvalidInput(f"{base_url}/models did not answer an OpenAI model list") from None
    if served and model not in served:
        raise InvalidInput(f"{base_url} does not serve {model!r}; it serves {', '.join(served)}")


def _default_out(model: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path(".kopa") / "bfcl" / f"{registry_name(model)}-{stamp}"


def run_bfcl(request: BfclRequest, log: Callable[[str], None] = print) -> BfclSummary:
    """Generate and score with bfcl-eval; returns (and writes to results.json) bfcl_summary of the run."""
    if not request.categories:
        raise InvalidInput("no BFCL category selected")
    if request.limit_per_category is not None and request.limit_per_category < 1:
        raise InvalidInput("--limit-per-category must be at least 1")
    if request.num_threads < 1:
        raise InvalidInput("num_threads must be at least 1")
    base_url = normalise_endpoint(request.endpoint)
    api_key = os.environ.get(request.api_key_env) if request.api_key_env else None
    if request.api_key_env and not api_key:
        raise InvalidInput(f"environment variable {request.api_key_env} (the endpoint's key) is not set")
    check_endpoint(base_url, request.model, api_key)
    venv = ensure_venv(request.venv or default_venv(), log=log)
    out = (request.out or _default_out(request.model)).absolute()
    project_root = out / "bfcl"
    project_root.mkdir(parents=True, exist_ok=True)
    name = registry_name(request.model)
    meta: dict[str, Any] = {
        "benchmark": "bfcl",
        "bfcl_eval_version": BFCL_EVAL_VERSION,
        "model": request.model,
        "registry_name": name,
        "endpoint": base_url,
        "mode": request.mode,
        "categories": request.categories,
        "not_run": not_run(request.categories),
        "limit_per_category": request.limit_per_category,
        "temperature": request.temperature,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    (out / "run.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
    config = {
        "registry_name": name,
        "served_model": request.model,
        "mode": request.mode,
        "categories": request.categories,
        "limit_per_category": request.limit_per_category,
        "temperature": request.temperature,
        "num_threads": request.num_threads,
    }
    config_path = out / "config.json"
    config_path.write_text(json.dumps(config, indent=1), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"))}
    env.update(
        {
            "BFCL_PROJECT_ROOT": str(project_root),
            "KOPA_BFCL_BASE_URL": base_url,
            "KOPA_BFCL_TIMEOUT": str(request.request_timeout_s),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "PYTHONUNBUFFERED": "1",
            "PYTHONIOENCODING": "utf-8",
            **request.extra_env,
        }
    )
    env.pop("KOPA_BFCL_API_KEY", None)
    if api_key:
        env["KOPA_BFCL_API_KEY"] = api_key
    if request.max_tokens:
        env["KOPA_BFCL_MAX_TOKENS"] = str(request.max_tokens)
    log(
        f"bfcl: {len(request.categories)} categories"
        + (f", {request.limit_per_category} per category" if request.limit_per_category else "")
        + f" -> {out} (log: {out / 'bfcl.log'})"
    )
    started = time.monotonic()
    with (out / "bfcl.log").open("w", encoding="utf-8") as logfile:
        done = subprocess.run(
            [str(venv_python(venv)), str(RUNNER), str(config_path)],
            cwd=project_root,
            env=env,
            stdout=logfile,
            stderr=subprocess.STDOUT,
            check=False,
        )
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        tail = (out / "bfcl.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        raise BfclRunError(
            f"bfcl-eval exited {done.returncode} after {elapsed:.0f}s; see {out / 'bfcl.log'}: " + " | ".join(tail)
        )
    meta["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    meta["wall_s"] = round(elapsed, 1)
    (out / "run.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
    summary = bfcl_summary(out)
    write_summary(out, summary)
    return summary


__all__ = ["BfclRequest", "BfclRunError", "check_endpoint", "normalise_endpoint", "registry_name", "run_bfcl"]
