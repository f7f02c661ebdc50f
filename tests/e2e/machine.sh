#!/usr/bin/env bash
# harness machine: the figures are measured, printed, written as JSON and cached, and a second
# call reads the cache. The suite's setup (its cache is every e2e test's): the rest of what
# `harness machine` does, which needs no quiet machine, is machine_blas.sh.
source "$(dirname "$0")/common.sh"
: "${HARNESS_MACHINE_CACHE:?ctest sets HARNESS_MACHINE_CACHE}"
"$HARNESS" machine --remeasure --out "$SCRATCH/machine.json" > "$SCRATCH/out" 2> "$SCRATCH/err"
expect_contains "$(cat "$SCRATCH/err")" "measuring this machine's limits once"
expect_contains "$(cat "$SCRATCH/out")" "fp32 GEMM"
expect_contains "$(cat "$SCRATCH/out")" "triad a = b + s*c"
cmp -s "$SCRATCH/machine.json" "$HARNESS_MACHINE_CACHE" || fail "--out and the cache differ"
version=$("$HARNESS_RANK" version)
"$PY" - "$SCRATCH/machine.json" "$version" <<'PY'
import json, sys
m, version = json.load(open(sys.argv[1])), json.loads(sys.argv[2])
assert m["blas"] == version["blas"], (m["blas"], version["blas"])
assert m["blas"]["library"] not in ("", "unknown") and m["blas"]["path"], m["blas"]
g = m["gemm_fp32"]
assert g["n"] == 1024 and g["repetitions"] >= 3, g
assert g["gflops_one_core"] > 0.5 and g["gflops_all_cores"] > 0.5 * g["gflops_one_core"], g
t = m["triad"]
assert t["gbs_one_core"] > 0.1 and t["gbs_all_cores"] > 0.1, t
rows = m["allreduce_world2"]
assert [r["bytes"] for r in rows] == [1 << 20, 8 << 20, 64 << 20], rows
assert all(r["busbw_gbps"] > 0 and r["p50_ms"] > 0 for r in rows), rows
assert m["key"]["blas_path"] == m["blas"]["path"], m["key"]
PY
# The cache answers the second call.
"$HARNESS" machine > "$SCRATCH/out" 2> "$SCRATCH/err"
[[ ! -s "$SCRATCH/err" ]] || fail "a cached machine was measured again: $(cat "$SCRATCH/err")"
echo "ok"
