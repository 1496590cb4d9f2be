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

# KOPA-Bench (live and replay, k=3) and BFCL on the three models: the bench harness's commands go here once it
# is mounted (`kopa bench ...`); results are collected into one table.
for model in "$BASE_9B" "$WORK/grpo-9b/model" "$BASE_27B"; do
  echo "bench: $model (live + replay, k=3; BFCL)"
done | tee "$WORK/results.md"
