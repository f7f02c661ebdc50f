#!/usr/bin/env bash
# The simulator against emulated clusters (issue 21, study c): real runs of
# experiments/emulated_simulator_levels.yaml (DDP overlap and DAPPLE 2 stages on 2 emulated
# machines at four bandwidths; root), then, per bandwidth level, a simulation of the same
# systems (experiments/simulate_emulated_levels.yaml) with the topology and the one-way latency
# measured on that level's machines before the runs (the study's links/link<n>/ and env.json
# `emulated_links`): nothing of the runs' timings goes into a simulation. Prints, per level and
# system, the measured p50 (and its sample count), the simulated p50 and the error.
#
# Usage: [REAL=<an earlier study folder>] [QUICK=1] [HARNESS=build/harness] bench/emulated/validate_levels.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/emulated-validate-XXXXXX)}
mkdir -p "$OUT"
if [[ -z "${REAL:-}" ]]; then
  "$HARNESS" run experiments/emulated_simulator_levels.yaml --set "output=$OUT/real" \
    ${QUICK:+--quick} > "$OUT/real.log" 2>&1 || { tail -5 "$OUT/real.log"; exit 1; }
  REAL=$(ls -d "$OUT"/real/emulated_simulator_levels/*/ | tail -1)
fi
python3 - "$REAL" "$OUT" "$HARNESS" <<'PY'
import json, os, subprocess, sys
real, out, harness = sys.argv[1:4]
env = json.load(open(os.path.join(real, "env.json")))
summary = json.load(open(os.path.join(real, "summary.json")))
measured = {p["label"]: {s["name"]: s["phases"]["iteration"] for s in p["systems"]} for p in summary["points"]}
rows = []
for n, link in enumerate(env["emulated_links"]):
    topology = os.path.join(real, link["topology"])
    latency = link["inter_machine_measured"]["one_way_latency_us"]
    sim_out = os.path.join(out, f"sim-link{n}")
    subprocess.run([harness, "simulate", "experiments/simulate_emulated_levels.yaml",
                    "--set", f"simulate.cluster.topology={topology}",
                    "--set", f"simulate.cluster.inter_latency_us={latency}",
                    "--set", f"output={sim_out}"], check=True, stdout=subprocess.DEVNULL)
    sim_dir = os.path.join(sim_out, "simulate_emulated_levels")
    sim_dir = os.path.join(sim_dir, sorted(os.listdir(sim_dir))[-1])
    simulated = {s["name"]: s["phases"]["iteration"]["p50"]
                 for s in json.load(open(os.path.join(sim_dir, "summary.json")))["points"][0]["systems"]}
    rate = link["inter_machine_configured"]["rate_bits_per_s"]
    for label in link["points"]:
        for system, phase in measured[label].items():
            rows.append((rate, link["inter_machine_measured"]["p2p_bits_per_s"], system,
                         phase["p50"], phase["count"], simulated[system]))
print(f"real runs: {real}")
print("| link (configured) | measured p2p | system | measured p50 (ms) | n | simulated p50 (ms) | error |")
print("|---|---:|---|---:|---:|---:|---:|")
for rate, p2p, system, p50, n, sim in rows:
    print(f"| {rate / 1e6:.0f} Mbit/s | {p2p / 1e6:.1f} Mbit/s | {system} | {p50:.2f} | {n} | {sim:.2f} | {100 * (sim / p50 - 1):+.1f}% |")
PY
