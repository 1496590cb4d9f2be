#!/usr/bin/env bash
# The full test suite on a fresh machine: install, start Neo4j + Redis + the sandbox, lint, type-check, test.
#   bash scripts/test.sh [pytest args...]
# Exits non-zero on any failure. With CI=true, infrastructure tests can never be skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh
bash scripts/install_helm.sh >/dev/null   # helm (built once from its Go module, then cached) + offline K8s schemas
# bfcl-eval pins old dependencies: its own venv, created once per machine (about 6 GB) and reused by every clone
export KOPA_BFCL_VENV="${KOPA_BFCL_VENV:-$HOME/.cache/kopa/bfcl-venv}"
bash scripts/bfcl_env.sh
# nothing may download weights or data sets at run time; trl/transformers stay offline and quiet
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 TRL_EXPERIMENTAL_SILENCE=1
bash scripts/services.sh start
trap 'bash scripts/services.sh stop' EXIT
# shellcheck disable=SC1091
source .kopa/services.env

echo "[test] ruff (lint, format)" >&2
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "[test] mypy (strict)" >&2
.venv/bin/mypy .
echo "[test] pytest" >&2
.venv/bin/python -m pytest -q -p no:cacheprovider --durations=15 "$@"
