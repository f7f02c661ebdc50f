#!/usr/bin/env bash
# A rank that crashes and a rank that hangs (local launcher; the hang under mpirun too): the
# harness stops the other ranks, names the rank and shows its stderr, keeps the points that
# finished, and exits non-zero without leaving a process behind. A hang is declared once no rank
# has made progress for run.stall_timeout_s, and the clock runs from the launch, through loading
# LibTorch and the rendezvous (0.05 s when healthy): 10 s, 20 s under mpirun, so that the
# healthy points are not declared hung on a busy machine (beside the other tests; run alone at
# 5 s and 10 s, the healthy first point under mpirun was declared hung once at 5 s, with rank 0
# still waiting for its peer). The three cases run at once, each in a folder of its own: most of
# their time is the hangs' stall timeouts, and their two and four ranks leave the cores idle.
source "$(dirname "$0")/common.sh"

# check_case NAME KIND REASON [harness run's own flags]: the fault KIND injected in a study of
# its own under $SCRATCH/NAME; fails the test (in its subshell) unless the run ends as it should.
check_case() {
  local name=$1 kind=$2 reason=$3
  shift 3
  local case_dir=$SCRATCH/$name
  mkdir -p "$case_dir"
  cat > "$case_dir/spec.yaml" <<YAML
name: faults
output: $case_dir/results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 4, warmup: 1, stall_timeout_s: 10}
systems: [overlap, sync]
sweep:
  ddp.bucket_mb: [1, 25]
YAML
  set +e
  HARNESS_FAULT="rank=1,kind=$kind,iteration=2,run=p001/overlap" \
    timeout 120 "$HARNESS" run "$case_dir/spec.yaml" "$@" >"$case_dir/out" 2>"$case_dir/err"
  local code=$?
  set -e
  [[ $code == 1 ]] || fail "$name: exit code $code (want 1); stderr: $(cat "$case_dir/err")"
  local err; err=$(cat "$case_dir/err")
  expect_contains "$err" "error: run 3/4 (p001 ddp.bucket_mb=25 | overlap) failed: rank 1 $reason"
  if [[ $kind == crash ]]; then
    expect_contains "$err" "--- last lines of rank 1's stderr"
    expect_contains "$err" "HARNESS_FAULT: injecting crash on rank 1 at iteration 2"
  fi
  local dir; dir=$(ls -d "$case_dir"/results/faults/*/)
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
  expect_contains "$(cat "$case_dir/out")" "| overlap (baseline) | 0 | failed |"
  sleep 0.5
  local workers="harness-rank worker --config $case_dir/"
  if pgrep -f "$workers" >/dev/null; then
    fail "$name: worker processes left behind: $(pgrep -af "$workers")"
  fi
  if pgrep -f "mpirun .*$case_dir/" >/dev/null; then fail "$name: mpirun left behind"; fi
}

cases=()
check_case crash crash "killed by signal 6 (Aborted)" & cases+=($!)
check_case hang hang \
  "hung: no progress from any rank for 10 s (run.stall_timeout_s); rank 1 got least far" &
cases+=($!)
# Under mpirun the whole launch is stopped.
if command -v mpirun >/dev/null; then
  (
    check_case mpirun_hang hang \
      "hung: no progress from any rank for 20 s (run.stall_timeout_s); rank 1 got least far" \
      --launcher mpirun --set run.stall_timeout_s=20
    err=$(cat "$SCRATCH/mpirun_hang/err")
    expect_contains "$err" \
      "  rank 1 ran on host $(hostname) (launcher mpirun); run.on_failure: stop"
    expect_contains "$err" "HARNESS_FAULT: injecting hang on rank 1 at iteration 2"
  ) &
  cases+=($!)
fi
failed=0
for pid in "${cases[@]}"; do wait "$pid" || failed=1; done
((failed == 0)) || fail "a case failed (its line above)"
echo "PASS rank_failures"
