#!/usr/bin/env bash
# harness report / plot / compare on a real 2-rank MLP study: the regenerated tables are the
# bytes the run wrote, the spec's plots: are drawn, and compare's exit code gates a synthetic
# 50% regression but not a run against itself.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/spec.yaml" <<YAML
name: e2e_report
output: $SCRATCH/results
model: {name: mlp, batch_size: 16}
ddp: {first_bucket_mb: 0.001}
run: {world_size: 2, iterations: 20, warmup: 2}
systems: [overlap, sync]
sweep:
  ddp.bucket_mb: [0.001, 25]
plots: [bucket_sweep, cdf]
YAML

out=$("$HARNESS" run "$SCRATCH/spec.yaml" 2>"$SCRATCH/stderr") || fail "run failed: $(cat "$SCRATCH/stderr")"
dir=$(ls -d "$SCRATCH"/results/e2e_report/*/)
dir=${dir%/}
expect_contains "$out" "plot bucket_sweep: $dir/plots/bucket_sweep_iteration.png"
for f in bucket_sweep_iteration bucket_sweep_forward cdf_p000 cdf_p001; do
  for ext in png svg dat gp; do [[ -s "$dir/plots/$f.$ext" ]] || fail "missing $f.$ext"; done
done

# report: byte-identical tables, and an index of them and of the figures.
mkdir "$SCRATCH/written"
for f in summary.json table.md table.csv; do mv "$dir/$f" "$SCRATCH/written/$f"; done
"$HARNESS" report "$dir" >/dev/null || fail "report failed"
for f in summary.json table.md table.csv; do
  cmp "$dir/$f" "$SCRATCH/written/$f" || fail "report changed $f"
done
report=$(cat "$dir/report.md")
expect_contains "$report" "- [table.md](table.md)"
expect_contains "$report" "(plots/bucket_sweep_iteration.png)"

# A kind that does not fit says so in one line and succeeds.
out=$("$HARNESS" plot "$dir" --kind scaling) || fail "plot scaling failed"
expect_contains "$out" "plot scaling: does not fit $dir: the sweep has no axis run.world_size"

# compare: one run a side is no evidence about the code (two processes of one revision differ by
# that much on their own), so the run against itself and against a copy 50% slower are both
# inconclusive (exit 3) and never a regression; harness ab (e2e/ab.sh) gives the runs.
cp -r "$dir" "$SCRATCH/slow"
"$PY" - "$SCRATCH/slow" <<'PY'
import glob, sys
for path in glob.glob(sys.argv[1] + "/raw/*/*/rep0/rank*.csv"):
    lines = open(path).read().splitlines()
    rows = [lines[0]] + [",".join([r.split(",")[0]] + ["%.6f" % (float(v) * 1.5) for v in r.split(",")[1:]]) for r in lines[1:]]
    open(path, "w").write("\n".join(rows) + "\n")
PY
set +e
"$HARNESS" compare "$dir" "$dir" >"$SCRATCH/same.md"
code_same=$?
"$HARNESS" compare "$dir" "$SCRATCH/slow" --threshold 5% --format json >"$SCRATCH/slow.json"
code=$?
"$HARNESS" compare "$dir" "$SCRATCH/slow" --threshold 5% --format json --metric mean >/dev/null
code_mean=$?
"$HARNESS" compare "$dir" "$SCRATCH/slow" --threshold five 2>"$SCRATCH/bad"
code_bad=$?
set -e
[[ $code_same == 3 ]] || fail "compare with itself, one run a side: exit $code_same (want 3)"
expect_contains "$(cat "$SCRATCH/same.md")" "inconclusive: too few runs for a verdict on a judged row (at least 4 a side); iteration judged on 1 run(s) (base) and 1 run(s) (new)"
[[ $code == 3 ]] || fail "compare on one run a side 50% slower exited $code (want 3)"
[[ $code_mean == 3 ]] || fail "compare --metric mean on one run a side exited $code_mean (want 3)"
[[ $code_bad == 2 ]] || fail "a bad --threshold exited $code_bad"
expect_contains "$(cat "$SCRATCH/bad")" "error: --threshold: expected a percentage"
"$PY" - "$SCRATCH/slow.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
rows = [r for r in report["rows"] if r["phase"] == "iteration"]
assert len(rows) == 4, rows
for r in rows:
    assert abs(r["change_pct"] - 50) < 0.1, r
    assert r["runs_base"] == 1 and r["iterations_base"] == 40, r
    assert r["verdict"] == "inconclusive", r
assert all(r["verdict"] == "descriptive" for r in report["rows"] if r["phase"] != "iteration")
assert not report["regression"] and report["exit_code"] == 3
PY
# trace: the hand-made per-rank traces of tests/data/trace/run (a DDP run and a 2-stage GPipe
# run) merge into one trace.json per run, the breakdown is printed and written, and the
# timeline figure is drawn; the MLP run above has no traces unless its system writes them.
cp -r "$(dirname "$0")/../data/trace/run" "$SCRATCH/traced"
out=$("$HARNESS" trace "$SCRATCH/traced") || fail "trace failed"
expect_contains "$out" "| 0 | 0 | 6.600 | 4.400 | 2.000 | 2.000 | 0.400 | 2.500 |"
expect_contains "$out" "wrote $SCRATCH/traced/raw/p000/overlap/rep0/trace.json"
for run in overlap gpipe_2x1; do
  for f in trace.json trace_breakdown.md trace_breakdown.json; do
    [[ -s "$SCRATCH/traced/raw/p000/$run/rep0/$f" ]] || fail "trace wrote no $run/$f"
  done
done
"$PY" - "$SCRATCH/traced/raw/p000/gpipe_2x1/rep0/trace.json" <<'PY'
import json, sys
trace = json.load(open(sys.argv[1]))
timed = [e for e in trace["traceEvents"] if e["ph"] == "X"]
assert len(timed) == 18 and min(e["ts"] for e in timed) == 0, timed
assert {e["pid"] for e in timed} == {0, 1}
names = {(e["pid"], e["args"]["name"]) for e in trace["traceEvents"] if e["name"] == "process_name"}
assert names == {(0, "rank 0 (stage 0)"), (1, "rank 1 (stage 1)")}, names
PY
"$HARNESS" trace "$SCRATCH/traced" --system overlap --output "$SCRATCH/one.json" >/dev/null ||
  fail "trace --output failed"
[[ -s "$SCRATCH/one.json" ]] || fail "trace --output wrote nothing"
out=$("$HARNESS" plot "$SCRATCH/traced" --kind timeline) || fail "plot timeline failed"
expect_contains "$out" "plot timeline: $SCRATCH/traced/plots/timeline_p000_gpipe_2x1_rep0.png"
for f in timeline_p000_overlap_rep0 timeline_p000_gpipe_2x1_rep0; do
  for ext in png svg dat gp; do [[ -s "$SCRATCH/traced/plots/$f.$ext" ]] || fail "missing $f.$ext"; done
done
if compgen -G "$dir/raw/*/*/rep0/trace_rank0.json" >/dev/null; then
  "$HARNESS" trace "$dir" >/dev/null || fail "trace of the MLP run failed"
else
  out=$("$HARNESS" plot "$dir" --kind timeline) || fail "plot timeline without traces failed"
  expect_contains "$out" "plot timeline: does not fit $dir: no traces in this results folder"
  set +e
  "$HARNESS" trace "$dir" 2>"$SCRATCH/notrace"
  code=$?
  set -e
  [[ $code == 2 ]] || fail "trace without traces exited $code"
  expect_contains "$(cat "$SCRATCH/notrace")" "error: $dir: no traces in this results folder"
fi
# A malformed trace: one line naming the file and the place, exit 2, nothing written.
rm -f "$SCRATCH"/traced/raw/p000/*/rep0/trace.json
echo '{"traceEvents": [' >"$SCRATCH/traced/raw/p000/overlap/rep0/trace_rank1.json"
set +e
"$HARNESS" trace "$SCRATCH/traced" 2>"$SCRATCH/badtrace"
code=$?
set -e
[[ $code == 2 ]] || fail "trace of a malformed file exited $code"
expect_contains "$(cat "$SCRATCH/badtrace")" \
  "error: $SCRATCH/traced/raw/p000/overlap/rep0/trace_rank1.json:2:1: malformed JSON"
[[ $(wc -l <"$SCRATCH/badtrace") == 1 ]] || fail "more than one line: $(cat "$SCRATCH/badtrace")"
[[ ! -e "$SCRATCH/traced/raw/p000/gpipe_2x1/rep0/trace.json" ]] || fail "half-written trace"

# A corrupt results folder is bad input (exit 2, one line naming the file), never a regression
# (exit 1) and never a hang: a NaN sample, then a truncated status.json.
cp -r "$dir" "$SCRATCH/corrupt"
csv=$(ls "$SCRATCH"/corrupt/raw/p000/*/rep0/rank1.csv | head -1)
"$PY" - "$csv" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
fields = lines[3].split(",")
fields[-1] = "nan"
lines[3] = ",".join(fields)
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
set +e
timeout 30 "$HARNESS" compare "$dir" "$SCRATCH/corrupt" >/dev/null 2>"$SCRATCH/err"; code=$?
set -e
[[ $code == 2 ]] || fail "compare with a NaN sample: exit $code (want 2): $(cat "$SCRATCH/err")"
[[ "$(cat "$SCRATCH/err")" == "error: $csv:4: iteration_ms is not finite: 'nan'" ]] ||
  fail "compare with a NaN sample said: $(cat "$SCRATCH/err")"
rm -rf "$SCRATCH/corrupt" && cp -r "$dir" "$SCRATCH/corrupt"
status=$(ls "$SCRATCH"/corrupt/raw/p000/*/rep0/status.json | head -1)
printf '{"status": "comp' > "$status"
set +e
timeout 30 "$HARNESS" report "$SCRATCH/corrupt" >/dev/null 2>"$SCRATCH/err"; code=$?
set -e
[[ $code == 2 ]] || fail "report with a truncated status.json: exit $code (want 2): $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "error: $status:1:17: malformed JSON:"
[[ $(wc -l < "$SCRATCH/err") == 1 ]] || fail "not one line: $(cat "$SCRATCH/err")"
# Two different studies: refused (exit 2, one line) unless --allow-spec-change, which says so
# before its table.
cp -r "$dir" "$SCRATCH/other"
"$PY" - "$SCRATCH/other/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["experiment"] = "another_study"
json.dump(m, open(sys.argv[1], "w"))
PY
set +e
"$HARNESS" compare "$dir" "$SCRATCH/other" >/dev/null 2>"$SCRATCH/err"; code=$?
set -e
[[ $code == 2 ]] || fail "compare of two studies: exit $code (want 2)"
[[ "$(cat "$SCRATCH/err")" == "error: base and new ran different studies (manifest: experiment \"e2e_report\" vs \"another_study\"); --allow-spec-change compares them anyway" ]] ||
  fail "compare of two studies said: $(cat "$SCRATCH/err")"
set +e
out=$("$HARNESS" compare "$dir" "$SCRATCH/other" --allow-spec-change); code=$?
set -e
[[ $code == 3 ]] || fail "compare --allow-spec-change of one run a side: exit $code (want 3)"
expect_contains "$out" "Note: base and new ran different studies (manifest: experiment \"e2e_report\" vs \"another_study\")"
echo "PASS report_compare"
