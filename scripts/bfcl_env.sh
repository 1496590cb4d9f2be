#!/usr/bin/env bash
# Create (once) or reuse the bfcl-eval virtual environment used by `kopa bench bfcl` and tests/test_bfcl.py.
# Idempotent: a marker file in the venv records the bfcl-eval version. Folder: $KOPA_BFCL_VENV or ~/.cache/kopa/bfcl-venv (per user).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
exec "$PY" -c "import sys; from bench.bfcl.env import main; sys.exit(main(sys.argv[1:]))" "$@"
