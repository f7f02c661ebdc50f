#!/usr/bin/env bash
# scripts/build.sh configures a build folder anew (libtorch_forget_stale_configuration) where its
# cache names another LibTorch or CUDA compiler than the one asked for, and keeps it otherwise:
# left alone, CMake would keep the old LibTorch, or meet the new compiler by configuring again
# without CMAKE_PREFIX_PATH, against Debian's LibTorch.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/libtorch.sh
work=$(mktemp -d /tmp/harness-stale-configuration-XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0

# check WHAT WANT(kept|forgotten) TORCH_DIR CACHED_CUDA_COMPILER, against a pypi-like request.
check() {
  local what=$1 want=$2 got
  rm -rf "$work/build" && mkdir -p "$work/build/CMakeFiles/3.25.1" "$work/build/runtime"
  printf 'Torch_DIR:PATH=%s\nCMAKE_CUDA_COMPILER:STRING=%s\n' "$3" "$4" \
    >"$work/build/CMakeCache.txt"
  LIBTORCH_PREFIX=/venv/torch LIBTORCH_CUDA_TOOLKIT=/venv/cuda-toolkit \
    libtorch_forget_stale_configuration "$work/build" >"$work/said"
  got=kept
  [[ -f $work/build/CMakeCache.txt ]] || got=forgotten
  if [[ $got != "$want" ]]; then
    echo "FAIL: $what: $got, wanted $want"
  elif [[ $want == forgotten && -d $work/build/CMakeFiles/3.25.1 ]]; then
    echo "FAIL: $what: the cache went, CMake's compiler detection stayed"
  elif [[ $want == forgotten ]] && ! grep -q "configuring it anew" "$work/said"; then
    echo "FAIL: $what: forgotten without a word: $(cat "$work/said")"
  elif [[ ! -d $work/build/runtime ]]; then
    echo "FAIL: $what: more than the configuration removed"
  else
    echo "PASS: $what: $got"
    return
  fi
  failures=$((failures + 1))
}
check "the same LibTorch and compiler" kept /venv/torch/share/cmake/Torch \
  /venv/cuda-toolkit/bin/nvcc
check "Debian's LibTorch cached" forgotten /usr/lib/x86_64-linux-gnu/cmake/Torch \
  /venv/cuda-toolkit/bin/nvcc
check "the machine's nvcc cached" forgotten /venv/torch/share/cmake/Torch /usr/local/cuda/bin/nvcc
check "no compiler cached yet" kept /venv/torch/share/cmake/Torch ""

# Debian's request: its own LibTorch is kept, PyPI's is not; no CUDA compiler asked for.
HARNESS_LIBTORCH=debian libtorch_resolve
for cached in /usr/lib/x86_64-linux-gnu/cmake/Torch /venv/torch/share/cmake/Torch; do
  rm -rf "$work/build" && mkdir -p "$work/build"
  printf 'Torch_DIR:PATH=%s\n' "$cached" >"$work/build/CMakeCache.txt"
  libtorch_forget_stale_configuration "$work/build" >/dev/null
  want=kept
  [[ $cached == /venv/* ]] && want=forgotten
  got=kept
  [[ -f $work/build/CMakeCache.txt ]] || got=forgotten
  [[ $got == "$want" ]] && echo "PASS: debian, $cached cached: $got" ||
    { echo "FAIL: debian, $cached cached: $got, wanted $want"; failures=$((failures + 1)); }
done
exit $((failures > 0))
