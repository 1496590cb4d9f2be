#!/usr/bin/env bash
# The 9B-vs-27B experiment as one command on one 80 GB GPU (see docs/experiment.md). Nothing is downloaded.
#
#   BASE_9B=/models/Qwen3.5-9B BASE_27B=/models/Qwen3.5-27B bash scripts/experiment.sh [--family qwen3.5] [--dry-run]
#   bash scripts/experiment.sh --family qwen3.5 --rehearsal
#
# --dry-run prints every command and the configs it would use, and runs nothing (no GPU needed).
# --rehearsal runs every stage on a CPU with two tiny models built locally with the family's chat template (in place
# of the 9B and the 27B), served by `kopa bench serve-local` (HF generate) instead of vLLM, on small data, a few
# training steps, a subset of KOPA-Bench (REHEARSAL_TASKS) and of BFCL (REHEARSAL_BFCL), so a broken stage fails here.
# Variables: WORK (.kopa/experiment), COUNT (3000 trajectories), SEEDS ("0 1 2": tuned models per seed, and the
# sampling seeds of the untuned models), STEPS_SFT/STEPS_GRPO (override the configs), K (3), TEMPERATURE (0.7) and
# TOP_P (0.95) for pass^k, PORT (8000), MARGIN (0.05: "nearly matches" = non-inferior to the 27B within 5 points),
# HELDOUT_PROVIDER (family.env: the provider the held-out-provider arm never sees; empty: no such arm).
set -euo pipefail
cd "$(dirname "$0")/.."

FAMILY=qwen3.5
DRY=0
REHEARSAL=0
while [ $# -gt 0 ]; do
  case "$1" in
    --family) FAMILY=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    --rehearsal) REHEARSAL=1; shift ;;
    -h|--help) sed -n 2,15p "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
CONF="configs/experiment/$FAMILY"
[ -f "$CONF/family.env" ] || { echo "no configs for family '$FAMILY' under configs/experiment/" >&2; exit 2; }
# shellcheck disable=SC1090,SC1091
source "$CONF/family.env"
SMALL=${SMALL:-9b} LARGE=${LARGE:-27b}   # the sizes in run names: the tuned model and the untuned reference
# Rehearsal: the same stages, CPU-sized. Tiny models stand in for the 9B and the 27B (built after the data, from it).
SFT_CPU=() GRPO_CPU=() BENCH_SUBSET=() BFCL_SUBSET=()
if [ "$REHEARSAL" = 1 ]; then
  WORK=${WORK:-.kopa/rehearsal} COUNT=${COUNT:-16} SEEDS=${SEEDS:-"0"} K=${K:-1}
  # a free loopback port: a server someone else left on a fixed port would answer the readiness check
  PORT=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
  STEPS_SFT=${STEPS_SFT:-2} STEPS_GRPO=${STEPS_GRPO:-1}
  BASE_9B=$WORK/tiny-9b BASE_27B=$WORK/tiny-27b
  # one task of each category but conditional/fan-in/error (each has its own reader, exercised by the bench tests):
  # the chain, parallel and clarification tasks call airkorea (family.env's HELDOUT_PROVIDER), the single one tour
  REHEARSAL_TASKS=${REHEARSAL_TASKS:-single-tour-gyeongbokgung-012,chain-air-hyehwa-037,parallel-air-two-001,clarify-air-002,irrelevant-bill-010}
  REHEARSAL_BFCL=${REHEARSAL_BFCL:-simple_python,irrelevance}
  cpu=(--set train.bf16=false --set train.gradient_checkpointing=false --set train.per_device_train_batch_size=2
       --set train.gradient_accumulation_steps=1 --set train.logging_steps=1 --set train.save_steps=1000
       --set eval.every_steps=0 --set eval.records=2 --set eval.max_new_tokens=32)
  SFT_CPU=("${cpu[@]}" --set sft.max_length=4096)
  GRPO_CPU=("${cpu[@]}" --set grpo.generation=generate --set grpo.num_generations=2
            --set grpo.max_completion_length=96 --set grpo.max_prompt_length=8192)
  BENCH_SUBSET=(--only "$REHEARSAL_TASKS" --max-tokens 48 --max-turns 2 --concurrency 1)
  BFCL_SUBSET=(--categories "$REHEARSAL_BFCL" --limit-per-category 2 --max-tokens 48 --threads 1)
fi
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
MARGIN=${MARGIN:-0.05}
URL="http://127.0.0.1:$PORT/v1"
[ -n "${STEPS_SFT:-}" ] && STEPS_SFT_ARG=(--steps "$STEPS_SFT") || STEPS_SFT_ARG=()
[ -n "${STEPS_GRPO:-}" ] && STEPS_GRPO_ARG=(--steps "$STEPS_GRPO") || STEPS_GRPO_ARG=()
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 TRL_EXPERIMENTAL_SILENCE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
# bfcl-eval runs in its own environment (step 0, as scripts/test.sh builds it: once per machine, then reused)
export KOPA_BFCL_VENV="${KOPA_BFCL_VENV:-$HOME/.cache/kopa/bfcl-venv}"
TIMES="$WORK/timings.tsv"

# run STAGE GPU(0|1) CMD...: print the command; unless --dry-run, run it and record wall time and GPU-hours
run() {
  local stage=$1 gpu=$2; shift 2
  if [ "$REHEARSAL" = 1 ]; then gpu=0; fi   # CPU only
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
  # a rehearsal starts afresh (benchmark folders resume, and old results would pass for new ones)
  if [ "$REHEARSAL" = 1 ] && [ -f "$WORK/.rehearsal" ]; then rm -rf "$WORK"; fi
  mkdir -p "$WORK"; printf 'stage\tseconds\tgpu_hours\n' >"$TIMES"
  if [ "$REHEARSAL" = 1 ]; then touch "$WORK/.rehearsal"; fi
fi

# 0. The BFCL environment (bfcl-eval pins old dependencies): built once from the package index, reused offline.
run bfcl-env 0 bash scripts/bfcl_env.sh

# 1. Data: EDGE (verified links only) and the ablation's synthesise-then-filter data, same count and seed.
run data-edge 0 kopa demo --workdir "$WORK/edge" --count "$COUNT"
run data-baseline 0 env KOPA_STORE=embedded KOPA_EMBEDDED_PATH="$WORK/edge/graph.sqlite3" \
  kopa synth --sandbox --baseline --count "$COUNT" --out "$WORK/baseline"
for data in edge/export baseline; do   # the training data's overlap with KOPA-Bench goes into the results
  run "overlap-${data%%/*}" 0 sh -c "kopa bench overlap '$WORK/$data' > '$WORK/overlap-${data%%/*}.txt'"
done

if [ "$REHEARSAL" = 1 ]; then   # stand-ins for the two base models: the family's chat template, random weights
  run tiny-9b 0 kopa train tiny --family "$TINY_FAMILY" --data "$WORK/edge/export" --vocab 2048 --seed 0 --out "$BASE_9B"
  run tiny-27b 0 kopa train tiny --family "$TINY_FAMILY" --data "$WORK/edge/export" --vocab 2048 --seed 1 \
    --out "$BASE_27B"
fi

# GPU readiness of both base models before hours of training: trl recognises the chat template, the assistant mask
# and the parser are right (kopa train check; the data's token lengths are printed by each training run).
run check-9b 0 kopa train check --model "$BASE_9B" --config "$CONF/grpo.yaml"
run check-27b 0 kopa train check --model "$BASE_27B" --config "$CONF/grpo.yaml"

# 2-3a. The held-out-provider arm (HELDOUT_PROVIDER): the EDGE data without one provider (a record that calls one of
# its tools is dropped, the others stop offering them: data.heldout_provider), trained as the EDGE arm is, with the
# first seed only, and benchmarked on KOPA-Bench only (BFCL has no tool of ours); the table sets its pass rate on the
# tasks calling that provider against the other tasks, next to every other model's on the same tasks. First, so an
# unknown provider stops the run before hours of training.
heldout=()
if [ -n "${HELDOUT_PROVIDER:-}" ]; then
  read -r seed _ <<<"$SEEDS"
  sft="$WORK/sft-$SMALL-no-$HELDOUT_PROVIDER-s$seed" grpo="$WORK/grpo-$SMALL-no-$HELDOUT_PROVIDER-s$seed"
  hold=(--set "data.heldout_provider=$HELDOUT_PROVIDER")
  run "sft-heldout-s$seed" 1 kopa train sft --config "$CONF/sft.yaml" --model "$BASE_9B" --data "$WORK/edge/export" \
    --out "$sft" "${STEPS_SFT_ARG[@]}" --set "train.seed=$seed" "${hold[@]}" "${SFT_CPU[@]}"
  run "grpo-heldout-s$seed" 1 kopa train grpo --config "$CONF/grpo.yaml" --model "$sft/model" \
    --data "$WORK/edge/export" --out "$grpo" "${STEPS_GRPO_ARG[@]}" --set "train.seed=$seed" \
    --set "data.graph=$WORK/edge/graph.sqlite3" --set data.verification=true "${hold[@]}" "${GRPO_CPU[@]}"
  heldout=("grpo-no-$HELDOUT_PROVIDER-$SMALL-s$seed=$grpo/model")
fi

# 2-3b. SFT warm-up then GRPO, per data arm and seed (LoRA on every linear layer; adapters in <run>/adapter). Both
# the SFT-only and the SFT+GRPO models are benchmarked. The no-verification arm's GRPO takes its live tools from the
# graph but no verification signal (data.verification=false: no refuted-link penalty).
tuned=()
for arm in edge baseline; do
  data="$WORK/$arm/export"; [ "$arm" = baseline ] && data="$WORK/baseline"
  verification=true; [ "$arm" = baseline ] && verification=false
  for seed in $SEEDS; do
    sft="$WORK/sft-$SMALL-$arm-s$seed" grpo="$WORK/grpo-$SMALL-$arm-s$seed"
    run "sft-$arm-s$seed" 1 kopa train sft --config "$CONF/sft.yaml" --model "$BASE_9B" --data "$data" --out "$sft" \
      "${STEPS_SFT_ARG[@]}" --set "train.seed=$seed" "${SFT_CPU[@]}"
    run "grpo-$arm-s$seed" 1 kopa train grpo --config "$CONF/grpo.yaml" --model "$sft/model" --data "$data" \
      --out "$grpo" "${STEPS_GRPO_ARG[@]}" --set "train.seed=$seed" --set "data.graph=$WORK/edge/graph.sqlite3" \
      --set "data.verification=$verification" "${GRPO_CPU[@]}"
    tuned+=("sft-$arm-$SMALL-s$seed=$sft/model" "grpo-$arm-$SMALL-s$seed=$grpo/model")
  done
done

# 4-5. KOPA-Bench (live and replay, k samples at TEMPERATURE) and BFCL for every model, each served in turn with the
# family's parsers and thinking setting (the same the GRPO rollouts used): vLLM, or in the rehearsal `kopa bench
# serve-local` (HF generate, calls read by the same reader). Every run is seeded: a tuned model with its training
# seed, the untuned models once per seed in SEEDS.
run snapshot 0 kopa bench run --agent oracle --record "$WORK/snapshot.json" --out "$WORK/bench-oracle" \
  "${BENCH_SUBSET[@]}"
runs=()
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; true' EXIT   # a failed stage leaves no server behind
# The untuned large model runs twice: thinking off (the tuned models' setting) and, where the family has a thinking
# mode (THINK_TEMPLATE_KWARGS), thinking on (untuned-<LARGE>-think).
think=(); [ -n "${THINK_TEMPLATE_KWARGS:-}" ] && think=("untuned-$LARGE-think=$BASE_27B")
for entry in "untuned-$SMALL=$BASE_9B" "${tuned[@]}" "${heldout[@]}" "untuned-$LARGE=$BASE_27B" "${think[@]}"; do
  name=${entry%%=*}; model=${entry#*=}
  kwargs=$CHAT_TEMPLATE_KWARGS; case "$name" in *-think) kwargs=$THINK_TEMPLATE_KWARGS ;; esac
  if [ "$REHEARSAL" = 1 ]; then
    serve=(kopa bench serve-local --model-dir "$model" --served-model-name "$name"
           --chat-template-kwargs "$kwargs" --port "$PORT")
  else
    serve=(vllm serve "$model" --served-model-name "$name" --enable-auto-tool-choice --tool-call-parser "$TOOL_PARSER"
           --reasoning-parser "$REASONING_PARSER" --default-chat-template-kwargs "$kwargs"
           --max-model-len 32768 --gpu-memory-utilization 0.90 --port "$PORT")
  fi
  printf '+'; printf ' %q' "${serve[@]}"; printf ' &\n'
  if [ "$DRY" = 0 ]; then
    "${serve[@]}" >"$WORK/serve-$name.log" 2>&1 &
    pid=$!
    until curl -sf "$URL/models" >/dev/null; do
      kill -0 "$pid" 2>/dev/null || { echo "the server did not start for $name: see $WORK/serve-$name.log" >&2; exit 1; }
      sleep 2
    done
  fi
  case "$name" in untuned-*) seeds=$SEEDS ;; *) seeds=${name##*-s} ;; esac
  for seed in $seeds; do
    tag=$name; case "$name" in untuned-*) tag="$name-s$seed" ;; esac
    sampling=(--k "$K" --temperature "$TEMPERATURE" --top-p "$TOP_P" --seed "$seed")
    run "bench-live-$tag" 1 kopa bench run --agent openai --url "$URL" --model "$name" "${sampling[@]}" \
      --out "$WORK/bench-$tag-live" "${BENCH_SUBSET[@]}"
    run "bench-replay-$tag" 1 kopa bench run --agent openai --url "$URL" --model "$name" "${sampling[@]}" \
      --mode replay --snapshot "$WORK/snapshot.json" --out "$WORK/bench-$tag-replay" "${BENCH_SUBSET[@]}"
    runs+=("$WORK/bench-$tag-live" "$WORK/bench-$tag-replay")
  done
  if [ "$entry" != "${heldout[0]:-}" ]; then   # the held-out-provider arm: KOPA-Bench only
    run "bfcl-$name" 1 kopa bench bfcl --endpoint "$URL" --model "$name" --out "$WORK/bfcl-$name" "${BFCL_SUBSET[@]}"
    runs+=("$WORK/bfcl-$name")
  fi
  if [ "$DRY" = 0 ]; then kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; fi
done

# 6. One table: KOPA-Bench live and replay next to BFCL per model, the seeds aggregated as mean ± spread, each model
# against the untuned 27B by a paired bootstrap over tasks (non-inferiority within MARGIN), pass rates split by the
# tasks' overlap with the EDGE training data (exact tool sequence seen / tools seen / unseen), the sampling settings,
# every model's pass rates on the tasks that call the held-out provider and on the others, the data's benchmark
# overlap and the time and GPU-hours of every stage.
provider=(); [ -n "${HELDOUT_PROVIDER:-}" ] && provider=(--heldout-provider "$HELDOUT_PROVIDER")
run compare 0 kopa bench compare "${runs[@]}" --reference "untuned-$LARGE" --margin "$MARGIN" \
  --training "$WORK/edge/export" "${provider[@]}" --out "$WORK/results.md"
if [ "$DRY" = 0 ]; then
  { echo; echo "Sampling: k=$K, temperature $TEMPERATURE, top_p $TOP_P; seeds: $SEEDS"
    if [ "$REHEARSAL" = 1 ]; then
      echo; echo "Rehearsal: tiny $TINY_FAMILY-template models (random weights, $STEPS_SFT SFT and $STEPS_GRPO GRPO" \
        "steps on $COUNT trajectories), KOPA-Bench tasks $REHEARSAL_TASKS, BFCL $REHEARSAL_BFCL (2 entries each):" \
        "the figures test the pipeline, not the models."
    fi
    for f in "$WORK"/overlap-*.txt; do echo; echo "Benchmark overlap ($(basename "$f" .txt)):"; cat "$f"; done
    echo; echo '| stage | seconds | GPU-hours |'; echo '|---|---|---|'
    tail -n +2 "$TIMES" | awk -F'\t' '{printf "| %s | %s | %s |\n", $1, $2, $3}'; } >>"$WORK/results.md"
  echo "results: $WORK/results.md" >&2
fi
