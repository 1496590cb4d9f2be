#!/usr/bin/env bash
# The main job end to end on the embedded default: no servers to install or start.
#   bash scripts/demo.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
KOPA_EXTRAS="${KOPA_EXTRAS:-dev}" bash scripts/setup.sh   # the demo needs no training stack
exec .venv/bin/kopa demo "$@"
