#!/usr/bin/env bash
# Start, stop and inspect the real services KOPA EDGE's tests and development use, all on loopback:
#   Neo4j 5.26 community (embedded DBMS with Bolt + HTTP + Browser, built from Maven Central by infra/neo4j),
#   Redis (Debian's redis-server), and the sandbox of public APIs (kopa sandbox serve).
#
#   bash scripts/services.sh start     # build what is missing, start all three, wait until each is ready
#   bash scripts/services.sh stop      # stop all three cleanly
#   bash scripts/services.sh status    # what is running where
#   source .kopa/services.env          # the variables tests and the service read (written by start)
#
# Ports (override with the same-named environment variables):
#   KOPA_NEO4J_BOLT_PORT=17687 KOPA_NEO4J_HTTP_PORT=17474 KOPA_REDIS_PORT=16379 KOPA_SANDBOX_PORT=18090
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN="$ROOT/.kopa/run"
ENV_FILE="$ROOT/.kopa/services.env"
BOLT=${KOPA_NEO4J_BOLT_PORT:-17687}
HTTP=${KOPA_NEO4J_HTTP_PORT:-17474}
REDIS_PORT=${KOPA_REDIS_PORT:-16379}
SANDBOX_PORT=${KOPA_SANDBOX_PORT:-18090}
PY="${KOPA_PYTHON:-$ROOT/.venv/bin/python}"
mkdir -p "$RUN"

log() { printf '[services] %s\n' "$*" >&2; }

wait_for() {  # wait_for NAME SECONDS COMMAND...
  local name=$1 secs=$2; shift 2
  for _ in $(seq 1 $((secs * 4))); do
    if "$@" >/dev/null 2>&1; then log "$name ready"; return 0; fi
    alive "$name" || { log "$name exited during start; last log lines:"; tail -n 30 "$RUN/$name.log" >&2; return 1; }
    sleep 0.25
  done
  log "$name did not become ready within ${secs}s; last log lines:"
  tail -n 30 "$RUN/$name.log" >&2 || true
  return 1
}

alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

build_neo4j() {
  local dir="$ROOT/infra/neo4j"
  if [ ! -f "$dir/target/cp.txt" ] || [ "$dir/pom.xml" -nt "$dir/target/cp.txt" ] \
     || [ "$dir/src/main/java/kopa/neo4j/Launcher.java" -nt "$dir/target/neo4j-launcher-1.0.0.jar" ]; then
    log "building the Neo4j launcher (first time downloads Neo4j 5.26 from Maven Central)"
    (cd "$dir" && mvn -q -B package dependency:build-classpath -Dmdep.outputFile=target/cp.txt) >&2
  fi
}

start_neo4j() {
  if alive neo4j; then log "neo4j already running"; return; fi
  build_neo4j
  local dir="$ROOT/infra/neo4j"
  [ "${1:-}" = keep ] || rm -rf "$RUN/neo4j-home"
  # Truncate the log before the launch (the redirection below happens in the background child, possibly after the
  # first check), and wait for the ready line of THIS process: a NEO4J_READY left by an earlier run (or a pid
  # reused after it) must not count, or the next command meets a Neo4j that is not listening yet.
  : >"$RUN/neo4j.log"
  nohup java -Xms512m -Xmx1g \
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true -XX:+UseG1GC \
    -cp "$dir/target/neo4j-launcher-1.0.0.jar:$(cat "$dir/target/cp.txt")" \
    kopa.neo4j.Launcher "$RUN/neo4j-home" "$BOLT" "$HTTP" 256m >"$RUN/neo4j.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$RUN/neo4j.pid"
  wait_for neo4j 180 neo4j_ready "$pid"
}

neo4j_ready() { grep -q "^NEO4J_READY pid=$1 " "$RUN/neo4j.log"; }  # the ready line of the launcher with this pid

start_redis() {
  if alive redis; then log "redis already running"; return; fi
  command -v redis-server >/dev/null || { log "redis-server missing: apt-get install -y redis-server"; exit 1; }
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
    --dir "$RUN" >"$RUN/redis.log" 2>&1 &
  echo $! >"$RUN/redis.pid"
  wait_for redis 30 redis-cli -p "$REDIS_PORT" ping
}

start_sandbox() {
  if alive sandbox; then log "sandbox already running"; return; fi
  # Shared by every test on this machine: daily quotas lifted here (the quota tests run their own sandboxes).
  KOPA_SANDBOX__QUOTAS="${KOPA_SANDBOX__QUOTAS:-*=0}" \
    nohup "$PY" -m cli sandbox serve --host 127.0.0.1 --port "$SANDBOX_PORT" >"$RUN/sandbox.log" 2>&1 &
  echo $! >"$RUN/sandbox.pid"
  wait_for sandbox 60 curl -sf "http://127.0.0.1:$SANDBOX_PORT/healthz"
}

write_env() {
  cat >"$ENV_FILE" <<EOF
export KOPA_TEST_NEO4J_URI=bolt://127.0.0.1:$BOLT
export KOPA_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
export KOPA_TEST_SANDBOX_URL=http://127.0.0.1:$SANDBOX_PORT
export KOPA_NEO4J__URI=bolt://127.0.0.1:$BOLT
export KOPA_NEO4J__BROWSER_URL=http://127.0.0.1:$HTTP/browser/
export KOPA_TEST_NEO4J_BROWSER_URL=http://127.0.0.1:$HTTP/browser/
export KOPA_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
EOF
  log "wrote $ENV_FILE (source it)"
}

stop_one() {
  local name=$1
  if alive "$name"; then
    local pid; pid=$(cat "$RUN/$name.pid")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && { log "$name did not stop; killing"; kill -KILL "$pid" 2>/dev/null || true; }
    log "$name stopped"
  fi
  rm -f "$RUN/$name.pid"
}

case "${1:-}" in
  start)
    start_redis
    start_sandbox
    start_neo4j
    write_env
    log "Neo4j Browser: http://127.0.0.1:$HTTP/browser/?dbms=bolt://127.0.0.1:$BOLT&preselectAuthMethod=NO_AUTH"
    ;;
  stop)
    for s in sandbox neo4j redis; do stop_one "$s"; done
    ;;
  restart-neo4j)   # keeps the data (used by reliability tests)
    stop_one neo4j
    start_neo4j keep
    ;;
  status)
    for s in neo4j redis sandbox; do
      if alive "$s"; then echo "$s: running (pid $(cat "$RUN/$s.pid"))"; else echo "$s: stopped"; fi
    done
    ;;
  *)
    echo "usage: bash scripts/services.sh start|stop|status" >&2
    exit 2
    ;;
esac
