#!/usr/bin/env bash
# Fresh Debian 12 machine -> installed, built, and every test run, once per LibTorch in
# HARNESS_LIBTORCH (default "debian pypi": Debian's 1.13 and PyPI's 2.11; scripts/libtorch.sh);
# ctest prints its summary for each. The second LibTorch's pass leaves out the tests of the
# programs and libraries that do not link LibTorch (label torch-free), among them the end-to-end
# tests that start no rank (they run a harness with no harness-rank beside it): the same
# binaries, built from the same sources, already passed in the first; and the end-to-end tests
# whose ranks only carry the harness's own work (label harness-side, tests/CMakeLists.txt).
# The first LibTorch's build packages come first; apt installs what its tests need while it
# builds. The others' packages and builds (PyPI's torch: 4.6 GB, through uv about 30 s of CPU,
# then a build of about 100 s of CPU) run beside the first pass: the download at once, at normal
# priority, and the build after it at idle priority (SCHED_IDLE): the first pass's tests keep the
# cores they use, and the build takes only what they leave (the test that runs alone at the end,
# e2e_emulated_links, leaves one core mostly idle).
# Not nice 19: under a nice-19 loop on one core, the send calls of an emulated link's probe
# waited 1-5 ms for their core and its burst latency read 0.9-1.4 ms (0.1-0.2 ms quiet), past
# e2e_emulated_links' bound once in three; under a SCHED_IDLE loop, 0.07-0.24 ms.
# Their log is shown once the second pass waits for them.
# Last, one line says where the time went (each pass's packages, build and ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/libtorch.sh
read -r -a choices <<< "${HARNESS_LIBTORCH:-debian pypi}"
phases=()
# timed NAME COMMAND...: runs it and adds "NAME Ns" to the phases; its status is the command's.
timed() {
  local name=$1 start=$EPOCHREALTIME status=0
  shift
  "$@" || status=$?
  phases+=("$name $(seconds_since "$start") s")
  return $status
}
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }

build_tree() {  # choice first|later: its build folder with the tests (and the benchmarks)
  # On: a build folder the quickstart configured has them off. A later pass runs no test of a
  # program without LibTorch (label torch-free), and so builds neither those tests nor the
  # benchmarks, which are all torch-free: 17 targets the first pass built from the same sources,
  # which PyPI's pass took from ccache, linked and listed again (a clean build of its folder with
  # a warm ccache takes a third less CPU without them).
  local everything=ON
  if [[ $2 == later ]]; then everything=OFF; fi
  HARNESS_LIBTORCH="$1" ./scripts/build.sh -DHARNESS_BUILD_TESTS=ON \
    -DHARNESS_BUILD_BENCH=$everything -DHARNESS_TORCH_FREE_TESTS=$everything
}

# The later LibTorches' packages and builds, in a process group of their own so that a test.sh
# that stops (an interrupt, a failed first pass's install) stops them too. A failed build is
# left for the pass to build again in the foreground, where it says why.
later=("${choices[@]:1}") later_pid='' later_log=''
stop_later() {
  if [[ -n $later_pid ]]; then kill -- "-$later_pid" 2>/dev/null || true; fi
  if [[ -n $later_log ]]; then rm -f "$later_log" "$later_log.phases"; fi
}
on_exit() {
  stop_later
  # apt is waited for, never killed: dpkg stopped midway leaves the machine's packages half
  # configured. (In the background it ignores an interrupt, as bash makes its jobs do.)
  if [[ -n $run_packages_pid ]]; then
    echo "test.sh: waiting for apt to finish installing the tests' packages"
    wait "$run_packages_pid" 2>/dev/null || true
  fi
  if [[ -n $run_packages_log ]]; then rm -f "$run_packages_log" "$run_packages_log.phases"; fi
}
trap on_exit EXIT
later_work() {
  phases=()
  # At once, beside apt and the first build: PyPI's download waits on the network, not the
  # cores (after apt instead, the second pass waited for this work; beside it, not). Only the build's packages, which the first step installed: apt,
  # installing the first pass's others, takes one caller at a time. At normal priority: its
  # unpacking is CPU work (about 30 s), and at idle priority beside a first pass at -j 3 it took
  # 147 s instead of 60-73, and the second pass waited 27 s for the build after it.
  timed "${later[*]} packages" env HARNESS_DEPS=build HARNESS_LIBTORCH="${later[*]}" \
    ./scripts/install-deps.sh
  chrt --idle --pid 0 "$BASHPID" || echo "test.sh: not at idle priority; the first pass may see it"
  local choice
  for choice in "${later[@]}"; do timed "$choice build" build_tree "$choice" later || true; done
  printf '%s\n' "${phases[@]}" > "$later_log.phases"
}
start_later_work() {
  later_log=$(mktemp -t harness-test-later-XXXXXX)
  set -m  # its own process group
  (later_work) < /dev/null > "$later_log" 2>&1 &
  later_pid=$!
  set +m
}
# The first pass's packages in two steps: what its build and a virtual environment need (the
# test libraries, python3-venv: 1-2 s; HARNESS_DEPS=build in install-deps.sh), then, while it
# builds, what only running the tests needs (Open MPI, Slurm, munge, the PyTorch peer). Beside
# the build apt takes twice as long as alone (dpkg waits on the disk: 41-46 s against about 16,
# and 46 s with the build at nice 10), but apt serves one caller at a time, and so the later
# work's download, which needs no more of it, starts at once (about 10 s sooner on a fresh machine than after apt); the tests have not
# waited for apt since Open MPI's development package went (0 s, 11-18 s before). Its log is
# shown after the build. Where sudo would ask for a password
# (which a job beside the build cannot), apt installs them before the build, as it did.
run_packages_pid='' run_packages_log=''
install_run_packages() {  # choice
  timed "$1 packages to run the tests" env HARNESS_LIBTORCH="$1" ./scripts/install-deps.sh
}
start_run_packages() {
  run_packages_log=$(mktemp -t harness-test-packages-XXXXXX)
  (
    phases=() status=0
    install_run_packages "$1" || status=$?
    printf '%s\n' "${phases[@]}" > "$run_packages_log.phases"
    exit $status
  ) < /dev/null > "$run_packages_log" 2>&1 &
  run_packages_pid=$!
}
wait_run_packages() {
  local start=$EPOCHREALTIME status=0
  wait "$run_packages_pid" || status=$?
  run_packages_pid=''
  take_background_log "$run_packages_log" "(beside the build)" \
    "${choices[0]} tests waited for their packages" "$start"
  return $status
}
# Waits for them, shows their log, and adds their phases, with how long the pass waited.
wait_later_work() {
  local start=$EPOCHREALTIME status=0
  wait "$later_pid" || status=$?
  later_pid=''
  take_background_log "$later_log" "(beside the ${choices[0]} pass)" "${later[*]} waited for" \
    "$start"
  return $status
}
# take_background_log LOG SUFFIX WAITED START: shows a job's log, adds the phases it wrote
# beside it (LOG.phases, each with SUFFIX) and "WAITED N s" since START, and removes both files.
take_background_log() {
  local phase
  cat "$1"
  while read -r phase; do phases+=("$phase $2"); done < <(cat "$1.phases" 2>/dev/null)
  phases+=("$3 $(seconds_since "$4") s")
  rm -f "$1" "$1.phases"
}

status=0 pass=0
for choice in "${choices[@]}"; do
  if ((pass == 0)); then
    timed "$choice packages to build" env HARNESS_DEPS=build HARNESS_LIBTORCH="$choice" \
      ./scripts/install-deps.sh
    if [[ $(id -u) == 0 ]] || sudo -n true 2>/dev/null; then
      start_run_packages "$choice"
    else
      install_run_packages "$choice"
    fi
    if ((${#later[@]} > 0)); then start_later_work; fi
  elif ((pass == 1)); then
    wait_later_work
  fi
  HARNESS_LIBTORCH=$choice libtorch_resolve
  echo "== LibTorch: $choice ($LIBTORCH_BUILD_DIR/)"
  order=first
  if ((pass > 0)); then order=later; fi
  timed "$choice build" build_tree "$choice" "$order"
  if [[ -n $run_packages_pid ]]; then wait_run_packages; fi
  # Three tests at once on 2 cores: they wait on ranks, sockets and files a third of their time
  # (at -j 2 Debian's pass used 1.2-1.3 cores, PyPI's 1.6). On this machine Debian's pass alone
  # took 172-175 s at -j 2 and 160 s at -j 3, PyPI's 69-73 s and 60.3-63.8 s (-j 4 no faster). What the first pass leaves idle the later work at idle priority takes; what it
  # did not finish by then it finishes after, on both cores, before the second pass.
  filter=()
  if ((pass++ > 0)); then filter=(-LE 'torch-free|harness-side'); fi
  timed "$choice ctest" ctest --test-dir "$LIBTORCH_BUILD_DIR" --output-on-failure -j 3 \
    --timeout 900 ${filter[@]+"${filter[@]}"} || status=1
done
(IFS=,; echo "test.sh: ${phases[*]}" | sed 's/,/, /g')
exit $status
