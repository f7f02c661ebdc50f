#!/usr/bin/env bash
# How close to the machine do the harness's DDP runs get? In one run:
#   1. the roofline: `harness machine` (fp32 GEMM GFLOP/s per core, triad, all-reduce busbw);
#   2. DDP `overlap` iterations at world 2, 1 thread per rank, with their MFU (model FLOPs per
#      iteration / iteration p50 / the one-core GEMM peak): ResNet-50 at batch 8 of 3x64x64 and
#      batch 32 of 3x224x224, and the BERT-style encoder (depth 4, width 256, 128 tokens,
#      batch 8). Goals (issue 20): BERT-style >= 60%, ResNet-50 >= 30%;
#   3. the harness's `overlap` against PyTorch's own DistributedDataParallel (same LibTorch and
#      BLAS, model, batch, bucket cap, threads) at bucket caps 1, 5 and 25 MiB, runs
#      alternating (bench/ddp_vs_pytorch.sh); goal: harness p50 <= 1.00x PyTorch's.
#
#   bench/mfu.sh [ITERATIONS]     (default 10; ResNet-50 at 224 runs a third of them)
set -euo pipefail
cd "$(dirname "$0")/.."
iterations="${1:-10}"
[[ -x build/harness ]] || { echo "build first: scripts/build.sh" >&2; exit 1; }
work="$(mktemp -d /tmp/harness-mfu-XXXXXX)"
trap 'rm -rf "$work"' EXIT

build/harness machine
echo

run_case() {  # $1: label, $2: model map, $3: iterations
  cat > "$work/spec.yaml" <<YAML
name: mfu
output: $work/results
model: $2
run: {world_size: 2, threads_per_rank: 1, iterations: $3, warmup: 2, trace: false}
systems: [overlap]
YAML
  build/harness run "$work/spec.yaml" > "$work/log" 2>&1 || { tail -5 "$work/log"; exit 1; }
  python3 - "$1" "$(ls -d "$work"/results/mfu/*/ | tail -1)" <<'PY'
import json, sys
label, folder = sys.argv[1], sys.argv[2]
u = json.load(open(folder + "/summary.json"))["points"][0]["systems"][0]["utilisation"]
print(f"{label:<44} {u['flops_per_rank_iteration'] / 1e9:10.2f} {u['iteration_p50_ms']:10.1f} "
      f"{u['gflops_per_rank']:9.2f} {100 * u['mfu']:7.1f} {u['samples']:8d}")
PY
}
printf '%-44s %10s %10s %9s %7s %8s\n' "DDP overlap, world 2, 1 thread per rank" "GFLOP/it" "p50 ms" "GFLOP/s" "MFU %" "samples"
run_case "ResNet-50, batch 8, 3x64x64" "{name: resnet50, batch_size: 8, input_shape: [3, 64, 64]}" "$iterations"
run_case "ResNet-50, batch 32, 3x224x224" "{name: resnet50, batch_size: 32, input_shape: [3, 224, 224]}" "$(( (iterations + 2) / 3 ))"
run_case "BERT-style, depth 4, width 256, 128 tokens, batch 8" "{name: bert, depth: 4, width: 256, batch_size: 8, input_shape: [128]}" "$iterations"
echo
for bucket in 1 5 25; do
  echo "## harness overlap vs PyTorch DDP, ResNet-50 batch 8 of 3x64x64, bucket cap $bucket MiB"
  bench/ddp_vs_pytorch.sh resnet50 8 3,64,64 "$bucket" "$iterations" 2 | tail -3
done
