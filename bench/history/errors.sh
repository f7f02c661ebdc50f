#!/usr/bin/env bash
# Both errors of `harness history check`, over real histories (issue 70): HISTORIES A/A
# histories, each one revision run COMMITS times as COMMITS commits, and as many histories with a
# step at commit STEP_AT (from there on the new side's spec is changed by STEP_SET, default
# model.batch_size=35: about 9% more work per iteration). Each commit is one `harness run` of
# SPEC (default experiments/ci_regression.yaml: its two systems, one run each) added with
# `harness history add`; A/A and step histories are built in turns so that the machine's drift
# falls on both alike. Then `harness history check --since <commit 2> --threshold 0%` judges
# each history's iteration p50 series (one per system):
# - A/A: a history with any change point is a false alarm (goal: at most 1 of 20);
# - step: a history is found when every series has a change point at STEP_AT +- 1 (goal: at
#   least 19 of 20), and any other change point is counted as a false one.
# The histories stay in WORK (default /tmp/harness-history-errors): with REUSE=1 only the
# checks run again (e.g. with other CHECK_ARGS).
#
# Usage: [HISTORIES=20] [COMMITS=30] [STEP_AT=20] [HARNESS=build/harness] bench/history/errors.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
harness=${HARNESS:-build/harness}
spec=${SPEC:-experiments/ci_regression.yaml}
histories=${HISTORIES:-20} commits=${COMMITS:-30} step_at=${STEP_AT:-20}
step_set=${STEP_SET:-model.batch_size=35}
work=${WORK:-/tmp/harness-history-errors}
read -r -a check_args <<< "${CHECK_ARGS:-}"

add_commit() {  # db sha [--set ...]
  local db=$1 sha=$2 out
  shift 2
  out=$work/runs/$sha
  "$harness" run "$spec" --set "output=$out" "$@" > "$work/runs/$sha.log" 2>&1
  "$harness" history add "$out"/*/* --commit "$sha" --db "$db" --machine bench > /dev/null
}

if [[ ${REUSE:-0} != 1 ]]; then
  rm -rf "$work" && mkdir -p "$work/runs"
  start=$SECONDS
  for ((h = 1; h <= histories; h++)); do
    for ((k = 1; k <= commits; k++)); do
      add_commit "$work/aa$h.sqlite" "$(printf 'aa%02dc%03d' "$h" "$k")"
      if ((k >= step_at)); then
        add_commit "$work/step$h.sqlite" "$(printf 'st%02dc%03d' "$h" "$k")" --set "$step_set"
      else
        add_commit "$work/step$h.sqlite" "$(printf 'st%02dc%03d' "$h" "$k")"
      fi
    done
    echo "history $h of $histories: $((SECONDS - start)) s"
  done
fi

for ((h = 1; h <= histories; h++)); do
  for kind in aa step; do
    prefix=$([[ $kind == aa ]] && echo aa || echo st)
    code=0
    "$harness" history check --db "$work/$kind$h.sqlite" --since "$(printf '%s%02dc002' "$prefix" "$h")" \
      --min-commits 1 --threshold 0% --metric "iteration p50" --json "$work/$kind$h.json" \
      "${check_args[@]}" > /dev/null || code=$?
    if ((code == 2)); then echo "history check failed on $kind$h" >&2; exit 1; fi
  done
done
python3 - "$work" "$histories" "$step_at" "$spec" "$step_set" "$commits" <<'PY'
import json, sqlite3, statistics, sys
work, histories, step_at, spec, step_set, commits = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
def rows(name):
    return json.load(open(f"{work}/{name}.json"))["rows"]
aa_alarms = 0
found = 0
extra = 0
steps = []
for h in range(1, histories + 1):
    aa_alarms += any(r["changes"] for r in rows(f"aa{h}"))
    # index: a change's position in the series (0-based), so commit STEP_AT is STEP_AT - 1.
    st = rows(f"step{h}")
    near = lambda c: abs(c["index"] - (step_at - 1)) <= 1
    found += all(any(near(c) for c in r["changes"]) for r in st)
    extra += sum(not near(c) for r in st for c in r["changes"])
    steps += [c["change_pct"] for r in st for c in r["changes"] if near(c)]
print(f"spec {spec}; {histories} A/A histories and {histories} with {step_set} from commit {step_at} of {commits}")
print(f"A/A: false change point in {aa_alarms} of {histories} histories")
print(f"step: found at commit {step_at} +- 1 in {found} of {histories} histories; "
      f"the changes' median {statistics.median(steps) if steps else float('nan'):+.1f}%; "
      f"{extra} other change point(s) in them")
PY
