#!/usr/bin/env bash
# Bad specs: one line per error with file:line:column and the key, exit code 2, nothing launched.
source "$(dirname "$0")/common.sh"

write_spec() {  # $1: extra run keys, $2: extra top-level lines
  cat > "$SCRATCH/bad.yaml" <<YAML
name: bad
output: $SCRATCH/results
model: {name: mlp, batch_size: 4}
run:
  iterations: 2
$1
systems: [overlap, sync]
$2
YAML
}

expect_error() {  # $1: expected stderr (exact), rest: extra harness args
  local expected=$1; shift
  set +e
  "$HARNESS" run "$SCRATCH/bad.yaml" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
  local code=$?
  set -e
  [[ $code == 2 ]] || fail "exit code $code (want 2) for: $expected; stderr: $(cat "$SCRATCH/err")"
  [[ "$(cat "$SCRATCH/err")" == "$expected" ]] || fail "stderr was '$(cat "$SCRATCH/err")', want '$expected'"
  [[ $(wc -l < "$SCRATCH/err") == $(wc -l <<< "$expected") ]] || fail "not one line per error"
  [[ ! -e "$SCRATCH/results" ]] || fail "a bad spec created results"
}

f="$SCRATCH/bad.yaml"
write_spec "  world_size: 0" ""
expect_error "error: $f:6:15: run.world_size: must be >= 1 (got 0)"
write_spec "  wrld_size: 2" ""
expect_error "error: $f:6:3: unknown key 'run.wrld_size' (did you mean 'world_size'?)"
write_spec "  warmup: lots" ""
expect_error "error: $f:6:11: run.warmup: expected an integer, got 'lots'"
write_spec "" "ddp: {bucket_mb: 0}"
expect_error "error: $f:8:18: ddp.bucket_mb: must be > 0 (got 0)"
write_spec "" "ddp: {bucket_mb: 1e-9}"
expect_error "error: $f:8:18: ddp.bucket_mb: must be at least one byte (1/1048576 MiB), got 0.000000001"
# Model options the zoo would refuse in every rank, refused here (runtime/models/model_catalog).
printf 'name: bad\noutput: %s\nmodel: {name: bert, batch_size: 2, width: 100}\nrun: {iterations: 2}\nsystems: [overlap]\n' "$SCRATCH/results" > "$SCRATCH/bad.yaml"
expect_error "error: $f:3:8: model: bert width must be a multiple of 64 (heads of 64)" --dry-run
printf 'name: bad\noutput: %s\nmodel: {name: mlp, batch_size: 2, input_shape: [100000000000]}\nrun: {iterations: 2}\nsystems: [overlap]\n' "$SCRATCH/results" > "$SCRATCH/bad.yaml"
expect_error "error: $f:3:8: model: mlp input_shape has more than 2^26 elements per sample" --dry-run
write_spec "" "baseline: async"
expect_error "error: $f:8:11: baseline: unknown value 'async' (expected one of: overlap, sync); did you mean 'sync'?"
write_spec "" ""
expect_error "error: --set model.name=vgg: model.name: unknown value 'vgg' (expected one of: resnet50, resnet18, vgg19, bert, bert_moe, vit, vit_moe, mlp, llama); did you mean 'vgg19'?" --set model.name=vgg
# --dry-run checks every file a spec names, for every kind, and says where.
cat > "$SCRATCH/bad.yaml" <<YAML
name: bad
output: $SCRATCH/results
model: {name: mlp, batch_size: 4}
run: {world_size: 2, iterations: 2}
systems:
  - {name: pipe, kind: pipeline, plan: $SCRATCH/nope.json}
YAML
expect_error "error: $f:6:40: systems.plan: cannot open '$SCRATCH/nope.json' (expected auto or a planner plan.json)" --dry-run
cat > "$SCRATCH/bad.yaml" <<YAML
kind: plan
name: bad
output: $SCRATCH/results
plan: {profile: $SCRATCH/nope.txt, pbs: 32, gbs: "32:64:32", devices: "8"}
YAML
expect_error "error: $f:4:17: plan.profile: cannot open '$SCRATCH/nope.txt'" --dry-run
expect_error "error: $f:4:17: plan.profile: cannot open '$SCRATCH/nope.txt'"
# A kind without a quick form is not run in full where --quick asked for a smoke run.
expect_error "error: --quick: a kind plan spec has no quick form (train and spmd_search specs do); shorten it with --set" --quick
cat > "$SCRATCH/bad.yaml" <<YAML
kind: simulat
name: bad
YAML
expect_error "error: $f:1:7: kind: unknown kind 'simulat' (expected one of: train, plan, simulate, profile, spmd_search); did you mean 'simulate'?" --dry-run
set +e; "$HARNESS" run "$SCRATCH/missing.yaml" 2>"$SCRATCH/err"; code=$?; set -e
[[ $code == 2 ]] || fail "missing spec: exit $code"
[[ "$(cat "$SCRATCH/err")" == "error: $SCRATCH/missing.yaml: cannot open file" ]] || fail "missing spec: $(cat "$SCRATCH/err")"
# Names that become paths follow one rule for every spec kind: nothing outside the output folder.
# Every error of a spec is reported at once, one line each, in file order.
name_error="error: $f:2:7: name: cannot name a results folder: starts with '.' (a name has at most 128 bytes, no '/', blank or control character, and no leading '.')"
while IFS='|' read -r kind column rest; do
  printf 'kind: %s\nname: ../escape\noutput: %s\n%s: {}\n' "$kind" "$SCRATCH/results" "$kind" > "$SCRATCH/bad.yaml"
  expected="$name_error"
  IFS=';' read -ra lines <<< "$rest"
  for line in "${lines[@]}"; do expected+=$'\n'"error: $f:4:$column: $line"; done
  expect_error "$expected" --dry-run
done <<'CASES'
plan|7|'plan' needs 'profile' and 'pbs' (or 'models')
simulate|11|simulate: missing key 'model';simulate: missing key 'run';simulate.systems: must be a non-empty list
profile|10|missing required key 'profile.model'
CASES
# run.device: cuda where the rank program's LibTorch sees no CUDA device: an error where the
# spec says it, not a CPU run recorded as "cuda".
if "$HARNESS_RANK" version | grep -q '"cuda_devices":0'; then
  write_spec "  device: cuda" ""
  expect_error "error: $f:6:11: run.device: cuda, but the rank program's LibTorch sees no CUDA device here (use cpu)" --dry-run
fi
# plan's numbers: whole, finite and in range (nan and inf passed CLI11's range checks).
planner_profile="$(dirname "$0")/../data/planner/three_layers.txt"
while IFS='|' read -r args expected; do
  set +e; "$HARNESS" plan --profile "$planner_profile" --pbs 1 $args >/dev/null 2>"$SCRATCH/err"; code=$?; set -e
  [[ $code == 2 ]] || fail "plan $args: exit $code (want 2)"
  [[ "$(cat "$SCRATCH/err")" == "$expected" ]] || fail "plan $args said: $(cat "$SCRATCH/err")"
done <<'CASES'
--micro-batch 0|error: --micro-batch: Value 0 not in range 1 to 16777216 (see --help)
--peak-activation nan|error: --peak-activation: must be a finite number > 0, got 'nan' (see --help)
--optimizer-scaling inf|error: --optimizer-scaling: must be a finite number > 0, got 'inf' (see --help)
--peak-activation 5x|error: --peak-activation: '5x' is not a number (see --help)
--noise-seed -1|error: --noise-seed: Value -1 not in range 0 to 1000000000 (see --help)
CASES
# profile layers (run by the rank program): bad numbers and a file that is no TorchScript are
# one line and exit 2, not a LibTorch backtrace.
echo garbage > "$SCRATCH/garbage.pt"
while IFS='|' read -r args expected; do
  set +e; "$HARNESS" profile layers $args >/dev/null 2>"$SCRATCH/err"; code=$?; set -e
  [[ $code == 2 ]] || fail "profile layers $args: exit $code (want 2): $(cat "$SCRATCH/err")"
  [[ "$(cat "$SCRATCH/err")" == "$expected" ]] || fail "profile layers $args said: $(cat "$SCRATCH/err")"
done <<CASES
--model mlp --threads 0|error: --threads: Value 0 not in range 1 to 1024 (see --help)
--model mlp --batch 100000000|error: --batch: Value 100000000 not in range 1 to 65536 (see --help)
--model mlp --after-idle-ms 0|error: --after-idle-ms '0': expected up to 16 gaps of 0 < ms <= 1000, e.g. 1,10,100, or none
--model mlp --after-idle-ms 5,2000|error: --after-idle-ms '5,2000': expected up to 16 gaps of 0 < ms <= 1000, e.g. 1,10,100, or none
--model mlp --after-idle-ms 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1|error: --after-idle-ms '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1': expected up to 16 gaps of 0 < ms <= 1000, e.g. 1,10,100, or none
--torchscript $SCRATCH/garbage.pt --input-shape 4|error: profile layers: $SCRATCH/garbage.pt is not a TorchScript module (PytorchStreamReader failed reading zip archive: not a ZIP archive)
CASES
# An output folder that cannot be made (under a file) is bad input, said before any rank runs.
touch "$SCRATCH/afile"
write_spec "" ""
expect_error "error: output '$SCRATCH/afile/sub/bad': cannot write there: '$SCRATCH/afile' is not a folder" --set "output=$SCRATCH/afile/sub"
! pgrep -f "harness-rank worker .*$SCRATCH" >/dev/null || fail "a rank was started"
# Messages say what was wrong: a folder given as a spec, an empty list.
set +e; "$HARNESS" run "$SCRATCH" 2>"$SCRATCH/err"; code=$?; set -e
[[ $code == 2 && "$(cat "$SCRATCH/err")" == "error: $SCRATCH: is a folder, not a spec file (experiments/*.yaml)" ]] ||
  fail "a folder as the spec: exit $code: $(cat "$SCRATCH/err")"
printf 'name: bad\noutput: %s\nmodel: {name: mlp, batch_size: 4}\nrun: {iterations: 2}\nsystems: []\n' "$SCRATCH/results" > "$SCRATCH/bad.yaml"
expect_error "error: $f:5:10: systems: expected a non-empty list of systems, got an empty list" --dry-run
# A key said twice is an error (yaml-cpp kept the first); a spec without its kind's section
# says which key is missing (was yaml-cpp's "invalid node", exit 1). Found by fuzz_inputs.py.
printf 'name: bad\noutput: %s\nmodel: {name: mlp, batch_size: 4}\nrun: {iterations: 2}\nsystems: [overlap]\nname: again\n' "$SCRATCH/results" > "$SCRATCH/bad.yaml"
expect_error "error: $f:6:1: duplicate key 'name' (first at line 1)" --dry-run
printf 'kind: profile\nname: bad\noutput: %s\n' "$SCRATCH/results" > "$SCRATCH/bad.yaml"
expect_error "error: $f:1:1: missing required key 'profile'" --dry-run
# More micro-batches than the global batch can fill: an error at the system, not a run in which
# every rank fails.
cat > "$SCRATCH/bad.yaml" <<YAML
name: bad
output: $SCRATCH/results
model: {name: mlp, batch_size: 2}
run: {world_size: 2, iterations: 2}
pipeline: {micro_batches: 8}
systems:
  - {name: gp, kind: pipeline, schedule: gpipe, stages: [{layers: "0-2", ranks: [0]}, {layers: "3-5", ranks: [1]}]}
YAML
expect_error "error: $f:7:5: systems: gp: pipeline.micro_batches 8 x 1 replica(s) per stage needs 8 samples, but the global batch is 4 (model.batch_size x run.world_size)" --dry-run
# A bad command line is bad input too: exit 2, one line (not CLI11's own codes and second line).
for args in "run" "compare $SCRATCH" "plan --threads x" "run $SCRATCH/bad.yaml --launcher" \
    "plan --profile $SCRATCH/none --pbs 1 --threads 100000" "profile comm --world 100000" \
    "profile comm --iterations 0" "profile comm --after-compute -1"; do
  set +e; "$HARNESS" $args >"$SCRATCH/out" 2>"$SCRATCH/err"; code=$?; set -e
  [[ $code == 2 ]] || fail "harness $args: exit $code (want 2): $(cat "$SCRATCH/err")"
  [[ $(wc -l < "$SCRATCH/err") == 1 ]] || fail "harness $args: not one line: $(cat "$SCRATCH/err")"
  expect_contains "$(cat "$SCRATCH/err")" "(see --help)"
done
set +e; "$HARNESS" plan --profile "$(dirname "$0")/../data/planner/three_layers.txt" --pbs 1 --threads 100000 >/dev/null 2>"$SCRATCH/err"; set -e
[[ "$(cat "$SCRATCH/err")" == "error: --threads: Value 100000 not in range 1 to 256 (see --help)" ]] ||
  fail "plan --threads 100000: $(cat "$SCRATCH/err")"
# The profile is checked as the command line is read; a published one names how to fetch it.
set +e; HARNESS_PROFILES="$SCRATCH/none" "$HARNESS" plan --profile '{profiles}/vgg19/graph.txt' --pbs 32 >/dev/null 2>"$SCRATCH/err"; code=$?; set -e
[[ $code == 2 && "$(cat "$SCRATCH/err")" == "error: --profile: cannot open '$SCRATCH/none/vgg19/graph.txt': the published DAPPLE profiles are not in $SCRATCH/none (fetch them: scripts/fetch-profiles.sh, or set HARNESS_PROFILES to their folder) (see --help)" ]] ||
  fail "plan --profile {profiles}/...: exit $code: $(cat "$SCRATCH/err")"
set +e; "$HARNESS" profile comm --sizes 8:1G:+1 --out "$SCRATCH/comm" >/dev/null 2>"$SCRATCH/err"; code=$?; set -e
[[ $code == 2 && ! -e "$SCRATCH/comm" ]] || fail "profile comm --sizes 8:1G:+1: exit $code"
expect_contains "$(cat "$SCRATCH/err")" "more than 64 sizes"
set +e; "$HARNESS" run >/dev/null 2>"$SCRATCH/err"; set -e
[[ "$(cat "$SCRATCH/err")" == "error: spec is required (see --help)" ]] || fail "run without a spec: $(cat "$SCRATCH/err")"
"$HARNESS" run --help >/dev/null || fail "--help is not an error"
echo "PASS bad_input"
