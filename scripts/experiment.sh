#!/usr/bin/env bash
# The 9B-vs-27B experiment as one command on one 80 GB GPU (see docs/experiment.md). Nothing is downloaded.
#
#   BASE_9B=/models/Qwen3.5-9B BASE_27B=/models/Qwen3.5-27B bash scripts/experiment.sh [--family qwen3.5] [--dry-run]
#
# --dry-run prints every command and the configs it would use, and runs nothing (no GPU needed).
# Variables: WORK (.kopa/experiment), COUNT (3000 trajectories), SEEDS ("0 1 2": tuned models per seed),
# STEPS_SFT/STEPS_GRPO (override the configs), K (3), TEMPERATURE (0.7) and TOP_P (0.95) for pass^k, PORT (8000).
set -euo pipefail
cd "$(dirname "$0")/.."

FAMILY=qwen3.5
DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --family) FAMILY=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n 2,9p "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
CONF="configs/experiment/$FAMILY"
[ -f "$CONF/family.env" ] || { echo "no configs for family '$FAMILY' under configs/experiment/" >&2; exit 2; }
# shellcheck disable=SC1090,SC1091
source "$CONF/family.env"
if [ "$DRY" = 1 ]; then
  BASE_9B=${BASE_9B:-/models/9B} BASE_27B=${BASE_27B:-/models/27B}
fi
: "${BASE_9B:?set BASE_9B to a local model directory}"
: "${BASE_27B:?set BASE_27B to a local model directory}"
WORK=${WORK:-.kopa/experiment}
COUNT=${COUNT:-3000}
SEEDS=${SEEDS:-"0 1 2"}
K=${K:-3}
TEMPERATURE=${TEMPERATURE:-0.7}
TOP_P=${TOP_P:-0.95}
PORT=${PORT:-8000}
URL="http://127.0.0.1:$PORT/v1"
[ -n "${STEPS_SFT:-}" ] && STEPS_SFT_ARG=(--steps "$STEPS_SFT") || STEPS_SFT_ARG=()
[ -n "${STEPS_GRPO:-}" ] && STEPS_GRPO_ARG=(--steps "$STEPS_GRPO") || STEPS_GRPO_ARG=()
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 TRL_EXPERIMENTAL_SILENCE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
TIMES="$WORK/timings.tsv"

# run STAGE GPU(0|1) CMD...: print the command; unless --dry-run, run it and record wall time and GPU-hours
run() {
  local stage=$1 gpu=$2; shift 2
  printf '+'; printf ' %q' "$@"; printf '\n'
  [ "$DRY" = 1 ] && return 0
  local t0; t0=$(date +%s)
  "$@"
  local secs=$(( $(date +%s) - t0 ))
  printf '%s\t%s\t%s\n' "$stage" "$secs" "$(awk -v s="$secs" -v g="$gpu" 'BEGIN{printf "%.2f", s*g/3600}')" >>"$TIMES"
}

echo "# family $FAMILY: configs $CONF/{sft,grpo}.yaml, tool parser $TOOL_PARSER, reasoning parser $REASONING_PARSER"
if [ "$DRY" = 1 ]; then
  for f in "$CONF"/sft.yaml "$CONF"/grpo.yaml; do echo "## $f"; cat "$f"; done
else
  mkdir -p "$WORK"; printf 'stage\tseconds\tgpu_hours\n' >"$TIMES"
fi

# 1. Data: EDGE (verified links only) and the ablation's synthesise-then-filter data, same count and seed.
run data-edge 0 kopa demo --workdir "$WORK/edge" --count "$COUNT"
run data-baseline 0 env KOPA_STORE=embedded KOPA_EMBEDDED_PATH="$WORK/edge/graph.sqlite3" \
  kopa synth --sandbox --baseline --count "$COUNT" --out "$WORK/baseline"
for data in edge/export baseline; do   # the training data's overlap with KOPA-Bench goes into the results
  run "overlap-${data%%/*}" 0 sh -c "kopa bench overlap '$WORK/$data' > '$WORK/overlap-${data%%/*}.txt'"
done

# 2-3. SFT warm-up then GRPO, per data arm and seed (LoRA on every linear layer; adapters in <run>/adapter).
tuned=()
for arm in edge baseline; do
  data="$WORK/$arm/export"; [ "$arm" = baseline ] && data="$WORK/baseline"
  for seed in $SEEDS; do
    sft="$WORK/sft-9b-$arm-s$seed" grpo="$WORK/grpo-9b-$arm-s$seed"
    run "sft-$arm-s$seed" 1 kopa train sft --config "$CONF/sft.yaml" --model "$BASE_9B" --data "$data" --out "$sft" \
      "${STEPS_SFT_ARG[@]}" --set "train.seed=$seed"
    run "grpo-$arm-s$seed" 1 kopa train grpo --config "$CONF/grpo.yaml" --model "$sft/model" --data "$data" \
      --out "$grpo" "${STEPS_GRPO_ARG[@]}" --set "train.seed=$seed" --set "data.graph=$WORK/edge/graph.sqlite3"
    tuned+=("$arm-9b-s$seed=$grpo/model")
  done
done

# 4-5. KOPA-Bench (live and replay, k samples at TEMPERATURE) and BFCL for every model, each served by vLLM in turn
# with the family's parsers and thinking setting (the same the GRPO rollouts used).
run snapshot 0 kopa bench run --agent oracle --record "$WORK/snapshot.json" --out "$WORK/bench-oracle"
runs=()
for entry in "untuned-9b=$BASE_9B" "${tuned[@]}" "untuned-27b=$BASE_27B"; do
  name=${entry%%=*}; model=${entry#*=}
  serve=(vllm serve "$model" --served-model-name "$name" --enable-auto-tool-choice --tool-call-parser "$TOOL_PARSER"
         --reasoning-parser "$REASONING_PARSER" --default-chat-template-kwargs "$CHAT_TEMPLATE_KWARGS"
         --max-model-len 32768 --gpu-memory-utilization 0.90 --port "$PORT")
  printf '+'; printf ' %q' "${serve[@]}"; printf ' &\n'
  if [ "$DRY" = 0 ]; then
    "${serve[@]}" >"$WORK/vllm-$name.log" 2>&1 &
    pid=$!
    until curl -sf "$URL/models" >/dev/null; do
      kill -0 "$pid" 2>/dev/null || { echo "vllm did not start for $name: see $WORK/vllm-$name.log" >&2; exit 1; }
      sleep 5
    done
  fi
  sampling=(--k "$K" --temperature "$TEMPERATURE" --top-p "$TOP_P")
  run "bench-live-$name" 1 kopa bench run --agent openai --url "$URL" --model "$name" "${sampling[@]}" \
    --out "$WORK/bench-$name-live"
  run "bench-replay-$name" 1 kopa bench run --agent openai --url "$URL" --model "$name" "${sampling[@]}" \
    --mode replay --snapshot "$WORK/snapshot.json" --out "$WORK/bench-$name-replay"
  run "bfcl-$name" 1 kopa bench bfcl --endpoint "$URL" --model "$name" --out "$WORK/bfcl-$name"
  if [ "$DRY" = 0 ]; then kill "$pid"; wait "$pid" 2>/dev/null || true; fi
  runs+=("$WORK/bench-$name-live" "$WORK/bench-$name-replay" "$WORK/bfcl-$name")
done

# 6. One table: KOPA-Bench live and replay next to BFCL per model (tuned seeds as mean and spread), plus the
# sampling settings, the data's benchmark overlap and the time and GPU-hours of every stage.
run compare 0 kopa bench compare "${runs[@]}" --out "$WORK/results.md"
if [ "$DRY" = 0 ]; then
  { echo; echo "Sampling: k=$K, temperature $TEMPERATURE, top_p $TOP_P; seeds: $SEEDS"
    for f in "$WORK"/overlap-*.txt; do echo; echo "Benchmark overlap ($(basename "$f" .txt)):"; cat "$f"; done
    echo; echo '| stage | seconds | GPU-hours |'; echo '|---|---|---|'
    tail -n +2 "$TIMES" | awk -F'\t' '{printf "| %s | %s | %s |\n", $1, $2, $3}'; } >>"$WORK/results.md"
  echo "results: $WORK/results.md" >&2
fi
