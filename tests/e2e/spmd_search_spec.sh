#!/usr/bin/env bash
# `kind: spmd_search` end to end (HiDup's Table IV and Figure 12 as one spec): its noise table
# holds what `harness spmd`'s noise study gives for the same model, costs and seeds, cell by
# cell, parsed back from noise.json and noise.md; its search-time points are the depths at the
# model's ranks then the ranks at its depth, each with the operators `harness spmd` counts and
# the median of its repeats; --quick applies the spec's quick: block; --dry-run and bad input
# (exit 2, file:line:column) write nothing.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/comm.json" <<'JSON'
{"backend": "gloo", "world_size": 2, "fits": [
 {"op": "allreduce", "latency_us": 200, "bus_bandwidth_bytes_per_s": 1e9},
 {"op": "allgather", "latency_us": 150, "bus_bandwidth_bytes_per_s": 1e9}]}
JSON
spec() {  # file [extra top-level text]
  cat > "$1" <<YAML
kind: spmd_search
name: search_check
output: $SCRATCH/results
spmd_search:
  comm: $SCRATCH/comm.json
  gflops: 10
  noise:
    levels: [0, 80]
    comm_scales: [1.5]
    seeds: 3
    models:
      - {label: small_llama, name: llama, depth: 2, width: 64, heads: 2, vocab: 512,
         input_shape: [8], global_batch: 4, ranks: 2}
  search_time:
    model: {label: small_moe, name: bert_moe, depth: 2, width: 64, experts: 4, top_k: 1,
            input_shape: [8], global_batch: 8, ranks: 4}
    depths: [2, 4]
    ranks: [2]
    repeats: 3
quick:
  spmd_search.noise: {seeds: 2, comm_scales: [0.5]}
${2:-}
YAML
}
spec "$SCRATCH/search.yaml"
"$HARNESS" run "$SCRATCH/search.yaml" > "$SCRATCH/run.out" || fail "spec run failed: $(cat "$SCRATCH/run.out")"
expect_contains "$(cat "$SCRATCH/run.out")" "## Table IV: noise"
LLAMA=(--model llama --depth 2 --width 64 --heads 2 --vocab 512 --tokens 8 --batch 4 --ranks 2
  --gflops 10 --comm "$SCRATCH/comm.json")
"$HARNESS" spmd "${LLAMA[@]}" --out "$SCRATCH/plain" > /dev/null || fail "spmd failed"
"$HARNESS" spmd "${LLAMA[@]}" --noise-flops 80 --noise-bandwidth 80 --noise-seeds 3 \
  --out "$SCRATCH/noise80" > /dev/null || fail "spmd noise failed"
"$HARNESS" spmd "${LLAMA[@]}" --comm-scale 1.5 --noise-seeds 3 --out "$SCRATCH/scale" > /dev/null \
  || fail "spmd comm scale failed"
for depth in 2 4; do
  "$HARNESS" spmd --model bert_moe --depth $depth --width 64 --experts 4 --top-k 1 --tokens 8 \
    --batch 8 --ranks 4 --gflops 10 --comm "$SCRATCH/comm.json" --out "$SCRATCH/moe$depth" \
    > /dev/null || fail "spmd bert_moe failed"
done

"$PY" - "$SCRATCH" <<'PY'
import glob, json, os, sys
scratch = sys.argv[1]
[folder] = glob.glob(os.path.join(scratch, "results", "search_check", "*"))
load = lambda *p: json.load(open(os.path.join(*p)))
noise = load(folder, "noise.json")
[row] = noise["models"]
assert row["label"] == "small_llama" and row["ranks"] == 2 and row["global_batch"] == 4, row
plan = load(scratch, "plain", "spmd_plan.json")
assert row["operators"] == len(plan["operators"]), row
assert abs(row["noise_free_s"] - plan["strategies"][0]["predicted_s"]) < 1e-15, row
cells = {c["column"]: c for c in row["cells"]}
assert list(cells) == ["0%", "80%", "comm x1.5"], list(cells)
assert all(s["relative"] == 1 and s["same_strategy"] for s in cells["0%"]["seeds"]), cells["0%"]
for column, alone in (("80%", "noise80"), ("comm x1.5", "scale")):
    want = load(scratch, alone, "spmd_noise.json")
    got = {k: v for k, v in cells[column].items() if k != "column"}
    assert got == want, (column, got, want)
# noise.md is the JSON's table: the row's cells at 4 decimals.
md = open(os.path.join(folder, "noise.md")).read().splitlines()
line = next(l for l in md if l.startswith("| small_llama |"))
values = [v.strip() for v in line.strip("|").split("|")]
assert values[:3] == ["small_llama", "2", str(row["operators"])], values
assert values[4:] == ["%.4f" % c["mean_relative"] for c in row["cells"]], values
# Figure 12: each depth at the model's 4 ranks, then 2 ranks at its depth 2.
figure = load(folder, "search_time.json")
points = [(p["depth"], p["ranks"]) for p in figure["points"]]
assert points == [(2, 4), (4, 4), (2, 2)], points
for p in figure["points"]:
    assert len(p["search_ms"]) == 3 and sorted(p["search_ms"])[1] == p["search_ms_median"], p
for p, depth in zip(figure["points"], (2, 4)):
    assert p["operators"] == len(load(scratch, f"moe{depth}", "spmd_plan.json")["operators"]), p
assert figure["points"][1]["operators"] > figure["points"][0]["operators"], figure
PY

# --quick: the spec's quick: block, and a --set of the block before it.
rm -rf "$SCRATCH/results"
"$HARNESS" run "$SCRATCH/search.yaml" --quick --set quick.spmd_search.noise.seeds=1 \
  > /dev/null || fail "quick run failed"
"$PY" - "$SCRATCH" <<'PY'
import glob, json, os, sys
[folder] = glob.glob(os.path.join(sys.argv[1], "results", "search_check", "*"))
[row] = json.load(open(os.path.join(folder, "noise.json")))["models"]
assert [c["column"] for c in row["cells"]] == ["0%", "80%", "comm x0.5"], row["cells"]
assert all(len(c["seeds"]) == 1 for c in row["cells"]), row["cells"]
PY

# --dry-run and bad input write nothing.
rm -rf "$SCRATCH/results"
"$HARNESS" run "$SCRATCH/search.yaml" --dry-run > "$SCRATCH/dry.out" || fail "dry run failed"
expect_contains "$(cat "$SCRATCH/dry.out")" "noise: 1 model(s) x 3 column(s) x 3 seed(s), search_time: 3 point(s) x 3 search(es); nothing is launched"
[ ! -e "$SCRATCH/results" ] || fail "--dry-run wrote results"
refused() {  # want spec-file [--set ...]
  local want=$1 file=$2 rc=0
  shift 2
  "$HARNESS" run "$file" "$@" > "$SCRATCH/refused.out" 2> "$SCRATCH/refused.err" || rc=$?
  [ "$rc" -eq 2 ] || fail "$file $* exited $rc, not 2: $(cat "$SCRATCH/refused.err")"
  expect_contains "$(cat "$SCRATCH/refused.err")" "$want"
  [ ! -e "$SCRATCH/results" ] || fail "$file $* wrote results"
}
S="$SCRATCH/search.yaml"
sed 's/    levels:/    level:/' "$S" > "$SCRATCH/level.yaml"
refused "level.yaml:8:5: unknown key 'spmd_search.noise.level' (did you mean 'levels'?)" \
  "$SCRATCH/level.yaml"
sed 's/name: llama, depth: 2/name: resnet50, depth: 2/' "$S" > "$SCRATCH/resnet.yaml"
refused "resnet.yaml:12:36: spmd_search.noise.models.name: unknown value 'resnet50' (expected one of: bert, bert_moe, vit, vit_moe, llama)" \
  "$SCRATCH/resnet.yaml"
refused "spmd_search.noise.models.label: cannot name a results folder" "$S" \
  --set 'spmd_search.noise.models=[{label: ../a, name: llama, global_batch: 4, ranks: 2}]'
refused "spmd_search.noise.levels: a level is a percent below 100" "$S" \
  --set 'spmd_search.noise.levels=[100]'
refused "missing.json" "$S" --set "spmd_search.comm=$SCRATCH/missing.json"
refused "spmd_search: give noise (Table IV), search_time (Figure 12) or both" "$S" \
  --set 'spmd_search={comm: x, gflops: 1}'
refused "spmd_search.search_time.model: llama heads must divide the width 64" "$S" \
  --set 'spmd_search.search_time.model={label: m, name: llama, width: 64, heads: 3, global_batch: 4, ranks: 2}'
refused "spmd_search.search_time.depths: depth 2000: bert_moe depth is at most 1024" "$S" \
  --set 'spmd_search.search_time.depths=[4, 2000]'
spec "$SCRATCH/bad.yaml" "quik: {}"
refused "bad.yaml:22:1: unknown key 'quik' (did you mean 'quick'?)" "$SCRATCH/bad.yaml"

echo "e2e spmd search spec: OK"
