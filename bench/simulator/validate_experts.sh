#!/usr/bin/env bash
# Simulated vs measured p50 iteration time of expert parallelism on this machine's CPU (issue
# 78): experiments/moe_systems.yaml's BERT-MoE (4 layers of width 256, a mixture of 4 experts in
# every other one, top-2) under DDP and expert parallelism with its dense part whole (DDP's
# buckets) and sharded at ZeRO-1, ZeRO-2 and ZeRO-3, at world 2, in ROUNDS (default 3) of, back
# to back: the inputs (the layer profile at a rank's batch with the run's AdamW step, `world`
# copies in lockstep as the ranks share the host, and a Gloo profile of the collectives with the
# all-to-all, each timed right after compute, at powers of 2 and the dense part's size), the
# real runs, and the simulation of the same
# point from those inputs (the ranks on one simulated machine with this host's cores). Nothing
# of the real runs goes into a simulation.
#
# Output: rounds.csv (one row per world, system and round) and table.md: per world and system
# the measured p50 pooled over the rounds' iterations (n samples), the median of the rounds'
# simulated p50s, the error, and each round's error against its own run.
#
# Usage: [ROUNDS=3] [OUT=dir] [HARNESS=build/harness] [WORLDS=2] [AFTER_COMPUTE=5]
#   bench/simulator/validate_experts.sh
# Timings are only meaningful on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/simulate-experts-XXXXXX)}
ROUNDS=${ROUNDS:-3}
WORLDS=${WORLDS:-2}
AFTER_COMPUTE=${AFTER_COMPUTE:-5}
CORES=${CORES:-$(nproc)}
BATCH=8  # per rank, as experiments/moe_systems.yaml
MODEL=(--model bert_moe --depth 4 --width 256 --input-shape 64 --moe 4,2,1.25,2)
SYSTEMS="[{name: ddp, kind: ddp, mode: overlap}, {name: ep, kind: expert_parallel}, {name: ep_zero1, kind: expert_parallel, zero_stage: 1}, {name: ep_zero2, kind: expert_parallel, zero_stage: 2}, {name: ep_zero3, kind: expert_parallel, zero_stage: 3}]"
mkdir -p "$OUT"

measure_inputs() {  # dir world: the layer profile, then the Gloo profile at its buffers' sizes
  local dir=$1 world=$2 clock=wall sizes
  mkdir -p "$dir"
  [ "$world" -gt "$CORES" ] && clock=cpu
  "$HARNESS" profile layers "${MODEL[@]}" --batch "$BATCH" --optimizer adamw --repetitions 5 \
    --warmup 1 --after-idle-ms none --co-located "$world" --clock "$clock" \
    --out "$dir/profile" > "$dir/profile.log"
  # Powers of 2 and the sharded dense part's flat buffer itself: on this host a Gloo all-gather's
  # rate falls by half between 32 and 64 MiB, which no interpolation between the two finds.
  sizes=$(python3 - "$dir/profile/profile.json" <<'PY'
import json, sys
layers = json.load(open(sys.argv[1]))["layers"]
dense = sum(l["parameter_bytes"] - l.get("mixtures", {}).get("expert_parameter_bytes", 0) for l in layers)
print(",".join([str(4096 * 2 ** k) for k in range(15)] + [str(dense)]))
PY
)
  "$HARNESS" profile comm --world "$world" \
    --ops allreduce,sendrecv,copy,allgather,reducescatter,alltoall \
    --sizes "$sizes" --iterations 8 --warmup 2 --after-compute "$AFTER_COMPUTE" \
    --out "$dir/comm" > "$dir/comm.log"
}

run_real() {  # dir world
  "$HARNESS" run experiments/moe_systems.yaml --set "run.world_size=$2" --set run.repeats=1 \
    --set run.iterations=10 --set run.warmup=2 --set "systems=$SYSTEMS" --set baseline=ep \
    --set model.top_k=2 --set optimizer.name=adamw \
    --set 'sweep={}' --set "output=$1/real" > "$1/real.log" 2>&1
}

simulate() {  # dir world
  cat > "$1/simulate.yaml" <<YAML
kind: simulate
name: expert_validation
output: $1/simulated
simulate:
  model: {profile: $1/profile/graph.txt, pbs: $BATCH, batch_size: $BATCH}
  cluster:
    topology: profiles/gloo-2ranks-cpu/topology.yaml
    gpus_per_machine: $2
    comm_profile: $1/comm/comm.json
    cpu_cores: $CORES
  run: {world_size: $2, iterations: 10}
  systems: $SYSTEMS
  baseline: ep
YAML
  "$HARNESS" simulate "$1/simulate.yaml" > "$1/simulate.log" 2>&1
}

echo "world,system,round,measured_p50_ms,simulated_p50_ms,samples_dir" > "$OUT/rounds.csv"
for round in $(seq 1 "$ROUNDS"); do
  for world in $WORLDS; do
    dir="$OUT/round$round/world$world"
    echo "round $round, world $world: inputs, real runs, simulation" >&2
    measure_inputs "$dir" "$world"
    run_real "$dir" "$world"
    simulate "$dir" "$world"
    python3 - "$dir" "$world" "$round" >> "$OUT/rounds.csv" <<'PY'
import glob, json, sys
d, world, round_ = sys.argv[1:4]
def p50s(pattern):
    summary = json.load(open(glob.glob(pattern)[0]))
    return {s["name"]: s["phases"]["iteration"]["p50"] for s in summary["points"][0]["systems"]}
measured, priced = p50s(f"{d}/real/*/*/summary.json"), p50s(f"{d}/simulated/*/*/summary.json")
for system in measured:
    print(f"{world},{system},{round_},{measured[system]:.3f},{priced[system]:.3f},{d}/real")
PY
  done
done

python3 bench/simulator/rounds_table.py "$OUT" > "$OUT/table.md"
cat "$OUT/table.md"
echo "rounds: $OUT/rounds.csv" >&2
