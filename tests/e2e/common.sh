# shellcheck shell=bash
# Shared by the end-to-end tests: a scratch folder, assertions that say what failed.
set -euo pipefail
: "${HARNESS:?set HARNESS to the harness binary}"
# The rank program the harness launches (the ranks a test starts by hand, the processes it
# looks for).
HARNESS_RANK="$(dirname "$HARNESS")/harness-rank"
SCRATCH=$(mktemp -d /tmp/harness-e2e-XXXXXX)
trap 'rm -rf "$SCRATCH"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_contains() {  # file-or-text needle
  grep -qF -- "$2" <<<"$1" || fail "expected to find '$2' in:
$1"
}
# A python3 with only the standard library parses the JSON outputs.
PY=$(command -v python3 || true)
[[ -n "$PY" ]] || fail "python3 is needed to parse results"
# `harness run SPEC ARGS...` refused: exit 2 and one line on stderr that holds WANT.
expect_refused() {  # spec want args...
  local spec=$1 want=$2 code
  shift 2
  set +e
  "$HARNESS" run "$spec" "$@" >/dev/null 2>"$SCRATCH/refused.err"
  code=$?
  set -e
  [[ $code == 2 && $(wc -l <"$SCRATCH/refused.err") == 1 ]] ||
    fail "exit $code for $*: $(cat "$SCRATCH/refused.err")"
  expect_contains "$(cat "$SCRATCH/refused.err")" "$want"
}
# `harness run SPEC --set output=OUT` refused: exit 2, stderr exactly WANT, nothing under OUT.
expect_refused_exactly() {  # spec want out
  local spec=$1 want=$2 out=$3 code
  rm -rf "$out"
  set +e
  "$HARNESS" run "$spec" --set output="$out" >/dev/null 2>"$SCRATCH/refused.err"
  code=$?
  set -e
  [[ $code == 2 ]] || fail "exit $code for: $want ($(cat "$SCRATCH/refused.err"))"
  [[ "$(cat "$SCRATCH/refused.err")" == "$want" ]] ||
    fail "stderr '$(cat "$SCRATCH/refused.err")', want '$want'"
  [[ ! -e "$out" ]] || fail "a bad spec wrote results"
}
# Where this machine cannot build emulated machines (no root, no qdisc), skips the test (77) with
# the one line (exit 2) a probe of two of them at RATE says why, having written no folder; fails
# if the probe fails else. The probe's report is left in $SCRATCH/machines-probe.out.
skip_without_emulated_machines() {  # rate
  local code
  set +e
  "$HARNESS" profile comm --world 2 --machines 2 --link-rate "$1" --ops allreduce --sizes 1K \
    --iterations 1 --warmup 0 --out "$SCRATCH/machines-probe" >"$SCRATCH/machines-probe.out" \
    2>"$SCRATCH/probe.err"
  code=$?
  set -e
  if [[ $code == 2 ]]; then
    [[ $(wc -l <"$SCRATCH/probe.err") == 1 ]] || fail "not one line: $(cat "$SCRATCH/probe.err")"
    expect_contains "$(cat "$SCRATCH/probe.err")" "error: --machines: "
    [[ ! -e "$SCRATCH/machines-probe" ]] || fail "an unavailable emulation wrote its folder"
    echo "SKIP: $(cat "$SCRATCH/probe.err")"
    exit 77
  fi
  [[ $code == 0 ]] || fail "a probe of two machines at $1: exit $code: $(cat "$SCRATCH/probe.err")"
}
