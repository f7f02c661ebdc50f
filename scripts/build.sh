#!/usr/bin/env bash
# Configures and builds into build/ (Release: -O2, no debug info; HARNESS_BUILD_TYPE=RelWithDebInfo
# adds -g). Extra arguments go to cmake, e.g. -DCMAKE_PREFIX_PATH=/opt/libtorch-cuda for a CUDA
# LibTorch. HARNESS_BUILD_TARGETS (space-separated) builds only those targets, e.g.
# "harness harness-rank" for the quickstart; HARNESS_BUILD_DIR builds elsewhere than build/.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${HARNESS_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${HARNESS_BUILD_TYPE:-Release}" "$@" >/dev/null
# LibTorch translation units need about 1.5 GB each; one job per core fits in 24 GiB.
read -r -a targets <<< "${HARNESS_BUILD_TARGETS:-}"
cmake --build "$build_dir" -j "$(nproc)" ${targets[@]+--target "${targets[@]}"}
