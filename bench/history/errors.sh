#!/usr/bin/env bash
# Both errors of `harness history check`, over real histories, with and without a control:
# HISTORIES A/A histories, each one revision run COMMITS times as COMMITS commits, and as many
# histories with a step at commit STEP_AT: from there on the runs do more work (STEP_SET, default
# model.batch_size=35 against 32; the time per iteration is not linear in the batch, so the
# summary prints the step's measured size). Each commit is one `harness run` of SPEC (default
# experiments/ci_regression.yaml: its two systems, one run each), and beside it, in the same job,
# a control: one more run of the unchanged revision, as Chromium's dashboard runs a reference
# build beside the tested one. A history's commit k and its control are measured back to back
# (in alternating order), and the histories round-robin, commit k of every history before
# commit k + 1 of any, so that a history's consecutive commits are measured minutes apart, as a
# CI's are; ORDER=back-to-back builds each history at once. A step commit's spec.yaml is put back
# to the A side's, so that its fingerprint is the history's: to the history it is the same spec
# run slower, as a code change would be.
#
# The runs are kept in WORK (default /tmp/harness-history-errors); then every history is added
# twice, without its control and with it (`history add --control`), and judged by `harness
# history check --since <commit 2> --min-commits 1` on its iteration p50 series (one per
# system), at --threshold 0% and at 5%:
# - A/A: a history with any change point is a false change point; one with a regression beyond
#   5% a false alarm of the CI gate (goal: at most 1 of 20);
# - step: a history is found when every series has a change point at STEP_AT +- 1 (goal: at
#   least 19 of 20); any other change point counts as a false one.
# REUSE=1 keeps the runs and only adds and judges again (e.g. with other CHECK_ARGS). REPEATS=3
# runs every study (a commit, its control) 3 times, the commit's value the median of its runs.
#
# Usage: [HISTORIES=20] [COMMITS=30] [STEP_AT=20] [REPEATS=1] [HARNESS=build/harness] \
#          bench/history/errors.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
harness=${HARNESS:-build/harness}
spec=${SPEC:-experiments/ci_regression.yaml}
histories=${HISTORIES:-20} commits=${COMMITS:-30} step_at=${STEP_AT:-20} repeats=${REPEATS:-1}
step_set=${STEP_SET:-model.batch_size=35}
order=${ORDER:-round-robin}
work=${WORK:-/tmp/harness-history-errors}
read -r -a check_args <<< "${CHECK_ARGS:-}"

run_study() {  # name [--set ...]: one run of the spec into $work/runs/name
  local name=$1
  shift
  "$harness" run "$spec" --set "run.repeats=$repeats" --set "output=$work/runs/$name" "$@" \
    > "$work/runs/$name.log" 2>&1
  if (($# > 0)); then cp "$work/a_spec.yaml" "$work/runs/$name"/*/*/spec.yaml; fi
}

measure_commit() {  # history commit: its control, its A/A run and its step run
  local h=$1 k=$2 id step=()
  id=$(printf '%02dc%03d' "$h" "$k")
  if ((k >= step_at)); then step=(--set "$step_set"); fi
  if (((h + k) % 2 == 0)); then
    run_study "ct$id"
    run_study "aa$id"
    run_study "st$id" ${step[@]+"${step[@]}"}
  else
    run_study "st$id" ${step[@]+"${step[@]}"}
    run_study "aa$id"
    run_study "ct$id"
  fi
}

if [[ ${REUSE:-0} != 1 ]]; then
  rm -rf "$work" && mkdir -p "$work/runs"
  # The A side's resolved spec, as a step commit's is put back to.
  "$harness" run "$spec" --set "run.repeats=$repeats" --set "output=$work/a_side" > /dev/null 2>&1
  cp "$work"/a_side/*/*/spec.yaml "$work/a_spec.yaml"
  start=$SECONDS
  if [[ $order == back-to-back ]]; then
    for ((h = 1; h <= histories; h++)); do
      for ((k = 1; k <= commits; k++)); do measure_commit "$h" "$k"; done
      echo "history $h of $histories: $((SECONDS - start)) s"
    done
  else
    for ((k = 1; k <= commits; k++)); do
      for ((h = 1; h <= histories; h++)); do measure_commit "$h" "$k"; done
      echo "commit $k of $commits: $((SECONDS - start)) s"
    done
  fi
fi

add_history() {  # kind history control(0|1): the history's database, its commits added in order
  local kind=$1 h=$2 control=$3 db k id
  db=$work/$kind$h.control$control.sqlite
  rm -f "$db"
  for ((k = 1; k <= commits; k++)); do
    id=$(printf '%02dc%03d' "$h" "$k")
    local with=()
    if ((control == 1)); then with=(--control "$work/runs/ct$id"/*/*); fi
    "$harness" history add "$work/runs/$kind$id"/*/* --commit "$kind$id" --db "$db" \
      --machine bench ${with[@]+"${with[@]}"} > /dev/null
  done
}

for ((h = 1; h <= histories; h++)); do
  for kind in aa st; do
    for control in 0 1; do
      add_history "$kind" "$h" "$control"
      for threshold in 0 5; do
        code=0
        "$harness" history check --db "$work/$kind$h.control$control.sqlite" \
          --since "$(printf '%s%02dc002' "$kind" "$h")" --min-commits 1 \
          --threshold "$threshold%" --metric "iteration p50" \
          --json "$work/$kind$h.control$control.t$threshold.json" \
          ${check_args[@]+"${check_args[@]}"} > /dev/null || code=$?
        if ((code == 2)); then echo "history check failed on $kind$h" >&2; exit 1; fi
      done
    done
  done
done
python3 - "$work" "$histories" "$step_at" "$spec" "$step_set" "$commits" "$order" "$repeats" <<'PY'
import json, statistics, sys
work, histories, step_at, spec, step_set, commits, order, repeats = sys.argv[1:9]
histories, step_at, commits = int(histories), int(step_at), int(commits)
def rows(name, control, threshold):
    return json.load(open(f"{work}/{name}.control{control}.t{threshold}.json"))["rows"]
print(f"spec {spec}, {repeats} run(s) a commit; {histories} A/A histories and {histories} with "
      f"{step_set} from commit {step_at} of {commits}, built {order}")
for control in (0, 1):
    aa_points = aa_alarms = found = extra = 0
    steps = []
    for h in range(1, histories + 1):
        aa_points += any(r["changes"] for r in rows(f"aa{h}", control, 0))
        aa_alarms += any(r["verdict"] == "regression" for r in rows(f"aa{h}", control, 5))
        # index: a change's position in the series (0-based), so commit STEP_AT is STEP_AT - 1.
        st = rows(f"st{h}", control, 0)
        assert len(st) == 2, f"st{h}: {len(st)} series (a step commit in another environment?)"
        near = lambda c: abs(c["index"] - (step_at - 1)) <= 1
        found += all(any(near(c) for c in r["changes"]) for r in st)
        extra += sum(not near(c) for r in st for c in r["changes"])
        steps += [c["change_pct"] for r in st for c in r["changes"] if near(c)]
    median = statistics.median(steps) if steps else float("nan")
    print(f"{'with' if control else 'without'} the control: A/A: a change point in {aa_points} of "
          f"{histories} histories, a regression beyond 5% in {aa_alarms}; step: found at commit "
          f"{step_at} +- 1 in {found} of {histories} (the steps' median {median:+.1f}%), {extra} "
          f"other change point(s) in them")
PY
