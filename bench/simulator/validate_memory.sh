#!/usr/bin/env bash
# Simulated against measured activation memory of the pipeline schedules on this machine's CPU:
# experiments/pipeline_schedules.yaml's Llama-style decoder (8 blocks of 128, 32 tokens, a
# 500-token vocabulary, so that no large gradient is allocated inside an iteration) under every
# schedule at 4 ranks, each rank's peak of memory allocated above its iteration's start
# (pipeline_rank<r>.json's peak_allocated_bytes), against a simulation of the same stages from
# a layer profile of one micro-batch, whose stored_bytes, weight_pending_bytes (--split-backward)
# and backward_working_bytes the profiler counts by the allocator:
# the simulated fullest position's activations (config.json's memory_per_rank.activation_bytes)
# beside the fullest rank's measured peak. Memory does not depend on the machine's speed, so one
# run is enough.
#
# Output: OUT/table.md.
# Usage: [MICRO_BATCHES=8] [OUT=dir] [HARNESS=build/harness] bench/simulator/validate_memory.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/simulate-memory-XXXXXX)}
MICRO_BATCHES=${MICRO_BATCHES:-8}
MODEL='{name: llama, depth: 8, width: 128, batch_size: 8, input_shape: [32], vocab: 500}'
mkdir -p "$OUT"

"$HARNESS" run experiments/pipeline_schedules.yaml --set 'sweep={}' --set "model=$MODEL" \
  --set "pipeline.micro_batches=$MICRO_BATCHES" --set run.iterations=3 --set run.warmup=1 \
  --set "output=$OUT/real" > "$OUT/real.log" 2>&1
REAL=$(ls -d "$OUT"/real/*/*/ | tail -1)
MICRO=$((8 * 4 / MICRO_BATCHES))  # batch_size x 4 ranks over the micro-batches
"$HARNESS" profile layers --model llama --depth 8 --width 128 --input-shape 32 \
  --decoder 0,0,500 --batch "$MICRO" --repetitions 2 --warmup 1 --after-idle-ms none --split-backward \
  --out "$OUT/profile" > "$OUT/profile.log"

# The simulation of every system the real study ran, on the stages it ran.
python3 - "$REAL" "$OUT" "$MICRO" "$MICRO_BATCHES" > "$OUT/simulate.yaml" <<'PY'
import glob, json, sys
real, out, micro, micro_batches = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
systems = []
for config in sorted(glob.glob(f"{real}/raw/p000/*/rep0/config.json")):
    s = json.load(open(config))["system"]
    p = s["pipeline"]
    stages = ", ".join('{layers: "%d-%d", ranks: %s}' % (t["first_layer"], t["last_layer"], t["ranks"])
                       for t in p["stages"])
    per_rank = p.get("stages_per_rank", 1)
    systems.append("    - {name: %s, kind: pipeline, schedule: %s, stages_per_rank: %d, stages: [%s]}"
                   % (s["name"], p["schedule"], per_rank, stages))
print(f"""kind: simulate
name: memory
output: {out}/simulated
simulate:
  model: {{profile: {out}/profile/graph.txt, pbs: {micro}, batch_size: 8}}
  cluster: {{topology: profiles/gloo-2ranks-cpu/topology.yaml,
            comm_profile: profiles/gloo-2ranks-cpu/comm.json, cpu_cores: 2}}
  run: {{world_size: 4, iterations: 1}}
  pipeline: {{micro_batches: {micro_batches}}}
  systems:""")
print("\n".join(systems))
PY
"$HARNESS" run "$OUT/simulate.yaml" > "$OUT/simulate.log" 2>&1
SIMULATED=$(ls -d "$OUT"/simulated/*/*/ | tail -1)

python3 - "$REAL" "$SIMULATED" > "$OUT/table.md" <<'PY'
import glob, json, os, sys
real, simulated = sys.argv[1], sys.argv[2]
mib = 2.0 ** 20
print("| schedule | measured peak per rank (MiB) | fullest rank | simulated fullest position | error |")
print("|---|---|---:|---:|---:|")
for folder in sorted(glob.glob(f"{real}/raw/p000/*/rep0")):
    name = os.path.basename(os.path.dirname(folder))
    peaks = []
    for f in sorted(glob.glob(f"{folder}/pipeline_rank*.json")):
        its = json.load(open(f))["iterations"]
        peaks.append(max(it["peak_allocated_bytes"] for it in its) / mib)
    config = json.load(open(f"{simulated}/raw/p000/{name}/rep0/config.json"))
    sim = config["system"]["memory_per_rank"]["activation_bytes"] / mib
    fullest = max(peaks)
    print(f"| {name} | {', '.join('%.2f' % p for p in peaks)} | {fullest:.2f} | {sim:.2f} | "
          f"{100 * (sim - fullest) / fullest:+.1f}% |")
PY
cat "$OUT/table.md"
echo "written to $OUT"
