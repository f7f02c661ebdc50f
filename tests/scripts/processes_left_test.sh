#!/usr/bin/env bash
# tests/scripts/processes_left.sh against processes started here: one named like a rank program
# that outlives the "suite" fails the check, naming it; one alive before the record does not;
# with the suite's mark, one without it (a user's study beside the suite) does not either;
# nothing left passes.
set -euo pipefail
check=$(dirname "$0")/processes_left.sh
scratch=$(mktemp -d)
pids=()
cleanup() { kill -KILL "${pids[@]}" 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cp "$(command -v sleep)" "$scratch/harness-rank"

"$scratch/harness-rank" 300 &  # there before the record: a host's own, never reported
pids+=($!)
bash "$check" record "$scratch/before.txt"
grep -qx "${pids[0]}" "$scratch/before.txt" || fail "the process alive before was not recorded"
PROCESSES_LEFT_WAIT_S=1 bash "$check" check "$scratch/before.txt" >"$scratch/out" ||
  fail "nothing new, but the check failed: $(cat "$scratch/out")"

"$scratch/harness-rank" 301 &  # started by the "suite", left running
pids+=($!)
set +e
PROCESSES_LEFT_WAIT_S=1 bash "$check" check "$scratch/before.txt" >"$scratch/out"
code=$?
set -e
[[ $code == 1 ]] || fail "a process left running: exit $code, want 1"
grep -q "^processes the suite left running:" "$scratch/out" || fail "said: $(cat "$scratch/out")"
grep -q "^${pids[1]} .*harness-rank 301" "$scratch/out" || fail "not named: $(cat "$scratch/out")"
grep -q "harness-rank 300" "$scratch/out" && fail "the one alive before was named"

kill -KILL "${pids[1]}"
wait "${pids[1]}" 2>/dev/null || true
PROCESSES_LEFT_WAIT_S=1 bash "$check" check "$scratch/before.txt" >"$scratch/out" ||
  fail "the process is gone, but the check failed: $(cat "$scratch/out")"
# With a mark: a process without it (a user's own study beside the suite) is not the suite's;
# one that carries it is, and fails the check.
env -u HARNESS_SUITE_MARK "$scratch/harness-rank" 302 &
pids+=($!)
HARNESS_SUITE_MARK=suite-here PROCESSES_LEFT_WAIT_S=1 bash "$check" check "$scratch/before.txt" \
  >"$scratch/out" || fail "a process without the suite's mark failed the check: $(cat "$scratch/out")"
HARNESS_SUITE_MARK=suite-here "$scratch/harness-rank" 303 &
pids+=($!)
set +e
HARNESS_SUITE_MARK=suite-here PROCESSES_LEFT_WAIT_S=1 bash "$check" check "$scratch/before.txt" \
  >"$scratch/out"
code=$?
set -e
[[ $code == 1 ]] || fail "a marked process left running: exit $code, want 1"
grep -q "^${pids[3]} .*harness-rank 303" "$scratch/out" || fail "not named: $(cat "$scratch/out")"
grep -q "harness-rank 302" "$scratch/out" && fail "the unmarked one was named"
kill -KILL "${pids[2]}" "${pids[3]}"
wait "${pids[2]}" "${pids[3]}" 2>/dev/null || true

[[ $(bash "$check" bogus 2>&1; echo $?) == *"usage: processes_left.sh record|check FILE"*2 ]] ||
  fail "a bad mode was not refused with exit 2"
echo "PASS processes_left"
