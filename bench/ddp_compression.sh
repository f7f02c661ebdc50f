#!/usr/bin/env bash
# DDP gradient compression (issue 22): runs experiments/ddp_compression.yaml (root, for its
# emulated 100 Mbit/s link) unless STUDY names a finished one, and prints per point and system
# the bytes its buckets put on the wire per iteration (buckets.json `wire_bytes`, summed), their
# ratio to uncompressed, and the iteration p50 with its ratio to uncompressed at the same link,
# system and bucket cap.
#
# Usage: [STUDY=<results folder>] [HARNESS=build/harness] bench/ddp_compression.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/study_folder.sh
study_folder experiments/ddp_compression.yaml
python3 - "$STUDY" <<'PY'
import json, os, sys
study = sys.argv[1]
summary = json.load(open(os.path.join(study, "summary.json")))
manifest = json.load(open(os.path.join(study, "manifest.json")))
rows = []
for point, entry in zip(manifest["points"], summary["points"]):
    values = dict((c["axis"], c["value"]) for c in point["coordinates"])
    link = "loopback" if "machines: 1" in values["cluster"] else "100 Mbit/s"
    for system in entry["systems"]:
        buckets = json.load(open(os.path.join(study, "raw", point["id"], system["name"], "rep0", "buckets.json")))
        wire = sum(b["wire_bytes"] for b in buckets)
        rows.append((link, system["name"] + " " + values["ddp.bucket_mb"] + " MiB",
                     values["ddp.compression"], wire,
                     system["phases"]["iteration"]["p50"], system["phases"]["iteration"]["count"]))
base = {(l, s): (w, p) for l, s, c, w, p, n in rows if c == "none"}
print(f"study: {study}")
print("| link | system | compression | bytes on the wire / iteration | vs fp32 | iteration p50 (ms) | vs fp32 | n |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for link, system, compression, wire, p50, n in rows:
    w0, p0 = base[(link, system)]
    print(f"| {link} | {system} | {compression} | {wire} | {wire / w0:.3f} | {p50:.2f} | {p50 / p0:.3f} | {n} |")
PY
