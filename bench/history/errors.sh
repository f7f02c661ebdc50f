#!/ usr / bin / env bash
#Both errors of `harness history check`, over real histories(issue 70) : HISTORIES A / A
#histories, each one revision run COMMITS times as COMMITS commits, and as many histories with a
#step at commit STEP_AT : from there on the runs do more work(STEP_SET, default
#model.batch_size = 35 against 32; the time per iteration is not linear in the batch, so the
#summary prints the step's measured size). Each commit is one
# `harness run` of SPEC(default experiments / ci_regression.yaml : its two systems, one run each)
#added with `harness history add`.A step commit 's spec.yaml is put back to the A side' s before
#it is added, so that its fingerprint is the history's: to the history it is the same spec run
#slower, as a code change would be(a changed spec is another environment, never compared).
#The histories are built round - robin, commit k of every history before commit k + 1 of any, so
#that a history 's consecutive commits are measured about 2 x HISTORIES studies apart, as a CI' s
#commits are measured minutes to days apart : back to back, this VM's own slow phases (seconds
#to minutes) spanned several consecutive commits and read as level shifts(ORDER = back - to - back
#builds them that way).Then `harness history check-- since < commit 2> --min - commits 1` judges
#each history's iteration p50 series (one per system), at --threshold 0% and at 5%:
#- A / A : a history with any change point is a false change point; one with a regression beyond
# 5 %(check's exit 1) a false alarm of the CI gate (goal: at most 1 of 20);
#- step : a history is found when every series has a change point at STEP_AT + - 1(goal : at
#least 19 of 20); any other change point counts as a false one.
#The histories stay in WORK(default / tmp / harness - history - errors) : with REUSE = 1 only the
#checks run again(e.g.with other CHECK_ARGS).
#
#Usage : [HISTORIES = 20][COMMITS = 30][STEP_AT = 20][HARNESS = build / harness] bench / history / \
                                                      errors.sh
set - euo pipefail cd "$(dirname " $0 ")/../.." harness = ${HARNESS : -build / harness} spec =
${SPEC : -experiments / ci_regression.yaml} histories = ${HISTORIES : -20} commits =
${COMMITS : -30} step_at = ${STEP_AT : -20} step_set = ${STEP_SET : -model.batch_size = 35} order =
${ORDER : -round - robin} work =
${WORK : - / tmp / harness - history - errors} read - r - a check_args < < < "${CHECK_ARGS:-}"

    add_commit() {
#db sha[--set...] local db = $1 sha = $2 out shift 2 out = $work / runs /
                                                                 $sha "$harness" run "$spec" --set
                                                                 "output=$out"
                                                                 "$@"> "$work/runs/$sha.log" 2>
                                                             & 1 if (($ # > 0));
  then cp
      "$work/a_spec.yaml"
      "$out" /*/*/ spec.yaml;
  fi
  "$harness" history add "$out"/*/* --commit "$sha" --db "$db" --machine bench > /dev/null
}

commit_pair() {  # history k: its A/A commit and its step commit
  local h=$1 k=$2
  add_commit "$work/aa$h.sqlite" "$(printf 'aa%02dc%03d' "$h" "$k")"
  if ((k >= step_at)); then
    add_commit "$work/step$h.sqlite" "$(printf 'st%02dc%03d' "$h" "$k")" --set "$step_set"
  else
    add_commit "$work/step$h.sqlite" "$(printf 'st%02dc%03d' "$h" "$k")"
  fi
}

if [[ ${REUSE:-0} != 1 ]]; then
  rm -rf "$work" && mkdir -p "$work/runs"
  # The A side's resolved spec, as a step commit's is put back to.
  "$harness" run "$spec" --set "output=$work/a_side" > /dev/null 2>&1
  cp "$work"/a_side/*/*/spec.yaml "$work/a_spec.yaml"
  start=$SECONDS
  if [[ $order == back-to-back ]];
  then for ((h = 1; h <= histories; h++));
  do
    for ((k = 1; k <= commits; k++))
      ;
  do
    commit_pair
        "$h"
        "$k";
  done echo
      "history $h of $histories: $((SECONDS - start)) s" done else for ((k = 1; k <= commits; k++));
  do
    for ((h = 1; h <= histories; h++))
      ;
  do
    commit_pair
        "$h"
        "$k";
  done echo "commit $k of $commits: $((SECONDS - start)) s" done fi fi

      for ((h = 1; h <= histories; h++));
  do
  for
    kind in aa step;
  do
    prefix=$([[ $kind == aa ]] && echo aa || echo st)
    for threshold in 0 5;
  do
    code = 0 "$harness" history check-- db "$work/$kind$h.sqlite" --since
           "$(printf '%s%02dc002' " $prefix " " $h ")" --min -
           commits 1 --threshold "$threshold%" --metric "iteration p50" --json
           "$work/$kind$h.t$threshold.json" $ {
      check_args[@] + "${check_args[@]}"
    }
  > / dev / null || code = $ ? if ((code == 2));
  then echo "history check failed on $kind$h" > &2;
  exit 1; fi
    done
  done
done
python3 - "$work" "$histories" "$step_at" "$spec" "$step_set" "$commits" "$order" <<'PY'
import json, statistics, sys
work, histories, step_at, spec, step_set, commits, order = sys.argv[1:8]
histories, step_at, commits = int(histories), int(step_at), int(commits)
def rows(name, threshold):
    return json.load(open(f"{work}/{name}.t{threshold}.json"))["rows"]
aa_points = aa_alarms = aa_unconfirmed = found = extra = 0
steps = []
for h in range(1, histories + 1):
    aa_points += any(r["changes"] for r in rows(f"aa{h}", 0))
    aa_alarms += any(r["verdict"] == "regression" for r in rows(f"aa{h}", 5))
    aa_unconfirmed += any(r["verdict"] == "unconfirmed" for r in rows(f"aa{h}", 5))
#index : a change's position in the series (0-based), so commit STEP_AT is STEP_AT - 1.
    st = rows(f"step{h}", 0)
    assert len(st) == 2, f"step{h}: {len(st)} series (a step commit in another environment?)"
    near = lambda c: abs(c["index"] - (step_at - 1)) <= 1
    found += all(any(near(c) for c in r["changes"]) for r in st)
    extra += sum(not near(c) for r in st for c in r["changes"])
    steps += [c["change_pct"] for r in st for c in r["changes"] if near(c)]
print(f"spec {spec}; {histories} A/A histories and {histories} with {step_set} from commit "
      f"{step_at} of {commits}, built {order}")
print(f"A/A: a change point in {aa_points} of {histories} histories; a regression beyond 5% in "
      f"{aa_alarms} of {histories} (and worse beyond 5% on too few runs after it, unconfirmed, in "
      f"{aa_unconfirmed})")
print(f"step: found at commit {step_at} +- 1 in {found} of {histories} histories; the steps' "
      f"median {statistics.median(steps) if steps else float('nan'):+.1f}%; {extra} other change "
      f"point(s) in them")
PY
