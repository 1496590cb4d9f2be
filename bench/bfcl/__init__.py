"""BFCL (Berkeley Function Calling Leaderboard) transfer evaluation: bfcl-eval 2026.3.23 in its own venv
(env.py), a runner script with the registered handler executed there (runner.py), the run (run.py) and BFCL's
scores parsed into the project's results JSON (results.py: `bfcl_summary`)."""

from bench.bfcl.categories import NOT_OFFLINE, OFFLINE_DEFAULT, resolve
from bench.bfcl.env import BFCL_EVAL_VERSION, BfclEnvError, ensure_venv
from bench.bfcl.results import bfcl_summary, compare_columns, load_summary, render_table
from bench.bfcl.run import BfclRequest, BfclRunError, run_bfcl

__all__ = [
    "BFCL_EVAL_VERSION",
    "NOT_OFFLINE",
    "OFFLINE_DEFAULT",
    "BfclEnvError",
    "BfclRequest",
    "BfclRunError",
    "bfcl_summary",
    "compare_columns",
    "ensure_venv",
    "load_summary",
    "render_table",
    "resolve",
    "run_bfcl",
]
