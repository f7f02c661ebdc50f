#!/usr/bin/env bash
# Fresh Debian 12 machine -> installed, built, and every test run, once per LibTorch in
# HARNESS_LIBTORCH (default "debian pypi"; scripts/libtorch.sh); ctest prints its summary for
# each. Later passes leave out the torch-free and harness-side tests (tests/CMakeLists.txt): the
# same binaries already passed in the first. The later LibTorches' packages and builds run beside
# the first pass, the build at idle priority (SCHED_IDLE, not nice 19, which slowed the emulated
# links' probe past its bound) so that the first pass's tests keep their cores. The last line
# says where the time went; docs/build-cost.md has the measurements behind these choices.
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
  # A later pass runs no torch-free test, so it builds neither them nor the (torch-free) benches.
  local everything=ON
  if [[ $2 == later ]]; then everything=OFF; fi
  HARNESS_LIBTORCH="$1" ./scripts/build.sh -DHARNESS_BUILD_TESTS=ON \
    -DHARNESS_BUILD_BENCH=$everything -DHARNESS_TORCH_FREE_TESTS=$everything
}

# The later LibTorches' work, in a process group of its own so that a stopping test.sh stops it;
# a failed build is left for its pass to build again in the foreground, where it says why.
later=("${choices[@]:1}") later_pid='' later_log=''
stop_later() {
  if [[ -n $later_pid ]]; then kill -- "-$later_pid" 2>/dev/null || true; fi
  if [[ -n $later_log ]]; then rm -f "$later_log" "$later_log.phases"; fi
}
on_exit() {
  stop_later
  # apt is waited for, never killed: dpkg stopped midway leaves the packages half configured.
  if [[ -n $run_packages_pid ]]; then
    echo "test.sh: waiting for apt to finish installing the tests' packages"
    wait "$run_packages_pid" 2>/dev/null || true
  fi
  if [[ -n $run_packages_log ]]; then rm -f "$run_packages_log" "$run_packages_log.phases"; fi
}
trap on_exit EXIT
later_work() {
  phases=()
  # At once and at normal priority: the download waits on the network, and its unpacking would
  # starve at idle priority. Only the build's packages: apt serves one caller at a time.
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
# The first pass's packages in two steps: what its build needs (HARNESS_DEPS=build), then, while
# it builds, what only running the tests needs; where sudo would ask for a password (which a job
# beside the build cannot answer), both before the build.
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
  # Three tests at once on 2 cores: they wait on ranks, sockets and files a third of their time.
  filter=()
  if ((pass++ > 0)); then filter=(-LE 'torch-free|harness-side'); fi
  timed "$choice ctest" ctest --test-dir "$LIBTORCH_BUILD_DIR" --output-on-failure -j 3 \
    --timeout 900 ${filter[@]+"${filter[@]}"} || status=1
done
(IFS=,; echo "test.sh: ${phases[*]}" | sed 's/,/, /g')
exit $status
