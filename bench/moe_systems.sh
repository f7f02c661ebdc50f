#!/usr/bin/env bash
# Mixture-of-experts systems (issue 22): runs experiments/moe_systems.yaml (QUICK=1: --quick)
# unless STUDY names a finished one, breaks its traces down (`harness trace`), and prints per
# point DDP beside expert parallelism: iteration p50 and its ratio to DDP's, where a rank's
# traced iteration goes (compute, all-to-all, all-reduce, idle; ms, mean over ranks), and what
# a rank holds (parameter bytes, the experts' part, peak resident memory).
#
# Usage: [STUDY=<results folder>] [QUICK=1] [HARNESS=build/harness] bench/moe_systems.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/study_folder.sh
study_folder experiments/moe_systems.yaml
"$HARNESS" trace "$STUDY" > /dev/null
python3 - "$STUDY" <<'PY'
import json, os, sys
study = sys.argv[1]
summary = json.load(open(os.path.join(study, "summary.json")))
manifest = json.load(open(os.path.join(study, "manifest.json")))
print(f"study: {study}")
print("| point | system | iteration p50 ms | vs ddp | n | compute | all-to-all | all-reduce | idle "
      "| params MB/rank | experts MB/rank | peak RSS MB/rank |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for point, entry in zip(manifest["points"], summary["points"]):
    values = dict((c["axis"], c["value"]) for c in point["coordinates"])
    label = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in values.items())
    base = None
    for system in entry["systems"]:
        run = os.path.join(study, "raw", point["id"], system["name"], "rep0")
        p50 = system["phases"]["iteration"]["p50"]
        n = system["phases"]["iteration"]["count"]
        base = base or p50
        ranks = json.load(open(os.path.join(run, "trace_breakdown.json")))["ranks"]
        mean = lambda key: sum(r[key] for r in ranks) / len(ranks)
        memory = [json.load(open(os.path.join(run, f)))
                  for f in sorted(os.listdir(run)) if f.startswith("memory_rank")]
        mb = lambda key: max(m[key] for m in memory) / 2**20
        print(f"| {label} | {system['name']} | {p50:.1f} | {p50 / base:.3f} | {n} | "
              f"{mean('compute_ms'):.1f} | {mean('alltoall_ms'):.1f} | {mean('allreduce_ms'):.1f} | "
              f"{mean('idle_ms'):.1f} | {mb('parameter_bytes'):.1f} | "
              f"{mb('expert_parameter_bytes'):.1f} | {mb('peak_resident_bytes'):.0f} |")
PY
