#!/usr/bin/env bash
# A real Slurm (munge, slurmctld, two slurmd's) on two emulated machines joined by a 1 Gbit/s
# link, with no shared file system (scripts/emulated-slurm.sh), and studies run through it with `salloc ... harness run
# --launcher slurm`: a DDP study and a DAPPLE pipeline study across both nodes; the private
# view of the results folder itself; a rank ended by Slurm (its step cancelled, its node set
# down) failing the run with a report that names it and its host, and leaving no process; a
# study whose allocation was revoked finished with --resume; the same study as a batch job; the
# script itself stopped (SIGTERM, SIGKILL) leaving nothing behind. Skips (77) where the cluster
# cannot be built here (not root, no Slurm, no namespaces), saying why.
source "$(dirname "$0")/common.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)

if [[ ${1:-} != --inside ]]; then
  # Bad options: one line, exit 2, before anything is built.
  for bad in "--nodes|error: --nodes: needs a value" "--nodes 0 -- true|error: --nodes: expected 1..64, got '0'" \
    "--private $SCRATCH/none -- true|error: --private: $SCRATCH/none is not a folder"; do
    set +e
    # shellcheck disable=SC2086
    bash "$repo/scripts/emulated-slurm.sh" ${bad%%|*} >/dev/null 2>"$SCRATCH/bad.err"
    code=$?
    set -e
    [[ $code == 2 && $(wc -l <"$SCRATCH/bad.err") == 1 ]] || fail "${bad%%|*}: exit $code: $(cat "$SCRATCH/bad.err")"
    expect_contains "$(cat "$SCRATCH/bad.err")" "${bad#*|}"
  done
  mkdir -p "$SCRATCH/results"
  set +e
  bash "$repo/scripts/emulated-slurm.sh" --nodes 2 --bandwidth 1gbit --harness "$HARNESS" \
    --private "$SCRATCH/results" -- \
    env HARNESS="$HARNESS" SCRATCH_OUTER="$SCRATCH" bash "$0" --inside 2>"$SCRATCH/cluster.err"
  code=$?
  set -e
  if [[ $code == 77 ]]; then
    echo "SKIP: $(grep 'unavailable here' "$SCRATCH/cluster.err" | head -1)"
    exit 77
  fi
  [[ $code == 0 ]] || fail "inside the cluster (exit $code): $(tail -30 "$SCRATCH/cluster.err")"
  expect_contains "$(cat "$SCRATCH/cluster.err")" "emulated-slurm: 2 node(s) n1..n2 idle"
  # Everything the cluster made is gone: its namespaces, daemons and every rank.
  # (The script's namespaces end in -ctl and -n<k>; the harness's own in -m<k>, -sw, -probe.)
  [[ -z $(ip netns list | grep -E "^harness-[0-9]+-(ctl|n[0-9]+)( |$)" || true) ]] ||
    fail "namespaces left: $(ip netns list)"
  # (Its daemons name its state folder, /run/harness-slurm.*: a host's own Slurm or munge
  # services, which installing the packages may have started, are not its.)
  left=$(ps -eo stat=,args= | awk '$1 !~ /^Z/' | grep -E "harness-slurm\.|harness-rank.*$SCRATCH" |
    grep -v grep || true)
  [[ -z $left ]] || fail "processes left after the cluster went down: $left"

  # The script stopped while a job step runs on both nodes, by SIGTERM (its trap takes the
  # cluster down) and by SIGKILL (no trap runs: its reaper, told by a parent-death signal,
  # removes the machines and every process in them, the step's tasks included).
  for signal in TERM KILL; do
    bash "$repo/scripts/emulated-slurm.sh" --nodes 2 -- srun -N 2 -n 2 sleep 61.234 \
      2>"$SCRATCH/killed.err" &
    script=$!
    for _ in $(seq 100); do
      [[ $(pgrep -fc "bin/sleep 61.234" || true) == 2 ]] && break
      sleep 0.1
    done
    [[ $(pgrep -fc "bin/sleep 61.234" || true) == 2 ]] ||
      fail "$signal: the step never ran: $(cat "$SCRATCH/killed.err")"
    kill "-$signal" "$script"
    set +e
    wait "$script" 2>/dev/null
    code=$?
    set -e
    [[ $signal == KILL || $code == 143 ]] || fail "SIGTERM: the script exited $code (want 143)"
    for _ in $(seq 50); do
      [[ -z $(ip netns list | grep "^harness-$script-" || true) ]] && break
      sleep 0.1
    done
    [[ -z $(ip netns list | grep "^harness-$script-" || true) ]] ||
      fail "$signal: namespaces left: $(ip netns list)"
    [[ -z $(pgrep -f "bin/sleep 61.234" || true) ]] || fail "$signal: the step's tasks outlived the cluster"
    left=$(ps -eo stat=,args= | awk '$1 !~ /^Z/' | grep -E "harness-slurm\." | grep -v grep || true)
    [[ -z $left ]] || fail "$signal: processes left after the script was stopped: $left"
  done
  echo "slurm cluster e2e: ok"
  exit 0
fi

# --- On the login node, with SLURM_CONF set ---------------------------------------------------
# One scratch folder, the outer shell's: this one's own goes now, and its removal with it.
rm -rf "$SCRATCH"
trap - EXIT
SCRATCH=$SCRATCH_OUTER
results=$SCRATCH/results
alive_ranks() {  # this test's ranks (their --out is in its folder) that are not zombies
  ps -eo stat=,args= | awk '$1 !~ /^Z/' | grep "harness-rank worker" | grep -F "$results" |
    grep -v grep || true
}
run_folder() { ls -d "$results/$1"/*/ | tail -1; }

# 1. The nodes' own view: a file the host wrote is not on the nodes, one a node wrote is on no
# other machine.
echo "host" > "$results/written-on-the-host"
seen=$(srun -N 2 -n 2 --label sh -c 'ls -A '"$results"'; hostname > '"$results"'/$(hostname)')
[[ $seen == "" ]] || fail "the nodes see the host's results folder: $seen"
seen=$(srun -N 2 -n 2 --label sh -c 'ls -A '"$results" | sort)
[[ $seen == $'0: n1\n1: n2' ]] || fail "the nodes share a folder: $seen"
[[ $(ls -A "$results") == "written-on-the-host" ]] || fail "a node wrote the host's folder"
rm "$results/written-on-the-host"

# Each node's link shaped as the harness shapes its own machines' (harness shape-link).
qdisc=$(srun -N 1 -w n2 tc qdisc show dev eth0)
expect_contains "$qdisc" "tbf 1: root"
expect_contains "$qdisc" "rate 1Gbit burst 125000b lat 100ms"

# 2. DDP and a DAPPLE pipeline across the two nodes.
cat > "$SCRATCH/study.yaml" <<YAML
name: slurm_study
output: $results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 4, warmup: 1, stall_timeout_s: 60}
pipeline: {micro_batches: 2}
systems:
  - overlap
  - {name: dapple, kind: pipeline, schedule: dapple, stages: 2}
YAML
salloc -N 2 -n 2 "$HARNESS" run "$SCRATCH/study.yaml" --launcher slurm --hosts n1:1,n2:1 \
  >"$SCRATCH/study.out" 2>"$SCRATCH/study.err" || fail "study under Slurm: $(tail -20 "$SCRATCH/study.err")"
expect_contains "$(cat "$SCRATCH/study.out")" "## Pipeline study"
"$PY" - "$(run_folder slurm_study)" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
summary = json.load(open(os.path.join(d, "summary.json")))
systems = {s["name"]: s for s in summary["points"][0]["systems"]}
for name in ("overlap", "dapple"):
    s = systems[name]
    assert s["complete_runs"] == 1 and s["phases"]["iteration"]["count"] == 8, (name, s)
    raw = os.path.join(d, "raw", "p000", name, "rep0")
    for rank, host in ((0, "n1"), (1, "n2")):
        first = open(os.path.join(raw, f"rank{rank}.stdout")).readline()
        assert f"rank={rank} " in first and f"host={host} " in first, first
        assert "source=slurm" in first and f"gloo=10.98.0.{rank + 1}" in first, first
        assert len(list(csv.DictReader(open(os.path.join(raw, f"rank{rank}.csv"))))) == 4
    status = json.load(open(os.path.join(raw, "status.json")))
    assert status["status"] == "complete" and status["launcher"] == "slurm", status
for rank in (0, 1):
    info = json.load(open(os.path.join(d, "raw", "p000", "dapple", "rep0", f"pipeline_rank{rank}.json")))
    assert info["stage"] == rank and len(info["iterations"]) == 4, info
rows = list(csv.DictReader(open(os.path.join(d, "pipeline.csv"))))
assert [r["system"] for r in rows] == ["overlap", "dapple"], rows
PY
[[ $? == 0 ]] || fail "the study's results did not parse back"
[[ -z $(alive_ranks) ]] || fail "ranks left after the study: $(alive_ranks)"

# 2b. The same DDP study as a batch job: the harness itself runs on n1 (its results stay in n1's
# private folder; its tables reach the job's output file).
sbatch --wait -N 2 -n 2 -o "$SCRATCH/batch.out" --wrap "$HARNESS run $SCRATCH/study.yaml \
  --launcher slurm --hosts n1:1,n2:1 --set 'systems=[overlap]'" >/dev/null ||
  fail "sbatch: $(tail -5 "$SCRATCH/batch.out")"
expect_contains "$(cat "$SCRATCH/batch.out")" "| overlap (baseline) |"
expect_contains "$(cat "$SCRATCH/batch.out")" "results written to $results/slurm_study/"
[[ $(ls "$results/slurm_study" | wc -l) == 1 ]] || fail "the batch job wrote the host's folder"

# 3. A rank ended by Slurm: rank 1 hangs at iteration 2 (so the run is alive and in step), then
# Slurm ends it. Waits for rank 1's first iterations in its output, which the harness splits
# into the run's folder as they arrive.
cat > "$SCRATCH/long.yaml" <<YAML
name: slurm_failure
output: $results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 6, warmup: 1, stall_timeout_s: 120}
systems: [overlap]
YAML
ended_by_slurm() {  # $1: how ("step": scancel JOB.0, "node": n2 set down)
  rm -rf "$results/slurm_failure"
  HARNESS_FAULT=rank=1,kind=hang,iteration=2 salloc -N 2 -n 2 "$HARNESS" run "$SCRATCH/long.yaml" \
    --launcher slurm --hosts n1:1,n2:1 >"$SCRATCH/$1.out" 2>"$SCRATCH/$1.err" &
  local harness=$! stdout=""
  for _ in $(seq 300); do
    stdout=$(ls "$results"/slurm_failure/*/raw/p000/overlap/rep0/rank1.stdout 2>/dev/null || true)
    [[ -n $stdout ]] && grep -q "iteration 1 done" "$stdout" && break
    sleep 0.1
  done
  grep -q "iteration 1 done" "$stdout" || fail "$1: rank 1 never reached iteration 1"
  local job
  job=$(squeue -h -o %i | head -1)
  if [[ $1 == step ]]; then
    scancel "$job.0"
  else
    scontrol update nodename=n2 state=down reason=e2e-test
  fi
  set +e
  wait "$harness"
  local code=$?
  set -e
  [[ $code == 1 ]] || fail "$1: harness exit $code (want 1): $(tail -3 "$SCRATCH/$1.err")"
  expect_contains "$(cat "$SCRATCH/$1.err")" "error: run 1/1 (p000 default | overlap) failed: rank "
  expect_contains "$(cat "$SCRATCH/$1.err")" "(launcher slurm)"
  "$PY" - "$(run_folder slurm_failure)" <<'PY'
import json, os, sys
status = json.load(open(os.path.join(sys.argv[1], "raw", "p000", "overlap", "rep0", "status.json")))
assert status["status"] == "failed" and status["failure"]["rank"] in (0, 1), status
PY
  for _ in $(seq 50); do [[ -z $(alive_ranks) ]] && break; sleep 0.1; done
  [[ -z $(alive_ranks) ]] || fail "$1: ranks left: $(alive_ranks)"
}
ended_by_slurm step
expect_contains "$(cat "$SCRATCH/step.err")" "ran on host n"
ended_by_slurm node
expect_contains "$(cat "$SCRATCH/node.err")" "failed: rank 1 its node n2 failed (srun: Node failure)"
expect_contains "$(cat "$SCRATCH/node.err")" "rank 1 ran on host n2"
# Back into service (ReturnToService=2 may already have brought it back: then it is idle).
scontrol update nodename=n2 state=resume 2>/dev/null || true
for _ in $(seq 100); do
  [[ $(sinfo -h -N -t idle -o %N | sort -u | wc -l) == 2 ]] && break
  sleep 0.1
done

# 4. --resume after an allocation revoked in the study's second run: the first run is kept as
# it was, the second run again, and the study completes.
sed -e 's/name: slurm_failure/name: slurm_resume/' -e 's/iterations: 6/iterations: 4/' \
  -e 's/systems: \[overlap\]/systems: [overlap, {name: later, kind: ddp, mode: overlap}]/' "$SCRATCH/long.yaml" \
  >"$SCRATCH/resume.yaml"
HARNESS_FAULT=rank=1,kind=hang,iteration=2,run=later salloc -N 2 -n 2 "$HARNESS" run \
  "$SCRATCH/resume.yaml" --launcher slurm --hosts n1:1,n2:1 >"$SCRATCH/r1.out" 2>"$SCRATCH/r1.err" &
harness=$!
for _ in $(seq 300); do
  stdout=$(ls "$results"/slurm_resume/*/raw/p000/later/rep0/rank1.stdout 2>/dev/null || true)
  [[ -n $stdout ]] && grep -q "iteration 1 done" "$stdout" && break
  sleep 0.1
done
scancel "$(squeue -h -o %i | head -1)"
set +e
wait "$harness"
code=$?
set -e
[[ $code != 0 ]] || fail "a revoked allocation ended the study with exit 0"
folder=$(run_folder slurm_resume)
kept=$(stat -c %Y "$folder/raw/p000/overlap/rep0/rank0.csv")
salloc -N 2 -n 2 "$HARNESS" run "$SCRATCH/resume.yaml" --launcher slurm --hosts n1:1,n2:1 \
  --resume "$folder" >"$SCRATCH/r2.out" 2>"$SCRATCH/r2.err" ||
  fail "--resume under Slurm: $(tail -3 "$SCRATCH/r2.err")"
expect_contains "$(cat "$SCRATCH/r2.out")" "resuming: $folder"
[[ $(stat -c %Y "$folder/raw/p000/overlap/rep0/rank0.csv") == "$kept" ]] ||
  fail "--resume ran the complete run again"
"$PY" - "$folder" <<'PY'
import json, os, sys
d = sys.argv[1]
assert json.load(open(os.path.join(d, "status.json")))["complete"] is True
systems = json.load(open(os.path.join(d, "summary.json")))["points"][0]["systems"]
assert [s["complete_runs"] for s in systems] == [1, 1], systems
PY
[[ $? == 0 ]] || fail "the resumed study is not complete"
[[ -z $(alive_ranks) ]] || fail "ranks left: $(alive_ranks)"
