#!/usr/bin/env bash
# The rank program's GPU path, checked on a machine with CUDA GPUs against a CUDA LibTorch
# (HARNESS_LIBTORCH=pypi, or a path to a CUDA LibTorch or Python environment; scripts/build.sh
# builds it):
#   1. what the rank program sees: GPUs, NCCL;
#   2. the quickstart study on cuda (its 2 ranks over Gloo, sharing GPU 0 where there is one);
#   3. ResNet-50 and BERT DDP, world 1 over NCCL on one GPU; ResNet-50 over Gloo with CUDA
#      tensors, 2 ranks sharing GPU 0;
#   4. the harness's overlap reducer against PyTorch's own DDP on the same GPU (world 1 over
#      NCCL, ResNet-50, batch 64 at 224x224, alternating rounds; the peer is the Python whose
#      torch is the rank program's LibTorch): iteration p50 of each and their ratio;
#   5. the GPU memory table of step 3.
# Every run's ranks report the device of their parameters and their communicator's backend, and
# the harness fails a run whose ranks trained elsewhere than the spec said: a step that passes
# trained where it says. Prints a Markdown table to paste into the README, dated, with the GPU
# named. Skips (exit 0) where the rank program sees no GPU.
#
# HARNESS_GPU_CHECK_DEVICE=cpu runs the same steps on the CPU over Gloo, shrunk (the script's
# own check on a machine without a GPU).
#
# usage: [HARNESS_LIBTORCH=pypi] bench/gpu.sh [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/libtorch.sh
libtorch_resolve
rounds=${1:-3}
device=${HARNESS_GPU_CHECK_DEVICE:-cuda}
BUILD=$LIBTORCH_BUILD_DIR
[[ -x $BUILD/harness ]] || { echo "build first: HARNESS_LIBTORCH=$LIBTORCH_NAME scripts/build.sh" >&2; exit 1; }
version=$("$BUILD/harness-rank" version)
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$version" "$1"; }
gpus=$(field cuda_devices)
PY=$(field torch_python)
if [[ $device == cuda ]]; then
  [[ $gpus -ge 1 ]] || { echo "SKIP: the rank program's LibTorch ($(field torch_version)) sees no GPU here"; exit 0; }
  [[ $(field nccl) == True ]] || { echo "SKIP: the rank program's LibTorch has no NCCL"; exit 0; }
  gpu_name=$("$PY" -c 'import torch; print(torch.cuda.get_device_name(0))' 2>/dev/null || echo "GPU 0")
  nccl=nccl; image=224; batch=64; bert_batch=32; iterations=30; warmup=5
else
  gpu_name="CPU (script check)"; nccl=gloo; image=32; batch=4; bert_batch=2; iterations=4; warmup=1
fi
work=$(mktemp -d /tmp/gpu-check-XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "torch $(field torch_version), $gpus GPU(s), $gpu_name; device $device" >&2

# $1 name, $2 model block, $3 world, $4 backend: runs one study, prints its folder.
study() {
  cat > "$work/$1.yaml" <<YAML
name: $1
output: $work/results
model: $2
optimizer: {name: sgd, lr: 0.001}
run: {world_size: $3, iterations: $iterations, warmup: $warmup, device: $device, backend: $4}
ddp: {bucket_mb: 25}
systems: [overlap]
YAML
  "$BUILD/harness" run "$work/$1.yaml" > "$work/$1.out" 2> "$work/$1.err" ||
    { echo "FAIL: $1: $(tail -3 "$work/$1.err")" >&2; exit 1; }
  ls -d "$work/results/$1"/*/
}
# The p50 of every rank's iteration_ms in a study folder, and the sample count.
p50_of() {
  python3 - "$1" <<'PY'
import csv, glob, sys
xs = sorted(float(r["iteration_ms"]) for f in glob.glob(f"{sys.argv[1]}/raw/*/*/rep*/rank*.csv") for r in csv.DictReader(open(f)))
h = 0.5 * (len(xs) - 1); k = int(h)
print(f"{xs[k] + (h - k) * (xs[min(k + 1, len(xs) - 1)] - xs[k]):.2f} {len(xs)}")
PY
}
# Every rank of the folder's runs on the asked device and backend (the harness checked it; this
# reads the reports back).
placements() {
  python3 - "$1" <<'PY'
import glob, json, sys
seen = sorted({(p["device"], p["backend"]) for f in glob.glob(f"{sys.argv[1]}/raw/*/*/rep*/memory_rank*.json") for p in [json.load(open(f))["placement"]]})
print(" ".join(f"{d}/{b}" for d, b in seen))
PY
}

rows=()
row() { rows+=("| $1 | $2 | $3 | $4 |"); echo "$1: p50 $3 ms (n=$4), ranks on $2" >&2; }

# 2. The quickstart study on the device.
"$BUILD/harness" run experiments/quickstart.yaml --set output="$work/results" --set run.device="$device" \
  $([[ $device == cpu ]] && echo "--set run.iterations=2 --set sweep.ddp.bucket_mb=[9]") \
  > "$work/quickstart.out" 2> "$work/quickstart.err" || { echo "FAIL: quickstart: $(tail -3 "$work/quickstart.err")" >&2; exit 1; }
quick=$(ls -d "$work"/results/quickstart/*/)
read -r p n < <(p50_of "$quick")
row "quickstart (3 DDP modes, every bucket cap pooled, 2 ranks, gloo)" "$(placements "$quick")" "$p" "$n"

# 3. ResNet-50 and BERT, world 1 on one GPU; ResNet-50 over Gloo, 2 ranks sharing GPU 0.
r50=$(study resnet50_nccl "{name: resnet50, batch_size: $batch, input_shape: [3, $image, $image], loss: mse}" 1 $nccl)
read -r p n < <(p50_of "$r50"); row "ResNet-50 DDP, batch $batch, world 1, $nccl" "$(placements "$r50")" "$p" "$n"
bert=$(study bert_nccl "{name: bert, batch_size: $bert_batch}" 1 $nccl)
read -r p n < <(p50_of "$bert"); row "BERT DDP, batch $bert_batch x 128, world 1, $nccl" "$(placements "$bert")" "$p" "$n"
shared=$(study resnet50_gloo "{name: resnet50, batch_size: $batch, input_shape: [3, $image, $image], loss: mse}" 2 gloo)
read -r p n < <(p50_of "$shared"); row "ResNet-50 DDP, batch $batch, 2 ranks sharing a device, gloo" "$(placements "$shared")" "$p" "$n"

# 4. The harness against PyTorch DDP on the same device, alternating rounds.
ratio="(no torch/torchvision beside the LibTorch: peer skipped)"
if [[ -n $PY ]] && "$PY" -c "import torch, torchvision" 2>/dev/null; then
  harness_ms=() torch_ms=()
  for round in $(seq 1 "$rounds"); do
    folder=$(study "peer_harness_$round" "{name: resnet50, batch_size: $batch, input_shape: [3, $image, $image], loss: mse}" 1 $nccl)
    port=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
    RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$PY" baselines/ddp/python/torch_ddp.py --model resnet50 --batch-size "$batch" \
      --input-shape "3,$image,$image" --iterations "$iterations" --warmup "$warmup" --bucket-mb 25 \
      --device "$device" --backend "$nccl" > "$work/torch-$round.jsonl" 2> "$work/torch-$round.err" ||
      { echo "FAIL: PyTorch DDP: $(tail -3 "$work/torch-$round.err")" >&2; exit 1; }
    echo "round $round/$rounds done" >&2
  done
  ratio=$(python3 - "$work" <<'PY'
import csv, glob, json, sys
w = sys.argv[1]
def p50(xs):
    xs = sorted(xs); h = 0.5 * (len(xs) - 1); k = int(h)
    return xs[k] + (h - k) * (xs[min(k + 1, len(xs) - 1)] - xs[k])
h = [float(r["iteration_ms"]) for f in glob.glob(f"{w}/results/peer_harness_*/*/raw/*/*/rep0/rank*.csv") for r in csv.DictReader(open(f))]
t = [json.loads(l)["iteration_ms"] for f in glob.glob(f"{w}/torch-*.jsonl") for l in open(f) if l.strip()]
print(f"harness {p50(h):.2f} ms (n={len(h)}), PyTorch DDP {p50(t):.2f} ms (n={len(t)}): ratio {p50(h) / p50(t):.3f}")
PY
)
fi

echo
echo "GPU checks, $(date -u +%F), $gpu_name, torch $(field torch_version) (bench/gpu.sh, $rounds peer rounds):"
echo
echo "| run | ranks ran on | iteration p50 (ms) | samples |"
echo "|---|---|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "ResNet-50 harness/PyTorch DDP on one device, batch $batch at ${image}x${image}: $ratio"
echo
# The memory table of the ResNet-50 run (its table.md): on a GPU, the allocator's peaks beside
# the RSS.
echo "ResNet-50, world 1, memory per rank (MiB):"
echo
awk '/memory per rank/ {on = 1} on && /^\|/ {print} on && /^\| overlap/ {exit}' "$r50/table.md"
