#!/usr/bin/env bash
# The PyTorch peers of tensor parallelism and of the pipeline compositions run as the studies
# run them: experiments/tensor_vs_torch.yaml (TP, TP+SP and TP+SP with the vocabulary split on 2
# ranks) and experiments/tensor_2d_vs_torch.yaml (FSDP x TP+SP on 4), shrunk by --quick and 2
# blocks, and experiments/compositions_vs_torch.yaml (a pipeline of 2 stages whose replicas are
# DDP, ZeRO-1 or FSDP, or whose stages split their blocks over 2 ranks) by --quick. Every system
# completes, and every PyTorch rank holds the same parameter, gradient and AdamW bytes as the
# harness's rank of the same layout: both sides split the same decoder the same way. Two
# exceptions, PyTorch's: with the vocabulary split, its embedding's gradient is Replicate, the
# whole table's on every rank; ZeroRedundancyOptimizer partitions whole parameters, so only the
# replicas' sum of AdamW state is the harness's. Registered only where the build's LibTorch is
# PyTorch 2.x, whose Python runs DTensor's parallelize_module (tests/CMakeLists.txt).
source "$(dirname "$0")/common.sh"
cd "$(dirname "$0")/../.." || exit 1  # the studies name the peer script by its repository path

for spec in tensor_vs_torch tensor_2d_vs_torch; do
  "$HARNESS" run "experiments/$spec.yaml" --quick --set model.depth=2 --set output="$SCRATCH/results" \
    >/dev/null 2>"$SCRATCH/$spec.err" || fail "$spec failed: $(tail -5 "$SCRATCH/$spec.err")"
done
# Its peers cut the decoder's 4 blocks at chain layer 2, as its inline stages do.
"$HARNESS" run experiments/compositions_vs_torch.yaml --quick --set output="$SCRATCH/results" \
  >/dev/null 2>"$SCRATCH/compositions.err" || fail "compositions_vs_torch failed: $(tail -5 "$SCRATCH/compositions.err")"

"$PY" - "$SCRATCH/results" <<'PY'
import glob, json, os, sys
root = sys.argv[1]
def memory(spec, system, world):
    run = os.path.join(glob.glob(os.path.join(root, spec, "*"))[0], "raw", "p000", system, "rep0")
    files = [json.load(open(os.path.join(run, f"memory_rank{r}.json"))) for r in range(world)]
    return [(m["parameter_bytes"], m["gradient_bytes"], m["optimizer_state_bytes"]) for m in files]

tensor_pairs = (("tp", "torch_tp"), ("tp_sp", "torch_tp_sp"), ("tp_sp_vocab", "torch_tp_sp_vocab"))
for spec, world, pairs in (("tensor_vs_torch", 2, tensor_pairs),
                           ("tensor_2d_vs_torch", 4, (("fsdp_tp", "torch_fsdp_tp"),))):
    status = json.load(open(glob.glob(os.path.join(root, spec, "*", "status.json"))[0]))
    assert status["complete"] and not status["failures"], (spec, status)
    for ours, theirs in pairs:
        expected = memory(spec, ours, world)
        if ours == "tp_sp_vocab":  # the table's other half: 1000 rows of 256 fp32 over 2 ranks
            expected = [(p, g + 1000 * 256 * 4 // 2, o) for p, g, o in expected]
        assert expected == memory(spec, theirs, world), \
            (spec, ours, expected, memory(spec, theirs, world))

spec = "compositions_vs_torch"
run = glob.glob(os.path.join(root, spec, "*"))[0]
status = json.load(open(os.path.join(run, "status.json")))
assert status["complete"] and not status["failures"], status
# pp_tp's balanced `stages: 2` must have cut where the peer's --stages does.
config = json.load(open(os.path.join(run, "raw", "p000", "pp_tp", "rep0", "config.json")))
cut = [(s["first_layer"], s["last_layer"]) for s in config["system"]["pipeline"]["stages"]]
assert cut == [(0, 2), (3, 6)], cut
for ours in ("pipeline", "pipeline_zero1", "pipeline_fsdp", "pp_tp"):
    expected, theirs = memory(spec, ours, 4), memory(spec, "torch_" + ours, 4)
    if ours == "pipeline_zero1":  # AdamW state summed over each stage's 2 replicas
        pair_sums = lambda m: [(m[r][0], m[r][1], m[r][2] + m[r ^ 1][2]) for r in range(4)]
        expected, theirs = pair_sums(expected), pair_sums(theirs)
    assert expected == theirs, (ours, expected, theirs)
PY
echo "PASS torch peers"
