#!/usr/bin/env bash
# Tensor parallelism inside pipeline stages end to end: a Llama-style decoder with AdamW, 2
# stages whose layers split over tensor groups of 2 -- on 4 ranks (TP x PP, with and without
# sequence parallelism, and gathering again in backward) and on 8 (2 stages x 2 replicas x tensor 2: 3D). From one seed, the
# ranks' losses summed give, at every iteration, the loss the plain pipeline's ranks sum to on
# the same global batch; each rank's memory file sets the bytes it sent on its tensor group
# beside Megatron's for its stage, as computed here by hand; the dry run prints the three-axis
# mesh; the pipeline table names the layout and the schedule's bubble; a layout the ranks or
# the model cannot take is refused at the system's line, before anything runs.
source "$(dirname "$0")/common.sh"

spec() {  # name world systems
  cat > "$SCRATCH/$1.yaml" <<YAML
name: $1
output: $SCRATCH/results
model: {name: llama, batch_size: $2, input_shape: [8], depth: 2, width: 64, heads: 2, kv_heads: 2, vocab: 53}
optimizer: {name: adamw, lr: 0.01}
run: {world_size: $3, iterations: 2, warmup: 1, threads_per_rank: 1}
pipeline: {micro_batches: 2}
systems: $4
YAML
}
# The same global batch of 8 samples throughout.
spec staged 2 4 "[{name: pipeline, kind: pipeline, stages: 2}, {name: pp_tp, kind: pipeline, stages: 2, tensor: 2}, {name: pp_tp_sp, kind: pipeline, stages: 2, tensor: 2, sequence_parallel: true}, {name: pp_tp_sp_rg, kind: pipeline, stages: 2, tensor: 2, sequence_parallel: true, recompute_gather: true}]"
spec three_d 1 8 "[{name: pp_dp_tp, kind: pipeline, stages: 2, tensor: 2, sequence_parallel: true, schedule: zb_h1}]"

dry=$("$HARNESS" run "$SCRATCH/three_d.yaml" --dry-run 2>&1) || fail "dry run failed: $dry"
expect_contains "$dry" "2 balanced stages, tensor 2 sequence-parallel"
expect_contains "$dry" "mesh: pipeline 2 x data 2 x tensor 2"
expect_contains "$dry" "rank 3 (pipeline 0, data 1, tensor 1): all-reduces in [1, 3]; splits layers with [2, 3] (all-gathers and reduce-scatters); sends to [7]"
for name in staged three_d; do
  "$HARNESS" run "$SCRATCH/$name.yaml" >"$SCRATCH/$name.out" 2>"$SCRATCH/stderr" ||
    fail "$name failed: $(cat "$SCRATCH/stderr")"
done
expect_contains "$(cat "$SCRATCH/staged.out")" "| pp_tp | 2x1x2 | dapple |"
expect_contains "$(cat "$SCRATCH/three_d.out")" "| pp_dp_tp | 2x2x2 | zb_h1 |"
# The schedule's bubble is read from one slice of each position: a figure, not "-".
grep -q "| pp_tp | 2x1x2 | dapple | 2 | .* | [0-9.]*% | [0-9.]*% | [0-9.]*% |" "$SCRATCH/staged.out" ||
  fail "no schedule bubble for pp_tp: $(grep pp_tp "$SCRATCH/staged.out")"

"$PY" - "$SCRATCH/results" <<'PY'
import glob, os, re, sys
root = sys.argv[1]

def summed(spec, system, world):
    run = glob.glob(os.path.join(root, spec, "*"))[0]
    per_rank = []
    for rank in range(world):
        path = os.path.join(run, "raw", "p000", system, "rep0", f"rank{rank}.stdout")
        per_rank.append([float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", open(path).read())])
    assert all(len(losses) == 3 for losses in per_rank), (system, per_rank)
    return [sum(column) for column in zip(*per_rank)]

plain = summed("staged", "pipeline", 4)
for spec, system, world in (("staged", "pp_tp", 4), ("staged", "pp_tp_sp", 4),
                            ("staged", "pp_tp_sp_rg", 4), ("three_d", "pp_dp_tp", 8)):
    got = summed(spec, system, world)
    for a, b in zip(got, plain):
        assert abs(a - b) <= 2e-5 * abs(b), (system, got, plain)

# Each rank's tensor bytes per iteration: Megatron's for its stage's blocks (chain layers 1 and
# 2, wherever the balanced split put them) at its replica's rows (8 samples over the replicas),
# s = 8, h = 64, fp32, t = 2; under sequence parallelism each end of the split layers its stage
# holds, and the 2 norms' gradients per block and micro-batch (2); gathering again in backward,
# 2 more ring passes a block.
import json
for spec, system, world, replicas, sp, regather in (("staged", "pp_tp", 4, 1, False, False),
                                                    ("staged", "pp_tp_sp", 4, 1, True, False),
                                                    ("staged", "pp_tp_sp_rg", 4, 1, True, True),
                                                    ("three_d", "pp_dp_tp", 8, 2, True, False)):
    raw = os.path.join(glob.glob(os.path.join(root, spec, "*"))[0], "raw", "p000", system, "rep0")
    bsh = 8 // replicas * 8 * 64 * 4
    for rank in range(world):
        [[first, last]] = json.load(open(os.path.join(raw, f"pipeline_rank{rank}.json")))["layer_ranges"]
        blocks = [layer for layer in (1, 2) if first <= layer <= last]
        want = len(blocks) * 8 * 0.5 * bsh
        if sp:
            want += len(blocks) * 0.5 * bsh + len(blocks) * 2 * 0.5 * 2 * 2 * 64 * 4
        if regather:
            want += len(blocks) * 2 * 0.5 * bsh
        t = json.load(open(os.path.join(raw, f"memory_rank{rank}.json")))["tensor"]
        assert t["bytes_sent_per_iteration"] == t["formula_bytes_per_iteration"] == want, (system, rank, t, want)
PY

spec tp_only 2 4 "[{name: pp_tp, kind: pipeline, stages: 2, tensor: 2}]"  # what the refusals start from
sed -e 's/stages: 2, tensor: 2/stages: 3, tensor: 2/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/ranks.yaml"
expect_refused "$SCRATCH/ranks.yaml" "systems: pp_tp: 3 stages of tensor groups of 2 do not divide the 4 ranks evenly"
sed -e 's/heads: 2, kv_heads: 2/heads: 1, kv_heads: 1/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/heads.yaml"
expect_refused "$SCRATCH/heads.yaml" "systems: pp_tp: model llama: its heads (1) do not split over a tensor axis of 2"
sed -e 's/stages: 2, tensor: 2/plan: auto, tensor: 2/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/plan.yaml"
expect_refused "$SCRATCH/plan.yaml" "tensor: goes with 'stages: N'"
sed -e 's/stages: 2, tensor: 2/stages: 2, sequence_parallel: true/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/sp.yaml"
expect_refused "$SCRATCH/sp.yaml" "sequence_parallel: goes with 'tensor: t'"
sed -e 's/stages: 2, tensor: 2/stages: 2, tensor: 2, vocabulary_parallel: true/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/vocab.yaml"
expect_refused "$SCRATCH/vocab.yaml" "vocabulary_parallel: is for kind: tensor_parallel (a pipeline's first and last stages hold the embedding and the head whole)"
sed -e 's/stages: 2, tensor: 2/stages: 2, tensor: 2, sequence_parallel: true, recompute_gather: true, schedule: zb_h1/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/regather.yaml"
expect_refused "$SCRATCH/regather.yaml" "systems: pp_tp: recompute_gather: zb_h1 splits the backward into I and W"
sed -e 's/stages: 2, tensor: 2/stages: 2, recompute_gather: true/' "$SCRATCH/tp_only.yaml" > "$SCRATCH/regather_alone.yaml"
expect_refused "$SCRATCH/regather_alone.yaml" "recompute_gather: goes with 'tensor: t'"
echo "PASS pipeline tensor"
