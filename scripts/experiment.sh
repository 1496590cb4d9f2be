#!/usr/bin/env bash
# The 9B-vs-27B experiment as one command (GPU; see docs/experiment.md). Set BASE_9B and BASE_27B to local model
# directories; nothing is downloaded.
set -euo pipefail
: "${BASE_9B:?set BASE_9B to a local model directory}"
: "${BASE_27B:?set BASE_27B to a local model directory}"
WORK=${WORK:-.kopa/experiment}
STEPS_SFT=${STEPS_SFT:-500}
STEPS_GRPO=${STEPS_GRPO:-300}
COUNT=${COUNT:-3000}
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 TRL_EXPERIMENTAL_SILENCE=1
mkdir -p "$WORK"

kopa demo --workdir "$WORK/edge" --count "$COUNT"
DATA="$WORK/edge/export"

kopa train sft --model "$BASE_9B" --data "$DATA" --out "$WORK/sft-9b" --steps "$STEPS_SFT" \
  --set lora.enabled=true --set train.learning_rate=1e-4 --set train.per_device_train_batch_size=4 \
  --set train.gradient_accumulation_steps=4 --set sft.max_length=6144 --set data.length_policy=drop

kopa train grpo --model "$WORK/sft-9b/model" --data "$DATA" --out "$WORK/grpo-9b" --steps "$STEPS_GRPO" \
  --set lora.enabled=true --set train.learning_rate=1e-6 --set grpo.num_generations=8 \
  --set train.per_device_train_batch_size=8 --set grpo.max_completion_length=1024 \
  --set grpo.max_prompt_length=6144 --set grpo.generation=vllm_colocate \
  --set grpo.environment=live --set grpo.sandbox=true --set "data.graph=$WORK/edge/graph.sqlite3" \
  --set data.length_policy=drop

# The ablation: the same budget of synthesise-then-filter data (every candidate link, keep what executes), tuned
# the same way.
KOPA_STORE=embedded KOPA_EMBEDDED_PATH="$WORK/edge/graph.sqlite3" \
  kopa synth --sandbox --baseline --count "$COUNT" --out "$WORK/baseline"
kopa train sft --model "$BASE_9B" --data "$WORK/baseline" --out "$WORK/sft-9b-baseline" --steps "$STEPS_SFT" \
  --set lora.enabled=true --set train.learning_rate=1e-4 --set train.per_device_train_batch_size=4 \
  --set train.gradient_accumulation_steps=4 --set sft.max_length=6144 --set data.length_policy=drop
kopa train grpo --model "$WORK/sft-9b-baseline/model" --data "$WORK/baseline" --out "$WORK/grpo-9b-baseline" \
  --steps "$STEPS_GRPO" --set lora.enabled=true --set train.learning_rate=1e-6 --set grpo.num_generations=8 \
  --set train.per_device_train_batch_size=8 --set grpo.max_completion_length=1024 \
  --set grpo.max_prompt_length=6144 --set grpo.generation=vllm_colocate \
  --set grpo.environment=live --set grpo.sandbox=true --set "data.graph=$WORK/edge/graph.sqlite3" \
  --set data.length_policy=drop

# KOPA-Bench (live and replay, k=3) and BFCL on every model, each served in turn by vLLM on this GPU.
PORT=${PORT:-8000}
PARSER=${TOOL_PARSER:-hermes}          # must match the model family's chat template (docs/bfcl.md)
URL="http://127.0.0.1:$PORT/v1"
kopa bench run --agent oracle --record "$WORK/snapshot.json" --out "$WORK/bench-oracle"   # the replay snapshot
runs=()
for entry in "untuned-9b=$BASE_9B" "edge-9b=$WORK/grpo-9b/model" "baseline-9b=$WORK/grpo-9b-baseline/model" \
             "untuned-27b=$BASE_27B"; do
  name=${entry%%=*}; model=${entry#*=}
  vllm serve "$model" --served-model-name "$name" --enable-auto-tool-choice --tool-call-parser "$PARSER" \
    --max-model-len 32768 --gpu-memory-utilization 0.90 --port "$PORT" >"$WORK/vllm-$name.log" 2>&1 &
  pid=$!
  until curl -sf "$URL/models" >/dev/null; do
    kill -0 "$pid" 2>/dev/null || { echo "vllm did not start for $name: see $WORK/vllm-$name.log" >&2; exit 1; }
    sleep 5
  done
  kopa bench run --agent openai --url "$URL" --model "$name" --k 3 --out "$WORK/bench-$name-live"
  kopa bench run --agent openai --url "$URL" --model "$name" --k 3 --mode replay --snapshot "$WORK/snapshot.json" \
    --out "$WORK/bench-$name-replay"
  kopa bench bfcl --endpoint "$URL" --model "$name" --out "$WORK/bfcl-$name"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  runs+=("$WORK/bench-$name-live" "$WORK/bfcl-$name")
done
kopa bench compare "${runs[@]}" --out "$WORK/results.md"
echo "results: $WORK/results.md" >&2
