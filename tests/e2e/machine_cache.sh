#!/usr/bin/env bash
# harness machine's cache is kept per BLAS: a cache made with another BLAS is measured again.
# The harness's own rule (the key it compares): run with the first LibTorch only (label
# harness-side); what the rank program reports of its BLAS is machine_blas.sh, with each.
source "$(dirname "$0")/common.sh"
: "${HARNESS_MACHINE_CACHE:?ctest sets HARNESS_MACHINE_CACHE}"
"$PY" - "$HARNESS_MACHINE_CACHE" "$SCRATCH/other.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["key"]["blas_path"] = "/elsewhere/libblas.so.3"
json.dump(m, open(sys.argv[2], "w"))
PY
HARNESS_MACHINE_CACHE="$SCRATCH/other.json" "$HARNESS" machine > /dev/null 2> "$SCRATCH/err"
expect_contains "$(cat "$SCRATCH/err")" "measuring this machine's limits once"
"$PY" - "$HARNESS_MACHINE_CACHE" "$SCRATCH/other.json" <<'PY'
import json, sys
ours, other = (json.load(open(path)) for path in sys.argv[1:])
# Measured again and written back under this machine's own key, not the other BLAS's.
assert other["key"] == ours["key"], (other["key"], ours["key"])
PY
echo "ok"
