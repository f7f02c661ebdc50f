#!/usr/bin/env bash
# `harness profile layers` and `harness profile comm` end to end: hand-computable activation
# and parameter bytes, files the planner imports back, nccl-tests-style rows and a topology.
source "$(dirname "$0")/common.sh"

# MLP 8 -> 256 -> 256 -> 3, batch 4: activations and parameters computed by hand.
"$HARNESS" profile layers --model mlp --batch 4 --input-shape 8 --num-classes 3 \
  --repetitions 3 --warmup 1 --out "$SCRATCH/mlp" > "$SCRATCH/layers.out" || fail "profile layers failed"
expect_contains "$(cat "$SCRATCH/layers.out")" "layers/whole"
"$PY" - "$SCRATCH/mlp" <<'PY'
import json, os, sys
d = sys.argv[1]
p = json.load(open(os.path.join(d, "profile.json")))
got = [(l["name"], l["activation_bytes"], l["parameter_bytes"]) for l in p["layers"]]
want = [("flatten", 4*8*4, 0), ("fc1", 4*256*4, (8*256+256)*4), ("relu1", 4*256*4, 0),
        ("fc2", 4*256*4, (256*256+256)*4), ("relu2", 4*256*4, 0), ("fc3", 4*3*4, (256*3+3)*4)]
assert got == want, got
assert p["input_bytes"] == 4*8*4
assert p["heap"] == "retain", p["heap"]  # the ranks' default heap policy (run.heap)
step = p["whole_model"]["step"]  # the SGD step over the model's parameters
assert 0 < step["p10_ms"] <= step["median_ms"] <= step["p90_ms"], step
for l in p["layers"]:
    assert l["forward"]["p10_ms"] <= l["forward"]["median_ms"] <= l["forward"]["p90_ms"], l
graph = open(os.path.join(d, "graph.txt")).read().splitlines()
assert graph[0].startswith("node0 -- Input0 -- "), graph[0]
assert graph[2].startswith("node2 -- Linear(fc1) -- forward_compute_time="), graph[2]
assert graph[-1] == "\tnode5 -- node6", graph[-1]
PY
# --co-located 3: two more copies profile in lockstep beside the measured one (a barrier
# before every timed run), and are gone afterwards; the measured copy's profile is complete.
"$HARNESS" profile layers --model mlp --batch 4 --input-shape 8 --repetitions 2 --warmup 1 \
  --co-located 3 --out "$SCRATCH/mlp_co" > /dev/null || fail "profile layers --co-located failed"
"$PY" -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["co_located"] == 3, p["co_located"]; assert len(p["layers"]) == 6' \
  "$SCRATCH/mlp_co/profile.json" || fail "co_located not recorded"
! pgrep -f "lockstep-rank" > /dev/null || fail "a co-located copy was left running"
# --stages 0-2,3-5: one process per stage, each timing its layers while the other times its
# own; one profile of the whole model, with each stage's own timings beside it, and each
# stage's forward and backward after idling 2 and 20 ms (--after-idle-ms).
TMPDIR="$SCRATCH" "$HARNESS" profile layers --model mlp --batch 4 --input-shape 8 --num-classes 3 \
  --repetitions 2 --warmup 1 --stages 0-2,3-5 --after-idle-ms 2,20 --out "$SCRATCH/mlp_stages" \
  > "$SCRATCH/stages.out" || fail "profile layers --stages failed"
expect_contains "$(cat "$SCRATCH/stages.out")" "stage layers 3-5"
expect_contains "$(cat "$SCRATCH/stages.out")" "stage layers 3-5 after an idle gap"
"$PY" - "$SCRATCH/mlp/profile.json" "$SCRATCH/mlp_stages/profile.json" <<'PY'
import json, sys
whole, staged = (json.load(open(f)) for f in sys.argv[1:3])
shape = lambda p: [(l["name"], l["activation_bytes"], l["parameter_bytes"]) for l in p["layers"]]
assert shape(staged) == shape(whole), shape(staged)
assert [s["layers"] for s in staged["stages"]] == ["0-2", "3-5"], staged["stages"]
for key in ("forward", "backward", "step"):  # the whole model: the stages' sums
    total = sum(s[key]["median_ms"] for s in staged["stages"])
    assert abs(staged["whole_model"][key]["median_ms"] - total) < 1e-9, (key, total)
assert staged["layers"][0]["backward"]["median_ms"] == 0  # the model's input needs no gradient
assert staged["layers"][3]["backward"]["median_ms"] > 0   # stage 1's received input does
# After-idle timings: per stage (not of the merged whole), gap 0 first; the sleep is not timed
# (this MLP's pass takes well under a millisecond); the default profile (below) has 5 gaps.
assert "after_idle" not in staged
for s in staged["stages"]:
    assert [t["gap_ms"] for t in s["after_idle"]] == [0, 2, 20], s["after_idle"]
    for t in s["after_idle"]:
        assert 0 < t["forward"]["median_ms"] < 10 and 0 < t["backward"]["median_ms"] < 10, t
assert [t["gap_ms"] for t in whole["after_idle"]] == [0, 1, 3, 10, 30, 100], whole["after_idle"]
PY
[[ -s "$SCRATCH/mlp_stages/graph.txt" ]] || fail "no graph.txt from --stages"
! pgrep -f "lockstep-rank" > /dev/null || fail "a stage process was left running"
[[ -z "$(ls -d "$SCRATCH"/harness-stage-profile-* 2>/dev/null)" ]] || fail "the stages' hand-over folder was left"
# --stages 0-2,3-5 --co-located 2 --clock cpu: each stage on two processes in lockstep (a
# 2-stage pipeline with 2 replicas per stage), timed with the process CPU clock.
TMPDIR="$SCRATCH" "$HARNESS" profile layers --model mlp --batch 4 --input-shape 8 --num-classes 3 \
  --repetitions 2 --warmup 1 --stages 0-2,3-5 --co-located 2 --clock cpu \
  --out "$SCRATCH/mlp_stages_co" > "$SCRATCH/stages_co.out" || fail "profile layers --stages --co-located failed"
expect_contains "$(cat "$SCRATCH/stages_co.out")" "process CPU time"
"$PY" - "$SCRATCH/mlp_stages_co/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert (p["co_located"], p["clock"]) == (2, "cpu"), (p["co_located"], p["clock"])
assert [s["layers"] for s in p["stages"]] == ["0-2", "3-5"], p["stages"]
assert len(p["layers"]) == 6 and all(l["forward"]["median_ms"] > 0 for l in p["layers"][1:])
total = sum(s["backward"]["median_ms"] for s in p["stages"])
assert abs(p["whole_model"]["backward"]["median_ms"] - total) < 1e-9, total
PY
! pgrep -f "lockstep-rank" > /dev/null || fail "a stage replica was left running"
# A replica killed mid-profile ends the profile at once (its partner waits in a barrier that
# will never open): exit 1, the process named, the others stopped, the hand-over folder gone.
(set +e; TMPDIR="$SCRATCH" "$HARNESS" profile layers --model mlp --batch 4 --input-shape 8 --num-classes 3 \
  --repetitions 1000000 --warmup 1 --stages 0-2,3-5 --co-located 2 --out "$SCRATCH/mlp_killed" \
  > /dev/null 2> "$SCRATCH/killed.err"; echo $? > "$SCRATCH/killed.rc") &
victim=""
for _ in $(seq 1 300); do
  victim=$(pgrep -f -- "--lockstep-rank 3 " || true)
  [[ -n "$victim" ]] && break
  sleep 0.1
done
[[ -n "$victim" ]] || fail "stage 1's second replica never started"
sleep 1
kill -9 "$victim"
wait
[[ "$(cat "$SCRATCH/killed.rc")" == 1 ]] || fail "a killed replica: exit $(cat "$SCRATCH/killed.rc")"
[[ "$(cat "$SCRATCH/killed.err")" == "error: the process of stage 1 replica 1 failed (signal 9); stopped the profile" ]] || fail "$(cat "$SCRATCH/killed.err")"
! pgrep -f "lockstep-rank" > /dev/null || fail "a replica was left running after the failure"
[[ ! -e "$SCRATCH/mlp_killed/profile.json" ]] || fail "a failed profile wrote profile.json"
[[ -z "$(ls -d "$SCRATCH"/harness-stage-profile-* 2>/dev/null)" ]] || fail "the failed profile's hand-over folder was left"
set +e
"$HARNESS" profile layers --model mlp --batch 4 --input-shape 8 --stages 0-2,4-5 2>"$SCRATCH/err"; code=$?
set -e
[[ $code == 2 ]] || fail "--stages with a gap: exit $code"
[[ "$(cat "$SCRATCH/err")" == "error: --stages '0-2,4-5': stage 1 starts at layer 4, expected 3 (the stages cover the layers in order from 0)" ]] || fail "$(cat "$SCRATCH/err")"
set +e
"$HARNESS" profile layers --model mlp --batch 4 --input-shape 8 --stages 0-2,3-4 2>"$SCRATCH/err"; code=$?
set -e
[[ $code == 2 ]] || fail "--stages short of the model: exit $code"
[[ "$(cat "$SCRATCH/err")" == "error: --stages '0-2,3-4': the stages end at layer 4 but mlp's layers are 0-5" ]] || fail "$(cat "$SCRATCH/err")"
# Without --input-shape the stages are checked against the model built at its default input.
set +e
"$HARNESS" profile layers --model resnet18 --batch 1 --stages 0-7,8-12 2>"$SCRATCH/err"; code=$?
set -e
[[ $code == 2 ]] || fail "--stages short of resnet18: exit $code"
[[ "$(cat "$SCRATCH/err")" == "error: --stages '0-7,8-12': the stages end at layer 12 but resnet18's layers are 0-13" ]] || fail "$(cat "$SCRATCH/err")"
# --layers 3-5: one range alone (here with a co-located copy timing the same range): its
# layers only, and no graph.txt (a range is no model to plan).
"$HARNESS" profile layers --model mlp --batch 4 --input-shape 8 --num-classes 3 --repetitions 2 \
  --warmup 1 --layers 3-5 --co-located 2 --out "$SCRATCH/mlp_range" > "$SCRATCH/range.out" \
  || fail "profile layers --layers failed"
expect_contains "$(cat "$SCRATCH/range.out")" "whole range:"
"$PY" -c 'import json,sys; p=json.load(open(sys.argv[1])); assert [l["name"] for l in p["layers"]] == ["fc2", "relu2", "fc3"] and p["first_layer"] == 3, p["layers"]' \
  "$SCRATCH/mlp_range/profile.json" || fail "--layers 3-5 profiled other layers"
[[ ! -e "$SCRATCH/mlp_range/graph.txt" ]] || fail "--layers wrote a graph.txt"
set +e
"$HARNESS" profile layers --model mlp --batch 4 --input-shape 8 --layers 3-6 2>"$SCRATCH/err"; code=$?
set -e
[[ $code == 2 ]] || fail "--layers past the model: exit $code"
[[ "$(cat "$SCRATCH/err")" == "error: --layers '3-6': mlp's layers are 0-5" ]] || fail "$(cat "$SCRATCH/err")"
# The planner imports it (a 6-layer chain) and plans on it.
"$HARNESS" plan --profile "$SCRATCH/mlp/graph.txt" --pbs 4 --gbs 4,8 --devices 2 --mode compat \
  > "$SCRATCH/plan.out" || fail "planner could not use the profile: $(cat "$SCRATCH/plan.out")"

# Communication: 8 ops (6 collectives, the ping-pong and the reducer's local copy) x 3 sizes
# over 2 ranks,
# and a topology the planner accepts. The top size is 16 MiB so that its time (~20 ms here)
# dwarfs the smallest size's jitter: with 4 MiB at most (~6 ms, 64 KiB's p90 ~2x its p50) the
# send/recv or all-reduce fit's bandwidth came out non-positive in 1 of 4 runs and no
# topology was written.
"$HARNESS" profile comm --world 2 --sizes 64K:16M:x16 --iterations 4 --warmup 1 \
  --out "$SCRATCH/comm" > "$SCRATCH/comm.out" || fail "profile comm failed"
out=$(cat "$SCRATCH/comm.out")
expect_contains "$out" "busbw(GB/s)"
expect_contains "$out" "reducescatter"
"$PY" - "$SCRATCH/comm/comm.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
rows = c["rows"]
ops = ["allgather", "allreduce", "alltoall", "broadcast", "copy", "pingpong", "reducescatter", "sendrecv"]
assert len(rows) == 24, len(rows)
assert sorted({r["op"] for r in rows}) == ops
assert sorted(f["op"] for f in c["fits"]) == ops
for r in rows:
    assert r["samples"] == 4 and r["p50_ms"] > 0, r
    factor = {"allreduce": 1.0, "allgather": 0.5, "reducescatter": 0.5, "alltoall": 0.5}.get(r["op"], 1.0)
    assert abs(r["busbw_gbps"] - r["algbw_gbps"] * factor) < 1e-9, r
    assert abs(r["algbw_gbps"] - r["bytes"] / (r["p50_ms"] * 1e-3) / 1e9) < 1e-9 * r["algbw_gbps"] + 1e-12, r
assert len(c["reference_allreduce"]) == 3
PY
# An op lasts until its last rank is done: each iteration's time is the slowest rank's, and
# every rank's own times are kept beside it (the profiler's entries and the c10d reference's).
"$PY" - "$SCRATCH/comm/comm-raw.json" <<'PY'
import json, sys
raw = json.load(open(sys.argv[1]))
checked = 0
for entry in raw["entries"] + raw["reference"]:
    by_rank = entry["rank_times_ms"]
    assert len(by_rank) == 2 and all(len(t) == 4 for t in by_rank), entry
    assert entry["times_ms"] == [max(t) for t in zip(*by_rank)], entry
    checked += 1
assert checked == 24 + 3, checked
# The ranks' own times differ (two clocks, one op each): the file is not rank 0's copied twice.
assert any(a != b for e in raw["entries"] for a, b in zip(*e["rank_times_ms"]))
PY
[[ -s "$SCRATCH/comm/topology.yaml" ]] || fail "no topology.yaml"
# `handover`: a send call to a receiver that computes, timed on rank 0 alone; a call's time,
# so no bandwidth and no fit. Ping-pong's rows carry its idle send calls. `--after-compute`
# (matrix products before each timed operation) is recorded in both files, 0 where not given.
"$HARNESS" profile comm --world 2 --ops handover,pingpong --sizes 128K --iterations 4 --warmup 1 \
  --after-compute 3 --out "$SCRATCH/handover" > "$SCRATCH/handover.out" ||
  fail "profile comm --ops handover failed"
"$PY" - "$SCRATCH/handover/comm.json" "$SCRATCH/handover/comm-raw.json" <<'PY'
import json, sys
c, raw = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert c["after_compute"] == 3 and raw["after_compute"] == 3, (c["after_compute"], raw["after_compute"])
assert json.load(open(sys.argv[1].replace("handover", "comm")))["after_compute"] == 0
row = next(r for r in c["rows"] if r["op"] == "handover")
assert row["bytes"] == 131072 and row["samples"] == 4 and row["p50_ms"] > 0, row
assert row["algbw_gbps"] == 0 and row["busbw_gbps"] == 0, row
assert [f["op"] for f in c["fits"]] == ["pingpong"], c["fits"]
assert next(r for r in c["rows"] if r["op"] == "pingpong")["send_call_p50_ms"] > 0
entry = next(e for e in raw["entries"] if e["op"] == "handover")
assert all(t == 0 for t in entry["rank_times_ms"][1]), entry  # rank 1 receives, times nothing
assert entry["times_ms"] == entry["rank_times_ms"][0], entry
PY
# Several measurements in one launch of the ranks (how a study probes its emulated links): each
# after `--then` keeps the last one's flags but --out and changes those it names; each file
# holds only its own ops, sizes and iteration counts, and plain c10d's all-reduce beside the
# profiler's unless `--reference off` (what a study's probe says: it reads only the fits).
RANK_PROGRAM="$(dirname "$HARNESS")/harness-rank"
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for r in 0 1; do
  "$RANK_PROGRAM" comm-worker --rank $r --world-size 2 --master-addr 127.0.0.1 --master-port "$port" \
    --ops pingpong --sizes 8,4096 --iterations 3 --warmup 1 --out "$SCRATCH/series1.json" \
    --then --ops allreduce --sizes 1024 --out "$SCRATCH/series2.json" \
    --then --iterations 2 --out "$SCRATCH/series3.json" \
    --then --reference off --out "$SCRATCH/series4.json" > "$SCRATCH/series$r.log" 2>&1 &
done
wait || fail "comm-worker series: $(cat "$SCRATCH"/series?.log)"
"$PY" - "$SCRATCH" <<'PY'
import json, sys
def read(n): return json.load(open(f"{sys.argv[1]}/series{n}.json"))
def shape(raw): return [(e["op"], e["bytes"], len(e["times_ms"])) for e in raw["entries"]]
one, two, three, four = read(1), read(2), read(3), read(4)
assert shape(one) == [("pingpong", 8, 3), ("pingpong", 4096, 3)] and one["reference"] == [], one
assert shape(two) == [("allreduce", 1024, 3)] and len(two["reference"]) == 1, two
assert shape(three) == [("allreduce", 1024, 2)] and (three["iterations"], three["warmup"]) == (2, 1), three
assert len(three["reference"]) == 1 and len(three["reference"][0]["times_ms"]) == 2, three
assert shape(four) == [("allreduce", 1024, 2)] and four["reference"] == [], four
PY
set +e
"$RANK_PROGRAM" comm-worker --rank 0 --world-size 2 --ops allreduce --sizes 8 --reference maybe \
  --out "$SCRATCH/x.json" > /dev/null 2> "$SCRATCH/reference.err"
code=$?
set -e
[[ $code == 1 && "$(cat "$SCRATCH/reference.err")" == "harness comm-worker: --reference: 'maybe' is not on or off" ]] ||
  fail "--reference maybe: exit $code: $(cat "$SCRATCH/reference.err")"
set +e
"$RANK_PROGRAM" comm-worker --rank 0 --world-size 2 --ops allreduce --sizes 8 --out "$SCRATCH/x.json" \
  --then --ops pingpong > /dev/null 2> "$SCRATCH/series.err"
code=$?
set -e
[[ $code == 1 ]] || fail "a measurement without --out: exit $code"
expect_contains "$(cat "$SCRATCH/series.err")" "--ops, --sizes, --out for each measurement needed"
[[ ! -e "$SCRATCH/x.json" ]] || fail "an incomplete series wrote a file"
"$HARNESS" plan --profile "$SCRATCH/mlp/graph.txt" --pbs 4 --gbs 8 --devices 2 \
  --topology "$SCRATCH/comm/topology.yaml" > "$SCRATCH/plan2.out" || fail "planner rejected the topology: $(cat "$SCRATCH/plan2.out")"

# A TorchScript module (made by Debian's python3-torch when present).
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  /usr/bin/python3 - "$SCRATCH/three.pt" <<'PY'
import sys, torch
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
torch.jit.script(m).save(sys.argv[1])
PY
  "$HARNESS" profile layers --torchscript "$SCRATCH/three.pt" --batch 4 --input-shape 8 \
    --repetitions 2 --warmup 1 --out "$SCRATCH/ts" > /dev/null || fail "TorchScript profile failed"
  "$PY" - "$SCRATCH/ts/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
got = [(l["name"], l["activation_bytes"], l["parameter_bytes"]) for l in p["layers"]]
assert got == [("0", 4*16*4, (8*16+16)*4), ("1", 4*16*4, 0), ("2", 4*4*4, (16*4+4)*4)], got
PY
else
  echo "SKIP TorchScript part: python3-torch not installed"
fi

# Bad input: one line, exit 2.
set +e
"$HARNESS" profile layers --model resnet51 --batch 2 2>"$SCRATCH/err"; code=$?
set -e
[[ $code == 2 ]] || fail "unknown model: exit $code"
[[ "$(cat "$SCRATCH/err")" == "error: --model: unknown model 'resnet51' (expected one of: resnet50, resnet18, vgg19, bert, bert_moe, vit, vit_moe, mlp, llama); did you mean 'resnet50'?" ]] || fail "$(cat "$SCRATCH/err")"
# The same through a `kind: profile` spec run by `harness run`, and its validation.
cat > "$SCRATCH/prof.yaml" <<YAML
kind: profile
name: prof_mlp
output: $SCRATCH/specs
profile: {what: layers, model: mlp, batch: 4, repetitions: 2, warmup: 1}
YAML
"$HARNESS" run "$SCRATCH/prof.yaml" > /dev/null || fail "kind: profile spec failed"
[[ -s $(ls -d "$SCRATCH"/specs/prof_mlp/*/)graph.txt ]] || fail "kind: profile wrote no graph.txt"
printf 'kind: profile\nname: x\nprofile: {what: layers, model: mlp, bacth: 4}\n' > "$SCRATCH/bad.yaml"
set +e
"$HARNESS" run "$SCRATCH/bad.yaml" 2>"$SCRATCH/err"; code=$?
set -e
[[ $code == 2 ]] || fail "bad profile spec: exit $code"
[[ "$(cat "$SCRATCH/err")" == "error: $SCRATCH/bad.yaml:3:37: unknown key 'profile.bacth' (did you mean 'batch'?)" ]] || fail "$(cat "$SCRATCH/err")"
echo "PASS profile"
