#!/usr/bin/env bash
# The simulator against emulated clusters (issue 21, study c; issue 39): RUNS real runs of
# experiments/emulated_simulator_levels.yaml (DDP overlap and DAPPLE 2 stages on 2 emulated
# machines at four bandwidths; root), each run's p50 one sample: the iterations of one run are
# not independent samples, so one run's p50 is no reference. Per bandwidth level and run, a
# simulation of the same systems (experiments/simulate_emulated_levels.yaml) with the topology
# and the one-way latency measured on that run's machines before its iterations (its links/<n>/
# and env.json `emulated_links`): nothing of the runs' timings goes into a simulation. The layer
# profiles are measured here after the runs, each as its system runs the layers: DDP's at the
# rank's batch (32) with two copies in lockstep (both ranks compute at once on this host's
# cores), the pipeline's at its micro-batch (16: the global batch of 2 x 32 in 4 micro-batches)
# with both stages timing their layers at once (`profile layers --stages`): at small batches a
# layer's fixed cost, not its FLOPs, decides its time, so one profile scaled by batch would miss
# it (one at 8 samples scaled to 16 made DAPPLE's stage 1 forward 53% and backward 23% slower
# than they run). Prints, per level and system, the median of the runs' p50s, their range and a
# distribution-free interval of the median (order
# statistics; its coverage is printed, 93.8% at most with 5 runs), the median of the runs'
# simulated p50s and, last, the error of the simulation against the median of the runs.
#
# Usage: [RUNS=5] [REAL="<earlier study folders>"] [PROFILES=<earlier OUT>] [QUICK=1]
#        [HARNESS=build/harness] bash bench/emulated/validate_levels.sh  (about 2.3 min a run here)
# REAL and PROFILES together simulate an earlier validation's runs again with its own
# profiles: a change of the model checked on the same inputs, in seconds. BURST=1 simulates
# each link with the token bucket it was shaped with (simulate.cluster.inter_burst_bytes).
set -euo pipefail
cd "$(dirname "$0")/../.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/emulated-validate-XXXXXX)}
mkdir -p "$OUT"
start=$(date +%s)
if [[ -z "${REAL:-}" ]]; then
  for run in $(seq "${RUNS:-5}"); do
    "$HARNESS" run experiments/emulated_simulator_levels.yaml --set "output=$OUT/real" \
      ${QUICK:+--quick} > "$OUT/real-$run.log" 2>&1 || { tail -5 "$OUT/real-$run.log"; exit 1; }
    echo "real run $run/${RUNS:-5} done ($(($(date +%s) - start)) s)" >&2
  done
  REAL=$(ls -d "$OUT"/real/emulated_simulator_levels/*/)
fi
MODEL=(--model mlp --width 1024 --input-shape 64 --repetitions 20 --warmup 2)
if [[ -n "${PROFILES:-}" ]]; then
  # The layer profiles of an earlier validation: the same runs simulated again with the same
  # inputs, so that what moves is the model alone (a new profile carries the VM's speed phase).
  for profile in profile-b32-co2 profile-b16-stages; do
    [[ -f "$PROFILES/$profile/graph.txt" ]] ||
      { echo "error: $PROFILES/$profile/graph.txt: no such profile" >&2; exit 2; }
    [[ "$PROFILES" -ef "$OUT" ]] || cp -r "$PROFILES/$profile" "$OUT/"
  done
else
  "$HARNESS" profile layers "${MODEL[@]}" --batch 32 --co-located 2 --out "$OUT/profile-b32-co2" \
    > "$OUT/profile-b32-co2.log"
  "$HARNESS" profile layers "${MODEL[@]}" --batch 16 --stages 0-2,3-5 \
    --out "$OUT/profile-b16-stages" > "$OUT/profile-b16-stages.log"
fi
python3 - "$OUT" "$HARNESS" "${BURST:-0}" $REAL <<'PY'
import json, math, os, statistics, subprocess, sys
out, harness, burst, reals = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
# Which profile prices which system: (extra --set options, systems taken from that simulation).
profiles = [([f"simulate.model.profile={out}/profile-b32-co2/graph.txt", "simulate.model.pbs=32"],
             ["overlap"]),
            ([f"simulate.model.profile={out}/profile-b16-stages/graph.txt", "simulate.model.pbs=16"],
             ["dapple_2"])]

def simulate(real, n, link):
    """The simulated p50 of each system on link n of one real run, from its measured link."""
    topology = os.path.join(real, link["topology"])
    latency = link["inter_machine_measured"]["one_way_latency_us"]
    # BURST=1: with the token bucket the link was shaped with (recorded since 2026-11-26;
    # experiments/README.md says why it is not the default yet).
    bucket = (link["inter_machine_configured"].get("token_bucket_bytes") or 0) if burst else 0
    simulated = {}
    for k, (extra, systems) in enumerate(profiles):
        sim_out = os.path.join(out, "sim", os.path.basename(real.rstrip("/")), f"link{n}-{k}")
        command = [harness, "simulate", "experiments/simulate_emulated_levels.yaml",
                   "--set", f"simulate.cluster.topology={topology}",
                   "--set", f"simulate.cluster.inter_latency_us={latency}",
                   "--set", f"simulate.cluster.inter_burst_bytes={bucket}",
                   "--set", f"output={sim_out}"]
        for option in extra:
            command += ["--set", option]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        sim_dir = os.path.join(sim_out, "simulate_emulated_levels")
        sim_dir = os.path.join(sim_dir, sorted(os.listdir(sim_dir))[-1])
        for s in json.load(open(os.path.join(sim_dir, "summary.json")))["points"][0]["systems"]:
            if s["name"] in systems:
                simulated[s["name"]] = s["phases"]["iteration"]["p50"]
    return simulated

def median_interval(values):
    """Order statistics [x_(k), x_(n+1-k)] around the median: the narrowest with coverage of at
    least 95%, else (fewer than 6 values) the widest; returns (low, high, coverage)."""
    x, n = sorted(values), len(values)
    below = lambda j: sum(math.comb(n, i) for i in range(j + 1)) / 2 ** n  # P(Bin(n, 1/2) <= j)
    best = (x[0], x[-1], 1 - 2 * below(0))
    for k in range(1, (n + 1) // 2 + 1):
        coverage = 1 - 2 * below(k - 1)
        if coverage < 0.95:
            break
        best = (x[k - 1], x[n - k], coverage)
    return best

cells = {}  # (rate, system) -> {"p50": [...], "sim": [...], "count": samples of one run, "p2p": [...]}
for real in reals:
    env = json.load(open(os.path.join(real, "env.json")))
    summary = json.load(open(os.path.join(real, "summary.json")))
    measured = {p["label"]: {s["name"]: s["phases"]["iteration"] for s in p["systems"]}
                for p in summary["points"]}
    for n, link in enumerate(env["emulated_links"]):
        simulated = simulate(real, n, link)
        rate = link["inter_machine_configured"]["rate_bits_per_s"]
        for label in link["points"]:
            for system, phase in measured[label].items():
                cell = cells.setdefault((rate, system), {"p50": [], "sim": [], "p2p": []})
                cell["p50"].append(phase["p50"])
                cell["sim"].append(simulated[system])
                cell["p2p"].append(link["inter_machine_measured"]["p2p_bits_per_s"])
                cell["count"] = phase["count"]
print(f"{len(reals)} real run(s): {' '.join(reals)}")
print("| link (configured) | measured p2p (median) | system | median of run p50s (ms) | range | interval of the median (coverage) | runs x samples | simulated p50 (median, ms) | error |")
print("|---|---:|---|---:|---|---|---:|---:|---:|")
errors = []
for (rate, system), cell in sorted(cells.items()):
    median = statistics.median(cell["p50"])
    low, high, coverage = median_interval(cell["p50"])
    sim = statistics.median(cell["sim"])
    error = 100 * (sim / median - 1)
    errors.append(abs(error))
    print(f"| {rate / 1e6:.0f} Mbit/s | {statistics.median(cell['p2p']) / 1e6:.1f} Mbit/s | {system} | "
          f"{median:.2f} | {min(cell['p50']):.2f} - {max(cell['p50']):.2f} | "
          f"{low:.2f} - {high:.2f} ({100 * coverage:.1f}%) | {len(cell['p50'])} x {cell['count']} | "
          f"{sim:.2f} | {error:+.1f}% |")
print(f"\nworst error {max(errors):.1f}%, median absolute error {statistics.median(errors):.1f}%; "
      f"cells within 10%: {sum(e <= 10 for e in errors)} of {len(errors)}")
PY
echo "($(($(date +%s) - start)) s; files in $OUT)"
