#!/usr/bin/env bash
# The main job end to end on the embedded default: no servers to install or start.
#   bash scripts/demo.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
exec .venv/bin/kopa demo "$@"
