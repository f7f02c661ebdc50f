#!/usr/bin/env bash
# harness ab on the real binaries: one build against itself in alternating rounds (A/A) passes
# and writes both sides, the comparison and the logs; a slowdown given as a configuration
# change on the new side is a regression (exit 1), found by --until-resolved after the looks
# that could not decide; bad input launches nothing (exit 2); an
# interrupted ab exits 130 and leaves no study or rank running.
source "$(dirname "$0")/common.sh"

BUILD=$(dirname "$HARNESS")
# One rank: what ab adds (rounds, sides, the comparison over runs) does not depend on the world
# size, and each round's ranks are LibTorch processes (~0.4 s of CPU each to start); at 2 ranks
# the A/A took about twice the CPU it takes at 1.
cat > "$SCRATCH/spec.yaml" <<YAML
name: e2e_ab
model: {name: mlp, batch_size: 8}
run: {world_size: 1, iterations: 12, warmup: 2}
ddp: {bucket_mb: 0.25}
systems: [overlap]
YAML

# A/A: a false alarm must be (nearly) impossible, whatever this machine's noise. These runs are
# 12 iterations of ~1 ms, and their medians spread by a factor of up to 5 from run to run (PyPI's
# 2.11 on 2 cores), so no threshold tells noise from change; only the order of the runs can. If
# base and new are exchangeable, all of new's runs land above all of base's with probability
# 1 / C(2R, R), and only then can the interval lie wholly above +5%. At R = 4 and alpha 0.05 that
# is 1 in 70: 1 A/A in 20 cried regression on a 2-core VM, and one CI run failed on it.
# At R = 7 it is 1 in 3432; alpha 0.001 keeps the interval at the whole range of the 49 pairwise
# differences (confidence 1 - 2/3432), which 7 rounds allow (6 would need alpha >= 2/924).
# The new side is this build beside a rank program that writes down each start: its question
# about the model (`harness-rank layers`, which brings the LibTorch's version with it) is asked
# in the first round only, and its answers kept for the six after it (new.rank_answers.json).
mkdir -p "$SCRATCH/counted"
cp "$HARNESS" "$SCRATCH/counted/harness"
cat > "$SCRATCH/counted/harness-rank" <<SH
#!/bin/sh
echo "\$1" >> "$SCRATCH/rank_starts"
exec "$BUILD/harness-rank" "\$@"
SH
chmod +x "$SCRATCH/counted/harness-rank"
# No regression (0) where every judged row is decided; unresolved (3) where an interval reaches
# across the threshold: never 1, and never 0 with an undecided row (compare.json says which).
set +e
out=$("$HARNESS" ab "$SCRATCH/spec.yaml" --base "$BUILD" --new "$SCRATCH/counted" --rounds 7 \
      --alpha 0.001 --out "$SCRATCH/aa" 2>"$SCRATCH/aa.err")
aa_code=$?
set -e
[[ $aa_code == 0 || $aa_code == 3 ]] || fail "A/A exited $aa_code: $(cat "$SCRATCH/aa.err")
$out"
expect_contains "$out" "ab: 7 round(s) of $SCRATCH/spec.yaml into $SCRATCH/aa"
expect_contains "$out" "judged on 7 run(s) (base) and 7 run(s) (new)"
expect_contains "$(cat "$SCRATCH/aa.err")" "ab: round 2/7: new "
[[ $(ls -d "$SCRATCH"/aa/base/e2e_ab/*/ | wc -l) == 7 ]] || fail "base side: not 7 results folders"
[[ $(ls -d "$SCRATCH"/aa/new/e2e_ab/*/ | wc -l) == 7 ]] || fail "new side: not 7 results folders"
[[ $(ls "$SCRATCH"/aa/logs/ | wc -l) == 14 ]] || fail "not 14 logs: $(ls "$SCRATCH/aa/logs")"
[[ -s "$SCRATCH/aa/compare.md" ]] || fail "no compare.md"
starts=$(sort "$SCRATCH/rank_starts" | uniq -c | sed 's/^ *//')
[[ $starts == $'1 layers\n7 worker' ]] ||
  fail "the new side's rank program: not 1 question and 7 ranks over 7 rounds: $starts"
"$PY" - "$SCRATCH/aa" "$("$BUILD/harness-rank" version)" "$(realpath "$BUILD")/harness-rank" \
  "$(realpath "$SCRATCH/counted")/harness-rank" <<'PY'
import json, sys
version = json.loads(sys.argv[2])
for side, program in (("base", sys.argv[3]), ("new", sys.argv[4])):
    kept = json.load(open(f"{sys.argv[1]}/{side}.rank_answers.json"))["rank_programs"]
    assert len(kept) == 1, (side, [entry["holds_for"] for entry in kept])
    kept = kept[0]
    assert kept["version"]["torch_version"] == version["torch_version"], (side, kept["version"])
    assert kept["holds_for"]["program"] == program, (side, kept["holds_for"])
    assert list(kept["layer_forward_flops"]) == list(kept["layer_names"]) != [], kept
PY
"$PY" - "$SCRATCH/aa/compare.json" "$aa_code" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
row = next(r for r in report["rows"] if r["phase"] == "iteration")
assert row["runs_base"] == 7 and row["runs_new"] == 7, row
assert row["iterations_base"] == 7 * 1 * 12, row
assert abs(row["confidence"] - (1 - 2 / 3432)) < 1e-12, row
assert row["change_low_pct"] <= row["change_pct"] <= row["change_high_pct"], row
assert row["verdict"] in ("no change", "unresolved", "below noise floor"), row
undecided = [r for r in report["rows"] if r["verdict"] in ("unresolved", "inconclusive")]
assert report["exit_code"] == int(sys.argv[2]) == (3 if undecided else 0), report["verdict"]
assert not report["regression"], report["verdict"]
assert report["verdict"].startswith("inconclusive: " if undecided else "no regression: "), report
# The same build and spec: every exact counter is equal.
assert report["counters"] and all(c["verdict"] == "no change" for c in report["counters"]
                                  if c["counter"] != "peak resident bytes per rank"), report["counters"]
PY
# A run whose answers file cannot be written says so and keeps its exit code and results.
HARNESS_RANK_ANSWERS="$SCRATCH/aa/compare.md/answers.json" "$HARNESS" run "$SCRATCH/spec.yaml" \
  --set output="$SCRATCH/unkept" >/dev/null 2>"$SCRATCH/unkept.err" ||
  fail "a run whose answers could not be kept exited $?: $(cat "$SCRATCH/unkept.err")"
expect_contains "$(cat "$SCRATCH/unkept.err")" "warning: the rank program's answers not kept: "
ls "$SCRATCH"/unkept/e2e_ab/*/summary.json >/dev/null || fail "no results beside the warning"
# The same side compared again by hand gives the same verdict line.
set +e
"$HARNESS" compare --alpha 0.001 "$SCRATCH/aa/base" "$SCRATCH/aa/new" >"$SCRATCH/again.md"
again_code=$?
set -e
[[ $again_code == "$aa_code" ]] || fail "compare exited $again_code, ab $aa_code"
[[ "$(tail -n 1 "$SCRATCH/again.md")" == "$(tail -n 2 <<<"$out" | head -n 1)" ]] ||
  fail "compare and ab disagree: $(tail -n 1 "$SCRATCH/again.md")"

# A/B: the new side's batch is 512x larger, its iterations far slower: a regression, and the
# counters say the work changed (FLOPs per iteration grow 512x). (64x was too little on
# LibTorch 2.11's MKL: the MLP's iteration grew 2.5 -> 4.1 ms, one round in four overlapped.)
# Until resolved: looks after 2, 4 and 5 rounds, each at alpha 0.05 / 3; 2 and 4 runs a side
# allow no interval at that level (4 against 4: P(U <= 0) = 1/70 > 0.0083), 5 do (P(U <= 1) =
# 2/252 <= 0.0083), so the rounds go on to 5 and stop there with the verdict.
set +e
"$HARNESS" ab "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --rounds 2 --until-resolved \
  --max-rounds 5 --new-set model.batch_size=4096 --out "$SCRATCH/ab" >"$SCRATCH/ab.out" 2>&1
code=$?
set -e
[[ $code == 1 ]] || fail "A/B exited $code: $(cat "$SCRATCH/ab.out")"
expect_contains "$(cat "$SCRATCH/ab.out")" "ab: up to 5 round(s) of $SCRATCH/spec.yaml into $SCRATCH/ab (looks after 2, 4, 5)"
expect_contains "$(cat "$SCRATCH/ab.out")" "Note: base and new ran different studies (p000 / overlap: model.batch_size 8 vs 4096)"
expect_contains "$(cat "$SCRATCH/ab/compare.md")" "- look 1 of 3, 2 rounds, alpha 0.0166667: undecided"
expect_contains "$(cat "$SCRATCH/ab/compare.md")" "- look 2 of 3, 4 rounds, alpha 0.0166667: undecided"
expect_contains "$(cat "$SCRATCH/ab/compare.md")" "- look 3 of 3, 5 rounds, alpha 0.0166667: decided"
[[ $(ls "$SCRATCH"/ab/logs/ | wc -l) == 10 ]] || fail "not 10 logs: $(ls "$SCRATCH/ab/logs")"
"$PY" - "$SCRATCH/ab/compare.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
row = next(r for r in report["rows"] if r["phase"] == "iteration")
assert row["verdict"] == "regression" and row["change_low_pct"] > 5, row
assert row["runs_base"] == 5 and row["runs_new"] == 5, row
# The last look's interval, at 5 against 5 from the 2nd smallest to the 2nd largest of the 25
# differences: confidence 1 - 2 P(U <= 1) = 1 - 4/252.
assert abs(row["confidence"] - (1 - 4 / 252)) < 1e-12, row
flops = next(c for c in report["counters"] if c["counter"].startswith("model FLOPs"))
assert flops["verdict"] == "regression" and abs(flops["change_pct"] - 51100) < 1e-6, flops
PY

# Bad input: one line, exit 2, nothing made.
bad() {  # expected-message args...
  local expected=$1; shift
  set +e
  "$HARNESS" ab "$@" >/dev/null 2>"$SCRATCH/bad.err"
  local code=$?
  set -e
  [[ $code == 2 ]] || fail "ab $* exited $code (want 2): $(cat "$SCRATCH/bad.err")"
  expect_contains "$(cat "$SCRATCH/bad.err")" "$expected"
  [[ $(wc -l <"$SCRATCH/bad.err") == 1 ]] || fail "ab $*: not one line: $(cat "$SCRATCH/bad.err")"
  [[ ! -e "$SCRATCH/never" ]] || fail "ab $* made its folder"
}
bad "error: --rounds: expected 1 to 500 (got 0)" \
  "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --rounds 0 --out "$SCRATCH/never"
bad "error: --base: no harness executable at $SCRATCH/nothing" \
  "$SCRATCH/spec.yaml" --base "$SCRATCH/nothing" --new "$BUILD" --out "$SCRATCH/never"
bad "error: new build: --set model.batch_sise=4: unknown key 'model.batch_sise' (did you mean 'batch_size'?)" \
  "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --new-set model.batch_sise=4 --out "$SCRATCH/never"
bad "error: --threshold: expected a percentage such as 5% (got 'x')" \
  "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --threshold x --out "$SCRATCH/never"
bad "error: --max-rounds: only with --until-resolved" \
  "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --max-rounds 8 --out "$SCRATCH/never"
bad "error: --max-rounds: expected --rounds (4) to 500 (got 2)" \
  "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --rounds 4 --until-resolved --max-rounds 2 \
  --out "$SCRATCH/never"
bad "error: --alpha: expected a level in (0, 1) (got 0)" \
  "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --alpha 0 --out "$SCRATCH/never"
bad "error: --metric: p51 not in {p50,mean}" \
  "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --metric p51 --out "$SCRATCH/never"
# A --base that is some other program: refused before either side runs (the new side's rank
# program would write down a start).
mkdir -p "$SCRATCH/other" && printf '#!/bin/sh\nexit 0\n' > "$SCRATCH/other/harness"
chmod +x "$SCRATCH/other/harness"
rm -f "$SCRATCH/rank_starts"
bad "error: --base: $SCRATCH/other/harness is not a harness executable (its --version exited 0 and printed '')" \
  "$SCRATCH/spec.yaml" --base "$SCRATCH/other" --new "$SCRATCH/counted" --out "$SCRATCH/never"
[[ ! -e $SCRATCH/rank_starts ]] || fail "a refused ab started the new side's rank program"
bad "error: --out: $SCRATCH/aa exists and is not an empty folder" \
  "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --out "$SCRATCH/aa"

# Interrupted: SIGTERM to ab stops the running study and its ranks; exit 130.
"$HARNESS" ab "$SCRATCH/spec.yaml" --base "$BUILD" --new "$BUILD" --rounds 50 \
  --set run.iterations=400 --out "$SCRATCH/stopped" >/dev/null 2>"$SCRATCH/stopped.err" &
ab_pid=$!
for _ in $(seq 100); do
  pgrep -f "harness-rank worker.*$SCRATCH/stopped" >/dev/null && break
  sleep 0.1
done
kill -TERM "$ab_pid"
set +e
wait "$ab_pid"
code=$?
set -e
[[ $code == 130 ]] || fail "interrupted ab exited $code: $(cat "$SCRATCH/stopped.err")"
expect_contains "$(cat "$SCRATCH/stopped.err")" "interrupted: stopped the "
sleep 0.5
! pgrep -f "$SCRATCH/stopped" >/dev/null || fail "a study or rank outlived ab: $(pgrep -af "$SCRATCH/stopped")"
echo "PASS ab"
