#!/usr/bin/env bash
# Every file the harness reads is input, not only specs: a spec whose aliases loop, a results
# folder whose manifest or status is corrupt or out of range, a topology that says a key twice,
# an output folder that cannot be made, a folder with nothing to plot. Each class: exit 2, one
# line naming the file (file:line:column where the parser knows it), quickly (no walk without
# bound), nothing launched, written or changed.
source "$(dirname "$0")/common.sh"
REFERENCE="$(dirname "$0")/../../results/reference/ci_regression"
PROFILE="$(dirname "$0")/../data/planner/three_layers.txt"

expect_refusal() {  # $1: expected stderr (exact, or *TEXT* to contain TEXT), rest: harness args
  local expected=$1; shift
  local args="$*"
  set +e
  timeout 20 "$HARNESS" "$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
  local code=$?
  set -e
  [[ $code == 2 ]] || fail "harness ${args:0:300}: exit $code (want 2; 124 is a hang): $(head -c 500 "$SCRATCH/err")"
  [[ $(wc -l < "$SCRATCH/err") == 1 ]] || fail "harness ${args:0:300}: not one line: $(head -c 500 "$SCRATCH/err")"
  if [[ $expected == \** ]]; then
    expect_contains "$(cat "$SCRATCH/err")" "${expected//\*/}"
  else
    [[ "$(cat "$SCRATCH/err")" == "$expected" ]] || fail "harness ${args:0:300} said '$(head -c 600 "$SCRATCH/err")', want '$expected'"
  fi
}
tree_digest() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum); }

# Specs whose YAML aliases loop (yaml-cpp resolves an alias to the node itself): a crash in the
# walk before; now refused where the alias is.
spec_head() { printf 'name: loops\noutput: %s\nrun: {iterations: 2}\nsystems: [overlap]\n' "$SCRATCH/results"; }
{ spec_head; echo 'model: {name: mlp, batch_size: 4}'; echo 'sweep: &a {ddp.bucket_mb: *a}'; } > "$SCRATCH/loop.yaml"
expect_refusal "error: $SCRATCH/loop.yaml:6:12: an alias refers to a map or list that contains it (an alias loop)" run "$SCRATCH/loop.yaml" --dry-run
{ spec_head; echo 'model: &m {name: mlp, batch_size: 4, <<: *m}'; } > "$SCRATCH/loop.yaml"
expect_refusal "error: $SCRATCH/loop.yaml:5:38: an alias refers to a map or list that contains it (an alias loop)" run "$SCRATCH/loop.yaml" --dry-run
# Only regular files are read: a FIFO hung the harness, /dev/zero ran it out of memory.
mkfifo "$SCRATCH/fifo.yaml"
expect_refusal "error: $SCRATCH/fifo.yaml: not a regular file" run "$SCRATCH/fifo.yaml" --dry-run
expect_refusal "error: /dev/zero: not a regular file" run /dev/zero --dry-run
# Nesting and the key paths of --set are bounded.
{ spec_head; echo 'model: {name: mlp, batch_size: 4}'; printf 'description: %s%s\n' "$(printf '[%.0s' {1..70})" "$(printf ']%.0s' {1..70})"; } > "$SCRATCH/deep.yaml"
expect_refusal "error: $SCRATCH/deep.yaml:6:77: nested deeper than 64 levels" run "$SCRATCH/deep.yaml" --dry-run
{ spec_head; echo 'model: {name: mlp, batch_size: 4}'; } > "$SCRATCH/ok.yaml"
deep_key=$(printf 'a.%.0s' {1..600})a
expect_refusal "error: --set $deep_key=1: a key path of more than 64 keys" run "$SCRATCH/ok.yaml" --dry-run --set "$deep_key=1"
# Names that become folders and table headings: bounded, no control characters.
{ printf 'name: %s\n' "$(head -c 1000000 /dev/zero | tr '\0' n)"; tail -n +2 "$SCRATCH/ok.yaml"; } > "$SCRATCH/long.yaml"
expect_refusal "*long.yaml:1:7: name: cannot name a results folder: longer than 128 bytes" run "$SCRATCH/long.yaml" --dry-run
expect_refusal "error: --set name=\"a\\nb\": name: cannot name a results folder: has a control character (a name has at most 128 bytes, no '/', blank or control character, and no leading '.')" run "$SCRATCH/ok.yaml" --dry-run --set 'name="a\nb"'
# A malformed fault-injection hook is refused before anything runs, not by each rank.
set +e; HARNESS_FAULT=garbage "$HARNESS" run "$SCRATCH/ok.yaml" >/dev/null 2>"$SCRATCH/err"; code=$?; set -e
[[ $code == 2 && "$(cat "$SCRATCH/err")" == "error: HARNESS_FAULT: bad field 'garbage'" ]] || fail "HARNESS_FAULT=garbage: exit $code: $(cat "$SCRATCH/err")"
[[ ! -e "$SCRATCH/results" ]] || fail "HARNESS_FAULT=garbage made a results folder"

# Results folders read back: each mutation of a copy of the reference run is refused by every
# command that reads it, in well under the 20 s limit (a world size of 10^9 was a hang), and the
# copy is left exactly as it was.
results_case() {  # $1: expected stderr, $2: file to change, $3: python transform of its text
  local expected=$1 file=$2 transform=$3
  rm -rf "$SCRATCH/r" && cp -r "$REFERENCE" "$SCRATCH/r"
  "$PY" -c "import sys; p=sys.argv[1]; t=open(p).read(); open(p,'w').write($transform)" "$SCRATCH/r/$file"
  local before; before=$(tree_digest "$SCRATCH/r")
  for command in "report $SCRATCH/r" "compare $REFERENCE $SCRATCH/r" "trace $SCRATCH/r" "plot $SCRATCH/r"; do
    # shellcheck disable=SC2086
    expect_refusal "$expected" $command
  done
  [[ "$(tree_digest "$SCRATCH/r")" == "$before" ]] || fail "a refused folder was changed ($file)"
  echo "refused: $file: $expected"
}
m="$SCRATCH/r/manifest.json"
results_case "error: $m: points[0].world_size: expected an integer in [1, 4096], got 1000000000" manifest.json 't.replace("\"world_size\": 2", "\"world_size\": 1000000000")'
results_case "error: $m: points[0].world_size: expected an integer in [1, 4096], got -2" manifest.json 't.replace("\"world_size\": 2", "\"world_size\": -2")'
results_case "error: $m: points[0].iterations: expected an integer in [1, 100000000], got 0" manifest.json 't.replace("\"iterations\": 40", "\"iterations\": 0")'
results_case "error: $m: systems[1].name: cannot name a folder: starts with '.'" manifest.json 't.replace("\"name\": \"sync\"", "\"name\": \"../sync\"")'
results_case "error: $m:3:24: malformed JSON: syntax error while parsing value - invalid string: missing closing quote; last read: '\"ci_reg'" manifest.json 't[:50]'
results_case "error: $m:1:1: malformed JSON: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal" manifest.json '""'
results_case "error: $m: baseline: expected a string, got 3" manifest.json 't.replace("\"baseline\": \"overlap\"", "\"baseline\": 3")'
results_case "error: $SCRATCH/r/raw/p000/overlap/rep0/status.json: status: expected a string, got 12" raw/p000/overlap/rep0/status.json 't.replace("\"complete\"", "12")'
results_case "error: $SCRATCH/r/raw/p000/sync/rep0/status.json: status: expected complete, failed or interrupted, got 'done'" raw/p000/sync/rep0/status.json 't.replace("\"complete\"", "\"done\"")'
results_case "error: $SCRATCH/r/status.json: complete: expected true or false, got \"yes\"" status.json 't.replace("true", "\"yes\"")'

# Output folders that cannot be made are refused before any work (was: raw filesystem text and
# exit 1 after planning).
touch "$SCRATCH/afile"
expect_refusal "error: --out '$SCRATCH/afile/plan': cannot create folder: Not a directory" plan --profile "$PROFILE" --pbs 1 --gbs 8 --devices 2 --out "$SCRATCH/afile/plan"
expect_refusal "error: --out '$SCRATCH/afile/comm': cannot create folder: Not a directory" profile comm --world 2 --out "$SCRATCH/afile/comm"
expect_refusal "error: --out '$SCRATCH/afile/layers': cannot create folder: Not a directory" profile layers --model mlp --out "$SCRATCH/afile/layers"
[[ -f "$SCRATCH/afile" ]] || fail "the file under --out was changed"
# profile layers' model options: negative and empty values are refused, not defaulted.
expect_refusal "error: --depth: Value -1 not in range 0 to 100000 (see --help)" profile layers --model mlp --depth -1
expect_refusal "error: --width: Value -4 not in range 0 to 1000000 (see --help)" profile layers --model mlp --width -4
expect_refusal "error: --num-classes: Value -10 not in range 0 to 100000000 (see --help)" profile layers --model mlp --num-classes -10
expect_refusal "error: --input-shape: expected positive integers, e.g. 3,224,224 (see --help)" profile layers --model mlp --input-shape ''
# A topology says each key once, as a spec does (yaml-cpp kept the first value silently).
printf 'name: t\ngpu_memory_bytes: 16.0e9\nbandwidth: {intra_machine: 1e9, inter_machine_p2p: 1e9, inter_machine_collective: 1e9}\nmachines: [2]\ngpu_memory_bytes: 32.0e9\n' > "$SCRATCH/topology.yaml"
expect_refusal "error: $SCRATCH/topology.yaml:5:1: duplicate key 'gpu_memory_bytes' (first at line 2)" plan --profile "$PROFILE" --pbs 1 --gbs 8 --topology "$SCRATCH/topology.yaml"
# A folder with nothing any figure kind can draw: an error, and no plots/ made in it.
mkdir -p "$SCRATCH/empty"
expect_refusal "error: $SCRATCH/empty: nothing to plot (not a results folder: no manifest.json, raw/ or spec.yaml)" plot "$SCRATCH/empty"
[[ -z "$(ls -A "$SCRATCH/empty")" ]] || fail "plot wrote into an empty folder"
[[ ! -s "$SCRATCH/out" ]] || fail "plot printed more than its error: $(head -c 300 "$SCRATCH/out")"
# profile layers refuses a model that does not run at its shape, and a TorchScript file that is
# not there, before --out exists (was: the folder made, then LibTorch's raw fopen text).
expect_refusal "error: profile layers: --torchscript '$SCRATCH/none.pt': no such file" profile layers --torchscript "$SCRATCH/none.pt" --input-shape 4 --out "$SCRATCH/layers-ts"
[[ ! -e "$SCRATCH/layers-ts" ]] || fail "profile layers made --out for a missing TorchScript file"
expect_refusal "*profile layers: the model does not run on a batch of 1 at input shape 3x1x1: Expected more than 1 value per channel*" profile layers --model resnet18 --input-shape 3,1,1 --batch 1 --out "$SCRATCH/layers-shape"
[[ ! -e "$SCRATCH/layers-shape" ]] || fail "profile layers made --out for a shape its model does not take"
# A NUL byte inside a value (was: the spec ran, the name cut at the NUL).
printf 'name: nul\000ed\noutput: %s\nmodel: {name: mlp, batch_size: 4}\nrun: {iterations: 2}\nsystems: [overlap]\n' "$SCRATCH/results" > "$SCRATCH/nul.yaml"
expect_refusal "error: $SCRATCH/nul.yaml:1:10: a NUL byte (not a text file, or a value with a NUL in it)" run "$SCRATCH/nul.yaml"
# A --set of the quick: block under --quick is what --quick applies, checked like any value
# (was: accepted, and the block's own value run).
expect_refusal "error: --set quick.run.iterations=-1: run.iterations: must be >= 1 (got -1)" run "$SCRATCH/ok.yaml" --quick --dry-run --set quick.run.iterations=-1
[[ ! -e "$SCRATCH/results" ]] || fail "a refused spec wrote results"
# The command line: an unknown command is named with the closest one; a range error names its
# bounds, not a double's 300 digits; --version says the version, the LibTorch and the commit.
expect_refusal "error: unknown command 'rnu'; did you mean 'run'? (harness --help lists them)" rnu "$SCRATCH/ok.yaml"
expect_refusal "error: --repeat: Value -1 not in range 0 to 9999 (see --help)" trace "$SCRATCH/empty" --repeat -1
version=$("$HARNESS" --version)
[[ $version =~ ^harness\ [0-9]+\.[0-9]+\.[0-9]+\ \(LibTorch\ [0-9.]+,\ commit\ ([0-9a-f]{40}(-dirty)?|unknown)\)$ ]] ||
  fail "harness --version said '$version'"
echo "PASS bad_files"
