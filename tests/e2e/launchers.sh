#!/usr/bin/env bash
# The same 2-rank study started by the local launcher, by Open MPI's mpirun (on this machine)
# and by hand with torchrun's environment variables (and by torchrun itself when installed):
# every way gives complete results of the same shape. The by-hand ranks write into separate
# folders (no shared file system): rank 1's samples reach rank 0's folder through the store.
# --print-launch lines for mpirun, srun and torchrun are checked word for word.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/spec.yaml" <<YAML
name: launchers
output: $SCRATCH/results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 4, warmup: 1, stall_timeout_s: 60}
systems: [overlap]
YAML

# shape DIR: "<rows of rank0.csv> <rows of rank1.csv> <header>" of the one run in DIR.
shape() {
  "$PY" - "$1" <<'PY'
import csv, sys, os
d = sys.argv[1]
rows = []
for r in (0, 1):
    with open(os.path.join(d, f"rank{r}.csv")) as f:
        table = list(csv.reader(f))
    header = ",".join(table[0])
    assert all(float(x) >= 0 for row in table[1:] for x in row), table
    rows.append(str(len(table) - 1))
print(" ".join(rows), header)
PY
}
check_summary() {  # results folder: one complete point, 8 pooled samples
  "$PY" - "$1" <<'PY'
import json, sys, os
d = sys.argv[1]
s = json.load(open(os.path.join(d, "summary.json")))
(p,) = s["points"]
(sys_,) = p["systems"]
assert sys_["complete_runs"] == 1 and sys_["phases"]["iteration"]["count"] == 8, sys_
assert json.load(open(os.path.join(d, "status.json")))["complete"] is True
PY
}

# 1. local
"$HARNESS" run "$SCRATCH/spec.yaml" >"$SCRATCH/local.out" 2>"$SCRATCH/local.err" ||
  fail "local run failed: $(cat "$SCRATCH/local.err")"
LOCAL=$(ls -d "$SCRATCH"/results/launchers/*/ | head -1)
check_summary "$LOCAL"
local_shape=$(shape "$LOCAL/raw/p000/overlap/rep0")
[[ $local_shape == "4 4 iteration,forward_ms,backward_ms,step_ms,iteration_ms" ]] ||
  fail "local shape: $local_shape"

# 2. --print-launch: the launchers' own command lines
root_flag=""; [[ $(id -u) == 0 ]] && root_flag=" --allow-run-as-root"
plan=$("$HARNESS" run "$SCRATCH/spec.yaml" --launcher mpirun --print-launch)
expect_contains "$plan" "launch plan (mpirun), 1 run(s)"
expect_contains "$plan" "  mpirun --oversubscribe --bind-to none --tag-output$root_flag -np 2 -x OMP_NUM_THREADS=1 $HARNESS_RANK worker --rank-from openmpi --config-json '{"
expect_contains "$plan" "--out RESULTS_DIR/raw/p000/overlap/rep0 --rendezvous tcp --master-addr 127.0.0.1 --master-port 29500 --emit-results"
plan=$("$HARNESS" run "$SCRATCH/spec.yaml" --launcher slurm --hosts n1:1,n2:1 --print-launch)
expect_contains "$plan" "  srun --ntasks=2 --cpus-per-task=1 --distribution=block --kill-on-bad-exit=1 --label --nodes=2 --nodelist=n1,n2 --export=ALL,OMP_NUM_THREADS=1 $HARNESS_RANK worker --rank-from slurm"
plan=$("$HARNESS" run "$SCRATCH/spec.yaml" --launcher torchrun --hosts n1:4,n2:4 --print-launch)
expect_contains "$plan" "  [on n1] torchrun --nnodes=2 --nproc_per_node=1 --node_rank=0 --master_addr=n1 --master_port=29500 --max_restarts=0 --tee=3 --no_python $HARNESS_RANK worker --rank-from torchrun"
expect_contains "$plan" "  [on n2] torchrun --nnodes=2 --nproc_per_node=1 --node_rank=1 --master_addr=n1"
set +e
"$HARNESS" run "$SCRATCH/spec.yaml" --launcher torchrun --hosts n1:1,n2:1 >"$SCRATCH/tr.out" 2>"$SCRATCH/tr.err"
code=$?
set -e
[[ $code == 2 ]] || fail "--launcher torchrun on other hosts without --print-launch: exit $code (want 2)"
expect_contains "$(cat "$SCRATCH/tr.err")" "error: --launcher torchrun: on other hosts torchrun is started by you or your scheduler"

# 3. mpirun, for real
if command -v mpirun >/dev/null; then
  "$HARNESS" run "$SCRATCH/spec.yaml" --launcher mpirun >"$SCRATCH/mpi.out" 2>"$SCRATCH/mpi.err" ||
    fail "mpirun run failed: $(cat "$SCRATCH/mpi.err")"
  MPI=$(ls -d "$SCRATCH"/results/launchers/*/ | grep -v "^$LOCAL\$" | head -1)
  check_summary "$MPI"
  raw="$MPI/raw/p000/overlap/rep0"
  [[ $(shape "$raw") == "$local_shape" ]] || fail "mpirun shape: $(shape "$raw")"
  expect_contains "$(cat "$raw/rank1.stdout")" "rank identity: rank=1 world=2 local_rank=1"
  expect_contains "$(cat "$raw/rank1.stdout")" "source=openmpi"
  expect_contains "$(cat "$raw/launcher.stdout")" "[1,0]<stdout>:@harness-file rank1.csv"
  [[ $("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['launcher'])" "$raw/status.json") == mpirun ]] ||
    fail "status.json does not name the mpirun launcher"
else
  echo "note: mpirun not installed; the mpirun case is skipped (scripts/install-deps.sh installs it)"
fi

# 4. by hand, torchrun's variables, one folder per "host"
cfg="$LOCAL/raw/p000/overlap/rep0/config.json"
port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pids=()
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    timeout 120 "$HARNESS_RANK" worker --config "$cfg" --out "$SCRATCH/hand/host$r" \
    >"$SCRATCH/hand$r.out" 2>"$SCRATCH/hand$r.err" &
  pids+=($!)
done
for r in 0 1; do
  wait "${pids[$r]}" || fail "by-hand rank $r failed: $(cat "$SCRATCH/hand$r.err")"
done
expect_contains "$(cat "$SCRATCH/hand1.out")" "source=torchrun"
[[ $(shape "$SCRATCH/hand/host0") == "$local_shape" ]] || fail "by-hand shape: $(shape "$SCRATCH/hand/host0")"
[[ ! -e $SCRATCH/hand/host1/rank0.csv ]] || fail "rank 0's samples went to rank 1's folder"

# 5. torchrun itself, started by the harness: one agent here, which serves the store; the ranks
#    join it as clients and their lines come back prefixed "[default<r>]:". The build's own
#    torchrun (beside its torch's Python), where it works: Debian 12's python3-torch 1.13
#    torchrun fails at start on Python 3.11 (Std.from_str).
torchrun_bin=$(dirname "$("$HARNESS_RANK" version | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["torch_python"])')")/torchrun
if [[ ! -x $torchrun_bin ]]; then
  echo "note: no torchrun beside the build's torch; the real torchrun case is skipped"
elif ! TMPDIR="$SCRATCH" timeout 60 "$torchrun_bin" --nnodes=1 --nproc_per_node=1 --no_python true \
  >/dev/null 2>&1; then
  echo "note: $torchrun_bin cannot start a trivial job here; the real torchrun case is skipped"
else
  # Its temp folder is the test's own, so that what torchrun leaves there can be seen: nothing,
  # since the harness gives it a log folder in the run's folder and removes that at the end
  # (torchrun's default, /tmp/torchelastic_<random>, stays behind after every launch).
  mkdir "$SCRATCH/tmp"
  TMPDIR="$SCRATCH/tmp" "$HARNESS" run "$SCRATCH/spec.yaml" --launcher torchrun \
    --set "output=$SCRATCH/torchrun" >"$SCRATCH/torchrun.out" 2>"$SCRATCH/torchrun.err" ||
    fail "torchrun failed: $(tail -20 "$SCRATCH/torchrun.err")"
  TR=$(ls -d "$SCRATCH"/torchrun/launchers/*/)
  check_summary "$TR"
  raw="$TR/raw/p000/overlap/rep0"
  [[ $(shape "$raw") == "$local_shape" ]] || fail "torchrun shape: $(shape "$raw")"
  expect_contains "$(cat "$raw/rank1.stdout")" "source=torchrun"
  expect_contains "$(cat "$raw/launcher.stdout")" "[default1]:"
  [[ -z $(ls -A "$SCRATCH/tmp") ]] || fail "torchrun left in the temp folder: $(ls -A "$SCRATCH/tmp")"
  [[ ! -e $raw/torchrun-logs ]] || fail "the torchrun log folder was not removed"
  plan=$("$HARNESS" run "$SCRATCH/spec.yaml" --launcher torchrun --print-launch)
  expect_contains "$plan" "torchrun --log_dir=RESULTS_DIR/raw/p000/overlap/rep0/torchrun-logs --nnodes=1"
fi

sleep 0.3
if pgrep -f "harness-rank worker .*$SCRATCH" >/dev/null; then
  fail "worker processes left behind: $(pgrep -af "harness-rank worker .*$SCRATCH")"
fi
echo "PASS launchers"
