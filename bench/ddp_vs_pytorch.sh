#!/usr/bin/env bash
# The harness's `overlap` reducer against PyTorch's own DistributedDataParallel under identical
# conditions: same model (torchvision architecture), batch, input, MSE loss, SGD, world size 2,
# Gloo on loopback, 1 intra-op thread per rank, same bucket cap. Runs alternate (harness,
# PyTorch, harness, PyTorch, ...) so that drift of the machine hits both alike.
# Prints the iteration p50 of each (samples pooled over ranks and rounds) and the ratio.
# The peer is the Python whose torch is the rank program's LibTorch (HARNESS_LIBTORCH, as
# scripts/build.sh: debian = Debian's python3-torch 1.13 and python3-torchvision; pypi = torch
# 2.11 in its virtual environment); skips without torch and torchvision there.
#
# usage: [HARNESS_LIBTORCH=pypi] bench/ddp_vs_pytorch.sh [model] [batch] [input_shape] [bucket_mb] [iterations] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/libtorch.sh
libtorch_resolve
model=${1:-resnet50}; batch=${2:-8}; shape=${3:-3,64,64}; bucket=${4:-25}
iterations=${5:-12}; rounds=${6:-2}; warmup=3
BUILD=$LIBTORCH_BUILD_DIR
[[ -x $BUILD/harness ]] || { echo "build first: scripts/build.sh" >&2; exit 1; }
PY=$("$BUILD/harness-rank" version | python3 -c 'import json, sys; print(json.load(sys.stdin)["torch_python"])')
if [[ -z $PY ]] || ! "$PY" -c "import torch, torchvision" 2>/dev/null; then
  echo "SKIP: no torch and torchvision beside $BUILD's LibTorch (${PY:-no Python})"; exit 0
fi
work=$(mktemp -d /tmp/ddp-vs-pytorch-XXXXXX)
trap 'rm -rf "$work"' EXIT

cat > "$work/spec.yaml" <<YAML
name: ddp_vs_pytorch
output: $work/results
model: {name: $model, batch_size: $batch, input_shape: [${shape}], loss: mse}
optimizer: {name: sgd, lr: 0.001}
run: {world_size: 2, threads_per_rank: 1, iterations: $iterations, warmup: $warmup}
ddp: {bucket_mb: $bucket}
systems: [overlap]
YAML

for round in $(seq 1 "$rounds"); do
  "$BUILD/harness" run "$work/spec.yaml" >/dev/null 2>"$work/harness.err" || { cat "$work/harness.err"; exit 1; }
  port=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
  for rank in 0 1; do
    RANK=$rank WORLD_SIZE=2 LOCAL_RANK=$rank MASTER_ADDR=127.0.0.1 MASTER_PORT=$port OMP_NUM_THREADS=1 \
      "$PY" baselines/ddp/python/torch_ddp.py --model "$model" --batch-size "$batch" --input-shape "$shape" \
      --iterations "$iterations" --warmup "$warmup" --bucket-mb "$bucket" --threads 1 \
      > "$work/torch-r$round-rank$rank.jsonl" 2>"$work/torch-r$round-rank$rank.err" &
  done
  wait
  echo "round $round/$rounds done" >&2
done

"$PY" - "$work" "$model" "$batch" "$shape" "$bucket" <<'PY'
import csv, glob, json, os, sys
import torch as peer
work, model, batch, shape, bucket = sys.argv[1:]
def p50(xs):
    xs = sorted(xs); h = 0.5 * (len(xs) - 1); k = int(h)
    return xs[k] + (h - k) * (xs[min(k + 1, len(xs) - 1)] - xs[k])
harness = [float(r["iteration_ms"]) for f in glob.glob(f"{work}/results/ddp_vs_pytorch/*/raw/*/overlap/rep0/rank*.csv") for r in csv.DictReader(open(f))]
torch = [json.loads(l)["iteration_ms"] for f in glob.glob(f"{work}/torch-*.jsonl") for l in open(f) if l.strip()]
h, t = p50(harness), p50(torch)
print(f"torch {peer.__version__}: model {model}, batch {batch}x{shape}, world 2, gloo, bucket {bucket} MiB, 1 thread/rank")
print(f"harness overlap   iteration p50 {h:9.2f} ms  (n={len(harness)})")
print(f"PyTorch DDP       iteration p50 {t:9.2f} ms  (n={len(torch)})")
print(f"ratio harness/PyTorch = {h / t:.3f}")
PY
