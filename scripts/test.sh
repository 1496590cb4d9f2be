#!/usr/bin/env bash
# The full test suite on a fresh machine: install, start Neo4j + Redis + the sandbox, lint, type-check, test.
#   bash scripts/test.sh [pytest args...]
# Exits non-zero on any failure. With CI=true, infrastructure tests can never be skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh
bash scripts/install_helm.sh >/dev/null   # helm (built once from its Go module, then cached) + offline K8s schemas
bash scripts/services.sh start
trap 'bash scripts/services.sh stop' EXIT
# shellcheck disable=SC1091
source .kopa/services.env

echo "[test] ruff" >&2
.venv/bin/ruff check .
echo "[test] mypy (strict)" >&2
.venv/bin/mypy .
echo "[test] pytest" >&2
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
