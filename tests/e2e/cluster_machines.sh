#!/usr/bin/env bash
# Open MPI and torchrun across emulated machines (issue 34): `--launcher mpirun` with
# `cluster.machines: 2` runs mpirun on machine 0 and Open MPI's daemon on machine 1 through
# `harness enter-machine` (its rsh agent); `--launcher torchrun` one torchrun agent on each
# machine through it; so the wire-up and the ranks' Gloo traffic cross the shaped link. Every
# machine sees the run's folder as an empty folder of its own (a tmpfs in a mount namespace):
# the results arrive whole through rank 0's stream and the store. Checks the ranks' hosts and
# addresses, the private mounts of a live rank, the launch line, the refusals, the harness
# killed mid-run, and that no namespace or rank is left. Skips (77) without root, mpirun or the
# qdiscs, saying why. The links are not probed (cluster.network.probe: false; the probe is
# emulated_links.sh's and emulated_cluster.sh's): 10 s saved for each of the four studies.
source "$(dirname "$0")/common.sh"

[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (network and mount namespaces)"; exit 77; }
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (apt install openmpi-bin)"; exit 77; }

cat > "$SCRATCH/spec.yaml" <<YAML
name: mpirun_machines
output: $SCRATCH/results
model: {name: mlp, batch_size: 8}
run: {world_size: 4, iterations: 30, warmup: 1, stall_timeout_s: 60}
pipeline: {micro_batches: 2}
cluster: {machines: 2, network: {inter_machine: {bandwidth: 300mbit}, probe: false}}
systems:
  - overlap
  - {name: dapple, kind: pipeline, schedule: dapple, stages: 2}
YAML

# The launch line: mpirun on machine 0 through enter-machine, enter-machine as its agent.
plan=$("$HARNESS" run "$SCRATCH/spec.yaml" --launcher mpirun --print-launch)
line=$(grep -m1 "enter-machine" <<<"$plan") || fail "no enter-machine in: $plan"
"$PY" - "$line" "$HARNESS" <<'PY'
import re, shlex, sys
words, harness = shlex.split(sys.argv[1]), sys.argv[2]
assert words[0] == harness and words[1] == "enter-machine", words[:2]
machines = words[words.index("--machines") + 1].split(",")
assert [m.split("=")[0] for m in machines] == ["10.99.0.1", "10.99.0.2"], machines
assert all(re.fullmatch(r"harness-\d+-m[01]", m.split("=")[1]) for m in machines), machines
assert words[words.index("--private") + 1] == "RESULTS_DIR/raw/p000/overlap/rep0", words
mpirun = words.index("mpirun")
assert words[mpirun - 1] == "10.99.0.1", words[mpirun - 1]
agent = words[words.index("plm_rsh_agent") + 1].split(" ")
assert agent[:2] == [harness, "enter-machine"] and agent[-1] == "--shell", agent
hosts = words[words.index("--host") + 1]
assert hosts == "10.99.0.1:2,10.99.0.2:2", hosts
assert words[words.index("--master-addr") + 1] == "10.99.0.1"
PY
[[ $? == 0 ]] || fail "launch line: $line"

# Refusals: one line, exit 2, nothing launched.
expect_refused "$SCRATCH/spec.yaml" "the emulated machines are mpirun's hosts; drop --hosts" \
  --launcher mpirun --hosts a:2,b:2
expect_refused "$SCRATCH/spec.yaml" "for Slurm on emulated machines run the study inside scripts/emulated-slurm.sh" \
  --launcher slurm
[[ ! -e "$SCRATCH/results" ]] || fail "a refused run wrote results"
# shape-link (what scripts/emulated-slurm.sh shapes its nodes with): a bad quantity is one line,
# exit 2, before any namespace is touched.
set +e
"$HARNESS" shape-link --netns "harness-$$-none" --bandwidth fast >/dev/null 2>"$SCRATCH/err"
code=$?
set -e
[[ $code == 2 && $(wc -l <"$SCRATCH/err") == 1 ]] || fail "shape-link --bandwidth fast: exit $code: $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "error: --bandwidth: 'fast' is not a rate like 100mbit or 1gbit"

# What follows builds machines: where the kernel lacks the links' qdiscs, skipped (77).
skip_without_emulated_machines 300mbit

# The harness killed outright (SIGKILL, no handler) while rank 1 hangs: mpirun dies with it
# (a parent-death signal), the ranks with whoever started them (mpirun on machine 0, Open MPI's
# daemon on machine 1), the daemon without its mpirun. Its namespaces stay until the next
# harness that builds machines removes them (the study below).
HARNESS_FAULT=rank=1,kind=hang,iteration=2 "$HARNESS" run "$SCRATCH/spec.yaml" --launcher mpirun \
  --set output="$SCRATCH/killed" --set run.iterations=4 --set 'systems=[overlap]' \
  >"$SCRATCH/killed.out" 2>&1 &
killed=$!
ours() { ps -eo stat=,args= | awk '$1 !~ /^Z/' | grep -E "harness-rank worker|orted|mpirun" |
  grep -F "$SCRATCH" | grep -v grep || true; }
# Killed once rank 1 is in its hang (the harness splits its output into the run's folder).
hung=""
for _ in $(seq 600); do
  hung=$(grep -l "injecting hang" "$SCRATCH"/killed/*/*/raw/p000/overlap/rep0/rank1.stderr \
    2>/dev/null || true)
  [[ -n $hung ]] && break
  sleep 0.05
done
[[ -n $hung && $(pgrep -fc "^$HARNESS_RANK worker .*$SCRATCH/killed" || true) == 4 ]] ||
  fail "the killed run's 4 ranks never ran: $(tail -3 "$SCRATCH/killed.out")"
kill -KILL "$killed"
wait "$killed" 2>/dev/null || true
for _ in $(seq 100); do [[ -z $(ours) ]] && break; sleep 0.05; done
[[ -z $(ours) ]] || fail "left after the harness was killed: $(ours)"

# The study. While it runs, a rank on machine 1 is looked at from outside: its network and
# mount namespaces are not the harness's, and its run folder is a tmpfs of its own.
"$HARNESS" run "$SCRATCH/spec.yaml" --launcher mpirun >"$SCRATCH/out" 2>"$SCRATCH/err" &
harness=$!
seen=""
for _ in $(seq 600); do
  for pid in $(ip netns pids "harness-$harness-m1" 2>/dev/null); do
    args=$(cat "/proc/$pid/cmdline" 2>/dev/null | tr '\0' ' ' || true)
    [[ $args == *"harness-rank worker"* ]] || continue
    out=$(sed 's/.* --out \([^ ]*\) .*/\1/' <<<"$args")
    if grep -q " $out .* tmpfs harness-private " "/proc/$pid/mountinfo" 2>/dev/null &&
      [[ $(readlink "/proc/$pid/ns/mnt") != $(readlink /proc/self/ns/mnt) ]]; then
      seen=$out
    fi
  done
  [[ -n $seen ]] && break
  kill -0 $harness 2>/dev/null || break
  sleep 0.05
done
set +e
wait $harness
code=$?
set -e
[[ $code == 0 ]] || fail "mpirun across machines: exit $code: $(tail -5 "$SCRATCH/err")"
[[ -n $seen ]] || fail "no rank on machine 1 with a private run folder was seen"
expect_contains "$(cat "$SCRATCH/out")" "the emulated links of default are not measured (cluster.network.probe: false)"
# check_results FOLDER HARNESS_PID LAUNCHER SOURCE ITERATIONS: complete, every rank on its machine.
check_results() {
  "$PY" - "$@" <<'PY'
import csv, json, os, sys
d, pid, launcher, source, iterations = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
systems = {s["name"]: s for s in json.load(open(os.path.join(d, "summary.json")))["points"][0]["systems"]}
for name in systems:
    assert systems[name]["complete_runs"] == 1, systems[name]
    assert systems[name]["phases"]["iteration"]["count"] == 4 * iterations, systems[name]
    raw = os.path.join(d, "raw", "p000", name, "rep0")
    for rank in range(4):
        machine = rank // 2
        first = open(os.path.join(raw, f"rank{rank}.stdout")).readline()
        assert f"rank={rank} " in first and f"source={source}" in first, first
        assert f"host=harness-{pid}-m{machine} " in first, first
        assert f"gloo=10.99.0.{machine + 1}" in first and "master=10.99.0.1:" in first, first
        assert len(list(csv.DictReader(open(os.path.join(raw, f"rank{rank}.csv"))))) == iterations
    # What a machine wrote for itself stays there: no temp folder reached the host.
    assert not os.path.exists(os.path.join(raw, ".machine-tmp")), os.listdir(raw)
    status = json.load(open(os.path.join(raw, "status.json")))
    assert status["status"] == "complete" and status["launcher"] == launcher, status
PY
}
check_results "$(ls -d "$SCRATCH"/results/mpirun_machines/*/)" "$harness" mpirun openmpi 30 ||
  fail "mpirun results did not parse back"

# torchrun: one agent on each machine (through enter-machine), agent 0 serving the store on
# machine 0, their ranks' lines told apart by "[default<r>]:". The build's own torchrun, where
# it starts (Debian 12's python3-torch 1.13 torchrun fails at start on Python 3.11).
torchrun_bin=$(dirname "$("$HARNESS_RANK" version |
  "$PY" -c 'import json, sys; print(json.load(sys.stdin)["torch_python"])')")/torchrun
if [[ ! -x $torchrun_bin ]] ||
  ! TMPDIR="$SCRATCH" timeout 60 "$torchrun_bin" --nnodes=1 --nproc_per_node=1 --no_python true \
    >/dev/null 2>&1; then
  echo "note: the build's torchrun ($torchrun_bin) cannot start here; the torchrun case is skipped"
else
  "$HARNESS" run "$SCRATCH/spec.yaml" --launcher torchrun --set output="$SCRATCH/torchrun" \
    --set run.iterations=4 >"$SCRATCH/tr.out" 2>"$SCRATCH/tr.err" &
  torchrun_harness=$!
  wait $torchrun_harness || fail "torchrun across machines: $(tail -5 "$SCRATCH/tr.err")"
  folder=$(ls -d "$SCRATCH"/torchrun/mpirun_machines/*/)
  check_results "$folder" "$torchrun_harness" torchrun torchrun 4 ||
    fail "torchrun results did not parse back"
  expect_contains "$(cat "$folder/raw/p000/overlap/rep0/launcher1.stdout")" "[default1]:"
  # A rank on machine 1 that exits: named, not the machine-0 ranks that lost their peer.
  set +e
  HARNESS_FAULT=rank=3,kind=exit,iteration=2 "$HARNESS" run "$SCRATCH/spec.yaml" \
    --launcher torchrun --set output="$SCRATCH/torchrun-fault" --set run.iterations=4 \
    --set 'systems=[overlap]' >"$SCRATCH/trf.out" 2>"$SCRATCH/trf.err" &
  faulty=$!
  wait $faulty
  code=$?
  set -e
  [[ $code == 1 ]] || fail "torchrun, rank 3 exiting: exit $code (want 1): $(tail -3 "$SCRATCH/trf.err")"
  expect_contains "$(cat "$SCRATCH/trf.err")" "failed: rank 3 exited with code 3"
  expect_contains "$(cat "$SCRATCH/trf.err")" "rank 3 ran on host harness-$faulty-m1 (launcher torchrun)"
fi
[[ -z $(ip netns list | grep -e "^harness-$harness-" -e "^harness-$killed-" || true) ]] ||
  fail "namespaces left: $(ip netns list)"
left=$(ps -eo stat=,args= | awk '$1 !~ /^Z/' | grep -E "harness-rank worker|orted|torchrun" |
  grep -F "$SCRATCH" | grep -v grep || true)
[[ -z $left ]] || fail "processes left: $left"
echo "cluster launchers across emulated machines e2e: ok"
