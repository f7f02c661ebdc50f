#!/usr/bin/env bash
# Simulated vs measured p50 iteration time on this machine's CPU (issue 8): DDP (overlap and
# sync), sharded data parallelism (ZeRO stages 1, 2 and 3) and a 2-stage DAPPLE pipeline at
# world size 2, and a DAPPLE plan on 4 ranks (2 stages x 2 replicas), its replicas whole and
# sharded at ZeRO-1, ZeRO-2 and FSDP (dapple4_zero1, dapple4_zero2, dapple4_zero3), for
# ResNet-18 and ResNet-50.
#
# This VM's speed drifts: the same real run's p50 moved by up to 50% within minutes (the
# issue 8 notes). A prediction can only be checked against a run measured beside its inputs,
# so the validation runs in ROUNDS (default 5) of, back to back: the inputs (a Gloo profile --
# all-reduce, send/recv, the reducer's `copy` -- and the layer profiles: batch 8 for DDP, the
# pipelines' micro-batch per replica, 4 samples, since layer time is not linear in batch at
# that size; each solo and co-located with a second copy in lockstep, the micro-batch's
# stage profile: each stage's layers timed while the other stage times its own, and DAPPLE
# 2 x 2's layout: each stage on two processes in lockstep, in CPU time), the real
# runs (bench/simulator/validate_real.yaml at world 2, then its DAPPLE system at world 4),
# the inputs again, and the simulations of experiments/simulate_cpu_ddp.yaml from both sets
# of inputs; the round's prediction is their mean.
# The pipelines' 2 stages are fixed per model (STAGES_<model>, default the split `stages: 2`
# chose most often in earlier validations; its choice moved between rounds with the host's
# speed), so that the stage profile is measured on the layout the real pipeline runs. Nothing
# of the real runs goes into a simulation (the optimizer step is the profile's). The
# simulated cluster is one machine with this host's cores (`cluster.cpu_cores`): 4 ranks on 2
# cores time-share them, as the kernel does.
#
# Output: rounds.csv (one row per model, system and round, with the hypervisor's CPU steal
# over the round, the co-running factor and the simulations before and after) and table.md:
# per system the measured p50 pooled over the iterations of every quiet round (steal at most
# STEAL_MAX percent, default 5; n samples), the median over those rounds of the simulated
# p50 from solo, co-located and (pipelines) stage profiles, their errors, and every round's
# errors.
# A round the hypervisor stole more from ran on a contended host: it is listed, not pooled.
#
# PROTOCOL=adjacent measures only the issue's rows (DDP overlap, DAPPLE 2 x 2), each real run
# right between two measurements of its matched profile (measure_round_adjacent).
# SIMULATE_ONLY=1 OUT=<an earlier validation> simulates its measured rounds again (after a
# change to the simulator) without measuring anything. NOISE=X simulates with `run.noise: X`.
#
# Usage: [ROUNDS=5] [STEAL_MAX=5] [NOISE=0] [PROTOCOL=full|adjacent] [OUT=dir] [HARNESS=build/harness] \
#          bench/simulator/validate.sh [models...]
# Timings are only meaningful on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/simulate-validate-XXXXXX)}
ROUNDS=${ROUNDS:-5}
CORES=${CORES:-$(nproc)}
STEAL_MAX=${STEAL_MAX:-5}
SIMULATE_ONLY=${SIMULATE_ONLY:-0}
NOISE=${NOISE:-0}
PROTOCOL=${PROTOCOL:-full}
mkdir -p "$OUT"
cpu_times() { head -1 /proc/stat; }  # cpu user nice system idle iowait irq softirq steal
STAT_START=$(cpu_times)
if [ $# -gt 0 ]; then MODELS=("$@"); else MODELS=(resnet18 resnet50); fi
BATCH=8 MICRO_BATCHES=4
MICRO=$((BATCH * 2 / MICRO_BATCHES))  # samples per replica and micro-batch: world 2 x 1 or 4 x 2
# The sharded systems (ZeRO stages 1-3, one unit per layer) of the world-2 real runs.
SHARDED="{name: zero1, kind: sharded, stage: 1}, {name: zero2, kind: sharded, stage: 2}, {name: zero3, kind: sharded, stage: 3}"
STAGES_resnet18=${STAGES_resnet18:-0-7,8-13}
STAGES_resnet50=${STAGES_resnet50:-0-12,13-21}
stages_of() { local v="STAGES_$1"; echo "${!v:?no STAGES_$1: give the layers of the 2 stages, e.g. 0-7,8-13}"; }
# The pipeline system of the real runs: the model's 2 stages, each on `replicas` ranks, its
# replicas whole or sharded at `zero` (default 0).
pipeline_system() {  # name, model, replicas[, zero]
  python3 -c 'import sys
name, stages, replicas, zero = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4])
st = ", ".join("{layers: \"%s\", ranks: [%s]}" % (l, ", ".join(str(s * replicas + r) for r in range(replicas))) for s, l in enumerate(stages))
print("{name: %s, kind: pipeline, schedule: dapple, zero_stage: %d, stages: [%s]}" % (name, zero, st))' "$1" "$(stages_of "$2")" "$3" "${4:-0}"
}

# The stages the real pipeline ran (balanced by `stages: 2`), as the simulator's inline
# stages: its layer positions are the profile's layers without its input node, i.e. the
# zoo's chain indexes.
pipeline_systems() {
  python3 -c 'import json,sys
s=json.load(open(sys.argv[1]))["system"]; c=s["pipeline"]; zero=s.get("data", {}).get("zero_stage", 0)
st=", ".join("{layers: \"%d-%d\", ranks: %s}" % (s["first_layer"], s["last_layer"], s["ranks"]) for s in c["stages"])
print("[{name: %s, kind: pipeline, schedule: dapple, micro_batches: %d, zero_stage: %d, stages: [%s]}]" % (sys.argv[2], c["micro_batches"], zero, st))' \
    "$1" "$2"
}
p50() {  # summary.json, system -> p50 iteration time of the first point
  python3 -c 'import json,sys
s=json.load(open(sys.argv[1]))
for sy in s["points"][0]["systems"]:
    if sy["name"]==sys.argv[2]: print(sy["phases"]["iteration"]["p50"])' "$1" "$2"
}
latest() { ls -d "$1"/*/*/ | tail -1; }

steal_percent() {  # /proc/stat cpu lines before and after -> % of CPU time stolen
  python3 -c 'import sys
a=[int(x) for x in sys.argv[1].split()[1:9]]; b=[int(x) for x in sys.argv[2].split()[1:9]]
d=[y-x for x,y in zip(a,b)]; print("%.1f" % (100*d[7]/max(1,sum(d))))' "$1" "$2"
}

echo "model,system,world,round,steal_percent,corunning_factor,measured_p50_ms,simulated_p50_ms,simulated_colocated_p50_ms,simulated_stages_p50_ms,simulated_layout_p50_ms,solo_before_ms,solo_after_ms,colocated_before_ms,colocated_after_ms,stages_before_ms,stages_after_ms,layout_before_ms,layout_after_ms,samples_dir" \
  > "$OUT/rounds.csv"
profile_comm() {  # dir: the Gloo profile, into dir/comm
  "$HARNESS" profile comm --world 2 --ops allreduce,sendrecv,copy,allgather,reducescatter \
    --sizes 64K:64M:x4 \
    --iterations 8 --warmup 2 --out "$1/comm" > "$1/comm.log"
}
profile_layers() {  # model, dir, name, batch, more flags...: a layer profile into dir/name
  local model=$1 dir=$2 name=$3 batch=$4
  shift 4
  "$HARNESS" profile layers --model "$model" --batch "$batch" --input-shape 3,64,64 \
    --repetitions 5 --warmup 1 "$@" --out "$dir/$name" > "$dir/$name.log"
}
# The pipeline's layouts: its two stages at once, each timing its layers while the other times
# its own; DAPPLE 2 x 2's: each stage on two processes in lockstep, 4 processes on this host's
# cores, timed in CPU time (the simulator time-shares the cores itself).
profile_stages() { profile_layers "$1" "$2" "profile-b$MICRO-stages" "$MICRO" --stages "$(stages_of "$1")"; }
profile_layout() {
  profile_layers "$1" "$2" "profile-b$MICRO-stages-co2" "$MICRO" --stages "$(stages_of "$1")" \
    --co-located 2 --clock cpu
}
run_real2() {  # model, dir, systems: the world-2 real runs, into dir/real2
  "$HARNESS" run bench/simulator/validate_real.yaml --set "model.name=$1" \
    --set run.repeats=1 --set "systems=[$3]" --set "output=$2/real2" > "$2/real2.log" 2>&1
}
run_real4() {  # model, dir: DAPPLE 2 x 2, its replicas whole, ZeRO-1, ZeRO-2 and FSDP, into dir/real4
  "$HARNESS" run bench/simulator/validate_real.yaml --set "model.name=$1" \
    --set run.repeats=1 --set run.world_size=4 --set baseline=dapple4 \
    --set "systems=[$(pipeline_system dapple4 "$1" 2), $(pipeline_system dapple4_zero1 "$1" 2 1), $(pipeline_system dapple4_zero2 "$1" 2 2), $(pipeline_system dapple4_zero3 "$1" 2 3)]" \
    --set "output=$2/real4" > "$2/real4.log" 2>&1
}

measure_inputs() {  # model, dir: the Gloo profile and the layer profiles
  local model=$1 dir=$2
  mkdir -p "$dir"
  profile_comm "$dir"
  for b in "$BATCH" "$MICRO"; do
    profile_layers "$model" "$dir" "profile-b$b" "$b"
    # Two copies in lockstep: as two data-parallel ranks (or a stage's two replicas) run the
    # same layers at the same time on this host's two cores.
    profile_layers "$model" "$dir" "profile-b$b-co2" "$b" --co-located 2
  done
  profile_stages "$model" "$dir"
  profile_layout "$model" "$dir"
}

# The inputs are measured before and after the real runs, and the round's prediction is the
# mean of the two simulations: the host's speed moved by up to 1.6x within minutes, and a
# sandwich cancels a drift that is linear over the round.
measure_round() {  # model, dir
  local model=$1 dir=$2 round_start
  mkdir -p "$dir"
  round_start=$(cpu_times)
  measure_inputs "$model" "$dir/before"
  run_real2 "$model" "$dir" "overlap, sync, $SHARDED, $(pipeline_system dapple "$model" 1)"
  run_real4 "$model" "$dir"
  measure_inputs "$model" "$dir/after"
  steal_percent "$round_start" "$(cpu_times)" > "$dir/steal_percent"
}

# PROTOCOL=adjacent: the issue's rows only (DDP overlap at world 2, DAPPLE 2 x 2), each real
# run between two measurements of its matched profile taken right before and right after it
# (the full protocol measures every input before all runs and again after all of them:
# minutes apart, for ResNet-50 up to 10), in a shorter round so that more rounds fit.
measure_round_adjacent() {  # model, dir
  local model=$1 dir=$2 round_start
  mkdir -p "$dir/before" "$dir/after"
  round_start=$(cpu_times)
  profile_comm "$dir/before"
  profile_layers "$model" "$dir/before" "profile-b$BATCH-co2" "$BATCH" --co-located 2
  run_real2 "$model" "$dir" overlap
  profile_layers "$model" "$dir/after" "profile-b$BATCH-co2" "$BATCH" --co-located 2
  profile_layout "$model" "$dir/before"
  run_real4 "$model" "$dir"
  profile_layout "$model" "$dir/after"
  profile_comm "$dir/after"
  steal_percent "$round_start" "$(cpu_times)" > "$dir/steal_percent"
}

simulate_one() {  # inputs dir, system, world, profile dir, pbs, extra --set args...
  local inputs=$1 system=$2 world=$3 profile=$4 pbs=$5 out
  shift 5
  out=$inputs/sim-$system-$(basename "$profile")
  rm -rf "$out"
  "$HARNESS" simulate experiments/simulate_cpu_ddp.yaml \
    --set "simulate.model.profile=$profile/graph.txt" --set "simulate.model.pbs=$pbs" \
    --set "simulate.model.batch_size=$BATCH" --set "simulate.run.world_size=$world" \
    --set "simulate.cluster.comm_profile=$inputs/comm/comm.json" \
    --set "simulate.cluster.gpus_per_machine=$world" --set "simulate.cluster.cpu_cores=$CORES" \
    --set "simulate.run.noise=$NOISE" --set "output=$out" "$@" > "$out.log"
  p50 "$(latest "$out")/summary.json" "$system"
}

corunning_factor() {  # solo and co-located profile dirs -> lockstep / solo forward+backward
  python3 -c 'import json,sys
t=[(lambda w: w["forward"]["median_ms"]+w["backward"]["median_ms"])(json.load(open(d+"/profile.json"))["whole_model"]) for d in sys.argv[1:3]]
print("%.3f" % (t[1]/t[0]))' "$1" "$2"
}
mean() { python3 -c 'import sys; v=[float(x) for x in sys.argv[1:]]; print("%.3f" % (sum(v)/len(v)))' "$@"; }

# Each system is simulated from the solo profiles (one copy on an idle host) and from the
# co-located ones, timed while a second copy ran the same layers in lockstep; a pipeline also
# from the stage profile. DDP's two ranks do run the same layers at the same moment
# (co-located is its match); a pipeline's stages run different layers side by side (the
# stage profile is its match; the 2-stage pipeline's co-located column repeats the solo one,
# DAPPLE 2 x 2 gets a stage's two replicas co-located). simulator/README.md.
simulate_round() {  # model, round, dir: appends the round's rows to rounds.csv
  local model=$1 round=$2 dir=$3 system world real solo co staged layout pbs extra when
  local -a solo_ms co_ms staged_ms layout_ms factor
  for system in overlap sync zero1 zero2 zero3 dapple dapple4 dapple4_zero1 dapple4_zero2 dapple4_zero3; do
    world=2 real=$dir/real2 solo=profile-b$BATCH co=profile-b$BATCH-co2 staged="" layout="" pbs=$BATCH extra=()
    case $system in dapple4*) world=4 real=$dir/real4 layout=profile-b$MICRO-stages-co2 ;; esac
    [ -d "$real" ] || continue
    real=$(latest "$real")
    [ -d "$real/raw/p000/$system" ] || continue  # not run in this round (PROTOCOL=adjacent)
    if [[ $system == dapple* ]]; then
      solo=profile-b$MICRO co=profile-b$MICRO-co2 staged=profile-b$MICRO-stages pbs=$MICRO
      extra=(--set "simulate.systems=$(pipeline_systems "$real/raw/p000/$system/rep0/config.json" "$system")"
             --set "simulate.baseline=$system")
    fi
    [ "$system" = dapple ] && co=$solo
    case $system in zero[123])  # a sharded system, its stage its name's digit
      extra=(--set "simulate.systems=[{name: $system, kind: sharded, stage: ${system#zero}}]"
             --set "simulate.baseline=$system") ;;
    esac
    solo_ms=() co_ms=() staged_ms=() layout_ms=() factor=()
    for when in before after; do
      # A profile the round did not measure leaves its column empty.
      simulated() { [ -n "$1" ] && [ -d "$dir/$when/$1" ] && simulate_one "$dir/$when" "$system" "$world" "$dir/$when/$1" "$pbs" "${extra[@]}"; }
      solo_ms+=("$(simulated "$solo" || true)")
      co_ms+=("$(simulated "$co" || true)")
      staged_ms+=("$(simulated "$staged" || true)")
      layout_ms+=("$(simulated "$layout" || true)")
      if [ -d "$dir/$when/$solo" ] && [ -d "$dir/$when/$co" ]; then
        factor+=("$(corunning_factor "$dir/$when/$solo" "$dir/$when/$co")")
      fi
    done
    both() { [ -n "$1" ] && [ -n "$2" ] && mean "$1" "$2"; }
    echo "$model,$system,$world,$round,$(cat "$dir/steal_percent"),$([ ${#factor[@]} -gt 0 ] && mean "${factor[@]}"),$(p50 "$real/summary.json" "$system"),$(both "${solo_ms[@]}"),$(both "${co_ms[@]}"),$(both "${staged_ms[@]}"),$(both "${layout_ms[@]}"),${solo_ms[0]},${solo_ms[1]},${co_ms[0]},${co_ms[1]},${staged_ms[0]},${staged_ms[1]},${layout_ms[0]},${layout_ms[1]},$real/raw/p000/$system" \
      >> "$OUT/rounds.csv"
  done
}

for model in "${MODELS[@]}"; do
  for round in $(seq 1 "$ROUNDS"); do
    dir=$OUT/$model/round$round
    if [ "$SIMULATE_ONLY" = 0 ] && [ "$PROTOCOL" = adjacent ]; then
      measure_round_adjacent "$model" "$dir"
    elif [ "$SIMULATE_ONLY" = 0 ]; then
      measure_round "$model" "$dir"
    fi
    simulate_round "$model" "$round" "$dir"
    tail -n 4 "$OUT/rounds.csv"
  done
done

python3 - "$OUT/rounds.csv" "$STAT_START" "$(cpu_times)" "$STEAL_MAX" "$SIMULATE_ONLY" \
  > "$OUT/table.md" <<'PY'
import csv, glob, statistics, sys

def percentile(values, q):  # linear interpolation between closest ranks (numpy's default)
    v = sorted(values)
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)

def error(simulated, measured):
    return 100 * (simulated - measured) / measured

rows = list(csv.DictReader(open(sys.argv[1])))
steal_max = float(sys.argv[4])
print("| model | system | ranks | rounds | measured p50 (ms) | n | co-running | simulated, solo profile (ms) | error | simulated, co-located profile (ms) | error | simulated, stage profile (ms) | error | simulated, stages x replicas profile (ms) | error | per-round errors, solo / co-located / stage / stages x replicas (steal) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
keys = []
for r in rows:
    if (r["model"], r["system"]) not in keys:
        keys.append((r["model"], r["system"]))

COLUMNS = ["simulated_p50_ms", "simulated_colocated_p50_ms", "simulated_stages_p50_ms",
           "simulated_layout_p50_ms"]

def round_errors(r):
    columns = COLUMNS
    errors = ["%+.0f" % error(float(r[c]), float(r["measured_p50_ms"])) for c in columns if r.get(c)]
    return "/".join(errors) + "% (" + r["steal_percent"] + "%)"

for model, system in keys:
    mine = [r for r in rows if r["model"] == model and r["system"] == system]
    quiet = [r for r in mine if float(r["steal_percent"]) <= steal_max]
    rounds = " ".join(round_errors(r) for r in mine)
    label = {"overlap": "DDP overlap", "sync": "DDP sync", "dapple": "DAPPLE 2 stages",
             "dapple4": "DAPPLE 2 stages x 2", "dapple4_zero1": "DAPPLE 2 x 2, replicas ZeRO-1",
             "dapple4_zero2": "DAPPLE 2 x 2, replicas ZeRO-2",
             "dapple4_zero3": "DAPPLE 2 x 2, replicas FSDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2",
             "zero3": "ZeRO-3"}.get(system, system)
    if not quiet:
        print("| %s | %s | %s | 0 of %d | - | 0 | - | - | - | - | - | - | - | - | - | %s |" % (model, label, mine[0]["world"], len(mine), rounds))
        continue
    samples = []
    for r in quiet:  # every rank's iterations of the round's run
        for path in glob.glob(r["samples_dir"] + "/rep*/rank*.csv"):
            samples += [float(x["iteration_ms"]) for x in csv.DictReader(open(path))]
    measured = percentile(samples, 0.5)
    cells = []
    for column in COLUMNS:
        values = [float(r[column]) for r in quiet if r.get(column)]
        if len(values) < len(quiet):
            cells += ["-", "-"]
            continue
        simulated = statistics.median(values)
        cells += ["%.1f" % simulated, "%+.1f%%" % error(simulated, measured)]
    factors = [float(r["corunning_factor"]) for r in quiet if r["corunning_factor"]]
    factor = "%.2f" % statistics.median(factors) if factors else "-"
    print("| %s | %s | %s | %d of %d | %.1f | %d | %s | %s | %s |" % (
        model, label, mine[0]["world"], len(quiet), len(mine), measured, len(samples), factor,
        " | ".join(cells), rounds))
print("\nstages x replicas: the pipeline's stages each on its replicas' processes in lockstep, "
      "all at once (DAPPLE 2 x 2: 4 processes), timed in process CPU time.")
print("\nco-running: forward+backward of the whole model timed in lockstep with a second copy "
      "over the same alone (median over the pooled rounds; 1.00 for a profile that stays solo).")
print("\nPooled: rounds with at most %.1f%% CPU steal (the hypervisor's, /proc/stat, over the "
      "round's profiles and runs)." % steal_max, end="")
if sys.argv[5] == "0":
    a = [int(x) for x in sys.argv[2].split()[1:9]]
    b = [int(x) for x in sys.argv[3].split()[1:9]]
    d = [y - x for x, y in zip(a, b)]
    print(" CPU steal over the whole validation: %.1f%% of CPU time (busy %.1f%%)." %
          (100 * d[7] / sum(d), 100 * (sum(d) - d[3] - d[4]) / sum(d)), end="")
print()
PY
cat "$OUT/table.md"
echo "results in $OUT"
