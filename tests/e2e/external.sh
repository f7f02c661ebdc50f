#!/usr/bin/env bash
# External systems end to end: a 2-rank training "program" (python3, standard library only)
# runs beside the harness's own mlp ranks as three systems reading timings three ways (line
# protocol on stdout, a regex, a Chrome trace file); its samples come back through summary and
# tables; an optional system whose requirement fails is skipped, and the table says so, while a
# system that is not optional stops the study before anything runs. Then the failure modes: a program that
# never prints a sample, prints a malformed line, exits early or crashes fails its run like a
# failed rank (exit 1, what was expected, what came, its stderr) and finished points are kept.
source "$(dirname "$0")/common.sh"
cd "$(dirname "$0")/../.."

cat > "$SCRATCH/fake_trainer.py" <<'PY'
import json, os, socket, sys, time

style, iterations, bucket, out_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
fault = os.environ.get("FAKE_FAULT", "") if (rank == 1 and bucket == "25") else ""

# A real rendezvous over MASTER_ADDR/MASTER_PORT, as torch.distributed's env:// would do.
address = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
if rank == 0:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(address)
    server.listen()
    peers = [server.accept()[0] for _ in range(world - 1)]
    for peer in peers:
        peer.sendall(b"go")
else:
    deadline = time.time() + 30
    while True:
        try:
            client = socket.create_connection(address)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)
    client.recv(2)
print(f"rank {rank}/{world} ready (bucket {bucket} MiB)", flush=True)

if fault == "silent":
    print("training finished", flush=True)
    sys.exit(0)
events = []
for i in range(iterations):
    if fault == "early" and i == 1:
        sys.exit(0)
    if fault == "crash" and i == 1:
        print("RuntimeError: fake trainer lost its peer", file=sys.stderr)
        sys.exit(3)
    if fault == "malformed" and i == 2:
        print('{"iter": 2, "iteration_ms": 12.0', flush=True)
        continue
    ms = 10.0 + i
    if style == "jsonl":
        print(json.dumps({"iter": i, "forward_ms": ms / 2, "backward_ms": ms / 4,
                          "step_ms": ms / 4, "iteration_ms": ms}), flush=True)
    elif style == "regex":
        print(f"step {i} done, iter time: {ms:.3f} ms", flush=True)
    else:
        events.append({"ph": "X", "name": f"ProfilerStep#{i}", "ts": i * 100000, "dur": ms * 1000})
        print(f"step {i}", flush=True)  # a heartbeat for stall detection
if style == "trace":
    with open(os.path.join(out_dir, f"trace{rank}.json"), "w") as f:
        json.dump({"traceEvents": events}, f)
PY

write_spec() {  # $1: systems before the script, $2: after it (YAML list entries)
  cat > "$SCRATCH/spec.yaml" <<YAML
name: external
output: $SCRATCH/results
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 4, warmup: 1, stall_timeout_s: 60}
systems:
$1
  - name: script
    kind: external
    command: ["python3", "$SCRATCH/fake_trainer.py", "jsonl", "{iterations}", "{point.ddp.bucket_mb}", "{output_dir}"]
    env: {FAKE_RANK_COPY: "{rank}"}
$2
sweep:
  ddp.bucket_mb: [1, 25]
YAML
}

# ---- success: three ways of reading timings beside the harness's own system, and a skipped
# system ----
write_spec '  - overlap' '  - name: script_regex
    kind: external
    command: ["python3", "'"$SCRATCH"'/fake_trainer.py", "regex", "{iterations}", "{point.ddp.bucket_mb}", "{output_dir}"]
    timings: {format: regex, pattern: "iter time: (?<iteration_ms>[0-9.]+) ms"}
  - name: script_trace
    kind: external
    command: ["python3", "'"$SCRATCH"'/fake_trainer.py", "trace", "{iterations}", "{point.ddp.bucket_mb}", "{output_dir}"]
    timings: {format: chrome_trace, file: "{output_dir}/trace{rank}.json"}
  - name: needs_missing
    kind: external
    command: ["python3", "-c", "pass"]
    requires: ["python3 -c \"import no_such_module_for_harness\""]
    optional: true'
set +e
timeout 300 "$HARNESS" run "$SCRATCH/spec.yaml" >"$SCRATCH/out" 2>"$SCRATCH/err"
code=$?
set -e
[[ $code == 0 ]] || fail "run: exit $code; stderr: $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "note: skipping optional system 'needs_missing': its requirement failed: \`python3 -c \"import no_such_module_for_harness\"\` exited with code 1: ModuleNotFoundError: No module named 'no_such_module_for_harness'"
out=$(cat "$SCRATCH/out")
expect_contains "$out" "Skipped (optional, could not run here):
- needs_missing: \`python3 -c \"import no_such_module_for_harness\"\` exited with code 1"
expect_contains "$out" "| script |"
expect_contains "$out" "| script_trace |"
dir=$(ls -d "$SCRATCH"/results/external/*/)
"$PY" - "$dir" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
summary = json.load(open(os.path.join(d, "summary.json")))
assert len(summary["points"]) == 2
for point in summary["points"]:
    systems = {s["name"]: s for s in point["systems"]}
    assert set(systems) == {"overlap", "script", "script_regex", "script_trace"}, systems.keys()
    for name in ("script", "script_regex", "script_trace"):
        it = systems[name]["phases"]["iteration"]
        # 2 ranks x iterations 10, 11, 12, 13 ms
        assert it["count"] == 8 and it["p50"] == 11.5 and it["min"] == 10, (name, it)
    assert set(systems["script"]["phases"]) == {"forward", "backward", "step", "iteration"}
    assert set(systems["script_regex"]["phases"]) == {"iteration"}, systems["script_regex"]
    assert systems["overlap"]["phases"]["iteration"]["count"] == 8
raw = os.path.join(d, "raw", "p001", "script", "rep0")
rows = list(csv.DictReader(open(os.path.join(raw, "rank1.csv"))))
assert [r["iteration"] for r in rows] == ["0", "1", "2", "3"] and rows[3]["iteration_ms"] == "13", rows
config = json.load(open(os.path.join(raw, "config.json")))
assert config["commands"][1][2:] == ["jsonl", "4", "25", os.path.realpath(raw)], config["commands"]
assert config["environment"][1]["FAKE_RANK_COPY"] == "1" and config["environment"][1]["RANK"] == "1"
status = json.load(open(os.path.join(d, "status.json")))
assert status["complete"] and status["skipped"][0]["system"] == "needs_missing", status
manifest = json.load(open(os.path.join(d, "manifest.json")))
assert [s["name"] for s in manifest["systems"]] == ["overlap", "script", "script_regex", "script_trace"]
PY

# ---- a system the study cannot run and that is not optional: exit 1 before anything is made ----
rm -rf "$SCRATCH/results"
write_spec '' '  - name: needs_missing
    kind: external
    command: ["python3", "-c", "pass"]
    requires: ["python3 -c \"import no_such_module_for_harness\""]'
set +e
timeout 300 "$HARNESS" run "$SCRATCH/spec.yaml" >"$SCRATCH/out" 2>"$SCRATCH/err"
code=$?
set -e
[[ $code == 1 ]] || fail "a required system that cannot run: exit $code (want 1): $(cat "$SCRATCH/err")"
[[ $(wc -l < "$SCRATCH/err") == 1 ]] || fail "not one line: $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "error: system 'needs_missing' cannot run here: its requirement failed: \`python3 -c \"import no_such_module_for_harness\"\` exited with code 1"
expect_contains "$(cat "$SCRATCH/err")" "(install what it needs, or mark it optional: true)"
[[ ! -e $SCRATCH/results ]] || fail "a refused study made its results folder"

# ---- failures: reported like a failed rank, finished points kept ----
# The script alone: a harness system beside it would add two LibTorch ranks a point to each of
# the four runs and check nothing more.
write_spec "" ""
check_fault() {  # $1: FAKE_FAULT, $2: expected reason, $3: text expected in its stderr tail
  local fault=$1 reason=$2 tail=$3
  rm -rf "$SCRATCH/results"
  set +e
  FAKE_FAULT=$fault timeout 300 "$HARNESS" run "$SCRATCH/spec.yaml" >"$SCRATCH/out" 2>"$SCRATCH/err"
  local code=$?
  set -e
  [[ $code == 1 ]] || fail "$fault: exit code $code (want 1); stderr: $(cat "$SCRATCH/err")"
  local err; err=$(cat "$SCRATCH/err")
  expect_contains "$err" "error: run 2/2 (p001 ddp.bucket_mb=25 | script) failed: rank 1 $reason"
  [[ -z $tail ]] || expect_contains "$err" "$tail"
  local dir; dir=$(ls -d "$SCRATCH"/results/external/*/)
  "$PY" - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
status = lambda p, s: json.load(open(os.path.join(d, "raw", p, s, "rep0", "status.json")))
assert status("p000", "script")["status"] == "complete"
failed = status("p001", "script")
assert failed["status"] == "failed" and failed["failure"]["rank"] == 1, failed
summary = json.load(open(os.path.join(d, "summary.json")))
p0 = {s["name"]: s for s in summary["points"][0]["systems"]}
assert p0["script"]["phases"]["iteration"]["count"] == 8
p1 = {s["name"]: s for s in summary["points"][1]["systems"]}
assert p1["script"]["complete_runs"] == 0
assert json.load(open(os.path.join(d, "status.json")))["complete"] is False
PY
  expect_contains "$(cat "$SCRATCH/out")" "| script (baseline) | 0 | failed |"
}

check_fault silent "exited 0 without printing a sample in rank1.stdout (expected 4 measured samples: one JSON object per measured iteration, e.g. {\"iter\": 0, \"iteration_ms\": 12.5}); last line: 'training finished'" ""
check_fault malformed "printed a malformed sample at rank1.stdout:4: not valid JSON" "'{\"iter\": 2, \"iteration_ms\": 12.0'"
check_fault early "exited 0 after 1 of 4 samples in rank1.stdout" ""
check_fault crash "exited with code 3 after 1 of 4 samples in rank1.stdout" "RuntimeError: fake trainer lost its peer"
# The shipped study and the templates keep validating (they are not run here).
for spec in experiments/ddp_vs_torch.yaml experiments/templates/*.yaml; do
  "$HARNESS" run "$spec" --dry-run >/dev/null || fail "$spec does not validate"
done
echo "PASS external"
