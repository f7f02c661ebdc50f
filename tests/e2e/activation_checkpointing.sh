#!/usr/bin/env bash
# Activation checkpointing end to end: a Llama-style decoder on 2 ranks under DDP, ZeRO-3,
# a 1F1B pipeline and tensor parallelism, once keeping activations, once recomputing every
# block (model.activation_checkpointing: full), every second block (recompute_every: 2) and
# every attention core (selective). Each system prints the same loss on every rank
# at every iteration either way (the recomputation is the same arithmetic); flops.json counts
# the recomputed forward as the hardware's FLOPs; what cannot recompute is refused.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/spec.yaml" <<YAML
name: e2e_checkpointing
output: $SCRATCH/results
model: {name: llama, batch_size: 2, input_shape: [8], depth: 2, width: 64, heads: 4, kv_heads: 2, vocab: 101}
optimizer: {name: adamw, lr: 0.01}
run: {world_size: 2, iterations: 3, warmup: 1}
pipeline: {micro_batches: 2}
systems:
  - overlap
  - {name: zero3, kind: sharded, stage: 3}
  - {name: pipeline, kind: pipeline, schedule: dapple, stages: 2}
  - {name: tp, kind: tensor_parallel, tensor: 2, sequence_parallel: true}
YAML
sed -e 's/name: e2e_checkpointing/name: e2e_recomputed/' \
  -e 's/vocab: 101}/vocab: 101, activation_checkpointing: full}/' "$SCRATCH/spec.yaml" > "$SCRATCH/full.yaml"
sed -e 's/name: e2e_checkpointing/name: e2e_selective/' \
  -e 's/vocab: 101}/vocab: 101, activation_checkpointing: selective}/' "$SCRATCH/spec.yaml" > "$SCRATCH/selective.yaml"
sed -e 's/name: e2e_checkpointing/name: e2e_every/' \
  -e 's/vocab: 101}/vocab: 101, activation_checkpointing: full, recompute_every: 2}/' "$SCRATCH/spec.yaml" > "$SCRATCH/every.yaml"
for spec in spec full selective every; do
  "$HARNESS" run "$SCRATCH/$spec.yaml" >/dev/null 2>"$SCRATCH/stderr" ||
    fail "$spec failed: $(cat "$SCRATCH/stderr")"
done

"$PY" - "$SCRATCH/results" <<'PY'
import glob, os, re, sys
root = sys.argv[1]
def losses(spec, system, rank):
    run = os.path.join(glob.glob(os.path.join(root, spec, "*"))[0], "raw", "p000", system, "rep0")
    text = open(os.path.join(run, f"rank{rank}.stdout")).read()
    return re.findall(r"iteration \d+ done loss (\S+)", text)

import json
for system in ("overlap", "zero3", "pipeline", "tp"):
    for spec, want in (("e2e_checkpointing", "none"), ("e2e_recomputed", "full"),
                       ("e2e_selective", "selective"), ("e2e_every", "full")):
        run = os.path.join(glob.glob(os.path.join(root, spec, "*"))[0], "raw", "p000", system, "rep0")
        got = json.load(open(os.path.join(run, "config.json")))["model"]["activation_checkpointing"]
        assert got == want, (spec, system, got)
    for rank in range(2):
        kept = losses("e2e_checkpointing", system, rank)
        for spec in ("e2e_recomputed", "e2e_selective", "e2e_every"):
            recomputed = losses(spec, system, rank)
            assert len(kept) == 4 and kept == recomputed, (spec, system, rank, kept, recomputed)
# flops.json counts the hardware's FLOPs beside the model's: the 2 decoder blocks' forward
# (layers 1 and 2 of the chain: embeddings, blocks, norm, head) once more, per sample of the rank.
for spec, recomputed in (("e2e_checkpointing", False), ("e2e_recomputed", True)):
    run = os.path.join(glob.glob(os.path.join(root, spec, "*"))[0], "raw", "p000", "overlap", "rep0")
    flops = json.load(open(os.path.join(run, "flops.json")))
    assert ("hardware_iteration_flops_per_rank" in flops) == recomputed, (spec, flops)
    if recomputed:
        blocks = sum(flops["layer_forward_flops_per_sample"][1:3])
        for model, hardware in zip(flops["iteration_flops_per_rank"],
                                   flops["hardware_iteration_flops_per_rank"]):
            assert abs(hardware - model - 2 * blocks) < 1e-6 * hardware, (flops, blocks)
# Every second block: block 0 (chain layer 1) only, once more per sample of the rank.
run = os.path.join(glob.glob(os.path.join(root, "e2e_every", "*"))[0], "raw", "p000", "overlap", "rep0")
flops = json.load(open(os.path.join(run, "flops.json")))
first = flops["layer_forward_flops_per_sample"][1]
for model, hardware in zip(flops["iteration_flops_per_rank"], flops["hardware_iteration_flops_per_rank"]):
    assert abs(hardware - model - 2 * first) < 1e-6 * hardware, (flops, first)
# Selective: each block's attention core once more, 4 s^2 h = 4 x 8^2 x 64, 2 blocks x 2 samples.
run = os.path.join(glob.glob(os.path.join(root, "e2e_selective", "*"))[0], "raw", "p000", "overlap", "rep0")
flops = json.load(open(os.path.join(run, "flops.json")))
for model, hardware in zip(flops["iteration_flops_per_rank"], flops["hardware_iteration_flops_per_rank"]):
    assert abs(hardware - model - 2 * 2 * 4 * 8 * 8 * 64) < 1e-6 * hardware, flops
PY

sed -e 's/schedule: dapple/schedule: zbv, stages_per_rank: 2/' -e 's/stages: 2}/stages: 2}/' \
  "$SCRATCH/full.yaml" > "$SCRATCH/zbv.yaml"
expect_refused "$SCRATCH/zbv.yaml" "model.activation_checkpointing recomputes a block inside its backward, which zbv may split"
sed -e 's/name: llama, /name: resnet18, /' -e 's/input_shape: \[8\], depth: 2, width: 64, heads: 4, kv_heads: 2, vocab: 101, //' \
  -e '/kind: sharded\|kind: pipeline\|kind: tensor/d' "$SCRATCH/full.yaml" > "$SCRATCH/resnet.yaml"
sed -e 's/activation_checkpointing: full, recompute_every: 2/activation_checkpointing: selective, recompute_every: 2/' \
  "$SCRATCH/every.yaml" > "$SCRATCH/every_selective.yaml"
expect_refused "$SCRATCH/every_selective.yaml" "recompute_every: goes with activation_checkpointing: full"
expect_refused "$SCRATCH/resnet.yaml" "activation_checkpointing: full recomputes transformer blocks (or their attention); resnet18 has none"
echo "PASS activation checkpointing"
