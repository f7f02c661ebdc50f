#!/usr/bin/env bash
# Simulated vs measured p50 iteration time, DDP world size 2 on this machine's CPU (issue 8):
# for each model, runs bench/simulator/validate_real.yaml for real, then
# experiments/simulate_cpu_ddp.yaml with the model's CPU profile and the real run's step p50
# (the layer profile has no optimizer step), and prints one row per model and system.
# Usage: HARNESS=build/harness bench/simulator/validate.sh [resnet18 resnet50]
# Timings are only meaningful on an otherwise idle machine: the CPU profiles were taken idle.
# DAPPLE: a 2-stage pipeline (one rank per stage, 4 micro-batches) runs for real beside DDP;
# the simulator gets the stages the real run used. Only 2 ranks: on a 2-core machine, 4 ranks
# would share cores, which the simulator (one compute stream per GPU) does not model.
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
  # The real pipeline's stages (balanced by `stages: 2`): the simulator's layer positions are
  # the profile's layers without its input node, i.e. the zoo's chain indexes.
  pipeline_systems=$(python3 -c 'import json,sys
c=json.load(open(sys.argv[1]))["system"]
st=", ".join("{layers: \"%d-%d\", ranks: %s}" % (s["first_layer"], s["last_layer"], s["ranks"]) for s in c["stages"])
print("[{name: dapple, kind: pipeline, schedule: dapple, micro_batches: %d, stages: [%s]}]" % (c["micro_batches"], st))' \
    "$real/raw/p000/dapple/rep0/config.json")
  for system in overlap sync dapple; do
    step=$(p50 "$real/summary.json" "$system" step)
    extra=()
    [ "$system" = dapple ] && extra=(--set "simulate.systems=$pipeline_systems" --set simulate.baseline=dapple)
    "$HARNESS" simulate experiments/simulate_cpu_ddp.yaml \
      --set "simulate.model.profile=profiles/$model-cpu/graph.txt" \
      --set "simulate.model.step_ms=$step" --set "output=$OUT/sim-$model-$system" "${extra[@]}" \
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
