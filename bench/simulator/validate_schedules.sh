#!/usr/bin/env bash
# Simulated vs measured p50 iteration time of every pipeline schedule (issue 69): GPipe,
# DAPPLE's 1F1B, ZB-H1, and at two stages per rank interleaved 1F1B and ZB-V, on
# bench/simulator/validate_schedules_real.yaml's MLP (equal stages: two hidden Linear layers
# of 1024 per stage at 4 ranks x 2, four at 2 ranks x 1, two at 2 x 2 and 4 x 1, one at
# 4 x 2) at 2 and at 4 CPU ranks, 8 micro-batches of 128 samples per rank.
#
# In ROUNDS (default 3) of, back to back: the inputs (a Gloo profile: send/recv and the
# all-reduce the simulator needs a fit of, a send call to a computing receiver, and the layer
# profile at the micro-batch: at 2 ranks the two stages timed side by side, one process each;
# at 4 ranks the four stages on 4 processes, in CPU time, which the simulator time-shares over
# this host's cores), the real runs of every schedule, the inputs again, and the simulations
# from both sets; the round's prediction is their mean. Nothing of the real runs goes into a
# simulation.
#
# Output: rounds.csv and table.md: per schedule and world the measured p50 pooled over the
# rounds (n samples), the median of the rounds' predictions and its error, every round's, and
# where the miss is: each round's run against its two simulations action kind by action kind
# (`harness actions`, w<world>/round<k>/actions.md), the parts' misses a mean over the rounds;
# below the table, the breakdown of the worst cell's worst round. "Profiles apart" is how far the
# two simulations of a round (from the profiles before and after its runs) lie from each other:
# the host's speed moving within the round, which no model of the runs can follow.
#
# Usage: [ROUNDS=3] [WORLDS="2 4"] [OUT=dir] [HARNESS=build/harness]
#        bench/simulator/validate_schedules.sh
# Timings are only meaningful on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/validate-schedules-XXXXXX)}
ROUNDS=${ROUNDS:-3}
WORLDS=${WORLDS:-2 4}
mkdir -p "$OUT"
MODEL=(--model mlp --depth 9 --width 1024 --input-shape 64 --num-classes 10)
# Layer ranges of equal stages (the big Linear layers are chain indexes 3, 5, ..., 17).
STAGES2=0-9,10-19
STAGES4=0-5,6-9,10-13,14-19
STAGES8=0-3,4-5,6-7,8-9,10-11,12-13,14-15,16-19

# The systems of one world: real (ranks given) or simulated (placed by stages_per_rank).
systems() {  # world, real|sim
  python3 - "$1" "$2" "$STAGES2" "$STAGES4" "$STAGES8" <<'PY'
import sys
world, side = int(sys.argv[1]), sys.argv[2]
one = {2: sys.argv[3], 4: sys.argv[4]}[world].split(",")
two = {2: sys.argv[4], 4: sys.argv[5]}[world].split(",")
def placed(ranges, schedule):
    p = world
    if schedule == "zbv":
        return [c if c < p else 2 * p - 1 - c for c in range(len(ranges))]
    return [c % p for c in range(len(ranges))]
out = []
for name, ranges in [("gpipe", one), ("dapple", one), ("zb_h1", one),
                     ("interleaved_1f1b", two), ("zbv", two)]:
    if side == "real":
        ranks = placed(ranges, name)
        stages = ", ".join('{layers: "%s", ranks: [%d]}' % (l, r) for l, r in zip(ranges, ranks))
        out.append("{name: %s, kind: pipeline, schedule: %s, stages: [%s]}" % (name, name, stages))
    else:
        stages = ", ".join('{layers: "%s"}' % l for l in ranges)
        extra = ", stages_per_rank: 2" if len(ranges) > world else ""
        out.append("{name: %s, kind: pipeline, schedule: %s%s, stages: [%s]}" % (name, name, extra, stages))
print("[" + ", ".join(out) + "]")
PY
}
profile_inputs() {  # dir, world
  local micro=$((128 * $2 / 8))  # samples per micro-batch: 128 per rank, 8 micro-batches
  "$HARNESS" profile comm --world 2 --ops allreduce,sendrecv,handover --sizes 64K:16M:x4 --iterations 8 --warmup 2 \
    --out "$1/comm" > "$1/comm.log"
  if [ "$2" = 2 ]; then
    "$HARNESS" profile layers "${MODEL[@]}" --batch "$micro" --repetitions 5 --warmup 1 \
      --stages "$STAGES2" --split-backward --out "$1/profile" > "$1/profile.log"
  else
    "$HARNESS" profile layers "${MODEL[@]}" --batch "$micro" --repetitions 5 --warmup 1 \
      --stages "$STAGES4" --clock cpu --split-backward --out "$1/profile" > "$1/profile.log"
  fi
}
latest() { ls -d "$1"/*/*/ | tail -1; }
p50s() {  # summary.json -> "system p50" lines
  python3 -c 'import json,sys
for sy in json.load(open(sys.argv[1]))["points"][0]["systems"]: print(sy["name"], sy["phases"]["iteration"]["p50"])' "$1"
}

echo "world,round,system,measured_p50_ms,simulated_before_ms,simulated_after_ms,samples_dir,actions" \
  > "$OUT/rounds.csv"
for world in $WORLDS; do
  for round in $(seq 1 "$ROUNDS"); do
    dir=$OUT/w$world/round$round
    mkdir -p "$dir/before" "$dir/after"
    profile_inputs "$dir/before" "$world"
    "$HARNESS" run bench/simulator/validate_schedules_real.yaml --set run.world_size=$world \
      --set "systems=$(systems "$world" real)" --set "output=$dir/real" > "$dir/real.log" 2>&1
    profile_inputs "$dir/after" "$world"
    for when in before after; do
      "$HARNESS" simulate bench/simulator/validate_schedules_sim.yaml \
        --set "simulate.model.profile=$dir/$when/profile/graph.txt" \
        --set "simulate.model.pbs=$((128 * world / 8))" \
        --set "simulate.cluster.comm_profile=$dir/$when/comm/comm.json" \
        --set "simulate.run.world_size=$world" --set "simulate.cluster.gpus_per_machine=$world" \
        --set "simulate.systems=$(systems "$world" sim)" --set "output=$dir/sim-$when" \
        > "$dir/sim-$when.log"
    done
    real=$(latest "$dir/real")
    "$HARNESS" actions "$real" "$(latest "$dir/sim-before")" "$(latest "$dir/sim-after")" \
      --json "$dir/actions.json" > "$dir/actions.md"
    join <(p50s "$real/summary.json" | sort) \
      <(join <(p50s "$(latest "$dir/sim-before")/summary.json" | sort) \
             <(p50s "$(latest "$dir/sim-after")/summary.json" | sort)) |
      while read -r system measured before after; do
        echo "$world,$round,$system,$measured,$before,$after,$real/raw/p000/$system,$dir/actions.json" \
          >> "$OUT/rounds.csv"
      done
    tail -n 5 "$OUT/rounds.csv"
  done
done

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
python3 - "$OUT/rounds.csv" "$cpu, $(nproc) cores" > "$OUT/table.md" <<'PY'
import csv, glob, json, statistics, sys
def percentile(values, q):  # linear interpolation between closest ranks
    v = sorted(values)
    pos = (len(v) - 1) * q
    lo = int(pos); hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)
def miss_of(row):  # this round's simulated less measured parts (ms), mean over ranks
    for run in json.load(open(row["actions"]))["runs"]:
        if run["system"] == row["system"]: return run["miss_ms"]
rows = list(csv.DictReader(open(sys.argv[1])))
print("Machine: %s.\n" % sys.argv[2])
print("| schedule | ranks | rounds | measured p50 (ms) | n | simulated (ms) | error | per-round errors "
      "| profiles apart | miss: compute (F, B or I, W) | sends | waiting | gradient sum + step |")
print("|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|")
worst = None
keys = []
for r in rows:
    if (r["world"], r["system"]) not in keys: keys.append((r["world"], r["system"]))
for world, system in keys:
    mine = [r for r in rows if r["world"] == world and r["system"] == system]
    samples = []
    for r in mine:
        for path in glob.glob(r["samples_dir"] + "/rep*/rank*.csv"):
            samples += [float(x["iteration_ms"]) for x in csv.DictReader(open(path))]
    measured = percentile(samples, 0.5)
    predictions = [(float(r["simulated_before_ms"]) + float(r["simulated_after_ms"])) / 2 for r in mine]
    simulated = statistics.median(predictions)
    round_errors = [(p - float(r["measured_p50_ms"])) / float(r["measured_p50_ms"])
                    for p, r in zip(predictions, mine)]
    errors = " ".join("%+.0f%%" % (100 * e) for e in round_errors)
    apart = " ".join("%.0f%%" % (200 * abs(float(r["simulated_before_ms"]) - float(r["simulated_after_ms"]))
                                 / (float(r["simulated_before_ms"]) + float(r["simulated_after_ms"])))
                     for r in mine)
    for e, r in zip(round_errors, mine):
        if worst is None or abs(e) > abs(worst[0]): worst = (e, r)
    misses = [miss_of(r) for r in mine]
    part = lambda *names: statistics.mean(sum(m[n] for n in names) for m in misses)
    print("| %s | %s | %d | %.1f | %d | %.1f | %+.1f%% | %s | %s | %+.1f ms | %+.1f ms | %+.1f ms | %+.1f ms |" % (
        system, world, len(mine), measured, len(samples), simulated,
        100 * (simulated - measured) / measured, errors, apart, part("forward", "backward", "weight"),
        part("send"), part("waiting"), part("gradient_sum", "step")))
e, r = worst
print("\nThe worst round, %s at %s ranks, round %s (%+.0f%%), action kind by action kind:\n"
      % (r["system"], r["world"], r["round"], 100 * e))
section = open(r["actions"][:-len("json")] + "md").read().split("### ")
print("### " + [s for s in section if s.startswith("p000 / %s " % r["system"])][0].strip())
PY
cat "$OUT/table.md"
echo "results in $OUT"
