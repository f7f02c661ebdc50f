#!/usr/bin/env bash
# The planner on emulated clusters (issue 21, study b): runs experiments/emulated_planner_levels.yaml
# (root) unless STUDY names a finished one, and prints per inter-machine bandwidth the link as
# measured, the plan `plan: auto` chose from it (stages as [first..last state] x GPUs), the
# planner's estimates (its plan's iteration time; data parallelism's, without overlap, as a
# speedup over one GPU), and the measured p50 of the plan and of DDP beside them.
#
# Usage: [STUDY=<results folder>] [HARNESS=build/harness] bench/emulated/planner_levels.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/study_folder.sh
study_folder experiments/emulated_planner_levels.yaml
python3 - "$STUDY" <<'PY'
import json, os, sys
study = sys.argv[1]
env = json.load(open(os.path.join(study, "env.json")))
summary = json.load(open(os.path.join(study, "summary.json")))
manifest = json.load(open(os.path.join(study, "manifest.json")))
ids = {p["label"]: p["id"] for p in manifest["points"]}
measured = {p["label"]: {s["name"]: s["phases"]["iteration"] for s in p["systems"]} for p in summary["points"]}
print(f"study: {study}")
print("| link (configured) | measured p2p / all-reduce | chosen plan | planned iteration (ms) | DP no-overlap speedup (planner) | plan p50 (ms) | DDP p50 (ms) | n |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for link in env["emulated_links"]:
    for label in link["points"]:
        plans = os.path.join(study, "plans")
        folder = next(os.path.join(plans, d, ids[label]) for d in sorted(os.listdir(plans))
                      if os.path.isdir(os.path.join(plans, d, ids[label])))
        result = json.load(open(os.path.join(folder, "plan.json")))["results"][0]
        plan = result["plan"] or {}
        m = link["inter_machine_measured"]
        row = measured[label]
        print(f"| {link['inter_machine_configured']['rate_bits_per_s'] / 1e6:.0f} Mbit/s"
              f" | {m['p2p_bits_per_s'] / 1e6:.0f} / {m['allreduce_bus_bits_per_s'] / 1e6:.0f} Mbit/s"
              f" | {plan.get('summary', 'none')}"
              f" | {1e3 * plan.get('iteration_time_s', float('nan')):.1f}"
              f" | {result['dp_no_overlap']:.2f}"
              f" | {row['planned']['p50']:.1f} | {row['overlap']['p50']:.1f} | {row['planned']['count']} |")
PY
