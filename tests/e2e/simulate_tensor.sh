#!/usr/bin/env bash
# Tensor parallelism in the simulator end to end: `harness profile layers --tensor 2` times a
# slice of a Llama-style decoder (its blocks hold half of the attention and feed-forward
# weights, the norms whole: checked against the whole model's profile by hand) with the AdamW
# step, and `kind: tensor_parallel` in a simulate spec prices it at world 2 and 4, with and
# without sequence parallelism; `--vocabulary-parallel` halves the slice's embedding and head
# too, and a `vocabulary_parallel` system prices their collectives. A profile of whole layers
# under a tensor-parallel system, a slice's under DDP, or one whose vocabulary split differs
# from the system's, is refused at the system's line before anything is written. A slice profiled
# recomputing its blocks (`--activation-checkpointing full`, two copies in lockstep) is priced
# with each block's forward collectives again in its backward. A pipeline whose stages split
# their blocks over tensor groups (2 stages x tensor 2 at world 4) prices the same slices, its
# stages' ranks being the groups.
source "$(dirname "$0")/common.sh"

MODEL=(--model llama --depth 2 --width 64 --decoder 2,2,54 --input-shape 8 --batch 4
  --repetitions 2 --warmup 1 --after-idle-ms none)
"$HARNESS" profile layers "${MODEL[@]}" --out "$SCRATCH/whole" > /dev/null || fail "whole profile failed"
"$HARNESS" profile layers "${MODEL[@]}" --tensor 2 --optimizer adamw --out "$SCRATCH/slice" \
  > "$SCRATCH/slice.out" || fail "slice profile failed"
expect_contains "$(cat "$SCRATCH/slice.out")" "adamw step: "
"$HARNESS" profile layers "${MODEL[@]}" --tensor 2 --vocabulary-parallel --out "$SCRATCH/vocab" \
  > /dev/null || fail "vocabulary slice profile failed"
# A vocabulary split without a tensor axis to split it over: one line, exit 2, nothing written.
code=0; "$HARNESS" profile layers "${MODEL[@]}" --vocabulary-parallel --out "$SCRATCH/no_axis" \
  > /dev/null 2> "$SCRATCH/err" || code=$?
[[ $code == 2 && $(wc -l < "$SCRATCH/err") == 1 && ! -e "$SCRATCH/no_axis" ]] ||
  fail "a vocabulary split without --tensor: exit $code, $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "--vocabulary-parallel splits llama's embedding and head over --tensor t (2 or more)"
"$PY" - "$SCRATCH" <<'PY'
import json, os, sys
whole, part = (json.load(open(os.path.join(sys.argv[1], d, "profile.json"))) for d in ("whole", "slice"))
assert (part["tensor"], part["optimizer"], whole["tensor"]) == (2, "adamw", 1), part
norms = 2 * 64 * 4  # two RMSNorm scales of width 64 stay whole
for w, s in zip(whole["layers"], part["layers"]):
    split = w["kind"] == "DecoderLayer"
    want = (w["parameter_bytes"] - norms) // 2 + norms if split else w["parameter_bytes"]
    assert s["parameter_bytes"] == want, (w, s)
    assert s["activation_bytes"] == w["activation_bytes"], (w, s)  # the block's whole output
vocab = json.load(open(os.path.join(sys.argv[1], "vocab", "profile.json")))
assert vocab["vocabulary_parallel"] and not part["vocabulary_parallel"], vocab
for s, v in zip(part["layers"], vocab["layers"]):  # 54 x 64 fp32 tables, halved
    halved = s["kind"] in ("Embedding", "Linear")
    assert v["parameter_bytes"] == (s["parameter_bytes"] // 2 if halved else s["parameter_bytes"]), (s, v)
PY

spec() {  # name profile systems
  cat > "$SCRATCH/$1.yaml" <<YAML
kind: simulate
name: $1
output: $SCRATCH/results
simulate:
  model: {profile: $SCRATCH/$2/graph.txt, pbs: 4, batch_size: 2}
  cluster: {topology: profiles/gloo-2ranks-cpu/topology.yaml, gpus_per_machine: 4, cpu_cores: 2}
  run: {world_size: 2, iterations: 3}
  systems: $3
  sweep: {run.world_size: [2, 4]}
YAML
}
cd "$(dirname "$0")/../.."  # the topology's path is the repository's
spec tensor slice "[{name: tp, kind: tensor_parallel, tensor: 2}, {name: tp_sp, kind: tensor_parallel, tensor: 2, sequence_parallel: true}]"
"$HARNESS" simulate "$SCRATCH/tensor.yaml" > "$SCRATCH/tensor.out" 2>&1 || fail "simulate failed: $(cat "$SCRATCH/tensor.out")"
"$PY" - "$SCRATCH/results/tensor" "$SCRATCH/slice/profile.json" <<'PY'
import glob, json, os, sys
run = glob.glob(os.path.join(sys.argv[1], "*"))[0]
# What a slice holds, measured by the profiler at its batch of 4 (a group's: 2 a rank x 2): every
# layer's stored bytes and the largest backward working memory.
layers = json.load(open(sys.argv[2]))["layers"]
held = sum(l["stored_bytes"] for l in layers) + max(l["backward_working_bytes"] for l in layers)
for point, world in (("p000", 2), ("p001", 4)):
    for system in ("tp", "tp_sp"):
        raw = os.path.join(run, "raw", point, system, "rep0")
        config = json.load(open(os.path.join(raw, "config.json")))
        assert config["system"]["tensor"] == 2, config["system"]
        if system == "tp":
            assert config["system"]["memory_per_rank"]["activation_bytes"] == held, config["system"]
        assert config["system"]["sequence_parallel"] == (system == "tp_sp"), config["system"]
        assert len(glob.glob(os.path.join(raw, "rank*.csv"))) == world
        names = [e.get("cat") for e in json.load(open(os.path.join(raw, "trace_rank0.json")))["traceEvents"]]
        # 2 blocks: 8 all-reduces, or 8 reduce-scatters and 8 + 2 all-gathers beside the 4
        # norms' all-reduces; at world 4 the slice's buckets across the groups too.
        if system == "tp":
            assert names.count("allreduce") >= 8 and names.count("allgather") == 0, names
        else:
            assert names.count("reducescatter") == 8 and names.count("allgather") == 10, names
PY

# The vocabulary split with sequence parallelism: the embedding's and the head's reduce-scatter
# and all-gather each in place of the two gathers of the tokens, and the loss's all-gather.
spec vocab vocab "[{name: tp_vocab, kind: tensor_parallel, tensor: 2, sequence_parallel: true, vocabulary_parallel: true}]"
"$HARNESS" simulate "$SCRATCH/vocab.yaml" > "$SCRATCH/vocab.out" 2>&1 || fail "simulate failed: $(cat "$SCRATCH/vocab.out")"
"$PY" - "$SCRATCH/results/vocab" <<'PY'
import glob, json, os, sys
raw = os.path.join(glob.glob(os.path.join(sys.argv[1], "*"))[0], "raw", "p000", "tp_vocab", "rep0")
assert json.load(open(os.path.join(raw, "config.json")))["system"]["vocabulary_parallel"]
names = [e.get("cat") for e in json.load(open(os.path.join(raw, "trace_rank0.json")))["traceEvents"]]
assert names.count("reducescatter") == 10 and names.count("allgather") == 11, names
PY

"$HARNESS" profile layers "${MODEL[@]}" --tensor 2 --activation-checkpointing full --co-located 2 \
  --out "$SCRATCH/recomputed" > /dev/null || fail "recomputing slice profile failed"
spec recomputed recomputed "[{name: tp, kind: tensor_parallel, tensor: 2}]"
"$HARNESS" simulate "$SCRATCH/recomputed.yaml" > "$SCRATCH/recomputed.out" 2>&1 ||
  fail "simulate failed: $(cat "$SCRATCH/recomputed.out")"
"$PY" - "$SCRATCH" <<'PY'
import glob, json, os, sys
profile = json.load(open(os.path.join(sys.argv[1], "recomputed", "profile.json")))
assert (profile["activation_checkpointing"], profile["co_located"]) == ("full", 2), profile
raw = os.path.join(glob.glob(os.path.join(sys.argv[1], "results", "recomputed", "*"))[0], "raw", "p000", "tp", "rep0")
assert json.load(open(os.path.join(raw, "config.json")))["model"]["activation_checkpointing"] == "full"
names = [e.get("cat") for e in json.load(open(os.path.join(raw, "trace_rank0.json")))["traceEvents"]]
assert names.count("allreduce") == 8 + 4, names  # 2 blocks' forward pair again in backward
PY

cat > "$SCRATCH/pp_tp.yaml" <<YAML
kind: simulate
name: pp_tp
output: $SCRATCH/results
simulate:
  model: {profile: $SCRATCH/slice/graph.txt, pbs: 4, batch_size: 2}
  cluster: {topology: profiles/gloo-2ranks-cpu/topology.yaml, gpus_per_machine: 4, cpu_cores: 2}
  run: {world_size: 4, iterations: 3}
  systems:
    - {name: pp_tp, kind: pipeline, schedule: dapple, micro_batches: 2, tensor: 2,
       sequence_parallel: true, stages: [{layers: "0-1", ranks: [0]}, {layers: "2-4", ranks: [1]}]}
YAML
"$HARNESS" simulate "$SCRATCH/pp_tp.yaml" > "$SCRATCH/pp_tp.out" 2>&1 || fail "simulate failed: $(cat "$SCRATCH/pp_tp.out")"
"$PY" - "$SCRATCH/results/pp_tp" <<'PY'
import glob, json, os, sys
raw = os.path.join(glob.glob(os.path.join(sys.argv[1], "*"))[0], "raw", "p000", "pp_tp", "rep0")
system = json.load(open(os.path.join(raw, "config.json")))["system"]
assert (system["tensor"], system["sequence_parallel"]) == (2, True), system
assert len(glob.glob(os.path.join(raw, "rank*.csv"))) == 4
for rank, blocks in ((0, 1), (2, 1)):  # each stage holds one of the 2 blocks, 2 micro-batches
    names = [e.get("cat") for e in json.load(open(os.path.join(raw, f"trace_rank{rank}.json")))["traceEvents"]]
    # per block and micro-batch 4 reduce-scatters; 4 all-gathers and the sequence's rejoin
    # (stage 1's block, forward) or its gradient's gather (stage 0's block, backward)
    assert names.count("reducescatter") == 4 * blocks * 2, (rank, names)
    assert names.count("allgather") == (4 * blocks + 1) * 2, (rank, names)
PY
# Gathering again in backward: each block's backward gathers its two entries once more.
sed -e 's/sequence_parallel: true,/sequence_parallel: true, recompute_gather: true,/' \
  -e 's/name: pp_tp$/name: pp_tp_rg/' "$SCRATCH/pp_tp.yaml" > "$SCRATCH/pp_tp_rg.yaml"
"$HARNESS" simulate "$SCRATCH/pp_tp_rg.yaml" > "$SCRATCH/pp_tp_rg.out" 2>&1 || fail "simulate failed: $(cat "$SCRATCH/pp_tp_rg.out")"
"$PY" - "$SCRATCH/results/pp_tp_rg" <<'PY'
import glob, json, os, sys
raw = os.path.join(glob.glob(os.path.join(sys.argv[1], "*"))[0], "raw", "p000", "pp_tp", "rep0")
for rank in (0, 2):
    names = [e.get("cat") for e in json.load(open(os.path.join(raw, f"trace_rank{rank}.json")))["traceEvents"]]
    assert names.count("allgather") == (4 + 1 + 2) * 2, (rank, names)
PY
sed -e 's/schedule: dapple/schedule: zb_h1/' "$SCRATCH/pp_tp_rg.yaml" > "$SCRATCH/pp_tp_rg_zb.yaml"
code=0; "$HARNESS" simulate "$SCRATCH/pp_tp_rg_zb.yaml" > /dev/null 2> "$SCRATCH/err" || code=$?
[[ $code == 2 ]] || fail "recompute_gather under zb_h1: exit $code"
expect_contains "$(cat "$SCRATCH/err")" "pipeline system 'pp_tp': recompute_gather: zb_h1 splits the backward into I and W"
sed -e 's|slice/graph.txt|whole/graph.txt|' -e 's/name: pp_tp$/name: pp_tp_whole/' "$SCRATCH/pp_tp.yaml" > "$SCRATCH/pp_tp_whole.yaml"
code=0; "$HARNESS" simulate "$SCRATCH/pp_tp_whole.yaml" > /dev/null 2> "$SCRATCH/err" || code=$?
[[ $code == 2 ]] || fail "a whole profile under a pipeline with a tensor axis: exit $code"
expect_contains "$(cat "$SCRATCH/err")" "system 'pp_tp' prices slices of tensor 2, and $SCRATCH/whole/graph.txt was measured at tensor 1"

spec wrong_profile whole "[{name: tp, kind: tensor_parallel, tensor: 2}]"
code=0; "$HARNESS" simulate "$SCRATCH/wrong_profile.yaml" > /dev/null 2> "$SCRATCH/err" || code=$?
[[ $code == 2 ]] || fail "a whole profile under tensor_parallel: exit $code"
expect_contains "$(cat "$SCRATCH/err")" "system 'tp' prices slices of tensor 2, and $SCRATCH/whole/graph.txt was measured at tensor 1 (measure one with \`harness profile layers --tensor 2\`)"
spec wrong_system slice "[overlap]"
code=0; "$HARNESS" simulate "$SCRATCH/wrong_system.yaml" > /dev/null 2> "$SCRATCH/err" || code=$?
[[ $code == 2 ]] || fail "a slice profile under ddp: exit $code"
expect_contains "$(cat "$SCRATCH/err")" "system 'overlap' prices whole layers, and $SCRATCH/slice/graph.txt was measured at tensor 2"
spec wrong_vocabulary slice "[{name: tp_vocab, kind: tensor_parallel, tensor: 2, vocabulary_parallel: true}]"
code=0; "$HARNESS" simulate "$SCRATCH/wrong_vocabulary.yaml" > /dev/null 2> "$SCRATCH/err" || code=$?
[[ $code == 2 ]] || fail "a slice without the vocabulary split under vocabulary_parallel: exit $code"
expect_contains "$(cat "$SCRATCH/err")" "system 'tp_vocab' splits the embedding and the head, and $SCRATCH/slice/graph.txt was measured without them split (measure one with \`harness profile layers --tensor 2 --vocabulary-parallel\`)"
[[ ! -e "$SCRATCH/results/wrong_profile" && ! -e "$SCRATCH/results/wrong_system" &&
  ! -e "$SCRATCH/results/wrong_vocabulary" ]] || fail "a refused spec wrote results"
echo "PASS simulate tensor"
