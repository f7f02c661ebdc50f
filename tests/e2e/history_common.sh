# shellcheck shell=bash
# Shared by the history tests: results folders of known timings, made from the committed
# reference run (results/reference/ci_regression) with every rank's times scaled.
REFERENCE_RESULTS="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/results/reference/ci_regression"

# make_results OUT FACTOR: a copy of the reference run whose samples are FACTOR times its own.
make_results() {
  local out=$1 factor=$2 csv
  rm -rf "$out"
  mkdir -p "$(dirname "$out")"
  cp -r "$REFERENCE_RESULTS" "$out"
  for csv in "$out"/raw/*/*/rep*/rank*.csv; do
    awk -F, -v f="$factor" 'BEGIN { OFS = "," } NR == 1 { print; next }
      { print $1, $2 * f, $3 * f, $4 * f, $5 * f }' "$csv" > "$csv.scaled"
    mv "$csv.scaled" "$csv"
  done
}

# The noise of commit K of an A/A history: a fixed pattern within +-1.5%, the same every run.
aa_factor() { awk -v k="$1" 'BEGIN { printf "%.4f", 1 + 0.005 * ((k * 5) % 7 - 3) }'; }

# add_history DB FROM TO STEP_AT STEP: commits cFROM..cTO (c01, c02, ...), each a results folder
# of aa_factor's noise, times (1 + STEP) from commit STEP_AT on, added with `history add`.
add_history() {
  local db=$1 from=$2 to=$3 step_at=$4 step=$5 k factor
  shift 5
  for ((k = from; k <= to; k++)); do
    factor=$(awk -v a="$(aa_factor "$k")" -v s="$step" -v on=$((k >= step_at)) \
      'BEGIN { printf "%.4f", a * (on ? 1 + s : 1) }')
    make_results "$SCRATCH/commits/c$k" "$factor"
    "$HARNESS" history add "$SCRATCH/commits/c$k" --commit "$(printf 'c%02d' "$k")" --db "$db" \
      --branch main "$@" > /dev/null || fail "history add of c$k: exit $?"
  done
}

# dump_db FILE: the database's content as SQL text (python3's sqlite3: no sqlite3 program needed).
dump_db() {
  python3 -c 'import sqlite3, sys; print("\n".join(sqlite3.connect(sys.argv[1]).iterdump()))' "$1"
}

# expect_history_refused WANT COMMAND...: `harness COMMAND` exits 2 with one line holding WANT.
expect_history_refused() {
  local want=$1 code
  shift
  set +e
  "$HARNESS" "$@" > /dev/null 2> "$SCRATCH/refused.err"
  code=$?
  set -e
  [[ $code == 2 && $(wc -l < "$SCRATCH/refused.err") == 1 ]] ||
    fail "exit $code for $*: $(cat "$SCRATCH/refused.err")"
  expect_contains "$(cat "$SCRATCH/refused.err")" "$want"
}
