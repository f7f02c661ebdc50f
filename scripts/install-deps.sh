#!/usr/bin/env bash
# Installs the Debian 12 packages harness needs. Idempotent: when every package is
# already installed it returns in about a second without touching apt's lists.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git clang-format
  libtorch-dev libgloo-dev
  libyaml-cpp-dev nlohmann-json3-dev
  libboost-dev libboost-filesystem-dev
  libbenchmark-dev libgtest-dev libgmock-dev libcli11-dev
  gnuplot-nox python3
  openmpi-bin libopenmpi-dev  # --launcher mpirun, and its end-to-end test
  iproute2                    # the two-namespace rendezvous test (ip netns)
)
# Optional: PyTorch's own DDP as a peer in benchmarks. Skipped by HARNESS_NO_PYTORCH=1.
optional=(python3-torch python3-torchvision)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ "${HARNESS_NO_PYTORCH:-0}" != 1 ]]; then
  for p in "${optional[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) != 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
