#!/usr/bin/env bash
# The BLAS the rank program names is the one it loads (read from the process: LD_LIBRARY_PATH
# choosing another build changes it); the Python the build derived for its LibTorch carries the
# same torch. (A cache of another BLAS measured again: harness/machine/machine_cache_test.cpp.)
source "$(dirname "$0")/common.sh"
version=$("$HARNESS_RANK" version)
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
# The Python the build derived for this LibTorch (the peer's) carries the same torch release:
# the version of the torch distribution that Python finds, read from its metadata (importing
# torch 2.11 costs 2.5 s of CPU; the metadata is found on the same path the import searches).
"$PY" - "$version" <<'PY'
import json, subprocess, sys
version = json.loads(sys.argv[1])
python = version["torch_python"]
if not python:
    print("note: this LibTorch has no Python beside it")
    sys.exit(0)
found = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('torch'))"],
                       capture_output=True, text=True)
if found.returncode != 0:
    print(f"note: {python} has no torch (the peer is not installed)")
    sys.exit(0)
release = lambda v: v.split("+")[0].split("a")[0].split(".")[:2]
assert release(found.stdout.strip()) == release(version["torch_version"]), (found.stdout, version)
print(f"torch Python {python}: torch {found.stdout.strip()}")
PY
echo "ok"
