#!/usr/bin/env bash
# HiDup's search priced three ways against the runs of what it chose (docs/spmd.md, "Measured
# compute"):
#   dense: experiments/hidup_llama.yaml and hidup_bert.yaml at world 2 and 4, each with
#     hidup        compute by FLOPs at 86 GFLOP/s, the shipped profiles/gloo-2ranks-cpu/comm.json
#     flops_after  compute by FLOPs, collectives profiled here after compute at the study's world
#     measured     each operator's measured time (`compute: measured`), the same collectives
#   and DDP;
#   moe: experiments/moe_vs_deepspeed.yaml and vit_moe_vs_deepspeed.yaml (top-2 and top-1, world
#   2) with hidup, measured and expert parallelism.
# ROUNDS (default 3) runs of 20 measured iterations a system. Output: OUT/dense.md and
# OUT/moe.md, iteration p50 in ms per system with the search's prediction and its error.
#
# Usage: [ROUNDS=3] [OUT=dir] [HARNESS=build/harness] bench/hidup_compute.sh [dense|moe|all]
# Timings are only meaningful on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/hidup-compute-XXXXXX)}
ROUNDS=${ROUNDS:-3}
WHAT=${1:-all}
mkdir -p "$OUT"

profile_comm() {  # world: the collectives after compute, into OUT/comm<world>
  [ -e "$OUT/comm$1/comm.json" ] && return
  "$HARNESS" profile comm --world "$1" --ops allreduce,allgather,reducescatter,alltoall \
    --sizes 32K:16M:x2 --iterations 40 --warmup 5 --after-compute 5 --out "$OUT/comm$1" \
    > "$OUT/comm$1.log"
}

run_study() {  # spec world systems folder [harness run options...]
  "$HARNESS" run "$1" --set "run.world_size=$2" --set "run.repeats=$ROUNDS" --set "systems=$3" \
    --set "output=$OUT/$4" "${@:5}" > "$OUT/$4-$(basename "$1" .yaml).log" 2>&1
}

# One table: a row per study and point, a cell per system (the spmd ones with their prediction).
table() {  # folder-glob systems...
  python3 - "$OUT" "$@" <<'PY'
import glob, json, sys
out, pattern, names = sys.argv[1], sys.argv[2], sys.argv[3:]
print("| study | point | " + " | ".join(names) + " | n |")
print("|---|---|" + "---:|" * (len(names) + 1))
for run in sorted(glob.glob(f"{out}/{pattern}/*/*")):
    for point in json.load(open(f"{run}/summary.json"))["points"]:
        systems = {s["name"]: s for s in point["systems"]}
        cells = []
        for name in names:
            p50 = systems[name]["phases"]["iteration"]["p50"]
            plans = glob.glob(f"{run}/plans/{name}/{point['id']}/spmd_plan.json")
            if not plans:
                cells.append(f"{p50:.1f}")
                continue
            predicted = json.load(open(plans[0]))["strategies"][0]["predicted_s"] * 1e3
            cells.append(f"{p50:.1f} ({predicted:.1f}, {100 * (predicted - p50) / p50:+.0f}%)")
        n = systems[names[0]]["phases"]["iteration"]["count"]
        study = "/".join(run.split("/")[-3:-1])
        print(f"| {study} | {point['label']} | {' | '.join(cells)} | {n} |")
PY
}

spmd_systems() {  # comm.json
  echo "{name: hidup, kind: spmd, comm: profiles/gloo-2ranks-cpu/comm.json, gflops: 86},
    {name: measured, kind: spmd, comm: $1, compute: measured}"
}

if [ "$WHAT" = dense ] || [ "$WHAT" = all ]; then
  for world in 2 4; do
    profile_comm "$world"
    comm="$OUT/comm$world/comm.json"
    systems="[$(spmd_systems "$comm"), {name: flops_after, kind: spmd, comm: $comm, gflops: 86},
      {name: ddp, mode: overlap}]"
    for model in llama bert; do
      run_study "experiments/hidup_$model.yaml" "$world" "$systems" "dense_w$world" \
        --set 'sweep={}'
    done
  done
  table 'dense_w*' hidup flops_after measured ddp > "$OUT/dense.md"
  cat "$OUT/dense.md"
fi
if [ "$WHAT" = moe ] || [ "$WHAT" = all ]; then
  profile_comm 2
  systems="[$(spmd_systems "$OUT/comm2/comm.json"), {name: expert_parallel, kind: expert_parallel}]"
  for spec in moe_vs_deepspeed vit_moe_vs_deepspeed; do
    run_study "experiments/$spec.yaml" 2 "$systems" "moe_$spec"
  done
  table 'moe_*' hidup measured expert_parallel > "$OUT/moe.md"
  cat "$OUT/moe.md"
fi
