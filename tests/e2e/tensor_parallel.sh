#!/usr/bin/env bash
# Tensor parallelism end to end: a Llama-style decoder with AdamW. The slices of a replica train
# on batch_size x degree samples drawn as a DDP rank of that batch size draws its own, from the
# same seed: so tensor 2 on 2 ranks (with and without sequence parallelism) prints, on both
# ranks, the loss of DDP on 1 rank at every iteration, and tensor 2 x data 2 on 4 ranks the loss
# of DDP on 2. Each rank's memory file holds the bytes it sent on its tensor group per
# iteration, equal to Megatron's 8 (t - 1)/t b s h x 4 bytes per layer computed here by hand
# (with the vocabulary split, the embedding's and the head's collectives and the loss's too);
# the dry run prints the mesh; a layout the model cannot split is refused at the system's line.
source "$(dirname "$0")/common.sh"

spec() {  # name world batch systems
  cat > "$SCRATCH/$1.yaml" <<YAML
name: $1
output: $SCRATCH/results
model: {name: llama, batch_size: $3, input_shape: [8], depth: 2, width: 64, heads: 4, kv_heads: 2, vocab: 102}
optimizer: {name: adamw, lr: 0.01}
run: {world_size: $2, iterations: 3, warmup: 1, trace: true}
systems: $4
YAML
}
spec tensor 2 2 "[{name: tp, kind: tensor_parallel, tensor: 2}, {name: tp_sp, kind: tensor_parallel, tensor: 2, sequence_parallel: true}, {name: tp_vocab, kind: tensor_parallel, tensor: 2, sequence_parallel: true, vocabulary_parallel: true}, {name: tp_regather, kind: tensor_parallel, tensor: 2, sequence_parallel: true, recompute_gather: true}]"
spec whole 1 4 "[overlap]"
spec tensor_data 4 2 "[{name: tp, kind: tensor_parallel, tensor: 2}, {name: fsdp_tp, kind: tensor_parallel, tensor: 2, zero_stage: 3, sequence_parallel: true}]"
spec data 2 4 "[overlap]"
spec tp_only 4 2 "[{name: tp, kind: tensor_parallel, tensor: 2}]"  # what the refusals start from
# bf16 under autocast: the token shards travel as 2-byte words Gloo gathers.
spec bf16 2 2 "[{name: tp, kind: tensor_parallel, tensor: 2}, {name: tp_sp, kind: tensor_parallel, tensor: 2, sequence_parallel: true}, {name: tp_regather, kind: tensor_parallel, tensor: 2, sequence_parallel: true, recompute_gather: true}]"
sed -i 's/vocab: 102}/vocab: 102, precision: bf16}/' "$SCRATCH/bf16.yaml"

dry=$("$HARNESS" run "$SCRATCH/tensor_data.yaml" --dry-run 2>&1) || fail "dry run failed: $dry"
expect_contains "$dry" "tensor 2, 1 thread(s)/rank"
expect_contains "$dry" "tensor 2 sequence-parallel, replicas ZeRO-3, 1 thread(s)/rank"
expect_contains "$dry" "mesh: pipeline 1 x data 2 x tensor 2"
expect_contains "$dry" "rank 3 (pipeline 0, data 1, tensor 1): all-reduces in [1, 3]; splits layers with [2, 3] (all-reduces)"
dry=$("$HARNESS" run "$SCRATCH/tensor.yaml" --dry-run 2>&1) || fail "dry run failed: $dry"
expect_contains "$dry" "tensor 2 sequence-parallel vocabulary-parallel, 1 thread(s)/rank"
expect_contains "$dry" "splits layers and the vocabulary with [0, 1] (all-gathers and reduce-scatters)"
for name in tensor whole tensor_data data bf16; do
  "$HARNESS" run "$SCRATCH/$name.yaml" >/dev/null 2>"$SCRATCH/stderr" ||
    fail "$name failed: $(cat "$SCRATCH/stderr")"
done

"$PY" - "$SCRATCH/results" <<'PY'
import glob, json, os, re, sys
root = sys.argv[1]
def raw(spec, system):
    return os.path.join(glob.glob(os.path.join(root, spec, "*"))[0], "raw", "p000", system, "rep0")

def losses(spec, system, rank):
    text = open(os.path.join(raw(spec, system), f"rank{rank}.stdout")).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]

def same(got, want, what):
    assert len(got) == len(want) == 4, (what, got, want)
    for a, b in zip(got, want):
        assert abs(a - b) <= 2e-5 * abs(b), (what, got, want)

for system in ("tp", "tp_sp", "tp_vocab", "tp_regather"):
    for rank in range(2):
        same(losses("tensor", system, rank), losses("whole", "overlap", 0), (system, rank))
# In bf16 the sequence-parallel systems train as plain TP does, to bf16's precision.
for system in ("tp_sp", "tp_regather"):
    for rank in range(2):
        got, want = losses("bf16", system, rank), losses("bf16", "tp", rank)
        assert len(got) == len(want) == 4, (system, rank, got, want)
        for a, b in zip(got, want):
            assert abs(a - b) <= 1e-3 * abs(b), (system, rank, a, b)
for system in ("tp", "fsdp_tp"):
    for rank in range(4):
        same(losses("tensor_data", system, rank), losses("data", "overlap", rank // 2),
             (system, rank))
# FSDP over the data axis: each rank holds half of its slices' parameters, and sends what
# ZeRO-3's formula says on its data group.
for path in glob.glob(os.path.join(raw("tensor_data", "fsdp_tp"), "memory_rank*.json")):
    m = json.load(open(path))
    s = m["sharded"]
    assert (s["stage"], s["replicas"]) == (3, 2), s
    assert s["formula"]["bytes_sent_per_iteration"] == s["bytes_sent_per_iteration"], s
    plain = json.load(open(path.replace("fsdp_tp", "tp")))
    assert m["parameter_bytes"] < plain["parameter_bytes"], (m, plain)

# Megatron's bytes by hand: b s h = (2 x 2) x 8 x 64 fp32 elements, t = 2, 2 layers.
bsh_bytes = 4 * 8 * 64 * 4
layers = 2 * 8 * (1 / 2) * bsh_bytes
# Sequence parallelism adds the two ends' all-gathers and the 4 norms' gradients of 64 fp32.
ends = 2 * (1 / 2) * bsh_bytes + 2 * (1 / 2) * 4 * 64 * 4
# The vocabulary split instead: 4 ring passes of b s h (the embedding's reduce-scatter and the
# head's all-gather, and their backward), 5 norms' gradients (the final norm's too), and the
# loss's fp32 all-gather of one number per token of the 32 and two all-reduces of one.
tokens = 4 * 8
vocab = 4 * (1 / 2) * bsh_bytes + 2 * (1 / 2) * 5 * 64 * 4 + tokens * 4 + 2 * (2 * (1 / 2) * tokens * 4)
# Gathering again in backward: one all-gather of b s/t h more per block entry, 4 here.
regather = ends + 4 * (1 / 2) * bsh_bytes
for spec, system, extra in (("tensor", "tp", 0), ("tensor", "tp_sp", ends),
                            ("tensor", "tp_vocab", vocab), ("tensor", "tp_regather", regather),
                            ("tensor_data", "tp", 0)):
    for path in glob.glob(os.path.join(raw(spec, system), "memory_rank*.json")):
        t = json.load(open(path))["tensor"]
        assert t["degree"] == 2, t
        assert t["bytes_sent_per_iteration"] == layers + extra, (spec, system, path, t)
        assert t["formula_bytes_per_iteration"] == t["bytes_sent_per_iteration"], t
    # The traced iteration records the tensor group's collectives: 4 per layer, and with
    # sequence parallelism the ends' 2 all-gathers and the 4 norms' all-reduces.
    trace = json.load(open(os.path.join(raw(spec, system), "trace_rank0.json")))
    names = [e.get("name") for e in trace["traceEvents"] if e.get("ph") == "X"]
    counts = [names.count("tensor " + c) for c in ("all-reduce", "all-gather", "reduce-scatter")]
    # With the vocabulary split: the loss's 2 all-reduces and all-gather, the embedding's and
    # the head's reduce-scatter and all-gather each, in place of the ends.
    want = {"tp": [8, 0, 0], "tp_sp": [4, 10, 8], "tp_vocab": [7, 11, 10],
            "tp_regather": [4, 14, 8]}[system]
    assert counts == want, (system, counts, names)
PY

sed -e 's/tensor: 2}\]/tensor: 3}]/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/three.yaml"
expect_refused "$SCRATCH/three.yaml" "systems: tp: tensor 3 does not divide run.world_size 4"
sed -e 's/world_size: 4/world_size: 8/' -e 's/tensor: 2}\]/tensor: 8}]/' \
  "$SCRATCH/tp_only.yaml" > "$SCRATCH/eight.yaml"
expect_refused "$SCRATCH/eight.yaml" "systems: tp: model llama: its heads (4) do not split over a tensor axis of 8"
sed -e 's/heads: 4, kv_heads: 2/heads: 4, kv_heads: 1/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/kv.yaml"
expect_refused "$SCRATCH/kv.yaml" "its key/value heads (1) do not split over a tensor axis of 2"
sed -e 's/vocab: 102/vocab: 101/' -e 's/tensor: 2}\]/tensor: 2, vocabulary_parallel: true}]/' \
  "$SCRATCH/tp_only.yaml" > "$SCRATCH/odd.yaml"
expect_refused "$SCRATCH/odd.yaml" "systems: tp: model llama: its vocabulary (101) does not split over a tensor axis of 2"
sed -e 's/vocab: 102}/vocab: 102, loss: mse}/' -e 's/tensor: 2}\]/tensor: 2, vocabulary_parallel: true}]/' \
  "$SCRATCH/tp_only.yaml" > "$SCRATCH/mse.yaml"
expect_refused "$SCRATCH/mse.yaml" "vocabulary parallelism computes cross_entropy over the logits' shards, not mse"
sed -e 's/name: llama, /name: bert, /' -e 's/, heads: 4, kv_heads: 2, vocab: 102//' -e 's/width: 64/width: 128/' \
  -e 's/tensor: 2}\]/tensor: 2, vocabulary_parallel: true}]/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/bert.yaml"
expect_refused "$SCRATCH/bert.yaml" "vocabulary parallelism splits llama's embedding and head, not bert's"
sed -e 's/tensor: 2}\]/tensor: 2, recompute_gather: true}]/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/regather.yaml"
expect_refused "$SCRATCH/regather.yaml" "recompute_gather: goes with 'sequence_parallel: true' (it keeps the token shards)"
sed -e 's/name: llama, /name: mlp, /' -e 's/, heads: 4, kv_heads: 2, vocab: 102//' \
  -e 's/input_shape: \[8\]/input_shape: [16]/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/mlp.yaml"
expect_refused "$SCRATCH/mlp.yaml" "tensor parallelism splits llama's and bert's layers, not mlp's"
sed -e 's/, tensor: 2}/}/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/none.yaml"
expect_refused "$SCRATCH/none.yaml" "missing required key 'systems.tensor'"
# FSDP over a data axis of one replica shards nothing.
sed -e 's/world_size: 4/world_size: 2/' -e 's/{name: tp, kind: tensor_parallel, tensor: 2}, //' \
  "$SCRATCH/tensor_data.yaml" > "$SCRATCH/one.yaml"
expect_refused "$SCRATCH/one.yaml" "systems: fsdp_tp: zero_stage 3 shards over the replicas, and tensor 2 on 2 ranks leaves one"
echo "PASS tensor parallel"
