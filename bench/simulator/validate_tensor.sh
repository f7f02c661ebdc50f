#!/usr/bin/env bash
# Simulated vs measured p50 iteration time of tensor parallelism on this machine's CPU (issue
# 79): the Llama-style decoder of experiments/llm_parallelism.yaml under `tensor_parallel`
# (tensor 2) with and without sequence parallelism, at world 2 (one group) and world 4 (2
# groups x DDP across), in ROUNDS (default 3) of, back to back: the inputs (a Gloo profile of
# a tensor group's collectives, taken while every other group profiles its own, and the slice's
# layer profile -- `harness profile layers --tensor 2` at a group's batch with the run's AdamW
# step, `world` copies in lockstep as the ranks share the host, in CPU time at world 4 where
# they share its cores and the simulator time-shares them), the real runs, and the simulation
# of the same point from those inputs (the ranks on one simulated machine with this host's
# cores). Nothing of the real runs goes into a simulation.
#
# Output: rounds.csv (one row per world, system and round) and table.md: per world and system
# the measured p50 pooled over the rounds' iterations (n samples), the median of the rounds'
# simulated p50s, the error, and each round's error against its own run; then breakdown.md,
# where each miss lies: every round's traced iteration per rank, run and simulation, split into
# compute and the tensor group's collectives, with how far apart a pair enters and leaves them
# (bench/simulator/tensor_breakdown.py).
#
# RECOMPUTE=full or selective: the runs recompute their blocks (model.activation_checkpointing)
# and the slice is profiled recomputing them the same way (--activation-checkpointing).
# PIPELINE=1: at world 4 also the tensor axis inside pipeline stages, experiments/
# llm_parallelism.yaml's pp_tp (2 balanced stages x tensor 2, sequence-parallel, 4
# micro-batches), simulated from the same inputs on the stages the run cut.
#
# Usage: [ROUNDS=3] [OUT=dir] [HARNESS=build/harness] [SYSTEMS="[...]"] [RECOMPUTE=none]
#   [PIPELINE=0] [AFTER_COMPUTE=5] [CONCURRENT_GROUPS=1] [WORLDS="2 4"]
#   bench/simulator/validate_tensor.sh
# Timings are only meaningful on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/simulate-tensor-XXXXXX)}
ROUNDS=${ROUNDS:-3}
RECOMPUTE=${RECOMPUTE:-none}
PIPELINE=${PIPELINE:-0}
WORLDS=${WORLDS:-2 4}  # e.g. 4 alone, for systems that need replicas (zero_stage on the groups)
# Matrix products each rank computes before every timed collective of the Gloo profile
# (`harness profile comm --after-compute`), so that the collectives are priced as a block meets
# them, right after compute; 0: on ranks that idled into them together.
AFTER_COMPUTE=${AFTER_COMPUTE:-5}
CONCURRENT_GROUPS=${CONCURRENT_GROUPS:-1}
PP_TP="{name: pp_tp, kind: pipeline, schedule: dapple, stages: 2, tensor: 2, sequence_parallel: true}"
CORES=${CORES:-$(nproc)}
BATCH=2  # per rank, as experiments/llm_parallelism.yaml; a group's slices run 2 x tensor
MODEL=(--model llama --depth 4 --width 256 --decoder 4,4,1000 --input-shape 64)
# Systems of the slice's profile (one without a vocabulary split); the first must be named tp.
SYSTEMS=${SYSTEMS:-"[{name: tp, kind: tensor_parallel, tensor: 2}, {name: tp_sp, kind: tensor_parallel, tensor: 2, sequence_parallel: true}]"}
mkdir -p "$OUT"

profile_comm() {  # out: a tensor group's Gloo profile
  "$HARNESS" profile comm --world 2 --ops allreduce,sendrecv,copy,allgather,reducescatter \
    --sizes 64K:16M:x4 --iterations 8 --warmup 2 --after-compute "$AFTER_COMPUTE" \
    --out "$1" > "$1.log"
}

measure_inputs() {  # dir world: the Gloo profile and the slice's layer profile
  local dir=$1 world=$2 clock=wall group pid
  mkdir -p "$dir"
  # Every tensor group profiles its collectives at once, as the groups of the runs meet theirs
  # on the same cores (CONCURRENT_GROUPS=0: the first group alone); the first group's prices.
  local beside=()
  for group in $(seq 2 $((CONCURRENT_GROUPS == 1 ? world / 2 : 1))); do
    profile_comm "$dir/comm_group$group" &
    beside+=($!)
  done
  profile_comm "$dir/comm"
  for pid in "${beside[@]}"; do wait "$pid"; done  # set -e: a failed one ends the validation
  [ "$world" -gt "$CORES" ] && clock=cpu
  "$HARNESS" profile layers "${MODEL[@]}" --tensor 2 --batch $((BATCH * 2)) --optimizer adamw \
    --repetitions 5 --activation-checkpointing "$RECOMPUTE" \
    --warmup 1 --after-idle-ms none --co-located "$world" --clock "$clock" \
    --out "$dir/profile" > "$dir/profile.log"
}

run_real() {  # dir world
  "$HARNESS" run experiments/llm_parallelism.yaml --set "run.world_size=$2" --set run.repeats=1 \
    --set run.iterations=10 --set run.warmup=2 --set "systems=$SYSTEMS" --set baseline=tp \
    --set "model.activation_checkpointing=$RECOMPUTE" \
    --set 'sweep={}' --set "output=$1/real" > "$1/real.log" 2>&1
}

simulate() {  # dir world
  cat > "$1/simulate.yaml" <<YAML
kind: simulate
name: tensor_validation
output: $1/simulated
simulate:
  model: {profile: $1/profile/graph.txt, pbs: $((BATCH * 2)), batch_size: $BATCH,
          activation_checkpointing: $RECOMPUTE}
  cluster:
    topology: profiles/gloo-2ranks-cpu/topology.yaml
    gpus_per_machine: $2
    comm_profile: $1/comm/comm.json
    cpu_cores: $CORES
  run: {world_size: $2, iterations: 10}
  systems: $SYSTEMS
  baseline: tp
YAML
  "$HARNESS" simulate "$1/simulate.yaml" > "$1/simulate.log" 2>&1
}

# pp_tp's real run at world 4, then its simulation on the stages the run cut (ranks: groups).
run_pipeline() {  # dir
  "$HARNESS" run experiments/llm_parallelism.yaml --set run.world_size=4 --set run.repeats=1 \
    --set run.iterations=10 --set run.warmup=2 --set "systems=[$PP_TP]" --set baseline=pp_tp \
    --set "model.activation_checkpointing=$RECOMPUTE" \
    --set 'sweep={}' --set "output=$1/pipeline_real" > "$1/pipeline_real.log" 2>&1
  local stages
  stages=$(python3 - "$1" <<'PY'
import glob, json, os, sys
config = json.load(open(glob.glob(os.path.join(sys.argv[1], "pipeline_real/*/*/raw/p000/pp_tp/rep0/config.json"))[0]))
cut = [f'{{layers: "{s["first_layer"]}-{s["last_layer"]}", ranks: {s["ranks"]}}}' for s in config["system"]["pipeline"]["stages"]]
print("[" + ", ".join(cut) + "]")
PY
)
  sed -e "s|output: $1/simulated|output: $1/pipeline_simulated|" \
    -e "/^  systems:/,\$d" "$1/simulate.yaml" > "$1/pipeline_simulate.yaml"
  cat >> "$1/pipeline_simulate.yaml" <<YAML
  pipeline: {micro_batches: 4}
  systems: [{name: pp_tp, kind: pipeline, schedule: dapple, tensor: 2, sequence_parallel: true, stages: $stages}]
  baseline: pp_tp
YAML
  "$HARNESS" simulate "$1/pipeline_simulate.yaml" > "$1/pipeline_simulate.log" 2>&1
}

echo "world,system,round,measured_p50_ms,simulated_p50_ms,samples_dir" > "$OUT/rounds.csv"
{
  echo "Traced iteration, ms, ranks 0 and 1 (the first tensor group; $(nproc) cores):"
  echo
  echo "| world | round | system | side | rank | compute | all-reduce | all-gather | reduce-scatter | enter skew | leave skew |"
  echo "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"
} > "$OUT/breakdown.md"
for round in $(seq 1 "$ROUNDS"); do
  for world in $WORLDS; do
    dir="$OUT/round$round/world$world"
    echo "round $round, world $world: inputs, real runs, simulation" >&2
    measure_inputs "$dir" "$world"
    run_real "$dir" "$world"
    simulate "$dir" "$world"
    [[ $PIPELINE == 1 && $world == 4 ]] && run_pipeline "$dir"
    # shellcheck disable=SC2046  # each glob names one results folder
    python3 bench/simulator/tensor_breakdown.py $(echo "$dir"/real/*/*/) \
      $(echo "$dir"/simulated/*/*/) $(grep -o 'name: [a-z0-9_]*' <<<"$SYSTEMS" | cut -d' ' -f2) | sed "s/^| /| $world | $round | /" >> "$OUT/breakdown.md"
    python3 - "$dir" "$world" "$round" >> "$OUT/rounds.csv" <<'PY'
import glob, json, sys
d, world, round_ = sys.argv[1:4]
def p50s(pattern):
    found = glob.glob(pattern)
    if not found:
        return {}
    summary = json.load(open(found[0]))
    return {s["name"]: s["phases"]["iteration"]["p50"] for s in summary["points"][0]["systems"]}
for real, simulated in (("real", "simulated"), ("pipeline_real", "pipeline_simulated")):
    measured, priced = p50s(f"{d}/{real}/*/*/summary.json"), p50s(f"{d}/{simulated}/*/*/summary.json")
    for system in measured:
        print(f"{world},{system},{round_},{measured[system]:.3f},{priced[system]:.3f},{d}/{real}")
PY
  done
done

python3 bench/simulator/rounds_table.py "$OUT" "Recomputation: $RECOMPUTE." > "$OUT/table.md"
cat "$OUT/table.md"
echo
cat "$OUT/breakdown.md"
echo "rounds: $OUT/rounds.csv" >&2
