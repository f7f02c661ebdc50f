#!/usr/bin/env bash
# HARNESS_LIBTORCH=pypi with a torch but neither the CUDA toolkit install-deps lays out beside it
# nor an nvcc on PATH: scripts/build.sh refuses before cmake runs -- exit 2, one line saying what
# is missing and what installs it, no build folder made -- rather than leaving torch's CMake
# package to fail with "cannot find the CUDA libraries". Skips (77) where /usr/bin has an nvcc.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/libtorch.sh
work=$(mktemp -d /tmp/harness-pypi-without-toolkit-XXXXXX)
trap 'rm -rf "$work"' EXIT
PATH=/usr/bin:/bin command -v nvcc >/dev/null && { echo "SKIP: /usr/bin has an nvcc"; exit 77; }

# A virtual environment whose python names a torch folder, as libtorch_of_python asks it to.
venv=$(HARNESS_CACHE=$work libtorch_venv)
mkdir -p "$venv/bin" "$work/torch"
printf '#!/bin/sh\necho %s\n' "$work/torch" >"$venv/bin/python"
chmod +x "$venv/bin/python"

err=$(HARNESS_CACHE=$work HARNESS_LIBTORCH=pypi HARNESS_BUILD_DIR="$work/build" PATH=/usr/bin:/bin \
  bash scripts/build.sh 2>&1 >/dev/null)
code=$?
want="error: HARNESS_LIBTORCH=pypi: no CUDA toolkit in $venv nor nvcc on PATH"
want+=" (HARNESS_LIBTORCH=pypi scripts/install-deps.sh installs it)"
[[ $code == 2 ]] || { echo "FAIL: exit $code, not 2: $err"; exit 1; }
[[ $err == "$want" ]] || { echo "FAIL: stderr was: $err"; exit 1; }
[[ ! -e $work/build ]] || { echo "FAIL: the refused build made its folder"; exit 1; }
echo "PASS: $err"
