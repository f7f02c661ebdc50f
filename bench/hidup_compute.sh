#!/usr/bin/env bash
# HiDup's search priced three ways against the runs of what it chose (docs/spmd.md, "Measured
# compute"): experiments/hidup_llama.yaml and hidup_bert.yaml at world 2 and 4, each study with
#   hidup        compute by FLOPs at 86 GFLOP/s, the shipped profiles/gloo-2ranks-cpu/comm.json
#   flops_after  compute by FLOPs, collectives profiled here after compute at the study's world
#   measured     each operator's measured time (`compute: measured`), the same collectives
# and DDP, in ROUNDS (default 3) runs of 20 measured iterations a system. Output: OUT/table.md,
# iteration p50 in ms per system with the search's prediction and its error, n samples each.
#
# Usage: [ROUNDS=3] [OUT=dir] [HARNESS=build/harness] bench/hidup_compute.sh
# Timings are only meaningful on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/hidup-compute-XXXXXX)}
ROUNDS=${ROUNDS:-3}
mkdir -p "$OUT"

for world in 2 4; do
  comm="$OUT/comm$world"
  "$HARNESS" profile comm --world "$world" --ops allreduce,allgather,reducescatter,alltoall \
    --sizes 32K:16M:x2 --iterations 40 --warmup 5 --after-compute 5 --out "$comm" \
    > "$OUT/comm$world.log"
  systems="[{name: hidup, kind: spmd, comm: profiles/gloo-2ranks-cpu/comm.json, gflops: 86},
    {name: flops_after, kind: spmd, comm: $comm/comm.json, gflops: 86},
    {name: measured, kind: spmd, comm: $comm/comm.json, compute: measured},
    {name: ddp, mode: overlap}]"
  for model in llama bert; do
    "$HARNESS" run "experiments/hidup_$model.yaml" --set 'sweep={}' --set "run.world_size=$world" \
      --set "run.repeats=$ROUNDS" --set "systems=$systems" --set "output=$OUT/w$world" \
      > "$OUT/${model}_w$world.log" 2>&1
  done
done

python3 - "$OUT" > "$OUT/table.md" <<'PY'
import glob, json, sys
out = sys.argv[1]
print("| world | model | FLOPs, shipped comm.json | FLOPs, after compute | measured, after compute | DDP | n |")
print("|---:|---|---:|---:|---:|---:|---:|")
for world in (2, 4):
    for model in ("llama", "bert"):
        run = glob.glob(f"{out}/w{world}/hidup_{model}/*")[0]
        systems = {s["name"]: s for s in json.load(open(f"{run}/summary.json"))["points"][0]["systems"]}
        cells = []
        for name in ("hidup", "flops_after", "measured"):
            plan = json.load(open(glob.glob(f"{run}/plans/{name}/*/spmd_plan.json")[0]))
            predicted = plan["strategies"][0]["predicted_s"] * 1e3
            p50 = systems[name]["phases"]["iteration"]["p50"]
            cells.append(f"{p50:.1f} ({predicted:.1f}, {100 * (predicted - p50) / p50:+.0f}%)")
        ddp = systems["ddp"]["phases"]["iteration"]
        print(f"| {world} | {model} | {' | '.join(cells)} | {ddp['p50']:.1f} | {ddp['count']} |")
PY
cat "$OUT/table.md"
