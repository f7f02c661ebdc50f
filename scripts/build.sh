#!/usr/bin/env bash
# Configures and builds into build/ (Release with debug info). Extra arguments go to cmake,
# e.g. -DCMAKE_PREFIX_PATH=/opt/libtorch-cuda for a CUDA LibTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
# LibTorch translation units need about 1.5 GB each; one job per core fits in 24 GiB.
cmake --build build -j "$(nproc)"
