#!/usr/bin/env bash
# The rank program's GPU path, checked on a machine with CUDA GPUs against a CUDA LibTorch
# (HARNESS_LIBTORCH=pypi, or a path to a CUDA LibTorch or Python environment; scripts/build.sh
# builds it):
#   1. what the rank program sees: GPUs, NCCL; `harness machine`: GPU 0's fp32 and bf16 GEMM,
#      the peaks MFU is computed against;
#   2. the quickstart study on cuda (its 2 ranks over Gloo, sharing GPU 0 where there is one);
#   3. ResNet-50 DDP in fp32 (IEEE), tf32 and bf16 and BERT in fp32 and bf16, world 1 over NCCL
#      on one GPU; ResNet-50 over Gloo with CUDA tensors, 2 ranks sharing GPU 0; each with its
#      MFU against GPU 0's GEMM in the math it ran in;
#   3b. BERT in DAPPLE's and GPipe's schedules (2 stages, 4 micro-batches) and BERT-MoE with
#      expert parallelism, each beside DDP on the same 2 ranks sharing GPU 0 over Gloo, in fp32
#      and bf16;
#   3c. a Llama-style decoder with AdamW under DDP and ZeRO stages 1, 2 and 3 (kind: sharded) on
#      the same 2 ranks, fp32 and bf16; in fp32 each stage's losses must equal DDP's;
#   3d. the decoder in a pipeline of 2 stages x 2 replicas on 4 ranks, its replicas whole, ZeRO-1
#      and ZeRO-2, and 2 stages split over tensor 2 (pp_tp); each composition's fp32 losses must
#      equal the plain pipeline's (pp_tp's ranks summed);
#   3e. the decoder under tensor parallelism on 4 ranks (tensor 2 x data 2; with sequence
#      parallelism, gathering again in backward too; with FSDP on the data axis) and recomputed;
#      each one's fp32 losses must equal DDP's on 2 ranks of twice the batch;
#   3f. the decoder under HiDup's searched strategy (kind: spmd) on 2 ranks; its fp32 losses
#      must equal DDP's on 1 rank of twice the batch;
#   3g. a wider decoder at world 1 in bf16 against `harness profile estimate` of its shape at
#      the GPU's datasheet rates: the run's p50 over the estimate;
#   4. the harness's overlap reducer against PyTorch's own DDP on the same GPU (world 1 over
#      NCCL, ResNet-50, batch 64 at 224x224, alternating rounds, in each precision; the peer is
#      the Python whose torch is the rank program's LibTorch, with the same math): iteration p50
#      of each and their ratio;
#   5. the GPU memory table of step 3.
# Every run's ranks report the device of their parameters and their communicator's backend, and
# the harness fails a run whose ranks trained elsewhere than the spec said: a step that passes
# trained where it says. A step that fails is reported (its last lines of stderr) and the others
# still run; the script then exits 1. Prints a Markdown table to paste into the README, dated,
# with the GPU named. Skips (exit 0) where the rank program sees no GPU.
#
# HARNESS_GPU_CHECK_DEVICE=cpu runs the same steps on the CPU over Gloo, shrunk (the script's
# own check on a machine without a GPU). HARNESS_GPU_CHECK_WORK=DIR works in DIR and keeps it
# (every study's results and logs); otherwise a temporary folder, removed at the end.
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
  nccl=nccl; image=224; batch=64; bert_batch=32; iterations=30; warmup=5; precisions="fp32 tf32 bf16"
else
  gpu_name="CPU (script check)"; nccl=gloo; image=32; batch=4; bert_batch=2; iterations=4; warmup=1
  precisions="fp32 bf16"  # a CPU has no TF32
fi
if [[ -n ${HARNESS_GPU_CHECK_WORK:-} ]]; then
  work=$HARNESS_GPU_CHECK_WORK
  mkdir -p "$work"
else
  work=$(mktemp -d /tmp/gpu-check-XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
echo "torch $(field torch_version), $gpus GPU(s), $gpu_name; device $device; work in $work" >&2

failures=0
rows=()
# $1 what ran, $2 its folder ("" when it failed), $3 the system (default: every system of the
# folder, pooled): one table row from the folder's reports.
row() {
  if [[ -z $2 ]]; then
    rows+=("| $1 | FAILED | | | |")
    failures=$((failures + 1))
    return
  fi
  local line
  line=$(python3 - "$2" "${3:-*}" <<'PY'
import csv, fnmatch, glob, json, sys
folder, system = sys.argv[1], sys.argv[2]
xs = sorted(float(r["iteration_ms"]) for f in glob.glob(f"{folder}/raw/*/{system}/rep*/rank*.csv") for r in csv.DictReader(open(f)))
h = 0.5 * (len(xs) - 1); k = int(h)
p50 = xs[k] + (h - k) * (xs[min(k + 1, len(xs) - 1)] - xs[k])
# Every rank of the folder's runs on the asked device and backend, in the asked precision (the
# harness checked it; this reads the reports back: DDP ranks' memory files, pipeline ranks' own
# (a pipeline rank's memory file has none); a pipeline rank reports no precision, "?").
reports = [f for name in ("memory", "pipeline") for f in glob.glob(f"{folder}/raw/*/{system}/rep*/{name}_rank*.json")]
seen = sorted({(p["device"], p["backend"], p.get("precision", "?")) for f in reports for p in [json.load(open(f)).get("placement")] if p})
mfus = [s["utilisation"]["mfu"] for p in json.load(open(f"{folder}/summary.json"))["points"] for s in p["systems"] if fnmatch.fnmatch(s["name"], system) and (s.get("utilisation") or {}).get("mfu") is not None]
mfu = "" if not mfus else f"{100 * min(mfus):.1f}%" if len(mfus) == 1 else f"{100 * min(mfus):.1f}-{100 * max(mfus):.1f}%"
print(f"{' '.join(f'{d}/{b}/{p}' for d, b, p in seen)} | {p50:.2f} | {len(xs)} | {mfu}")
PY
)
  rows+=("| $1 | $line |")
  echo "$1: $line" >&2
}
# $1 what failed, $2 its stderr file.
failed() { echo "FAIL: $1: $(tail -3 "$2" 2>/dev/null)" >&2; }

# $1 name, $2 model block, $3 world, $4 backend, $5 systems (default [overlap]), $6 more of the
# spec: runs one study, prints its folder (nothing, and status 1, when it fails).
study() {
  # Not ${optimizer:-{...}}: bash ends that expansion at the default's first closing brace.
  local optimizer_block="{name: sgd, lr: 0.001}"
  [[ -n ${optimizer:-} ]] && optimizer_block=$optimizer
  cat > "$work/$1.yaml" <<YAML
name: $1
output: $work/results
model: $2
optimizer: $optimizer_block
run: {world_size: $3, iterations: $iterations, warmup: $warmup, device: $device, backend: $4}
ddp: {bucket_mb: 25}
systems: ${5:-[overlap]}
${6:-}
YAML
  "$BUILD/harness" run "$work/$1.yaml" > "$work/$1.out" 2> "$work/$1.err" || { failed "$1" "$work/$1.err"; return 1; }
  ls -d "$work/results/$1"/*/
}

# 1. The machine's limits (measured once and cached; every run's MFU divides by GPU 0's fp32 GEMM).
if "$BUILD/harness" machine > "$work/machine.txt" 2> "$work/machine.err"; then
  peaks=$(grep -A3 '^# GPU 0' "$work/machine.txt" || grep 'GEMM' "$work/machine.txt" || true)
else
  failed "harness machine" "$work/machine.err"; failures=$((failures + 1)); peaks="(harness machine failed)"
fi

# 2. The quickstart study on the device.
quick=""
if "$BUILD/harness" run experiments/quickstart.yaml --set output="$work/results" --set run.device="$device" \
  $([[ $device == cpu ]] && echo "--set run.iterations=2 --set sweep.ddp.bucket_mb=[9]") \
  > "$work/quickstart.out" 2> "$work/quickstart.err"; then
  quick=$(ls -d "$work"/results/quickstart/*/)
else
  failed quickstart "$work/quickstart.err"
fi
row "quickstart (3 DDP modes, every bucket cap pooled, 2 ranks, gloo)" "$quick"

# 3. ResNet-50 and BERT, world 1 on one GPU, in each precision; ResNet-50 over Gloo, 2 ranks
# sharing GPU 0.
resnet() { echo "{name: resnet50, batch_size: $batch, input_shape: [3, $image, $image], loss: mse, precision: $1}"; }
r50=""
for precision in $precisions; do
  folder=$(study "resnet50_nccl_$precision" "$(resnet "$precision")" 1 $nccl) || folder=""
  row "ResNet-50 DDP, batch $batch, world 1, $nccl, $precision" "$folder"
  [[ $precision == fp32 ]] && r50=$folder
done
for precision in fp32 bf16; do
  folder=$(study "bert_nccl_$precision" "{name: bert, batch_size: $bert_batch, precision: $precision}" 1 $nccl) || folder=""
  row "BERT DDP, batch $bert_batch x 128, world 1, $nccl, $precision" "$folder"
done
shared=$(study resnet50_gloo "$(resnet fp32)" 2 gloo) || shared=""
row "ResNet-50 DDP, batch $batch, 2 ranks sharing a device, gloo, fp32" "$shared"

# The pipelines and expert parallelism on the device, 2 ranks sharing it over Gloo (over NCCL
# each rank needs a GPU of its own), beside DDP on the same ranks: BERT in DAPPLE's and GPipe's
# schedules, 2 stages of 4 micro-batches, and today's schedules on the same 2 ranks: ZB-H1 (I
# and W split), interleaved 1F1B and ZB-V at 2 stages per rank; BERT-MoE with 4 experts, 2 per
# rank.
if [[ $device == cuda ]]; then
  bert_pipe="{name: bert, batch_size: 16, precision: PRECISION}"
  moe="{name: bert_moe, depth: 4, width: 512, input_shape: [128], batch_size: 16, loss: cross_entropy, experts: 4, precision: PRECISION}"
else
  bert_pipe="{name: bert, depth: 2, width: 64, input_shape: [16], batch_size: 4, precision: PRECISION}"
  moe="{name: bert_moe, depth: 2, width: 64, input_shape: [16], batch_size: 4, loss: cross_entropy, experts: 4, precision: PRECISION}"
fi
pipelines="[overlap, {name: dapple, kind: pipeline, schedule: dapple, stages: 2}, {name: gpipe, kind: pipeline, schedule: gpipe, stages: 2}, {name: zb_h1, kind: pipeline, schedule: zb_h1, stages: 2}, {name: interleaved, kind: pipeline, schedule: interleaved_1f1b, stages: 2, stages_per_rank: 2}, {name: zbv, kind: pipeline, schedule: zbv, stages: 2, stages_per_rank: 2}]"
pipeline_fp32=""
for precision in fp32 bf16; do
  folder=$(study "pipelines_$precision" "${bert_pipe/PRECISION/$precision}" 2 gloo "$pipelines" \
    "pipeline: {micro_batches: 4}") || folder=""
  [[ $precision == fp32 ]] && pipeline_fp32=$folder
  for system in overlap dapple gpipe zb_h1 interleaved zbv; do
    row "BERT $system (DDP: overlap; pipelines: 2 ranks, 4 micro-batches), 2 ranks sharing a device, gloo, $precision" "$folder" "$system"
  done
  folder=$(study "moe_$precision" "${moe/PRECISION/$precision}" 2 gloo \
    "[{name: ddp, kind: ddp, mode: overlap}, {name: expert_parallel, kind: expert_parallel, mode: overlap}]") || folder=""
  for system in ddp expert_parallel; do
    row "BERT-MoE (4 experts) $system, 2 ranks sharing a device, gloo, $precision" "$folder" "$system"
  done
done

# Sharded data parallelism beside DDP on the device, 2 ranks sharing it over Gloo: a Llama-style
# decoder with AdamW, ZeRO stages 1, 2 and 3, fp32 and bf16; in fp32 each stage's losses must
# equal DDP's (the same seed and data: only the rounding of the sums differs).
if [[ $device == cuda ]]; then
  decoder="{name: llama, depth: 4, width: 512, input_shape: [256], batch_size: 4, precision: PRECISION}"
else
  decoder="{name: llama, depth: 2, width: 64, input_shape: [16], vocab: 500, batch_size: 2, precision: PRECISION}"
fi
sharded="[{name: ddp, kind: ddp, mode: overlap}, {name: zero1, kind: sharded, stage: 1}, {name: zero2, kind: sharded, stage: 2}, {name: zero3, kind: sharded, stage: 3}]"
for precision in fp32 bf16; do
  folder=$(optimizer="{name: adamw, lr: 0.001}" study "sharded_$precision" "${decoder/PRECISION/$precision}" 2 gloo "$sharded") || folder=""
  for system in ddp zero1 zero2 zero3; do
    row "Llama-style decoder $system (AdamW), 2 ranks sharing a device, gloo, $precision" "$folder" "$system"
  done
  if [[ $precision == fp32 && -n $folder ]]; then
    sharded_check=$(python3 - "$folder" <<'PY'
import glob, re, sys
def losses(system):
    text = open(glob.glob(f"{sys.argv[1]}/raw/*/{system}/rep0/rank0.stdout")[0]).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]
ddp = losses("ddp")
worst = max(abs(a - b) / max(abs(b), 1e-12) for s in ("zero1", "zero2", "zero3") for a, b in zip(losses(s), ddp))
print(f"{len(ddp)} iterations, largest relative difference from DDP's loss {worst:.1e}" + (" FAILED" if worst > 1e-4 else ""))
PY
) || sharded_check="FAILED (the comparison)"
    [[ $sharded_check == *FAILED* ]] && failures=$((failures + 1))
    echo "ZeRO-1/2/3 losses vs DDP's on the device: $sharded_check" >&2
  fi
done

# 3d. Compositions: the decoder (2 heads, so that a tensor axis of 2 splits it) in a 1F1B
# pipeline of 2 stages x 2 replicas on 4 ranks sharing the device, its replicas whole, ZeRO-1,
# ZeRO-2 and FSDP (zero_stage), and 2 stages split over tensor 2 with sequence parallelism (pp_tp); in fp32
# each replicated system's losses must equal the plain pipeline's on every rank, and pp_tp's
# ranks' losses (each its share) must sum to the plain pipeline's ranks' at every iteration.
tensor_decoder=${decoder/width:/heads: 2, width:}
composed="[{name: pipeline, kind: pipeline, stages: 2}, {name: pipeline_zero1, kind: pipeline, stages: 2, zero_stage: 1}, {name: pipeline_zero2, kind: pipeline, stages: 2, zero_stage: 2}, {name: pipeline_fsdp, kind: pipeline, stages: 2, zero_stage: 3}, {name: pp_tp, kind: pipeline, stages: 2, tensor: 2, sequence_parallel: true}]"
composed_folder=$(optimizer="{name: adamw, lr: 0.001}" study composed_fp32 "${tensor_decoder/PRECISION/fp32}" 4 gloo \
  "$composed" "pipeline: {micro_batches: 4}") || composed_folder=""
for system in pipeline pipeline_zero1 pipeline_zero2 pipeline_fsdp; do
  row "Llama-style decoder $system (AdamW, 2 stages x 2 replicas), 4 ranks sharing a device, gloo, fp32" "$composed_folder" "$system"
done
row "Llama-style decoder pp_tp (AdamW, 2 stages x tensor 2, sequence-parallel), 4 ranks sharing a device, gloo, fp32" "$composed_folder" pp_tp
composed_check="FAILED (the run)"
[[ -n $composed_folder ]] && composed_check=$(python3 - "$composed_folder" <<'PY'
import glob, re, sys
def losses(system, rank):
    text = open(glob.glob(f"{sys.argv[1]}/raw/*/{system}/rep0/rank{rank}.stdout")[0]).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]
worst = max(abs(a - b) / max(abs(b), 1e-12) for r in range(4) for s in ("pipeline_zero1", "pipeline_zero2", "pipeline_fsdp")
            for a, b in zip(losses(s, r), losses("pipeline", r)))
summed = lambda s: [sum(column) for column in zip(*(losses(s, r) for r in range(4)))]
worst = max([worst] + [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(summed("pp_tp"), summed("pipeline"))])
print(f"largest relative difference from the plain pipeline's loss {worst:.1e}" + (" FAILED" if worst > 1e-4 else ""))
PY
) || composed_check="FAILED (the comparison)"
[[ $composed_check == *FAILED* ]] && failures=$((failures + 1))

# 3e. Tensor parallelism: the decoder split over 2 ranks (tp_sp_vocab: its vocabulary too), 2
# replicas, on 4 ranks sharing the device; a replica trains on twice a rank's batch, as a DDP rank of twice the batch does: in fp32
# each rank's losses must equal those of DDP's rank (its replica) on 2 ranks.
[[ $decoder =~ batch_size:\ ([0-9]+) ]] && rank_batch=${BASH_REMATCH[1]}
tensor_systems="[{name: tp, kind: tensor_parallel, tensor: 2}, {name: tp_sp, kind: tensor_parallel, tensor: 2, sequence_parallel: true}, {name: fsdp_tp, kind: tensor_parallel, tensor: 2, sequence_parallel: true, zero_stage: 3}, {name: tp_sp_vocab, kind: tensor_parallel, tensor: 2, sequence_parallel: true, vocabulary_parallel: true}, {name: tp_regather, kind: tensor_parallel, tensor: 2, sequence_parallel: true, recompute_gather: true}]"
tensor_folder=$(optimizer="{name: adamw, lr: 0.001}" study tensor_fp32 "${tensor_decoder/PRECISION/fp32}" 4 gloo \
  "$tensor_systems") || tensor_folder=""
recomputed_decoder=${tensor_decoder/PRECISION/fp32, activation_checkpointing: full}
recomputed_folder=$(optimizer="{name: adamw, lr: 0.001}" study tensor_recomputed "$recomputed_decoder" 4 gloo \
  "[{name: tp_sp, kind: tensor_parallel, tensor: 2, sequence_parallel: true}]") || recomputed_folder=""
doubled=${tensor_decoder/batch_size: $rank_batch/batch_size: $((rank_batch * 2))}
tensor_ddp=$(optimizer="{name: adamw, lr: 0.001}" study tensor_ddp "${doubled/PRECISION/fp32}" 2 gloo) || tensor_ddp=""
for system in tp tp_sp fsdp_tp tp_sp_vocab tp_regather; do
  row "Llama-style decoder $system (AdamW, tensor 2 x data 2), 4 ranks sharing a device, gloo, fp32" "$tensor_folder" "$system"
done
row "Llama-style decoder tp_sp recomputed (AdamW, tensor 2 x data 2), 4 ranks sharing a device, gloo, fp32" "$recomputed_folder" tp_sp
tensor_check="FAILED (a run)"
[[ -n $tensor_folder && -n $recomputed_folder && -n $tensor_ddp ]] && tensor_check=$(python3 - "$tensor_folder" "$recomputed_folder" "$tensor_ddp" <<'PY'
import glob, re, sys
def losses(folder, system, rank):
    text = open(glob.glob(f"{folder}/raw/*/{system}/rep0/rank{rank}.stdout")[0]).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]
runs = [(sys.argv[1], s) for s in ("tp", "tp_sp", "fsdp_tp", "tp_sp_vocab", "tp_regather")]
runs += [(sys.argv[2], "tp_sp")]
worst = max(abs(a - b) / max(abs(b), 1e-12) for folder, s in runs for r in range(4)
            for a, b in zip(losses(folder, s, r), losses(sys.argv[3], "overlap", r // 2)))
print(f"largest relative difference from DDP's loss {worst:.1e}" + (" FAILED" if worst > 1e-4 else ""))
PY
) || tensor_check="FAILED (the comparison)"
[[ $tensor_check == *FAILED* ]] && failures=$((failures + 1))

# 3f. HiDup's searched strategy (kind: spmd) on 2 ranks sharing the device, priced at 0.001
# GFLOP/s so that the search splits operators; its ranks share one batch of twice a rank's, which
# DDP on 1 rank of twice the batch draws too: in fp32 each rank's losses must equal that rank's.
spmd_systems="[{name: hidup, kind: spmd, comm: profiles/gloo-2ranks-cpu/comm.json, gflops: 0.001}]"
spmd_folder=$(optimizer="{name: adamw, lr: 0.001}" study spmd_fp32 "${tensor_decoder/PRECISION/fp32}" 2 gloo \
  "$spmd_systems") || spmd_folder=""
spmd_one=$(optimizer="{name: adamw, lr: 0.001}" study spmd_one "${doubled/PRECISION/fp32}" 1 gloo) || spmd_one=""
row "Llama-style decoder under HiDup's searched strategy (AdamW), 2 ranks sharing a device, gloo, fp32" "$spmd_folder" hidup
spmd_check="FAILED (a run)"
[[ -n $spmd_folder && -n $spmd_one ]] && spmd_check=$(python3 - "$spmd_folder" "$spmd_one" <<'PY'
import glob, re, sys
def losses(folder, system, rank):
    text = open(glob.glob(f"{folder}/raw/*/{system}/rep0/rank{rank}.stdout")[0]).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]
want = losses(sys.argv[2], "overlap", 0)
worst = max(abs(a - b) / max(abs(b), 1e-12) for r in range(2)
            for a, b in zip(losses(sys.argv[1], "hidup", r), want))
print(f"largest relative difference from one rank's loss {worst:.1e}" + (" FAILED" if worst > 1e-4 else ""))
PY
) || spmd_check="FAILED (the comparison)"
[[ $spmd_check == *FAILED* ]] && failures=$((failures + 1))

# 3g. The computed profile against a run: a wider decoder, world 1 in bf16 with AdamW, and
# `harness profile estimate` of the same shape and batch at the device's datasheet rates (the
# default efficiencies) or, where the device has no preset, at this machine's measured bf16 GEMM
# and triad (efficiency 1). The ratio of the run's p50 to the estimate's forward, backward and
# step is what the paper-scale study's efficiencies would need to be multiplied by (the zoo's
# attention and norms are not fused; the estimate's are).
if [[ $device == cuda ]]; then
  estimated_shape=(--depth 4 --width 2048 --tokens 2048 --batch 4)
  estimated_model="{name: llama, depth: 4, width: 2048, input_shape: [2048], batch_size: 4, precision: bf16}"
  case "$gpu_name" in *H200*) rates=(--device h200) ;; *H100*) rates=(--device h100) ;; *) rates=() ;; esac
else
  estimated_shape=(--depth 2 --width 64 --tokens 16 --batch 2 --vocab 500)
  estimated_model="{name: llama, depth: 2, width: 64, input_shape: [16], vocab: 500, batch_size: 2, precision: bf16}"
  rates=()
fi
if [[ ${#rates[@]} == 0 ]]; then
  read -r gemm triad < <(python3 -c '
import json, os
limits = json.load(open(os.path.expanduser("~/.cache/harness/machine.json")))
print(limits["gemm_bf16"]["gflops_all_cores"] * 1e9, limits["triad"]["gbs_all_cores"] * 1e9)') || true
  rates=(--peak-flops "${gemm:-1e12}" --memory-bandwidth "${triad:-1e11}" --matmul-efficiency 1 --memory-efficiency 1)
fi
estimate_check="FAILED (the run)"
estimate_run=$(optimizer="{name: adamw, lr: 0.001}" study estimate_run "$estimated_model" 1 "$nccl") || estimate_run=""
row "Llama-style decoder (AdamW), world 1, $nccl, bf16, against its computed profile" "$estimate_run"
if [[ -n $estimate_run ]] && "$BUILD/harness" profile estimate "${estimated_shape[@]}" "${rates[@]}"     --out "$work/estimate" > "$work/estimate.out" 2> "$work/estimate.err"; then
  estimate_check=$(python3 - "$estimate_run" "$work/estimate/profile.json" <<'PY'
import csv, glob, json, sys
xs = sorted(float(r["iteration_ms"]) for f in glob.glob(f"{sys.argv[1]}/raw/*/*/rep*/rank*.csv") for r in csv.DictReader(open(f)))
h = 0.5 * (len(xs) - 1); k = int(h)
p50 = xs[k] + (h - k) * (xs[min(k + 1, len(xs) - 1)] - xs[k])
doc = json.load(open(sys.argv[2]))
whole = doc["whole_model"]
estimated = sum(whole[phase]["median_ms"] for phase in ("forward", "backward", "step"))
print(f"run p50 {p50:.2f} ms, estimated {estimated:.2f} ms on {doc['device']}: run / estimate {p50 / estimated:.2f}")
PY
) || estimate_check="FAILED (the comparison)"
fi
[[ $estimate_check == FAILED* ]] && failures=$((failures + 1))
echo "Computed profile against the run: $estimate_check" >&2

# The device's pipeline trains what the host CPU's does: DAPPLE's last stage's loss in the first
# iterations, fp32 (IEEE on both), from the same seed, on the device and on the CPU.
pipeline_check="(not run: the device is the CPU)"
if [[ $device == cuda ]]; then
  pipeline_check="FAILED (the device's run)"
  if [[ -n $pipeline_fp32 ]]; then
    cpu_folder=$(device=cpu iterations=3 warmup=0 study pipeline_on_cpu "${bert_pipe/PRECISION/fp32}" 2 gloo \
      "[{name: dapple, kind: pipeline, schedule: dapple, stages: 2}]" "pipeline: {micro_batches: 4}") || cpu_folder=""
    pipeline_check="FAILED (the CPU's run)"
    [[ -n $cpu_folder ]] && pipeline_check=$(python3 - "$pipeline_fp32" "$cpu_folder" <<'PY'
import glob, re, sys
def losses(folder):
    text = open(glob.glob(f"{folder}/raw/*/dapple/rep0/rank1.stdout")[0]).read()
    return {int(i): float(x) for i, x in re.findall(r"iteration (\d+) done loss (\S+)", text)}
gpu, cpu = losses(sys.argv[1]), losses(sys.argv[2])
its = sorted(set(gpu) & set(cpu))
worst = max(abs(gpu[i] - cpu[i]) / max(abs(cpu[i]), 1e-12) for i in its)
print(f"iterations {its[0]}-{its[-1]}: device {', '.join(f'{gpu[i]:.6f}' for i in its)}; "
      f"CPU {', '.join(f'{cpu[i]:.6f}' for i in its)}; largest relative difference {worst:.1e}")
PY
) || pipeline_check="FAILED (the comparison)"
  fi
  [[ $pipeline_check == FAILED* ]] && failures=$((failures + 1))
  echo "DAPPLE loss, device vs CPU: $pipeline_check" >&2
fi

# Every DDP mode in fp32 and bf16, and every compression, on the device: over Gloo with 2 ranks
# sharing it, and over NCCL (a GPU per rank: world 1 on one GPU). Small models, few iterations:
# what is checked is that each trains where and in the math it says.
for backend in gloo $nccl; do
  world=2; [[ $backend == nccl ]] && world=1
  cat > "$work/modes_$backend.yaml" <<YAML
name: modes_$backend
output: $work/results
model: {name: resnet50, batch_size: 8, input_shape: [3, 64, 64]}
optimizer: {name: sgd, lr: 0.01, momentum: 0.9}
run: {world_size: $world, iterations: 4, warmup: 1, device: $device, backend: $backend}
systems: [overlap, sync, async, per_tensor]
sweep: {model.precision: [fp32, bf16]}
YAML
  cat > "$work/compression_$backend.yaml" <<YAML
name: compression_$backend
output: $work/results
model: {name: bert, batch_size: 4, depth: 2}
optimizer: {name: sgd, lr: 0.01}
run: {world_size: $world, iterations: 4, warmup: 1, device: $device, backend: $backend}
systems: [overlap, async]
sweep: {ddp.compression: [fp16, bf16, powersgd]}
YAML
  for what in modes compression; do
    folder=""
    if "$BUILD/harness" run "$work/${what}_$backend.yaml" > "$work/${what}_$backend.out" 2> "$work/${what}_$backend.err"; then
      folder=$(ls -d "$work/results/${what}_$backend"/*/)
    else
      failed "${what}_$backend" "$work/${what}_$backend.err"
    fi
    [[ $what == modes ]] && label="ResNet-50 at 64x64, overlap/sync/async/per_tensor x fp32/bf16 pooled" ||
      label="BERT, 2 layers, overlap/async x fp16/bf16/PowerSGD compression pooled"
    row "$label, world $world, $backend" "$folder"
  done
  [[ $nccl == gloo ]] && break
done

# 4. The harness against PyTorch DDP on the same device, alternating rounds, in each precision.
ratios=()
if [[ -n $PY ]] && "$PY" -c "import torch, torchvision" 2>/dev/null; then
  for precision in $precisions; do
    peer_failed=""
    for round in $(seq 1 "$rounds"); do
      study "peer_harness_${precision}_$round" "$(resnet "$precision")" 1 $nccl > /dev/null ||
        { peer_failed="the harness"; break; }
      port=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
      RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        "$PY" baselines/ddp/python/torch_ddp.py --model resnet50 --batch-size "$batch" \
        --input-shape "3,$image,$image" --iterations "$iterations" --warmup "$warmup" --bucket-mb 25 \
        --device "$device" --backend "$nccl" --precision "$precision" \
        > "$work/torch-${precision}-$round.jsonl" 2> "$work/torch-${precision}-$round.err" ||
        { failed "PyTorch DDP" "$work/torch-${precision}-$round.err"; peer_failed="PyTorch DDP"; break; }
      echo "$precision: round $round/$rounds done" >&2
    done
    if [[ -n $peer_failed ]]; then
      ratios+=("$precision: FAILED ($peer_failed)"); failures=$((failures + 1))
      continue
    fi
    ratios+=("$(python3 - "$work" "$precision" <<'PY'
import csv, glob, json, sys
w, precision = sys.argv[1], sys.argv[2]
def p50(xs):
    xs = sorted(xs); h = 0.5 * (len(xs) - 1); k = int(h)
    return xs[k] + (h - k) * (xs[min(k + 1, len(xs) - 1)] - xs[k])
h = [float(r["iteration_ms"]) for f in glob.glob(f"{w}/results/peer_harness_{precision}_*/*/raw/*/*/rep0/rank*.csv") for r in csv.DictReader(open(f))]
t = [json.loads(l)["iteration_ms"] for f in glob.glob(f"{w}/torch-{precision}-*.jsonl") for l in open(f) if l.strip()]
print(f"{precision}: harness {p50(h):.2f} ms (n={len(h)}), PyTorch DDP {p50(t):.2f} ms (n={len(t)}): ratio {p50(h) / p50(t):.3f}")
PY
)")
  done
else
  ratios=("(no torch/torchvision beside the LibTorch: peer skipped)")
fi

echo
echo "GPU checks, $(date -u +%F), $gpu_name, torch $(field torch_version) (bench/gpu.sh, $rounds peer rounds):"
echo
echo '```'
echo "$peaks"
echo '```'
echo
echo "| run | ranks ran on (device/backend/precision) | iteration p50 (ms) | samples | MFU |"
echo "|---|---|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "BERT DAPPLE (2 stages, 4 micro-batches) fp32, the last stage's loss on the device and on the CPU, same seed: $pipeline_check"
echo "Llama-style decoder ZeRO-1/2/3 fp32 losses against DDP's on the device: ${sharded_check:-(not run)}"
echo "Pipeline x ZeRO-1/2/FSDP and pp_tp (summed) fp32 losses against the plain pipeline's on the device: $composed_check"
echo "Tensor parallelism (TP, TP+SP, FSDP x TP, TP+SP with the vocabulary split, TP+SP gathering again in backward, recomputed TP+SP) fp32 losses against DDP's on the device: $tensor_check"
echo "HiDup's searched strategy fp32 losses against one rank's on the device: $spmd_check"
echo "Llama-style decoder, world 1, bf16, against \`harness profile estimate\` of its shape: $estimate_check"
echo
echo "ResNet-50 harness/PyTorch DDP on one device, batch $batch at ${image}x${image}:"
echo
printf -- '- %s\n' "${ratios[@]}"
echo
# The memory table of the ResNet-50 run (its table.md): on a GPU, the allocator's peaks beside
# the RSS.
if [[ -n $r50 ]]; then
  echo "ResNet-50, world 1, memory per rank (MiB):"
  echo
  awk '/memory per rank/ {on = 1} on && /^\|/ {print} on && /^\| overlap/ {exit}' "$r50/table.md"
fi
if ((failures > 0)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
