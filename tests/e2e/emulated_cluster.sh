#!/usr/bin/env bash
# What an emulated cluster does besides its links' rates (those are emulated_links.sh, run alone):
# a pipeline whose stages' replicas sit on different machines, a harness killed mid-run (its
# ranks die with it, the next emulated run removes its namespaces), a run whose ranks are all
# killed (exit 1, its machines removed), and the refusals: not root, machines that do not divide
# the ranks, link options without machines. Without root or the qdiscs it says so in one line
# (exit 2) and this test skips (77).
source "$(dirname "$0")/common.sh"

# Options that need machines, and machines that do not divide the ranks: refused before anything
# is checked or built, root or not.
set +e
"$HARNESS" profile comm --world 3 --machines 2 --out "$SCRATCH/x" >/dev/null 2>"$SCRATCH/err"; c1=$?
"$HARNESS" profile comm --link-rate 1gbit --out "$SCRATCH/x" >/dev/null 2>"$SCRATCH/err2"; c2=$?
"$HARNESS" profile comm --machines 2 --link-rate 1gb --out "$SCRATCH/x" >/dev/null 2>"$SCRATCH/err3"; c3=$?
set -e
[[ $c1 == 2 && "$(cat "$SCRATCH/err")" == "error: --machines 2: does not divide --world 3" ]] || fail "world 3: $(cat "$SCRATCH/err")"
[[ $c2 == 2 && "$(cat "$SCRATCH/err2")" == "error: --link-*: need --machines 2 or more (the ranks' machines)" ]] || fail "no machines: $(cat "$SCRATCH/err2")"
[[ $c3 == 2 ]] || fail "--link-rate 1gb: exit $c3: $(cat "$SCRATCH/err3")"
expect_contains "$(cat "$SCRATCH/err3")" "error: --link-rate: '1gb' is not a rate like 100mbit"
[[ ! -e "$SCRATCH/x" ]] || fail "bad options wrote a folder"

skip_without_emulated_machines 1gbit

# A hybrid pipeline whose stages' replicas sit on different machines (rank r on machine r / 2):
# each stage's gradient all-reduce crosses the link. That group's Gloo listened on loopback,
# which the other machine cannot reach, before it was bound to the machine's own address
# (every such run failed to connect then).
cat > "$SCRATCH/hybrid.yaml" <<YAML
name: hybrid
output: $SCRATCH/results
model: {name: mlp, batch_size: 8}
run: {world_size: 4, iterations: 3, warmup: 1, trace: false}
pipeline: {micro_batches: 2}
cluster: {machines: 2, network: {inter_machine: {bandwidth: 1gbit}}}
systems:
  - {name: dapple_2x2, kind: pipeline, schedule: dapple,
     stages: [{layers: "0-2", ranks: [0, 2]}, {layers: "3-5", ranks: [1, 3]}]}
YAML
"$HARNESS" run "$SCRATCH/hybrid.yaml" > "$SCRATCH/hybrid.log" 2>&1 ||
  fail "hybrid pipeline across machines: $(tail -5 "$SCRATCH/hybrid.log")"
"$PY" - "$(ls -d "$SCRATCH"/results/hybrid/*/)" <<'PY'
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/raw/p000/dapple_2x2/rep0/pipeline_rank*.json"))
assert len(files) == 4, files
for name in files:
    rank = json.load(open(name))
    # Three iterations, each with its stage's all-reduce between its 2 replicas.
    rows = rank["iterations"]
    assert rank["replicas"] == 2 and len(rows) == 3, (name, rank["replicas"], len(rows))
    assert all(row["allreduce_ms"] > 0 for row in rows), (name, rows)
# Two ranks a machine: the probe measured machine 0's own links for send/recv and for the
# all-reduce among its ranks, and the topology carries both (a stage's replicas on one machine
# are priced by the second).
raw = json.load(open(sys.argv[1] + "/links/link0/intra/comm-raw.json"))
assert raw["world_size"] == 2, raw["world_size"]
assert sorted({e["op"] for e in raw["entries"]}) == ["allreduce", "sendrecv"], raw["entries"]
bandwidth = {}
for line in open(sys.argv[1] + "/links/link0/topology.yaml"):
    key, _, value = line.strip().partition(": ")
    if key in ("intra_machine", "intra_machine_collective"):
        bandwidth[key] = float(value)
assert sorted(bandwidth) == ["intra_machine", "intra_machine_collective"], bandwidth
assert all(v > 1e8 for v in bandwidth.values()), bandwidth  # loopback: GB/s, not a link's Mbit/s
# And what of a core that all-reduce kept busy per rank, as env.json records it for the
# simulation (its process CPU time over wall time: a share, and not nothing).
link = json.load(open(sys.argv[1] + "/env.json"))["emulated_links"][0]
cores = link["intra_machine_measured"]["allreduce_cpu_cores_per_rank"]
assert 0.01 < cores <= 2.0, cores
print("hybrid pipeline across machines: 4 ranks x 3 iterations, every stage all-reduce done;",
      "machine 0's send/recv %.2f GB/s, all-reduce %.2f GB/s" % (bandwidth["intra_machine"] / 1e9,
                                                           bandwidth["intra_machine_collective"] / 1e9))
PY
if ip netns list | grep -q "^harness-[0-9]*-m"; then
  # Another test of this suite may hold its own; none may carry this run's harness's pid.
  for ns in $(ip netns list | awk '{print $1}' | grep "^harness-[0-9]*-"); do
    pid=${ns#harness-}; pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null || fail "namespace of a finished harness left: $ns"
  done
fi

# A harness killed with SIGKILL mid-run leaves its namespaces (nothing can remove them then);
# its ranks die with it, and the next emulated run removes the namespaces. Its links are not
# probed (cluster.network.probe: false; 10 s a study at 100 Mbit/s): the ranks start at once.
cat > "$SCRATCH/long.yaml" <<YAML
name: long
output: $SCRATCH/long-results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 100000, warmup: 1, trace: false}
cluster: {machines: 2, network: {inter_machine: {bandwidth: 100mbit}, probe: false}}
systems: [overlap]
YAML
"$HARNESS" run "$SCRATCH/long.yaml" > "$SCRATCH/long.log" 2>&1 &
victim=$!
for _ in $(seq 1 100); do
  ip netns list | grep -q "^harness-$victim-m1" && break
  sleep 0.2
done
ip netns list | grep -q "^harness-$victim-m1" || fail "the run made no namespaces: $(tail -3 "$SCRATCH/long.log")"
sleep 2
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
sleep 1
if pgrep -f "$SCRATCH/long-results" > /dev/null; then fail "ranks outlived the killed harness"; fi
ip netns list | grep -q "^harness-$victim-" || fail "expected the killed harness's namespaces"
"$HARNESS" profile comm --world 2 --machines 2 --link-rate 1gbit --ops allreduce --sizes 1M \
  --iterations 1 --warmup 0 --out "$SCRATCH/after" > /dev/null 2>&1 || fail "the next run failed"
if ip netns list | grep -q "^harness-$victim-"; then fail "the next run left the dead harness's namespaces"; fi

# A run whose ranks are all killed fails (exit 1) and removes its machines itself.
"$HARNESS" run "$SCRATCH/long.yaml" > "$SCRATCH/long2.log" 2>&1 &
runner=$!
# Its training ranks (a probe's would be comm-workers, not workers).
for _ in $(seq 1 300); do
  pgrep -f "^$HARNESS_RANK worker .*$SCRATCH/long-results" > /dev/null && break
  sleep 0.1
done
pgrep -f "^$HARNESS_RANK worker .*$SCRATCH/long-results" > /dev/null ||
  fail "the run's ranks never started: $(tail -3 "$SCRATCH/long2.log")"
sleep 1
pkill -9 -f "^$HARNESS_RANK worker .*$SCRATCH/long-results" || fail "no rank to kill"
set +e; wait "$runner"; code=$?; set -e
[[ $code == 1 ]] || fail "killed ranks: harness exit $code (want 1): $(tail -3 "$SCRATCH/long2.log")"
if ip netns list | grep -q "^harness-$runner-"; then fail "a failed run left its namespaces"; fi
# Unprobed: no measurement said, run or recorded.
expect_contains "$(cat "$SCRATCH/long2.log")" "the emulated links of default are not measured (cluster.network.probe: false)"
! grep -q "measuring the emulated links" "$SCRATCH/long2.log" || fail "probe: false measured"
"$PY" - "$(ls -td "$SCRATCH"/long-results/long/*/ | head -n 1)" <<'PY'
import json, os, sys
assert not os.path.exists(sys.argv[1] + "/links"), os.listdir(sys.argv[1])
env = json.load(open(sys.argv[1] + "/env.json"))
assert "emulated_links" not in env, env["emulated_links"]
PY

# Without root: one line, exit 2, nothing written (run as `nobody` where setpriv can drop root).
if command -v setpriv > /dev/null; then
  chmod o+rwx "$SCRATCH"
  set +e
  setpriv --reuid=65534 --regid=65534 --clear-groups "$HARNESS" profile comm --world 2 \
    --machines 2 --link-rate 1gbit --out "$SCRATCH/noroot" > /dev/null 2> "$SCRATCH/noroot.err"
  code=$?
  set -e
  if [[ $code == 126 || $code == 127 ]]; then
    echo "SKIP (no-root part): nobody cannot run $HARNESS here"
  else
    [[ $code == 2 ]] || fail "not root: exit $code: $(cat "$SCRATCH/noroot.err")"
    [[ "$(cat "$SCRATCH/noroot.err")" == "error: --machines: emulated networks need root (network namespaces, veth pairs and tc qdiscs)" ]] ||
      fail "not root: $(cat "$SCRATCH/noroot.err")"
    [[ ! -e "$SCRATCH/noroot" ]] || fail "a refused run wrote its folder"
  fi
fi

echo "ok"
