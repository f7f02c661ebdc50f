#!/usr/bin/env bash
# harness machine: the figures are measured, printed, written as JSON and cached; a second call
# reads the cache, a changed BLAS measures again; the BLAS named is the one the rank program
# loads (read from the process: LD_LIBRARY_PATH choosing another build changes it).
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
# The cache answers the second call; a cache of another BLAS is measured again.
"$HARNESS" machine > "$SCRATCH/out" 2> "$SCRATCH/err"
[[ ! -s "$SCRATCH/err" ]] || fail "a cached machine was measured again: $(cat "$SCRATCH/err")"
"$PY" - "$HARNESS_MACHINE_CACHE" "$SCRATCH/other.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["key"]["blas_path"] = "/elsewhere/libblas.so.3"
json.dump(m, open(sys.argv[2], "w"))
PY
HARNESS_MACHINE_CACHE="$SCRATCH/other.json" "$HARNESS" machine > /dev/null 2> "$SCRATCH/err"
expect_contains "$(cat "$SCRATCH/err")" "measuring this machine's limits once"
# Another BLAS build chosen for the process is the one reported. PyPI's LibTorch carries MKL
# in libtorch_cpu.so: no libblas.so.3 to choose, and the BLAS named is MKL there.
reference=/usr/lib/x86_64-linux-gnu/blas
if [[ $version == *'/libtorch_cpu.so"'* ]]; then
  expect_contains "$version" '"library":"mkl"'
elif [[ -e "$reference/libblas.so.3" ]]; then
  blas="$(LD_LIBRARY_PATH="$reference" "$HARNESS_RANK" version)"
  expect_contains "$blas" '"library":"reference"'
  expect_contains "$blas" "\"path\":\"$reference/libblas.so.3"
fi
# The Python the build derived for this LibTorch (the peer's) carries the same torch release.
"$PY" - "$version" <<'PY'
import json, subprocess, sys
version = json.loads(sys.argv[1])
python = version["torch_python"]
if not python:
    print("note: this LibTorch has no Python beside it")
    sys.exit(0)
found = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                       capture_output=True, text=True)
if found.returncode != 0:
    print(f"note: {python} has no torch (the peer is not installed)")
    sys.exit(0)
release = lambda v: v.split("+")[0].split("a")[0].split(".")[:2]
assert release(found.stdout.strip()) == release(version["torch_version"]), (found.stdout, version)
print(f"torch Python {python}: torch {found.stdout.strip()}")
PY
echo "ok"
