#!/usr/bin/env bash
# `harness profile estimate` end to end, with the harness alone (no rank program: nothing is
# measured): Llama-2 7B's profile on an H100 holds the published model's 6.74 billion
# parameters, whole and as a slice of tensor 8 with the vocabulary split; `harness simulate`
# prices the slice under a tensor-parallel system at world 16 on two DGX H100 machines (each
# rank holding the slice's states and its group's 8 samples' activations; under FSDP x TP half
# of those states), and
# refuses a system whose sequence parallelism is not the estimate's. Bad requests: one line,
# exit 2, nothing written.
source "$(dirname "$0")/common.sh"
cd "$(dirname "$0")/../.."  # the topology's path is the repository's

"$HARNESS" profile estimate --shape llama2-7b --out "$SCRATCH/whole" > "$SCRATCH/whole.out" ||
  fail "the whole profile failed: $(cat "$SCRATCH/whole.out")"
expect_contains "$(cat "$SCRATCH/whole.out")" "estimated on h100 (989.4 TFLOP/s x 0.70"
"$HARNESS" profile estimate --shape llama2-7b --tensor 8 --sequence-parallel --vocabulary-parallel \
  --out "$SCRATCH/slice" > /dev/null || fail "the slice's profile failed"
"$PY" - "$SCRATCH" <<'PY'
import json, os, sys
whole, part = (json.load(open(os.path.join(sys.argv[1], d, "profile.json"))) for d in ("whole", "slice"))
assert len(whole["layers"]) == 35 and whole["input_shape"] == [4096], whole["input_shape"]
# Llama-2 7B: embedding and head 32000 x 4096 each, 32 blocks, the final norm: 6,738,415,616.
assert sum(l["parameter_bytes"] for l in whole["layers"]) == 6738415616 * 4
assert (part["tensor"], part["vocabulary_parallel"], part["sequence_parallel"]) == (8, True, True)
assert part["estimate"]["device"] == "h100" and part["estimate"]["feed_forward"] == 11008
# The slice: each block's projections and the vocabulary rows over 8, the norms whole.
block = (2 * 4096 * 4096 + 2 * 4096 * 4096 + 3 * 4096 * 11008) // 8 + 2 * 4096
assert part["layers"][1]["parameter_bytes"] == block * 4, part["layers"][1]
assert part["layers"][0]["parameter_bytes"] == 4000 * 4096 * 4
# A block's forward: 4096 tokens of its slice's products at 0.7 x 989.4 TFLOP/s, plus bytes.
flops = 2 * 4096 * 4096 * (4 * 4096 + 3 * 11008) / 8 + 4 * 4096 * 4096 * 4096 / 8
assert part["layers"][1]["forward"]["median_ms"] > flops / (0.7 * 989.4e12) * 1e3
PY

cat > "$SCRATCH/spec.yaml" <<YAML
kind: simulate
name: estimate
output: $SCRATCH/results
simulate:
  model: {profile: $SCRATCH/slice/graph.txt, pbs: 1, batch_size: 1}
  cluster: {topology: planner/topologies/h100_8x2.yaml}
  run: {world_size: 16, iterations: 1}
  systems:
    - {name: tp8, kind: tensor_parallel, tensor: 8, sequence_parallel: true, vocabulary_parallel: true}
    - {name: fsdp_tp8, kind: tensor_parallel, tensor: 8, sequence_parallel: true, vocabulary_parallel: true, zero_stage: 3}
YAML
"$HARNESS" simulate "$SCRATCH/spec.yaml" > "$SCRATCH/simulate.out" 2>&1 ||
  fail "simulate failed: $(cat "$SCRATCH/simulate.out")"
expect_contains "$(cat "$SCRATCH/simulate.out")" "| fsdp_tp8 |"
"$PY" - "$SCRATCH" <<'PY'
import glob, json, os, sys
config = json.load(open(glob.glob(os.path.join(sys.argv[1], "results/estimate/*/raw/p000/tp8/rep0/config.json"))[0]))
memory = config["system"]["memory_per_rank"]
layers = json.load(open(os.path.join(sys.argv[1], "slice/profile.json")))["layers"]
held = sum(l["parameter_bytes"] for l in layers)
assert (memory["parameter_bytes"], memory["gradient_bytes"], memory["optimizer_state_bytes"]) == (held, held, 2 * held), memory
# A group's slices run 8 samples (batch 1 x tensor 8), each keeping what the profile counts.
assert memory["activation_bytes"] == 8 * sum(l["stored_bytes"] for l in layers), memory
# FSDP x TP: each slice's states halved over its 2 replicas, the activations as they were.
config = json.load(open(glob.glob(os.path.join(sys.argv[1], "results/estimate/*/raw/p000/fsdp_tp8/rep0/config.json"))[0]))
sharded = config["system"]["memory_per_rank"]
assert config["system"]["zero_stage"] == 3, config["system"]
assert (sharded["parameter_bytes"], sharded["optimizer_state_bytes"]) == (held / 2, held), sharded
assert sharded["activation_bytes"] == memory["activation_bytes"], sharded
PY
# One group leaves no replicas to shard over: refused at the system, nothing written.
sed "s|world_size: 16|world_size: 8|; s|output: .*|output: $SCRATCH/one_group|" "$SCRATCH/spec.yaml" > "$SCRATCH/one.yaml"
code=0; "$HARNESS" simulate "$SCRATCH/one.yaml" > /dev/null 2> "$SCRATCH/err" || code=$?
[[ $code == 2 && $(wc -l < "$SCRATCH/err") == 1 && ! -e "$SCRATCH/one_group" ]] ||
  fail "FSDP x TP on one group: exit $code, $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "zero_stage 3 shards over the replicas, and tensor 8 on 8 ranks leaves one"
sed 's/sequence_parallel: true, //; s/output: .*/output: OUT/' "$SCRATCH/spec.yaml" > "$SCRATCH/no_sp.yaml"
sed -i "s|output: OUT|output: $SCRATCH/refused|" "$SCRATCH/no_sp.yaml"
code=0; "$HARNESS" simulate "$SCRATCH/no_sp.yaml" > /dev/null 2> "$SCRATCH/err" || code=$?
[[ $code == 2 && $(wc -l < "$SCRATCH/err") == 1 && ! -e "$SCRATCH/refused" ]] ||
  fail "a system without the estimate's sequence parallelism: exit $code, $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "system 'tp8' does not run sequence parallelism, and $SCRATCH/slice/graph.txt was estimated with it"

# Rates given in place of a preset's are named so in profile.json, never as the preset.
"$HARNESS" profile estimate --depth 2 --width 64 --peak-flops 1e12 --memory-bandwidth 1e11 \
  --out "$SCRATCH/given" > /dev/null || fail "an estimate at given rates failed"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert (d["device"], d["estimate"]["peak_flops"]) == ("given rates", 1e12), d["estimate"]' \
  "$SCRATCH/given/profile.json" || fail "given rates named as a device"

refused() {  # want args...
  local want=$1 code=0
  shift
  "$HARNESS" profile estimate "$@" --out "$SCRATCH/bad" > /dev/null 2> "$SCRATCH/err" || code=$?
  [[ $code == 2 && $(wc -l < "$SCRATCH/err") == 1 && ! -e "$SCRATCH/bad" ]] ||
    fail "$*: exit $code, $(cat "$SCRATCH/err")"
  expect_contains "$(cat "$SCRATCH/err")" "$want"
}
refused "kv_heads (8) do not split over a tensor axis of 16" --shape llama2-70b --tensor 16
refused "unknown shape 'llama3-8b' (expected one of: llama2-7b, llama2-13b, llama2-70b)" --shape llama3-8b
refused "unknown device 'tpu' (expected one of: h100, h200, a100, v100)" --shape llama2-7b --device tpu
refused "give --shape, or --depth and --width" --depth 4
refused "matmul efficiency must be in (0, 1]" --shape llama2-7b --matmul-efficiency 1.2
refused "sequence and vocabulary parallelism split over a tensor axis of 2 or more" --shape llama2-7b --sequence-parallel
echo "profile estimate: OK"
