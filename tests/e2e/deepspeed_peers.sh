#!/usr/bin/env bash
# DeepSpeed's ZeRO and DeepSpeed-MoE run as experiments/sharded_vs_deepspeed.yaml,
# moe_vs_deepspeed.yaml and vit_moe_vs_deepspeed.yaml run them, shrunk by --quick: every system
# completes. Each DeepSpeed-MoE rank holds the harness's expert-parallel rank's parameter, expert,
# gradient and AdamW bytes (the same BERT- or ViT-style encoder, experts and shard). Each ZeRO rank holds what ZeRO's design says against the
# harness's rank of the same stage: the same parameter bytes (whole under stages 1 and 2, its
# partition under 3); the gradient partition under every stage (DeepSpeed's stage 1 reduces into
# its partition as stage 2 does, where the harness's stage 1 all-reduces whole gradients); and
# AdamW's moments plus the fp32 copy of the partition it steps, 3/2 of the harness's optimizer
# state. Registered where the build's LibTorch is PyTorch 2.x, whose environment has DeepSpeed
# (tests/CMakeLists.txt).
source "$(dirname "$0")/common.sh"
cd "$(dirname "$0")/../.." || exit 1  # the study names the peer script by its repository path

for spec in sharded_vs_deepspeed moe_vs_deepspeed vit_moe_vs_deepspeed; do
  "$HARNESS" run "experiments/$spec.yaml" --quick --set output="$SCRATCH/results" \
    >/dev/null 2>"$SCRATCH/$spec.err" || fail "$spec failed: $(tail -5 "$SCRATCH/$spec.err")"
done

"$PY" - "$SCRATCH/results" <<'PY'
import glob, json, os, sys
def memory(spec, system, keys=("parameter_bytes", "gradient_bytes", "optimizer_state_bytes")):
    run = glob.glob(os.path.join(sys.argv[1], spec, "*"))[0]
    status = json.load(open(os.path.join(run, "status.json")))
    assert status["complete"] and not status["failures"] and not status.get("skipped"), status
    folder = os.path.join(run, "raw", "p000", system, "rep0")
    files = [json.load(open(os.path.join(folder, f"memory_rank{r}.json"))) for r in range(2)]
    return [tuple(m[k] for k in keys) for m in files]
moe_keys = ("parameter_bytes", "expert_parameter_bytes", "gradient_bytes", "optimizer_state_bytes")
for spec in ("moe_vs_deepspeed", "vit_moe_vs_deepspeed"):
    ours, theirs = (memory(spec, s, moe_keys) for s in ("expert_parallel", "deepspeed_moe"))
    assert ours == theirs, (spec, ours, theirs)
partition_gradients = [g for _, g, _ in memory("sharded_vs_deepspeed", "zero2")]
for stage in (1, 2, 3):
    ours = memory("sharded_vs_deepspeed", f"zero{stage}")
    theirs = memory("sharded_vs_deepspeed", f"deepspeed_zero{stage}")
    expected = [(p, g, o * 3 // 2) for (p, _, o), g in zip(ours, partition_gradients)]
    assert theirs == expected, (stage, ours, theirs, expected)
PY
echo "PASS deepspeed peers"
