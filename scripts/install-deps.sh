#!/usr/bin/env bash
# Installs the Debian 12 packages harness needs and, for HARNESS_LIBTORCH=pypi (or a list with
# it, as test.sh passes: "debian pypi"), PyPI's torch and the CUDA toolkit its build needs in a
# virtual environment outside the clone (scripts/libtorch.sh). Idempotent: when everything is
# there it returns in about a second without touching apt's lists or PyPI.
# HARNESS_DEPS=quickstart installs only what building the two programs and running a study on
# this machine need (quickstart.sh): no test or benchmark libraries, no Open MPI, Slurm or munge
# (whose daemons a newcomer's machine would start), no PyTorch peer (docs/install.md says how much
# less it downloads). HARNESS_DEPS=build adds what building the tests
# and benchmarks and a virtual environment for another LibTorch need, not what running the tests
# needs (Open MPI, Slurm, munge, iproute2, clang-format, the PyTorch peer): test.sh builds while
# apt installs those.
set -euo pipefail
source "$(dirname "$0")/libtorch.sh"
deps=${HARNESS_DEPS:-all}
case $deps in
  all | build | quickstart) ;;
  *) echo "error: HARNESS_DEPS=$deps: expected all, build or quickstart" >&2; exit 2 ;;
esac

# Building harness and harness-rank, and running a study on this machine.
packages=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libgloo-dev
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libboost1.81-dev            # Boost.Process v2, header-only: the process layer (common/child_process.cpp)
  libsqlite3-dev libpq-dev    # harness history's databases: SQLite embedded, PostgreSQL's client
  gnuplot-nox python3
  libopenblas0-openmp         # the BLAS LibTorch loads (below)
  # The compiler's cache, here too: CMake puts it in every compile command when it finds it, so
  # test.sh, had it installed it first, would rebuild the quickstart's build whole, not only
  # the tests. 0.7 MB with libhiredis.
  ccache
)
if [[ $deps != quickstart ]]; then
  packages+=(libbenchmark-dev libgtest-dev libgmock-dev)
fi
if [[ $deps == all ]]; then
  packages+=(
    git clang-format
    shellcheck                  # the suite checks that every script parses (tests/scripts/scripts_parse.sh)
    # --launcher mpirun and its end-to-end tests: mpirun only. Nothing here compiles against MPI,
    # and libopenmpi-dev would add 16 packages, gfortran among them (15.7 MB, 68 MB installed).
    openmpi-bin
    iproute2                    # emulated machines and the two-namespace rendezvous test (ip netns)
    slurmd slurmctld slurm-client munge  # a real Slurm on emulated machines (scripts/emulated-slurm.sh)
    # harness history's tests: a real PostgreSQL server (a private cluster each test starts; no
    # main cluster is made, see below) and a real browser for the trend site
    postgresql chromium
  )
fi
# A LibTorch other than Debian's (PyPI's torch) goes into a virtual environment.
if [[ $deps != quickstart || ${HARNESS_LIBTORCH:-debian} != debian ]]; then
  packages+=(python3-venv)
fi
# Debian's LibTorch calls whatever libblas.so.3 resolves to; the reference BLAS Debian installs
# with it runs fp32 GEMM at ~8 GFLOP/s per core here against ~135 with OpenBLAS, and DDP
# iterations 5-9x slower (bench/blas_compare.sh, experiments/README.md "BLAS"). OpenBLAS's
# OpenMP build shares LibTorch's OpenMP runtime (one thread pool, one OMP_NUM_THREADS); its
# pthread build, which Debian ranks higher, would add a second pool. Chosen explicitly:
blas_dir=/usr/lib/x86_64-linux-gnu/openblas-openmp
select_blas() {
  local name
  for name in libblas.so.3 liblapack.so.3; do
    if [[ "$(readlink -f "/etc/alternatives/$name-x86_64-linux-gnu" 2>/dev/null)" != "$blas_dir/$name" ]]; then
      "${sudo_cmd[@]}" update-alternatives --quiet --set "$name-x86_64-linux-gnu" "$blas_dir/$name"
      echo "install-deps: $name -> $blas_dir/$name"
    fi
  done
}
sudo_cmd=()
if [[ $(id -u) != 0 ]]; then sudo_cmd=(sudo); fi
# Optional: PyTorch's own DDP as a peer in benchmarks. Skipped by HARNESS_NO_PYTORCH=1.
optional=(python3-torch python3-torchvision)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ "${HARNESS_NO_PYTORCH:-0}" != 1 && $deps == all ]]; then
  for p in "${optional[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Debian's postgresql makes and starts a cluster on port 5432 when it installs; the tests start
  # their own in a temporary folder, so none is made (postgresql-common's createcluster.conf).
  if [[ " ${missing[*]} " == *" postgresql "* && ! -e /etc/postgresql-common/createcluster.conf ]]; then
    "${sudo_cmd[@]}" mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" | "${sudo_cmd[@]}" tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
select_blas
# The change-point peer, Apache Otava, in a virtual environment of its own beside PyPI's torch
# (tests/e2e/history.sh runs it against the harness's detector).
if [[ $deps == all ]]; then otava_install; fi
for choice in ${HARNESS_LIBTORCH:-debian}; do
  if [[ $choice == pypi ]]; then libtorch_install_pypi; fi
done
