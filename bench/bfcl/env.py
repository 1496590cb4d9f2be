"""The bfcl-eval virtual environment: bfcl-eval pins old dependencies (numpy 1.26.4, tree_sitter 0.21.3, ...), so
it lives in its own venv, created once with `python -m venv` + pip and reused (a marker file records the version).

    python -m bench.bfcl.env [--venv DIR]      # idempotent; scripts/bfcl_env.sh calls this
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

BFCL_EVAL_VERSION = "2026.3.23"
#: Per user, not per directory: every clone and working directory of one user shares it (about 6 GB).
DEFAULT_VENV = Path("~/.cache/kopa/bfcl-venv")
MARKER = ".kopa-bfcl-ready"
ENV_VAR = "KOPA_BFCL_VENV"
# qwen-agent (an unpinned bfcl-eval dependency) imports soundfile without declaring it.
EXTRA_PACKAGES = ("soundfile>=0.12",)


class BfclEnvError(RuntimeError):
    """The bfcl-eval environment could not be created or is unusable."""


def default_venv() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser()
    return Path(os.environ[ENV_VAR]).expanduser() if os.environ.get(ENV_VAR) else base / "kopa" / "bfcl-venv"


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def package_dir(venv: Path) -> Path:
    """The installed bfcl_eval package folder (found on disk; nothing is imported)."""
    found = sorted(venv.glob("lib/python*/site-packages/bfcl_eval"))
    if not found:
        raise BfclEnvError(f"bfcl_eval is not installed in {venv}")
    return found[0]


def data_dir(venv: Path) -> Path:
    """bfcl-eval's shipped data: questions (JSON Lines named *.json) and possible_answer/."""
    return package_dir(venv) / "data"


def is_ready(venv: Path) -> bool:
    marker = venv / MARKER
    if not marker.is_file() or not venv_python(venv).exists():
        return False
    try:
        return bool(json.loads(marker.read_text(encoding="utf-8")).get("bfcl_eval") == BFCL_EVAL_VERSION)
    except ValueError:
        return False


def ensure_venv(venv: Path | None = None, *, python: str | None = None, log: Callable[[str], None] = print) -> Path:
    """Create (or reuse) the venv with bfcl-eval==BFCL_EVAL_VERSION; returns its folder. Idempotent."""
    venv = (venv or default_venv()).absolute()
    if is_ready(venv):
        return venv
    base = python or getattr(sys, "_base_executable", None) or sys.executable
    if venv.exists():
        log(f"bfcl: {venv} is incomplete or of another version; recreating it")
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    log(f"bfcl: creating {venv} and installing bfcl-eval=={BFCL_EVAL_VERSION} (several minutes, once)")
    steps = [
        [base, "-m", "venv", str(venv)],
        [str(venv_python(venv)), "-m", "pip", "install", "--quiet", f"bfcl-eval=={BFCL_EVAL_VERSION}", *EXTRA_PACKAGES],
        [
            str(venv_python(venv)),
            "-c",
            "import importlib.util, sys; sys.exit(importlib.util.find_spec('bfcl_eval') is None)",
        ],
    ]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise BfclEnvError(f"bfcl: `{' '.join(cmd[:4])} ...` failed (exit {done.returncode}): " + " | ".join(tail))
    (venv / MARKER).write_text(json.dumps({"bfcl_eval": BFCL_EVAL_VERSION}), encoding="utf-8")
    log(f"bfcl: environment ready at {venv}")
    return venv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Create or reuse the bfcl-eval virtual environment.")
    parser.add_argument("--venv", type=Path, default=None, help=f"folder (default ${ENV_VAR} or {DEFAULT_VENV})")
    args = parser.parse_args(argv)
    try:
        print(ensure_venv(args.venv))
    except BfclEnvError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
