#!/usr/bin/env bash
# Configures and builds into build/ (Release with debug info). Extra arguments go to cmake,
# e.g. -DCMAKE_PREFIX_PATH=/opt/libtorch-cuda for a CUDA LibTorch. HARNESS_BUILD_TARGETS
# (space-separated) builds only those targets, e.g. "harness harness-rank" for the quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
# LibTorch translation units need about 1.5 GB each; one job per core fits in 24 GiB.
read -r -a targets <<< "${HARNESS_BUILD_TARGETS:-}"
cmake --build build -j "$(nproc)" ${targets[@]+--target "${targets[@]}"}
