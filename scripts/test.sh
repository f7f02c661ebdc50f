#!/usr/bin/env bash
# Fresh Debian 12 machine -> installed, built, and every test run, once per LibTorch in
# HARNESS_LIBTORCH (default "debian pypi": Debian's 1.13 and PyPI's 2.11; scripts/libtorch.sh);
# ctest prints its summary for each. The second LibTorch's pass leaves out the tests of the
# programs and libraries that do not link LibTorch (label torch-free), among them the end-to-end
# tests that start no rank (they run a harness with no harness-rank beside it): the same
# binaries, built from the same sources, already passed in the first. Each LibTorch's own packages
# come before its pass (Debian's apt packages with the first; PyPI's torch, 4.6 GB, before its
# own), so that one pass's time can be read alone. Last, one line says where the time went (each
# pass's packages, build and ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/libtorch.sh
choices=${HARNESS_LIBTORCH:-debian pypi}
phases=()
# timed NAME COMMAND...: runs it and adds "NAME Ns" to the phases; its status is the command's.
timed() {
  local name=$1 start=$EPOCHREALTIME status=0
  shift
  "$@" || status=$?
  phases+=("$name $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s")
  return $status
}
status=0 pass=0
for choice in $choices; do
  timed "$choice packages" env HARNESS_LIBTORCH="$choice" ./scripts/install-deps.sh
  HARNESS_LIBTORCH=$choice libtorch_resolve
  echo "== LibTorch: $choice ($LIBTORCH_BUILD_DIR/)"
  # On: a build folder the quickstart configured has them off.
  timed "$choice build" env HARNESS_LIBTORCH="$choice" ./scripts/build.sh \
    -DHARNESS_BUILD_TESTS=ON -DHARNESS_BUILD_BENCH=ON
  filter=()
  if ((pass++ > 0)); then filter=(-LE torch-free); fi
  timed "$choice ctest" ctest --test-dir "$LIBTORCH_BUILD_DIR" --output-on-failure -j 2 \
    --timeout 900 ${filter[@]+"${filter[@]}"} || status=1
done
(IFS=,; echo "test.sh: ${phases[*]}" | sed 's/,/, /g')
exit $status
