#!/usr/bin/env bash
# Today's pipeline schedules end to end: 2 ranks, an MLP, DAPPLE's 1F1B beside interleaved 1F1B
# and ZB-V (two stages per rank), ZB-H1 and a schedule of the user's own in torch's CSV format.
# --dry-run prints every rank's actions; every schedule computes DAPPLE's losses (same model,
# data and seed: a schedule only reorders the work); the zero-bubble ones trace their W apart;
# each rank's measured in-flight peak is its action list's; bad schedules stop with one line
# naming the rank and step, exit 2, nothing written.
source "$(dirname "$0")/common.sh"

# ZB-H1's order for 2 ranks and 4 micro-batches, written by hand with idle cells, as torch's
# _dump_csv lays a schedule out (a row per rank, a column per step).
cat > "$SCRATCH/mine.csv" <<'CSV'
0F0,0F1,,0I0,0W0,0F2,0I1,0W1,0F3,0I2,0W2,0I3,0W3
,1F0,1I0,1F1,1I1,1W0,1F2,1I2,1W1,1F3,1I3,1W2,1W3
CSV
cat > "$SCRATCH/spec.yaml" <<YAML
name: e2e_schedules
output: $SCRATCH/results
model: {name: mlp, batch_size: 4}
run: {world_size: 2, iterations: 3, warmup: 1}
pipeline: {micro_batches: 4}
systems:
  - {name: dapple, kind: pipeline, schedule: dapple, stages: 2}
  - {name: interleaved, kind: pipeline, schedule: interleaved_1f1b, stages: 2, stages_per_rank: 2}
  - {name: zb_h1, kind: pipeline, schedule: zb_h1, stages: 2}
  - {name: zbv, kind: pipeline, schedule: zbv, stages: 2, stages_per_rank: 2}
  - {name: mine, kind: pipeline, schedule_csv: $SCRATCH/mine.csv, stages: 2}
YAML
dry=$("$HARNESS" run "$SCRATCH/spec.yaml" --dry-run) || fail "dry run failed"
expect_contains "$dry" "      rank 0: 0F0 0SEND_F0 0F1 0SEND_F1 3RECV_F0 0F2 0SEND_F2 3F0 3I0 3SEND_B0 3RECV_F1 3W0"
expect_contains "$dry" "      rank 1: 1RECV_F0 1RECV_F1 1F0 1SEND_F0 3RECV_F0 1F1 1SEND_F1 3F0 3RECV_F1 3B0 3SEND_B0"
expect_contains "$dry" "      rank 1: 1RECV_F0 1F0 1RECV_F1 1I0 1SEND_B0 1F1 1I1 1SEND_B1 1RECV_F2 1W0"
[[ ! -e "$SCRATCH/results" ]] || fail "a dry run wrote results"

out=$("$HARNESS" run "$SCRATCH/spec.yaml" 2>"$SCRATCH/stderr") || fail "run failed: $(cat "$SCRATCH/stderr")"
dir=$(ls -d "$SCRATCH"/results/e2e_schedules/*/)
"$PY" - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
raw = lambda system: os.path.join(d, "raw", "p000", system, "rep0")
losses, peaks = {}, {}
for system in ["dapple", "interleaved", "zb_h1", "zbv", "mine"]:
    per_iteration = [0.0] * 3
    for rank in range(2):
        info = json.load(open(os.path.join(raw(system), f"pipeline_rank{rank}.json")))
        assert info["stage"] == rank and info["stages"] == 2, info
        for i, it in enumerate(info["iterations"]):
            per_iteration[i] += it["loss"]
            assert it["actions_start_us"] <= it["compute_start_us"] < it["compute_end_us"], it
        peaks[(system, rank)] = {it["peak_in_flight"] for it in info["iterations"]}
        trace = json.load(open(os.path.join(raw(system), f"trace_rank{rank}.json")))
        cats = {e["cat"] for e in trace["traceEvents"] if e["ph"] == "X"}
        split = system in ("zb_h1", "zbv", "mine")
        assert ("backward_weight" in cats) == split, (system, cats)
        if system in ("interleaved", "zbv"):
            assert info["model_stages"] == 4, info
        if system == "zbv":
            # The V: rank 0 holds the first and the last stage, rank 1 the two in the middle.
            assert info["stages_here"] == ([0, 3] if rank == 0 else [1, 2]), info
            held = "3I0" if rank == 0 else "2I0"
            assert held in info["schedule_order"] and held.replace("I", "W") in info["schedule_order"], info
        if system == "interleaved":
            assert info["stages_here"] == ([0, 2] if rank == 0 else [1, 3]), info
    losses[system] = per_iteration
for system, values in losses.items():
    for a, b in zip(values, losses["dapple"]):
        assert abs(a - b) <= 1e-5 * abs(b), (system, values, losses["dapple"])
# In flight at most: 1F1B p - r; ZB-H1 and the same order from the CSV p on every rank; the
# interleaved and V schedules as their lists count (pipeline_schedule_test.cpp).
assert peaks[("dapple", 0)] == {2} and peaks[("dapple", 1)] == {1}, peaks
for rank in range(2):
    assert peaks[("zb_h1", rank)] == {2} and peaks[("mine", rank)] == {2}, peaks
# pipeline.csv: each schedule's own bubble from its lists at F = I = W, p = 2, m = 4 -- 1F1B
# (p-1)/(m+p-1) = 1/5, interleaved (p-1)/(vm+p-1) = 1/9, ZB-H1 (p-1)/(3m+p-1) = 1/13 -- beside
# the measured one, a share.
import csv
rows = {r["system"]: r for r in csv.DictReader(open(os.path.join(d, "pipeline.csv")))}
for system, want in [("dapple", 1 / 5), ("interleaved", 1 / 9), ("zb_h1", 1 / 13), ("mine", 1 / 13)]:
    assert abs(float(rows[system]["schedule_bubble_fraction"]) - want) < 1e-4, (system, rows[system])
for system in rows:
    assert 0 <= float(rows[system]["pipeline_bubble_fraction"]) < 1, rows[system]
PY
[[ $? == 0 ]] || fail "results did not parse back"

# Bad schedules: one line, exit 2, nothing written.
bad() {  # $1: expected stderr, $2: the system's line
  sed "/kind: pipeline/d; s|^systems:$|systems:\n$2|" "$SCRATCH/spec.yaml" > "$SCRATCH/bad.yaml"
  expect_refused_exactly "$SCRATCH/bad.yaml" "$1" "$SCRATCH/bad_results"
}
f="$SCRATCH/bad.yaml"
printf '0F0,0B0,0F1,0F2,0F3,0B1,0B2,0B3\n1F0,1F1,1B0,1B1,1F2,1B2,1F3,1B3\n' > "$SCRATCH/deadlock.csv"
bad "error: $f:7:5: systems: p: schedule: rank 0, step 1 (0B0): waits for the backward of micro-batch 0 of stage 1 (rank 1), which waits in turn: the schedule deadlocks" \
  "  - {name: p, kind: pipeline, schedule_csv: $SCRATCH/deadlock.csv, stages: 2}"
printf '0F0,0F1,0F2,0F3,0B0,0B1,0B2,0B3\n1F0,1X1\n' > "$SCRATCH/cell.csv"
bad "error: $SCRATCH/cell.csv:2:5: '1X1' is not an action (expected [stage][F|B|I|W|SEND_F|RECV_F|SEND_B|RECV_B][micro-batch], e.g. 1F0)" \
  "  - {name: p, kind: pipeline, schedule_csv: $SCRATCH/cell.csv, stages: 2}"
printf '0F0,0F1,0F2,0B0,0B1,0B2\n1F0,1B0,1F1,1B1,1F2,1B2\n' > "$SCRATCH/three.csv"
bad "error: $f:7:5: systems: p: schedule: $SCRATCH/three.csv schedules 3 micro-batches, the pipeline runs 4 (pipeline.micro_batches)" \
  "  - {name: p, kind: pipeline, schedule_csv: $SCRATCH/three.csv, stages: 2}"
bad "error: $f:7:5: systems: p: schedule: zbv runs exactly 2 stages per rank (stages_per_rank: 1)" \
  "  - {name: p, kind: pipeline, schedule: zbv, stages: 2}"
bad "error: $f:7:5: systems: p: schedule: interleaved_1f1b places the stages on pipeline ranks [0, 1, 0, 1], the layout on [0, 0, 1, 1] (stage c on rank c mod p)" \
  '  - {name: p, kind: pipeline, schedule: interleaved_1f1b, stages: [{layers: "0-1", ranks: [0]}, {layers: "2-2", ranks: [0]}, {layers: "3-4", ranks: [1]}, {layers: "5-5", ranks: [1]}]}'
# A CSV whose rows hold the stages on other ranks than the layout's.
printf '1F0,1F1,1F2,1F3,1B0,1B1,1B2,1B3\n0F0,0F1,0F2,0F3,0B0,0B1,0B2,0B3\n' > "$SCRATCH/swapped.csv"
bad "error: $f:7:5: systems: p: schedule: csv places the stages on pipeline ranks [1, 0], the layout on [0, 1] (the CSV's row r holds rank r's actions)" \
  "  - {name: p, kind: pipeline, schedule_csv: $SCRATCH/swapped.csv, stages: [{layers: \"0-2\", ranks: [0]}, {layers: \"3-5\", ranks: [1]}]}"
printf '0F0,0F1,0F2,0F3,0B0,0B1,0B2,0B3\n' > "$SCRATCH/one_rank.csv"
bad "error: $f:7:5: systems: p: schedule: $SCRATCH/one_rank.csv schedules 1 ranks, the system has stages: 2" \
  "  - {name: p, kind: pipeline, schedule_csv: $SCRATCH/one_rank.csv, stages: 2}"
echo "pipeline schedules e2e: ok"
