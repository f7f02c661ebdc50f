#!/usr/bin/env bash
# Fresh Debian 12 machine -> installed, built, and the quickstart study run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the quickstart runs: no PyTorch peer (the tests and benchmarks install it), and the
# two programs, not the tests and benchmarks.
# HARNESS_LIBTORCH picks the LibTorch (scripts/libtorch.sh; Debian's by default).
source scripts/libtorch.sh
HARNESS_NO_PYTORCH=1 ./scripts/install-deps.sh
HARNESS_BUILD_TARGETS="harness harness-rank" ./scripts/build.sh
libtorch_resolve
"./$LIBTORCH_BUILD_DIR/harness" run experiments/quickstart.yaml
