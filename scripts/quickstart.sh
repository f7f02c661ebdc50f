#!/usr/bin/env bash
# Fresh Debian 12 machine -> installed, built, and the quickstart study run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the quickstart runs: the packages that build and run the two programs (no test or
# benchmark libraries, no PyTorch peer, no Open MPI or Slurm), and the two programs, configured
# without the tests and benchmarks (scripts/test.sh turns them on in the same build folder).
# HARNESS_LIBTORCH picks the LibTorch (scripts/libtorch.sh; Debian's by default).
source scripts/libtorch.sh
HARNESS_DEPS=quickstart ./scripts/install-deps.sh
HARNESS_BUILD_TARGETS="harness harness-rank" ./scripts/build.sh \
  -DHARNESS_BUILD_TESTS=OFF -DHARNESS_BUILD_BENCH=OFF
libtorch_resolve
"./$LIBTORCH_BUILD_DIR/harness" run experiments/quickstart.yaml
