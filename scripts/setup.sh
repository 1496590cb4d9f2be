#!/usr/bin/env bash
# Install what KOPA EDGE needs on a fresh Debian machine of this kind: system packages (when root), and the
# Python environment in .venv (editable install with the dev tools). Idempotent; safe to re-run.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

need_pkgs=()
command -v redis-server >/dev/null || need_pkgs+=(redis-server)
command -v wrk >/dev/null || need_pkgs+=(wrk)
command -v java >/dev/null || need_pkgs+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || need_pkgs+=(maven)
# headless Chromium and its WebDriver for the real-browser test of the Neo4j Browser helpers (tests/test_browser_ui.py)
command -v chromium >/dev/null || need_pkgs+=(chromium)
command -v chromedriver >/dev/null || need_pkgs+=(chromium-driver)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "[setup] apt-get install ${need_pkgs[*]}" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
  else
    echo "[setup] missing system packages: ${need_pkgs[*]} (install them as root)" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[${KOPA_EXTRAS:-dev,train}]"
echo "[setup] python environment ready in .venv" >&2
