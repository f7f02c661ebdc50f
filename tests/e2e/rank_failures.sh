#!/usr/bin/env bash
# A rank that crashes and a rank that hangs (local launcher; the hang under mpirun too): the
# harness stops the other ranks, names the rank and shows its stderr, keeps the points that
# finished, and exits non-zero without leaving a process behind. A hang is declared once no rank
# has made progress for run.stall_timeout_s: the test runs alone (tests/CMakeLists.txt).
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/spec.yaml" <<YAML
name: faults
output: $SCRATCH/results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 4, warmup: 1, stall_timeout_s: 5}
systems: [overlap, sync]
sweep:
  ddp.bucket_mb: [1, 25]
YAML

check_case() {  # $1: fault kind, $2: expected reason text, then harness run's own flags
  local kind=$1 reason=$2
  shift 2
  rm -rf "$SCRATCH/results"
  set +e
  HARNESS_FAULT="rank=1,kind=$kind,iteration=2,run=p001/overlap" \
    timeout 120 "$HARNESS" run "$SCRATCH/spec.yaml" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
  local code=$?
  set -e
  [[ $code == 1 ]] || fail "$kind: exit code $code (want 1); stderr: $(cat "$SCRATCH/err")"
  local err; err=$(cat "$SCRATCH/err")
  expect_contains "$err" "error: run 3/4 (p001 ddp.bucket_mb=25 | overlap) failed: rank 1 $reason"
  if [[ $kind == crash ]]; then
    expect_contains "$err" "--- last lines of rank 1's stderr"
    expect_contains "$err" "HARNESS_FAULT: injecting crash on rank 1 at iteration 2"
  fi
  local dir; dir=$(ls -d "$SCRATCH"/results/faults/*/)
  "$PY" - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
status = lambda p, s: json.load(open(os.path.join(d, "raw", p, s, "rep0", "status.json")))["status"]
assert status("p000", "overlap") == "complete" and status("p000", "sync") == "complete"
assert status("p001", "overlap") == "failed"
assert not os.path.exists(os.path.join(d, "raw", "p001", "sync"))  # the study stopped
summary = json.load(open(os.path.join(d, "summary.json")))
p0, p1 = summary["points"]
assert all(s["phases"]["iteration"]["count"] == 8 for s in p0["systems"]), p0
assert p1["systems"][0]["complete_runs"] == 0
top = json.load(open(os.path.join(d, "status.json")))
assert top["complete"] is False and top["failures"][0]["detail"]["failure"]["rank"] == 1, top
PY
  expect_contains "$(cat "$SCRATCH/out")" "| overlap (baseline) | 0 | failed |"
  sleep 0.5
  if pgrep -f "harness-rank worker --config $SCRATCH" >/dev/null; then
    fail "$kind: worker processes left behind: $(pgrep -af "harness-rank worker --config $SCRATCH")"
  fi
}

check_case crash "killed by signal 6 (Aborted)"
check_case hang "hung: no progress from any rank for 5 s (run.stall_timeout_s); rank 1 got least far"
# Under mpirun the whole launch is stopped. 10 s, not 5: the clock runs from the launch, through
# loading LibTorch and the rendezvous (0.05 s when healthy), and once in a whole-suite run the
# healthy first point, p000, was declared hung at 5 s with rank 0 still waiting for its peer.
if command -v mpirun >/dev/null; then
  check_case hang "hung: no progress from any rank for 10 s (run.stall_timeout_s); rank 1 got least far" \
    --launcher mpirun --set run.stall_timeout_s=10
  expect_contains "$(cat "$SCRATCH/err")" "  rank 1 ran on host $(hostname) (launcher mpirun); run.on_failure: stop"
  expect_contains "$(cat "$SCRATCH/err")" "HARNESS_FAULT: injecting hang on rank 1 at iteration 2"
  if pgrep -f "mpirun .*$SCRATCH" >/dev/null; then fail "mpirun hang: mpirun left behind"; fi
fi
echo "PASS rank_failures"
