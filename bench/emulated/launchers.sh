#!/usr/bin/env bash
# One study, any engine (issue 34): experiments/emulated_simulator_levels.yaml at one bandwidth
# level (DDP overlap and DAPPLE 2 stages, 2 emulated machines of 1 rank), unchanged but for the
# launcher, under the local launcher, under mpirun (cluster.machines: mpirun on machine 0, Open
# MPI's daemon on machine 1) and under a real Slurm (scripts/emulated-slurm.sh: two nodes whose
# links the harness shapes the same way; the spec's own machines set to 1, since Slurm's nodes
# are the machines). RUNS rounds, each running the three in turn, so that drift on this host
# falls on all three alike; each run's p50 is one sample. Prints per launcher and system the
# median of the runs' p50s, their range, and the ratio to the local launcher's median.
# Root (namespaces). About 40 s a round here.
#
# Usage: [RUNS=3] [BANDWIDTH=300mbit] [HARNESS=build/harness] sudo bash bench/emulated/launchers.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=$(realpath "${HARNESS:-build/harness}")
RUNS=${RUNS:-3}
BANDWIDTH=${BANDWIDTH:-300mbit}
OUT=${OUT:-$(mktemp -d /tmp/emulated-launchers-XXXXXX)}
spec=experiments/emulated_simulator_levels.yaml
level=(--set "sweep.cluster.network.inter_machine.bandwidth=[$BANDWIDTH]")
start=$(date +%s)
for round in $(seq "$RUNS"); do
  for launcher in local mpirun slurm; do
    results=$OUT/$launcher
    mkdir -p "$results"
    log=$OUT/$launcher-$round.log
    if [[ $launcher == slurm ]]; then
      bash scripts/emulated-slurm.sh --nodes 2 --bandwidth "$BANDWIDTH" --harness "$HARNESS" \
        --private "$results" -- salloc -N 2 -n 2 "$HARNESS" run "$spec" "${level[@]}" \
        --set cluster.machines=1 --set "output=$results" --launcher slurm --hosts n1:1,n2:1 \
        >"$log" 2>&1 || { tail -5 "$log"; exit 1; }
    else
      "$HARNESS" run "$spec" "${level[@]}" --set "output=$results" --launcher "$launcher" \
        >"$log" 2>&1 || { tail -5 "$log"; exit 1; }
    fi
    echo "round $round/$RUNS: $launcher done ($(($(date +%s) - start)) s)" >&2
  done
done
python3 - "$OUT" "$RUNS" "$BANDWIDTH" <<'PY'
import glob, json, os, statistics, sys
out, runs, bandwidth = sys.argv[1], int(sys.argv[2]), sys.argv[3]
p50s = {}  # (launcher, system) -> the runs' p50s
samples = {}
for launcher in ("local", "mpirun", "slurm"):
    for folder in sorted(glob.glob(os.path.join(out, launcher, "emulated_simulator_levels", "*"))):
        for system in json.load(open(os.path.join(folder, "summary.json")))["points"][0]["systems"]:
            iteration = system["phases"]["iteration"]
            p50s.setdefault((launcher, system["name"]), []).append(iteration["p50"])
            samples[(launcher, system["name"])] = iteration["count"]
print(f"# One study under three launchers: {bandwidth}, {runs} run(s) each, p50 of each run's "
      "iterations (ms)\n")
print("| system | launcher | median of run p50s | min - max | runs x samples | vs local |")
print("|---|---|---:|---|---:|---:|")
for system in ("overlap", "dapple_2"):
    local = statistics.median(p50s[("local", system)])
    for launcher in ("local", "mpirun", "slurm"):
        values = p50s[(launcher, system)]
        median = statistics.median(values)
        print(f"| {system} | {launcher} | {median:.2f} | {min(values):.2f} - {max(values):.2f} | "
              f"{len(values)} x {samples[(launcher, system)] // 2} | {median / local:.3f} |")
PY
echo "($(($(date +%s) - start)) s; runs in $OUT)"
