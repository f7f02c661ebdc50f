#!/usr/bin/env bash
# Pipeline schedules' bubbles (issue 69): runs bench/pipeline_bubble.yaml unless STUDY names a
# finished one and prints per schedule and micro-batch count the measured pipeline bubble
# (pipeline.md's: each rank's idle share of the pipeline's span, mean over ranks and
# iterations) beside the schedule's own figures from its action lists -- at F = I = W, and at
# the run's own measured F, I and W per rank -- the difference to the latter in percentage
# points (what communication and overhead add), the samples it rests on, and the micro-batches
# in flight.
#
# Usage: [STUDY=<results folder>] [HARNESS=build/harness] bench/pipeline_bubble.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/study_folder.sh
study_folder bench/pipeline_bubble.yaml
python3 - "$STUDY" <<'PY'
import csv, json, os, sys
study = sys.argv[1]
print(f"study: {study}")
print("| schedule | m | measured pipeline bubble | schedule's at F = I = W | schedule's at the run's "
      "costs | measured - run's costs (pp) | n | in flight (rank 0, rank 1) | p50 ms |")
print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
for row in csv.DictReader(open(os.path.join(study, "pipeline.csv"))):
    measured, own = float(row["pipeline_bubble_fraction"]), float(row["schedule_bubble_fraction"])
    costed = float(row["costed_bubble_fraction"])
    raw = os.path.join(study, "raw", row["point"], row["system"], "rep0")
    flight = [max(it["peak_in_flight"] for it in
                  json.load(open(os.path.join(raw, f"pipeline_rank{r}.json")))["iterations"])
              for r in range(2)]
    print(f"| {row['schedule']} | {row['micro_batches']} | {100 * measured:.1f}% | "
          f"{100 * own:.1f}% | {100 * costed:.1f}% | {100 * (measured - costed):+.1f} | {row['n']} | "
          f"{flight[0]}, {flight[1]} | {float(row['p50_ms']):.1f} |")
PY
