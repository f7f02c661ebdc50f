#!/usr/bin/env bash
# Faults a long study on a shared cluster meets: a rank killed with SIGKILL mid-point (local
# launcher and mpirun), a busy rendezvous port, and an interrupted run finished with --resume
# (a rank that sleeps forever: rank_failures.sh, which runs alone). Each ends with the
# documented report (rank, host, signal or exit code, stderr tail), leaves no process behind,
# and keeps every finished point's files intact and parseable; with run.on_failure: continue
# the next point still runs.
source "$(dirname "$0")/common.sh"

spec() {  # $1: file, $2: extra run keys
  cat > "$1" <<YAML
name: faults
output: $SCRATCH/results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 4, warmup: 1, $2}
systems: [overlap]
sweep:
  ddp.bucket_mb: [1, 25]
YAML
}
no_process_left() {
  sleep 0.5
  if pgrep -f "harness-rank worker .*$SCRATCH" >/dev/null || pgrep -f "mpirun .*$SCRATCH" >/dev/null; then
    fail "$1: processes left behind: $(pgrep -af "$SCRATCH")"
  fi
}
# points_ok DIR STATUS0 STATUS1: the status of each point's run, and the complete ones parse.
points_ok() {
  "$PY" - "$@" <<'PY'
import csv, json, os, sys
d, want = sys.argv[1], sys.argv[2:]
for point, status in zip(("p000", "p001"), want):
    raw = os.path.join(d, "raw", point, "overlap", "rep0")
    got = json.load(open(os.path.join(raw, "status.json")))["status"] if os.path.exists(raw) else "absent"
    assert got == status, (point, got, status)
    if status == "complete":
        for r in (0, 1):
            rows = list(csv.reader(open(os.path.join(raw, f"rank{r}.csv"))))
            assert rows[0][0] == "iteration" and len(rows) == 5, rows
summary = json.load(open(os.path.join(d, "summary.json")))
counts = [p["systems"][0]["phases"].get("iteration", {}).get("count", 0) for p in summary["points"]]
assert counts == [8 if s == "complete" else 0 for s in want], counts
PY
}
latest() { ls -dt "$SCRATCH"/results/faults/*/ | head -1; }
# Where a run stands, for a failure message: the ranks' files, the harness's output, and each
# process of the run with what its threads wait in (and its main thread's stack where gdb can
# attach).
run_state() {  # raw folder
  local f p
  for f in "$1"/rank*.std* "$1"/launcher*.std*; do
    [[ -e $f ]] && { echo "--- $f"; tail -n 20 "$f"; }
  done
  echo "--- harness stdout"; tail -n 20 "$SCRATCH/out"
  echo "--- harness stderr"; tail -n 20 "$SCRATCH/err"
  for p in $(pgrep -f "$SCRATCH"); do
    echo "--- process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-160)"
    echo "    its threads wait in: $(for t in /proc/"$p"/task/*; do cat "$t/wchan"; echo; done |
      sort | uniq -c | tr -s ' \n' ' ')"
    if command -v gdb >/dev/null; then  # the main thread's stack: where the rank is
      timeout 20 gdb -p "$p" -batch -ex "bt 12" 2>/dev/null | grep -E '^#' | cut -c1-200
    fi
  done
} 2>&1
# Prints the point's raw folder once rank 1 sits in its injected hang there; fails at once when
# the harness ended first (the run failed before it got there), and after 30 s (within the
# spec's stall timeout, so that the ranks are still there to be looked at) with the run's state.
wait_for_hung_rank1() {  # harness pid, point
  local harness_pid=$1 point=$2 raw="" want="HARNESS_FAULT: injecting hang on rank 1"
  for _ in $(seq 1 300); do
    [[ -z $raw ]] && raw=$(ls -d "$SCRATCH"/results/faults/*/raw/"$point"/overlap/rep0 2>/dev/null || true)
    if [[ -n $raw ]] && grep -qF -- "$want" "$raw/rank1.stderr" 2>/dev/null; then
      echo "$raw"
      return 0
    fi
    kill -0 "$harness_pid" 2>/dev/null ||
      fail "the harness ended before rank 1 reached its injected hang in $point:
$(run_state "$raw")"
    sleep 0.1
  done
  fail "rank 1 did not reach its injected hang in $point within 30 s:
$(run_state "$raw")"
}

# 1. kill -9 of rank 1 while it is inside point p000 (held there by an injected hang, so the
#    kill lands mid-point deterministically); on_failure: continue runs p001.
kill_case() {  # $1: launcher
  local launcher=$1
  rm -rf "$SCRATCH/results"
  spec "$SCRATCH/kill.yaml" "stall_timeout_s: 60, on_failure: continue"
  HARNESS_FAULT="rank=1,kind=hang,iteration=2,run=p000/" \
    timeout 120 "$HARNESS" run "$SCRATCH/kill.yaml" --launcher "$launcher" \
    >"$SCRATCH/out" 2>"$SCRATCH/err" &
  local harness_pid=$!
  local raw; raw=$(wait_for_hung_rank1 "$harness_pid" p000)
  local victim; victim=$(pgrep -f "harness-rank worker .*--out $raw.*" | while read -r p; do
    grep -qE '^(RANK|OMPI_COMM_WORLD_RANK)=1$' <(tr '\0' '\n' < /proc/$p/environ) && echo "$p"; done | head -1)
  [[ -n $victim ]] || fail "$launcher: rank 1 not found"
  kill -9 "$victim"
  set +e; wait "$harness_pid"; local code=$?; set -e
  [[ $code == 1 ]] || fail "$launcher kill -9: exit $code (want 1): $(cat "$SCRATCH/err")"
  local err; err=$(cat "$SCRATCH/err")
  expect_contains "$err" "error: run 1/2 (p000 ddp.bucket_mb=1 | overlap) failed: rank 1 killed by signal 9 (Killed)"
  expect_contains "$err" "  rank 1 ran on host $(hostname) (launcher $launcher); run.on_failure: continue"
  expect_contains "$err" "--- last lines of rank 1's stderr ($raw/rank1.stderr) ---"
  expect_contains "$err" "HARNESS_FAULT: injecting hang on rank 1 at iteration 2"
  points_ok "$(latest)" failed complete
  "$PY" - "$(latest)" "$(hostname)" <<'PY'
import json, os, sys
top = json.load(open(os.path.join(sys.argv[1], "status.json")))
f = top["failures"][0]["detail"]["failure"]
assert top["complete"] is False and f["rank"] == 1 and f["host"] == sys.argv[2], top
PY
  no_process_left "$launcher kill -9"
}
kill_case local
if command -v mpirun >/dev/null; then kill_case mpirun; fi

# 1b. kill -9 of the harness itself mid-run (no handler sees SIGKILL): its ranks die with it
#     (they hold PR_SET_PDEATHSIG), none is left running.
rm -rf "$SCRATCH/results"
spec "$SCRATCH/orphan.yaml" "stall_timeout_s: 60"
HARNESS_FAULT="rank=1,kind=hang,iteration=2,run=p000/" \
  "$HARNESS" run "$SCRATCH/orphan.yaml" >"$SCRATCH/out" 2>"$SCRATCH/err" &
harness_pid=$!
raw=$(wait_for_hung_rank1 "$harness_pid" p000)
[[ $(pgrep -fc "harness-rank worker .*$SCRATCH") == 2 ]] || fail "harness SIGKILL: 2 ranks not running"
kill -9 "$harness_pid"
set +e; wait "$harness_pid" 2>/dev/null; set -e
no_process_left "harness SIGKILL"

# 2. a busy port: run.master_port is taken by another program; the run moves to another port.
rm -rf "$SCRATCH/results"
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(120)' >"$SCRATCH/port" &
squatter=$!
trap 'kill $squatter 2>/dev/null || true; rm -rf "$SCRATCH"' EXIT
for _ in $(seq 50); do [[ -s $SCRATCH/port ]] && break; sleep 0.1; done
busy=$(cat "$SCRATCH/port")
spec "$SCRATCH/port.yaml" "master_port: $busy"
timeout 120 "$HARNESS" run "$SCRATCH/port.yaml" >"$SCRATCH/out" 2>"$SCRATCH/err" ||
  fail "busy port: the run failed: $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "note: run.master_port $busy is in use; using port"
points_ok "$(latest)" complete complete
kill $squatter

# 3. Ctrl-C in the middle of p001, then --resume runs p001 only and rewrites the tables.
rm -rf "$SCRATCH/results"
spec "$SCRATCH/resume.yaml" "stall_timeout_s: 60"
HARNESS_FAULT="rank=1,kind=hang,iteration=2,run=p001/" \
  timeout 120 "$HARNESS" run "$SCRATCH/resume.yaml" >"$SCRATCH/out" 2>"$SCRATCH/err" &
harness_pid=$!
wait_for_hung_rank1 "$harness_pid" p001 >/dev/null
kill -INT "$harness_pid"
set +e; wait "$harness_pid"; code=$?; set -e
[[ $code == 130 ]] || fail "interrupt: exit $code (want 130): $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "interrupted: stopped every rank of run 2/2; finished runs kept"
dir=$(latest)
points_ok "$dir" complete interrupted
no_process_left "interrupt"
before=$(cd "$dir/raw/p000" && find . -type f | sort | xargs md5sum)

set +e
"$HARNESS" run "$SCRATCH/resume.yaml" --set run.iterations=5 --resume "$dir" >"$SCRATCH/out" 2>"$SCRATCH/err"
code=$?
set -e
[[ $code == 2 ]] || fail "resume with another spec: exit $code (want 2)"
expect_contains "$(cat "$SCRATCH/err")" "error: --resume $dir: made from another study: point p000 run.iterations was '4', the spec now says '5'"

timeout 120 "$HARNESS" run "$SCRATCH/resume.yaml" --resume "$dir" >"$SCRATCH/out" 2>"$SCRATCH/err" ||
  fail "resume failed: $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/out")" "resume: 1 of 2 run(s) already complete were kept"
after=$(cd "$dir/raw/p000" && find . -type f | sort | xargs md5sum)
[[ $before == "$after" ]] || fail "resume touched the finished point's files"
points_ok "$dir" complete complete
"$PY" -c "import json,sys; t=json.load(open(sys.argv[1])); assert t['complete'] is True, t" "$dir/status.json"
[[ $(ls "$SCRATCH/results/faults" | wc -l) == 1 ]] || fail "resume made a new results folder"
no_process_left "resume"
echo "PASS faults"
