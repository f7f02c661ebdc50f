#!/usr/bin/env bash
# harness report / plot / compare on a real 2-rank MLP study: the regenerated tables are the
# bytes the run wrote, the spec's plots: are drawn, and compare's exit code gates a synthetic
# 20% regression but not a run against itself.
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

# compare: the run against itself passes; against a copy 20% slower it fails with exit 1.
"$HARNESS" compare "$dir" "$dir" >"$SCRATCH/same.md" || fail "compare with itself: exit $?"
expect_contains "$(cat "$SCRATCH/same.md")" "no significant regression"
cp -r "$dir" "$SCRATCH/slow"
"$PY" - "$SCRATCH/slow" <<'PY'
import glob, sys
for path in glob.glob(sys.argv[1] + "/raw/*/*/rep0/rank*.csv"):
    lines = open(path).read().splitlines()
    rows = [lines[0]] + [",".join([r.split(",")[0]] + ["%.6f" % (float(v) * 1.2) for v in r.split(",")[1:]]) for r in lines[1:]]
    open(path, "w").write("\n".join(rows) + "\n")
PY
set +e
"$HARNESS" compare "$dir" "$SCRATCH/slow" --threshold 5% --format json >"$SCRATCH/slow.json"
code=$?
"$HARNESS" compare "$dir" "$SCRATCH/slow" --threshold 5% --format json --metric mean >/dev/null
code_mean=$?
"$HARNESS" compare "$dir" "$SCRATCH/slow" --threshold five 2>"$SCRATCH/bad"
code_bad=$?
set -e
[[ $code == 1 ]] || fail "compare on a 20% regression exited $code"
[[ $code_mean == 1 ]] || fail "compare --metric mean on a 20% regression exited $code_mean"
[[ $code_bad == 2 ]] || fail "a bad --threshold exited $code_bad"
expect_contains "$(cat "$SCRATCH/bad")" "error: --threshold: expected a percentage"
"$PY" - "$SCRATCH/slow.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
rows = [r for r in report["rows"] if r["phase"] == "iteration"]
assert len(rows) == 4, rows
# Every row is exactly 20% slower; whether each one is significant depends on the spread of
# this machine's samples, but a 20% shift over 40 samples a side is rarely hidden in all four.
for r in rows:
    assert abs(r["change_pct"] - 20) < 0.1, r
    assert r["n_base"] == 40 and not r["warnings"], r
    assert r["verdict"] in ("regression", "no significant change"), r
flagged = [r for r in rows if r["verdict"] == "regression"]
assert flagged and report["regression"], rows
print("compare flagged", len(flagged), "of", len(rows), "iteration rows")
PY
echo "PASS report_compare"
