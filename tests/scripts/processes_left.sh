#!/usr/bin/env bash
# The suite leaves no process behind. `record FILE`, the suite's first test (a ctest fixture's
# setup), writes the daemons and rank programs alive before it: a host's own Slurm or munge
# services are not the suite's. `check FILE`, its last (the fixture's cleanup, after every test
# that requires it), waits up to 15 s for every slurmd, slurmctld, slurmstepd, slurmscriptd,
# munged, prted, orted, mpirun, prterun, harness-rank, postgres, chromium or chrome_crashpad (its
# crash handler) that was not there before to be gone,
# zombies included (a daemon's children go to init when it dies, and init reaps them in its own
# time), and fails naming those that are still running. PROCESSES_LEFT_WAIT_S sets the wait.
# With HARNESS_SUITE_MARK set (the suite sets it in every end-to-end test's environment, and its
# processes inherit it), only processes whose environment holds the same mark are the suite's: a
# user's own study beside the suite starts harness-rank too, and is none of its business.
set -euo pipefail
names='^(slurmd|slurmctld|slurmstepd|slurmscriptd|munged|prted|orted|mpirun|prterun|harness-rank|postgres|chromium|chrome_crashpad)$'
mode=${1:-} file=${2:-}
[[ ($mode == record || $mode == check) && -n $file ]] || {
  echo "usage: processes_left.sh record|check FILE" >&2
  exit 2
}
# PID STAT ARGS of each process of those names, this script's own shell aside.
watched() { ps -eo pid=,stat=,comm=,args= | awk -v names="$names" '$3 ~ names { $3 = ""; print }'; }

if [[ $mode == record ]]; then
  watched | awk '{ print $1 }' > "$file"
  exit 0
fi
before=$(cat "$file" 2>/dev/null || true)
# Whether process $1 is the suite's: it carries the mark (or no mark is asked for). An environment
# that cannot be read counts as the suite's: a check that cannot tell does not pass in silence.
suites() {
  [[ -z ${HARNESS_SUITE_MARK:-} ]] && return 0
  [[ -r /proc/$1/environ ]] || return 0
  tr '\0' '\n' < "/proc/$1/environ" 2>/dev/null | grep -qxF "HARNESS_SUITE_MARK=$HARNESS_SUITE_MARK"
}
new() {
  local pid line
  while read -r line; do
    pid=${line%% *}
    if suites "$pid"; then echo "$line"; fi
  done < <(watched | awk -v before=" $(tr '\n' ' ' <<< "$before") " 'index(before, " " $1 " ") == 0')
}
wait_s=${PROCESSES_LEFT_WAIT_S:-15}
for _ in $(seq "$((wait_s * 10))"); do
  [[ -z $(new) ]] && exit 0
  sleep 0.1
done
running=$(new | awk '$2 !~ /^Z/')
if [[ -z $running ]]; then
  echo "note: only dead processes (zombies) not yet reaped by init after $wait_s s:" \
    "$(new | awk '{ print $1 }' | tr '\n' ' ')"
  exit 0
fi
echo "processes the suite left running:"
echo "$running"
exit 1
