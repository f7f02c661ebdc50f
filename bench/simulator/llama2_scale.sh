#!/usr/bin/env bash
# Llama-2 7B and 70B on 64 to 1024 simulated H100s (issue 79): which of 1D (DDP, FSDP), 2D
# (tensor x DDP, tensor x FSDP) and 3D (pipeline x tensor x data) configurations is fastest per
# GPU count.
# The layer profiles are computed, not measured (`harness profile estimate`: FLOPs and bytes at
# its default efficiencies), the links are DGX H100's datasheet peaks
# (planner/topologies/h100_8x2.yaml): the ranking rests on those assumptions, not on a GPU.
# Every GPU runs one 4096-token sample an iteration, so every configuration trains the same
# global batch at a world size (4M tokens at 1024, Llama 2's). Tensor axes split the vocabulary
# too and run sequence parallelism; a pipeline's stages hold the embedding and head whole (the
# runtime's rule), cut where the forwards balance, 1F1B with one sample a micro-batch; 70B's
# FSDP and FSDP x TP run with and without recomputing every block (full activation
# checkpointing).
#
# Output: $OUT/table.md: per model and world, each system's iteration time (the slowest rank's),
# tokens/s per GPU, MFU (model FLOPs, recomputation not counted, over the H100's dense BF16
# peak), the float32 states with AdamW's moments and the activations its fullest rank holds (what
# the estimate counts each layer keeping for backward, over the micro-batches its schedule holds
# at once); then the fastest configuration whose states and activations fit in 80 GB.
#
# Usage: [OUT=dir] [HARNESS=build/harness] [WORLDS="[64, 128, 256, 512, 1024]"]
#   bench/simulator/llama2_scale.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/llama2-scale-XXXXXX)}
WORLDS=${WORLDS:-"[64, 128, 256, 512, 1024]"}
mkdir -p "$OUT/profiles"

profile() {  # name shape estimate-options...
  "$HARNESS" profile estimate --shape "$2" "${@:3}" --out "$OUT/profiles/$1" > /dev/null
}
profile 7b llama2-7b
profile 7b-t2 llama2-7b --tensor 2 --sequence-parallel --vocabulary-parallel
profile 7b-t8 llama2-7b --tensor 8 --sequence-parallel --vocabulary-parallel
profile 7b-t8-stages llama2-7b --tensor 8 --sequence-parallel
profile 70b llama2-70b
profile 70b-ac llama2-70b --activation-checkpointing full
profile 70b-t8 llama2-70b --tensor 8 --sequence-parallel --vocabulary-parallel
profile 70b-t8-ac llama2-70b --tensor 8 --sequence-parallel --vocabulary-parallel \
  --activation-checkpointing full
profile 70b-t8-stages llama2-70b --tensor 8 --sequence-parallel

simulate() {  # profile systems
  cat > "$OUT/$1.yaml" <<YAML
kind: simulate
name: llama2-$1
output: $OUT/results
simulate:
  model: {profile: $OUT/profiles/$1/graph.txt, pbs: 1, batch_size: 1}
  cluster: {topology: planner/topologies/h100_8x2.yaml, gpus_per_machine: 8}
  run: {world_size: 64, iterations: 1, trace_ranks: 0}
  systems: $2
  sweep: {run.world_size: $WORLDS}
YAML
  echo "simulating $1"
  "$HARNESS" simulate "$OUT/$1.yaml" > "$OUT/$1.log" 2>&1 || { cat "$OUT/$1.log"; exit 1; }
}
TP="kind: tensor_parallel, sequence_parallel: true, vocabulary_parallel: true"
PP="kind: pipeline, schedule: dapple, tensor: 8, sequence_parallel: true"
simulate 7b "[{name: ddp, kind: ddp}, {name: fsdp, kind: sharded, stage: 3}]"
simulate 7b-t2 "[{name: tp2, tensor: 2, $TP}, {name: fsdp_tp2, tensor: 2, zero_stage: 3, $TP}]"
simulate 7b-t8 "[{name: tp8, tensor: 8, $TP}, {name: fsdp_tp8, tensor: 8, zero_stage: 3, $TP}]"
simulate 7b-t8-stages "[{name: pp2_tp8, $PP, stages: 2, micro_batches: 16}, {name: pp4_tp8, $PP, stages: 4, micro_batches: 32}]"
simulate 70b "[{name: fsdp, kind: sharded, stage: 3}]"
simulate 70b-ac "[{name: fsdp_ac, kind: sharded, stage: 3}]"
simulate 70b-t8 "[{name: tp8, tensor: 8, $TP}, {name: fsdp_tp8, tensor: 8, zero_stage: 3, $TP}]"
simulate 70b-t8-ac "[{name: fsdp_tp8_ac, tensor: 8, zero_stage: 3, $TP}]"
simulate 70b-t8-stages "[{name: pp4_tp8, $PP, stages: 4, micro_batches: 32}, {name: pp8_tp8, $PP, stages: 8, micro_batches: 64}]"

python3 - "$OUT" > "$OUT/table.md" <<'PY'
import collections, glob, json, os, sys
out = sys.argv[1]
GPU_BYTES, PEAK = 80e9, 989.4e12
rows = collections.defaultdict(list)  # (model, world) -> [(system, ms, states)]
for summary_path in glob.glob(os.path.join(out, "results", "*", "*", "summary.json")):
    run = os.path.dirname(summary_path)
    summary = json.load(open(summary_path))
    model = summary["experiment"].split("-")[1]  # llama2-70b-ac: 70b
    for point in summary["points"]:
        for system in point["systems"]:
            raw = os.path.join(run, "raw", point["id"], system["name"], "rep0")
            config = json.load(open(os.path.join(raw, "config.json")))
            profile = json.load(open(os.path.join(os.path.dirname(config["model"]["profile"]), "profile.json")))
            memory = config["system"]["memory_per_rank"]
            states = memory["parameter_bytes"] + memory["gradient_bytes"] + memory["optimizer_state_bytes"]
            activations = memory["activation_bytes"]
            ms = system["phases"]["iteration"]["max"]
            flops = profile["estimate"]["model_flops_per_sample"]
            world = config["model"]["global_batch"] // config["model"]["batch_size"]
            rows[(model, world)].append((system["name"], ms, states, activations, flops))
print("| model | GPUs | system | iteration ms | tokens/s per GPU | MFU | states GB | activations GB |")
print("|---|---:|---|---:|---:|---:|---:|---:|")
fastest = []
for (model, world) in sorted(rows, key=lambda k: (int(k[0][:-1]), k[1])):
    entries = sorted(rows[(model, world)], key=lambda e: e[1])
    for name, ms, states, activations, flops in entries:
        mark = "" if states + activations <= GPU_BYTES else " (does not fit)"
        print(f"| {model} | {world} | {name} | {ms:.1f} | {4096 / (ms / 1e3):.0f} | "
              f"{100 * flops / (ms / 1e3) / PEAK:.1f}% | {states / 1e9:.1f} | "
              f"{activations / 1e9:.1f}{mark} |")
    fits = [e for e in entries if e[2] + e[3] <= GPU_BYTES]
    fastest.append((model, world, fits[0][0] if fits else "none fits",
                    f"{fits[0][1]:.1f}" if fits else "-",
                    f"{fits[1][0]} {fits[1][1] / fits[0][1]:.2f}x" if len(fits) > 1 else "-"))
print()
print("| model | GPUs | fastest that fits | iteration ms | next (its time / the fastest's) |")
print("|---|---:|---|---:|---|")
for model, world, name, ms, runner_up in fastest:
    print(f"| {model} | {world} | {name} | {ms} | {runner_up} |")
PY
cat "$OUT/table.md"
echo "wrote $OUT/table.md"
