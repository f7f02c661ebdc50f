#!/usr/bin/env bash
# A CUDA LibTorch builds with nothing of CUDA but the toolkit its build was given, as on a fresh
# Debian 12 machine: scripts/install-deps.sh lays one out from PyPI's wheels for PyPI's torch
# (scripts/libtorch.sh, libtorch_install_cuda_toolkit). In a private mount namespace the
# machine's own CUDA is hidden (/usr/local/cuda*, and any folder of /usr/local or /opt holding
# nvcc, CUDA's or NCCL's headers or libcudart); there cuda_toolkit/ configures against that
# LibTorch and toolkit, compiles the harness's GPU file and links and runs a program whose CUDA
# and NCCL versions, compiled in from the headers found, must be the ones torch was built with
# (where there was nothing to hide, the harness's own build was that compile, and only the
# program is built).
# Skips (77) where the build used the machine's own toolkit, where CUDA lies in a folder this
# test cannot hide (/usr/include), and where there is CUDA to hide without root to hide it.
#
# Environment (tests/CMakeLists.txt): SOURCE_DIR, TORCH_PREFIX, TORCH_PYTHON, CUDA_TOOLKIT,
# CUDA_COMPILER, CMAKE, CXX, MAKE_PROGRAM, and WORK_DIR (a build folder, remade; default a
# temporary one).
set -euo pipefail
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# The folders, outside the toolkit under test, that hold a CUDA of the machine's own.
cuda_folders() {
  local dir entry
  for dir in /usr/local/cuda /usr/local/cuda-*; do
    [[ -d $dir ]] && readlink -f "$dir"
  done
  for dir in /usr/local/* /opt/*; do
    [[ -d $dir && ! -L $dir ]] || continue
    # A toolkit of its own (/opt/cuda), or one of /usr/local's bin, include and lib with CUDA in.
    for entry in bin/nvcc nvcc include/cuda_runtime.h cuda_runtime.h include/nccl.h nccl.h \
      lib/libcudart.so lib64/libcudart.so libcudart.so; do
      if [[ -e $dir/$entry ]]; then
        readlink -f "$dir"
        break
      fi
    done
  done
}

# Where CUDA can still be found by the compiler or on PATH; empty when nowhere.
cuda_still_visible() {
  local nvcc found
  nvcc=$(command -v nvcc || true)
  if [[ -n $nvcc ]]; then echo "nvcc at $nvcc"; return; fi
  if found=$(echo '#include <cuda_runtime.h>' | "$CXX" -M -x c++ - 2>/dev/null); then
    echo "cuda_runtime.h at $(tr ' ' '\n' <<<"$found" | grep -m1 cuda_runtime.h)"
  fi
}

if [[ -z ${CUDA_TOOLKIT_ALONE_INSIDE:-} ]]; then
  : "${CUDA_TOOLKIT:?}" "${TORCH_PYTHON:?}"
  toolkit=$(readlink -f "$CUDA_TOOLKIT")
  mapfile -t hidden < <(cuda_folders | sort -u)
  for dir in ${hidden[@]+"${hidden[@]}"}; do
    [[ $toolkit/ == "$dir"/* ]] &&
      skip "the build uses the machine's own CUDA toolkit ($CUDA_TOOLKIT), not one of its own"
  done
  export CUDA_TOOLKIT_ALONE_INSIDE=1 CUDA_TOOLKIT_ALONE_HIDDEN="${hidden[*]-}"
  # A machine with no CUDA of its own (a fresh Debian 12) is already the case tested.
  if ((${#hidden[@]})); then
    [[ $(id -u) == 0 ]] || skip "hiding the machine's CUDA needs root (a private mount namespace)"
    unshare -m true 2>/dev/null || skip "no private mount namespace here (unshare -m)"
    exec unshare -m bash "$0"
  fi
fi

# In the namespace (unshare -m makes its mounts private: the machine sees none of this).
for dir in $CUDA_TOOLKIT_ALONE_HIDDEN; do mount -t tmpfs -o size=1m harness-hide "$dir"; done
for tool in "$CMAKE" "$CXX" "$MAKE_PROGRAM"; do
  [[ -x $tool ]] || skip "$tool lies in a folder that holds CUDA, hidden here"
done
visible=$(cuda_still_visible)
[[ -z $visible ]] || skip "CUDA outside /usr/local and /opt, which this test cannot hide: $visible"
echo "hidden: ${CUDA_TOOLKIT_ALONE_HIDDEN:-nothing (this machine has no CUDA of its own)}"
# With nothing hidden, the harness's own build has just compiled the GPU file against this
# toolkit alone, under the same conditions; compiled again it costs PyPI's pass 10-20 s of CPU on
# a fresh machine. What is left is LibTorch's package and the versions.
gpu_file=ON
if [[ -z ${CUDA_TOOLKIT_ALONE_HIDDEN:-} ]]; then
  gpu_file=OFF
  echo "the GPU file: compiled by the harness's build against this toolkit alone"
fi

# Configured from nothing each time. Inside the build tree (WORK_DIR) and with ccache's paths
# taken relative to the clone, a clean clone at the same place compiles from ccache's copy.
work=${WORK_DIR:-$(mktemp -d /tmp/harness-cuda-toolkit-XXXXXX)}
rm -rf "$work" && mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$SOURCE_DIR CCACHE_NOHASHDIR=1
fi
if ! "$CMAKE" -S "$(dirname "$0")/cuda_toolkit" -B "$work" -G Ninja \
  -DCMAKE_MAKE_PROGRAM="$MAKE_PROGRAM" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" -DCUDA_TOOLKIT_ROOT_DIR="$CUDA_TOOLKIT" \
  -DCMAKE_CUDA_COMPILER="$CUDA_COMPILER" -DHARNESS_SOURCE_DIR="$SOURCE_DIR" \
  -DPROBE_GPU_FILE="$gpu_file" \
  ${launcher[@]+"${launcher[@]}"} >"$work/configure.log" 2>&1; then
  grep -v '^ *$' "$work/configure.log" | tail -25 >&2
  fail "LibTorch's CMake package did not configure against $CUDA_TOOLKIT alone"
fi
"$CMAKE" --build "$work" >"$work/build.log" 2>&1 || {
  grep -B2 -A6 -m3 'error' "$work/build.log" >&2
  fail "the GPU file or the probe did not build against $CUDA_TOOLKIT alone"
}
probe=$("$work/probe") || fail "the probe did not run: $probe"
echo "$probe"

# What torch was built with: CUDA "13.0" is CUDA_VERSION 13000; NCCL (2, 28, 9) is 22809.
read -r want_cuda want_nccl < <("$TORCH_PYTHON" -c '
import torch
major, minor = map(int, torch.version.cuda.split(".")[:2])
nccl = torch.cuda.nccl.version()
print(major * 1000 + minor * 10, nccl[0] * 10000 + nccl[1] * 100 + nccl[2])')
value() { awk -v key="$1" '$1 == key { print $2 }' <<<"$probe"; }
[[ $(value cuda_version) == "$want_cuda" ]] ||
  fail "compiled against CUDA $(value cuda_version), torch was built with $want_cuda"
[[ $(value nccl_version) == "$want_nccl" ]] ||
  fail "compiled against NCCL $(value nccl_version), torch was built with $want_nccl"
[[ $(value cuda_devices) =~ ^[0-9]+$ ]] || fail "no GPU count: $probe"
echo "PASS: CUDA $want_cuda and NCCL $want_nccl from $CUDA_TOOLKIT alone"
