#!/usr/bin/env bash
# Configures and builds (Release: -O2, no debug info; HARNESS_BUILD_TYPE=RelWithDebInfo adds -g)
# against the LibTorch HARNESS_LIBTORCH names (scripts/libtorch.sh: debian, the default, into
# build/; pypi into build-pypi/; or a path). Extra arguments go to cmake. HARNESS_BUILD_TARGETS
# (space-separated) builds only those targets, e.g. "harness harness-rank" for the quickstart;
# HARNESS_BUILD_DIR builds elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/libtorch.sh
libtorch_resolve
build_dir=$LIBTORCH_BUILD_DIR
libtorch_forget_stale_configuration "$build_dir"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${HARNESS_BUILD_TYPE:-Release}" \
  ${LIBTORCH_CMAKE_ARGS[@]+"${LIBTORCH_CMAKE_ARGS[@]}"} "$@" >/dev/null
# LibTorch translation units need about 1.5 GB each; one job per core fits in 24 GiB.
read -r -a targets <<< "${HARNESS_BUILD_TARGETS:-}"
cmake --build "$build_dir" -j "$(nproc)" ${targets[@]+--target "${targets[@]}"}
