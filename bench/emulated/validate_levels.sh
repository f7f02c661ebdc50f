#!/usr/bin/env bash
# The simulator against emulated clusters (issue 21, study c): real runs of
# experiments/emulated_simulator_levels.yaml (DDP overlap and DAPPLE 2 stages on 2 emulated
# machines at four bandwidths; root), then, per bandwidth level, a simulation of the same
# systems (experiments/simulate_emulated_levels.yaml) with the topology and the one-way latency
# measured on that level's machines before the runs (the study's links/link<n>/ and env.json
# `emulated_links`): nothing of the runs' timings goes into a simulation. The layer profiles
# are measured here after the runs, each as its system runs the layers: DDP's at the rank's
# batch (32) with two copies in lockstep (both ranks compute at once on this host's cores), the
# pipeline's at its micro-batch (8) with both stages timing their layers at once
# (`profile layers --stages`): at small batches a layer's fixed cost, not its FLOPs, decides
# its time, so one profile scaled by batch would miss it. Prints, per level and system, the
# measured p50 (and its sample count), the simulated p50 and the error.
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
MODEL=(--model mlp --width 1024 --input-shape 64 --repetitions 20 --warmup 2)
"$HARNESS" profile layers "${MODEL[@]}" --batch 32 --co-located 2 --out "$OUT/profile-b32-co2" \
  > "$OUT/profile-b32-co2.log"
"$HARNESS" profile layers "${MODEL[@]}" --batch 8 --stages 0-2,3-5 --out "$OUT/profile-b8-stages" \
  > "$OUT/profile-b8-stages.log"
python3 - "$REAL" "$OUT" "$HARNESS" <<'PY'
import json, os, subprocess, sys
real, out, harness = sys.argv[1:4]
# Which profile prices which system: (extra --set options, systems taken from that simulation).
profiles = [([f"simulate.model.profile={out}/profile-b32-co2/graph.txt", "simulate.model.pbs=32"],
             ["overlap"]),
            ([f"simulate.model.profile={out}/profile-b8-stages/graph.txt", "simulate.model.pbs=8"],
             ["dapple_2"])]
env = json.load(open(os.path.join(real, "env.json")))
summary = json.load(open(os.path.join(real, "summary.json")))
measured = {p["label"]: {s["name"]: s["phases"]["iteration"] for s in p["systems"]} for p in summary["points"]}
rows = []
for n, link in enumerate(env["emulated_links"]):
    topology = os.path.join(real, link["topology"])
    latency = link["inter_machine_measured"]["one_way_latency_us"]
    simulated = {}
    for k, (extra, systems) in enumerate(profiles):
        sim_out = os.path.join(out, f"sim-link{n}-{k}")
        command = [harness, "simulate", "experiments/simulate_emulated_levels.yaml",
                   "--set", f"simulate.cluster.topology={topology}",
                   "--set", f"simulate.cluster.inter_latency_us={latency}",
                   "--set", f"output={sim_out}"]
        for option in extra:
            command += ["--set", option]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        sim_dir = os.path.join(sim_out, "simulate_emulated_levels")
        sim_dir = os.path.join(sim_dir, sorted(os.listdir(sim_dir))[-1])
        for s in json.load(open(os.path.join(sim_dir, "summary.json")))["points"][0]["systems"]:
            if s["name"] in systems:
                simulated[s["name"]] = s["phases"]["iteration"]["p50"]
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
