#!/usr/bin/env bash
# Make the chart tooling available for tests/test_helm.py, offline-capable once cached. Idempotent.
#
#   bash scripts/install_helm.sh          # prints the path of the helm binary on stdout
#
# 1. helm: an existing `helm` on PATH wins; otherwise the cached build in $KOPA_TOOLS_BIN (default
#    $HOME/.cache/kopa/bin); otherwise it is built from its Go module (`go install`, pinned version below).
#    Measured on the 2-core machine: ~3 min cold (module download + compile), ~110 s compile with the modules
#    already cached, ~0.1 s once the binary is cached.
# 2. kubernetes-validate: a Python package that ships the Kubernetes JSON schemas, so manifests validate with
#    no network. Installed into .venv when the project's venv exists (scripts/setup.sh creates it).
#
# Environment: HELM_VERSION (pin), KOPA_TOOLS_BIN (cache dir), KOPA_SKIP_VALIDATOR=1 (helm only).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

HELM_VERSION="${HELM_VERSION:-v3.21.4}"
KUBERNETES_VALIDATE_VERSION="${KUBERNETES_VALIDATE_VERSION:-1.37.0}"
BIN_DIR="${KOPA_TOOLS_BIN:-$HOME/.cache/kopa/bin}"

log() { echo "[install_helm] $*" >&2; }

find_helm() {
  if command -v helm >/dev/null 2>&1; then
    command -v helm
    return 0
  fi
  # The cached build counts only when it is the pinned version (a changed pin rebuilds it).
  if [ -x "$BIN_DIR/helm" ] && [ "$("$BIN_DIR/helm" version --template '{{.Version}}' 2>/dev/null)" = "$HELM_VERSION" ]; then
    echo "$BIN_DIR/helm"
    return 0
  fi
  return 1
}

if ! HELM="$(find_helm)"; then
  if ! command -v go >/dev/null 2>&1; then
    log "no helm on PATH or in $BIN_DIR, and no Go toolchain to build it with"
    exit 1
  fi
  mkdir -p "$BIN_DIR"
  log "building helm $HELM_VERSION from its Go module into $BIN_DIR (one-off; ~3 minutes on 2 cores)"
  start=$(date +%s)
  # The link flags are those of helm's own release build: its version, and the Kubernetes version that
  # `helm template`/`helm lint` assume without a cluster (1.<client-go minor>; unset, helm would assume 1.20).
  # CGO off: a static binary with no C toolchain needed.
  k8s_minor="${HELM_K8S_MINOR:-36}"
  ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
  ldflags+=" -X helm.sh/helm/v3/internal/version.metadata="
  for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    ldflags+=" -X ${pkg}.k8sVersionMajor=1 -X ${pkg}.k8sVersionMinor=${k8s_minor}"
  done
  GOBIN="$BIN_DIR" CGO_ENABLED=0 GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" \
    go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
  log "built in $(( $(date +%s) - start ))s"
  HELM="$BIN_DIR/helm"
fi
log "helm: $HELM ($("$HELM" version --short 2>/dev/null || echo unknown))"

if [ "${KOPA_SKIP_VALIDATOR:-0}" != 1 ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then
    if "$ROOT/.venv/bin/python" -c "import kubernetes_validate" >/dev/null 2>&1; then
      log "kubernetes-validate already in .venv"
    else
      log "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION into .venv"
      "$ROOT/.venv/bin/python" -m pip install -q "kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}"
    fi
  else
    log "no .venv yet (run scripts/setup.sh first); skipped kubernetes-validate"
  fi
fi

echo "$HELM"
