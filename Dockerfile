# syntax=docker/dockerfile:1
#
# KOPA EDGE: one image for every process; the command chosen at run time picks the process.
#
#   kopa serve --host 0.0.0.0 --port 8000                  REST API on :8000 (the default CMD)
#   kopa worker --queues verification --concurrency 4      Celery worker on the verification queue
#   kopa worker --queues synthesis --concurrency 2         Celery worker on the synthesis queue
#   kopa beat                                              Celery beat, the scheduler (run exactly one)
#   kopa sandbox serve --host 0.0.0.0 --port 8090          sandbox of the Korean public APIs (staging only)
#   kopa graph init                                        constraints and indexes (idempotent; Helm hook)
#
# Build:   docker build -t kopa-edge:0.1.0 .
#          docker build --target train -t kopa-edge-train:0.1.0 .     (adds the `train` extra)
# Run:     docker run --rm -p 8000:8000 -e KOPA_STORE=neo4j -e KOPA_NEO4J__URI=bolt://neo4j:7687 kopa-edge:0.1.0
#          docker run --rm kopa-edge:0.1.0 worker --queues verification --concurrency 4
#
# Needs BuildKit (the default builder of current Docker; podman/buildah too) for the RUN --mount lines.
# The whole source tree is sent in one COPY; .dockerignore keeps the VCS, virtual environments, caches,
# build outputs, tests and local data out of the build context.

ARG PYTHON_IMAGE=python:3.11-slim

# ---- build: the project wheel plus wheels of all its dependencies --------------------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY . /src
RUN pip wheel --wheel-dir /wheels /src

# ---- app: runtime base, installed from the wheels only (no index, no compiler) --------------------------
FROM ${PYTHON_IMAGE} AS app
# Nothing phones home (docs/operations.md, "Data sovereignty / telemetry"): no Hugging Face Hub telemetry, no vLLM
# usage stats, and DO_NOT_TRACK for any other library that honours it (the train target inherits these).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/home/kopa \
    KOPA_DATA_DIR=/home/kopa/data \
    MPLCONFIGDIR=/tmp/matplotlib \
    XDG_CACHE_HOME=/tmp/.cache \
    HF_HUB_DISABLE_TELEMETRY=1 \
    VLLM_NO_USAGE_STATS=1 \
    DO_NOT_TRACK=1
# uid/gid 10001, matching the chart's securityContext (runAsUser 10001, runAsNonRoot). The root filesystem
# may be read-only: only /tmp and the data dir need to be writable (the chart mounts emptyDirs there).
RUN groupadd --system --gid 10001 kopa \
 && useradd --system --uid 10001 --gid 10001 --home-dir /home/kopa --create-home --shell /usr/sbin/nologin kopa \
 && install -d -o 10001 -g 10001 /home/kopa/data
# The wheels pin every version already (they are the only source: --no-index).
# hadolint ignore=DL3013
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links /wheels kopa-edge \
 && kopa --help >/dev/null
WORKDIR /home/kopa
EXPOSE 8000 8090

# ---- train: the app plus the `train` extra (its extra dependencies come from the package index) ----------
FROM app AS train
# hadolint ignore=DL3013
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    set -- /wheels/kopa_edge-*.whl \
 && pip install --find-links /wheels "$1[train]"
USER 10001:10001
ENTRYPOINT ["kopa"]
CMD ["--help"]

# ---- runtime (default target): API, workers, beat, sandbox, graph init ----------------------------------
FROM app AS runtime
USER 10001:10001
ENTRYPOINT ["kopa"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
