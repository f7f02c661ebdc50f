#!/usr/bin/env bash
# Simulated vs measured p50 iteration time, DDP world size 2 on this machine's CPU (issue 8):
# for each model, runs bench/simulator/validate_real.yaml for real, then
# experiments/simulate_cpu_ddp.yaml with the model's CPU profile and the real run's step p50
# (the layer profile has no optimizer step), and prints one row per model and system.
# Usage: HARNESS=build/harness bench/simulator/validate.sh [resnet18 resnet50]
# Timings are only meaningful on an otherwise idle machine: the CPU profiles were taken idle.
# DAPPLE (4 ranks) hook: once `kind: pipeline` systems run for real (runtime/pipeline_*), add
# a pipeline system with the same inline stages to validate_real.yaml and to a simulate spec
# with world_size 4, and compare the same way (the loop below takes any system name present
# on both sides).
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/simulate-validate-XXXXXX)}
mkdir -p "$OUT"
if [ $# -gt 0 ]; then MODELS=("$@"); else MODELS=(resnet18 resnet50); fi

p50() {  # summary.json, system, phase -> p50 of the first point
  python3 -c 'import json,sys
s=json.load(open(sys.argv[1]))
for sy in s["points"][0]["systems"]:
    if sy["name"]==sys.argv[2]: print(sy["phases"][sys.argv[3]]["p50"])' "$1" "$2" "$3"
}

printf '| model | system | measured p50 (ms) | simulated p50 (ms) | error |\n|---|---|---|---|---|\n' > "$OUT/table.md"
for model in "${MODELS[@]}"; do
  "$HARNESS" run bench/simulator/validate_real.yaml --set "model.name=$model" \
    --set "output=$OUT/real-$model" > "$OUT/real-$model.log"
  real=$(ls -d "$OUT/real-$model"/*/*/ | tail -1)
  for system in overlap sync; do
    step=$(p50 "$real/summary.json" "$system" step)
    "$HARNESS" simulate experiments/simulate_cpu_ddp.yaml \
      --set "simulate.model.profile=profiles/$model-cpu/graph.txt" \
      --set "simulate.model.step_ms=$step" --set "output=$OUT/sim-$model-$system" \
      > "$OUT/sim-$model-$system.log"
    sim=$(ls -d "$OUT/sim-$model-$system"/*/*/ | tail -1)
    measured=$(p50 "$real/summary.json" "$system" iteration)
    simulated=$(p50 "$sim/summary.json" "$system" iteration)
    python3 -c 'import sys
m,s=float(sys.argv[1]),float(sys.argv[2])
print("| %s | %s | %.1f | %.1f | %+.1f%% |" % (sys.argv[3], sys.argv[4], m, s, 100*(s-m)/m))' \
      "$measured" "$simulated" "$model" "$system" >> "$OUT/table.md"
  done
done
cat "$OUT/table.md"
echo "results in $OUT"
