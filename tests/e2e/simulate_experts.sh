#!/usr/bin/env bash
# Expert parallelism in the simulator end to end: `harness profile layers --moe` records each
# mixture layer's experts, their bytes and the rows one dispatch sends (a BERT-MoE of width 64,
# 4 experts of 64 -> 256 -> 64 in its second layer, a capacity that drops nothing: every token's
# 2 choices), and `kind: expert_parallel` in a simulate spec prices it at world 2 and 4, its
# dense part whole and at ZeRO-2: five all-to-alls a mixture in the traces, the experts left out
# of the buckets and shards, a rank's memory its dense part and its share of the experts. A
# profile without mixtures is refused at the system's line before anything is written, and the
# shipped study runs.
source "$(dirname "$0")/common.sh"

MODEL=(--depth 2 --width 64 --input-shape 16 --batch 4 --repetitions 2 --warmup 1
  --after-idle-ms none)
"$HARNESS" profile layers --model bert_moe --moe 4,2,4.0,2 "${MODEL[@]}" --optimizer adamw \
  --out "$SCRATCH/moe" > /dev/null || fail "mixture profile failed"
"$HARNESS" profile layers --model bert "${MODEL[@]}" --out "$SCRATCH/dense" > /dev/null ||
  fail "dense profile failed"
"$PY" - "$SCRATCH/moe/profile.json" <<'PY'
import json, sys
layers = json.load(open(sys.argv[1]))["layers"]
mixed = [l for l in layers if "mixtures" in l]
assert [l["name"] for l in mixed] == ["encoder.layer.1"], [l["name"] for l in layers]
m = mixed[0]["mixtures"]
assert m == {"count": 1, "experts": 4, "expert_parameter_bytes": 4 * (64 * 256 + 256 + 256 * 64 + 64) * 4,
             "dispatch_bytes": 4 * 16 * 2 * 64 * 4}, m
PY

spec() {  # name profile
  cat > "$SCRATCH/$1.yaml" <<YAML
kind: simulate
name: $1
output: $SCRATCH/results
simulate:
  model: {profile: $SCRATCH/$2/graph.txt, pbs: 4, batch_size: 4}
  cluster: {topology: profiles/gloo-2ranks-cpu/topology.yaml, gpus_per_machine: 4, cpu_cores: 2}
  run: {world_size: 2, iterations: 3}
  systems:
    - {name: ddp, kind: ddp, mode: overlap}
    - {name: ep, kind: expert_parallel}
    - {name: ep_zero2, kind: expert_parallel, zero_stage: 2}
  sweep: {run.world_size: [2, 4]}
YAML
}
cd "$(dirname "$0")/../.."  # the topology's path is the repository's
spec experts moe
"$HARNESS" simulate "$SCRATCH/experts.yaml" > /dev/null || fail "the simulation failed"
"$PY" - "$SCRATCH/results/experts" "$SCRATCH/moe/profile.json" <<'PY'
import glob, json, os, sys
results = glob.glob(os.path.join(sys.argv[1], "*"))[0]
layers = json.load(open(sys.argv[2]))["layers"]
total = sum(l["parameter_bytes"] for l in layers)
experts = sum(l.get("mixtures", {}).get("expert_parameter_bytes", 0) for l in layers)
for point, world in (("p000", 2), ("p001", 4)):
    raw = os.path.join(results, "raw", point)
    config = json.load(open(os.path.join(raw, "ep", "rep0", "config.json")))["system"]
    assert config["experts_per_rank"] == 4 // world, config
    assert config["memory_per_rank"]["parameter_bytes"] == total - experts + experts / world, config
    sharded = json.load(open(os.path.join(raw, "ep_zero2", "rep0", "config.json")))["system"]
    assert sharded["memory_per_rank"]["gradient_bytes"] < config["memory_per_rank"]["gradient_bytes"], sharded
    trace = json.load(open(os.path.join(raw, "ep", "rep0", "trace_rank0.json")))["traceEvents"]
    kinds = [e.get("cat") for e in trace if e.get("ph") == "X"]
    assert kinds.count("alltoall") == 5, kinds
    ddp = json.load(open(os.path.join(raw, "ddp", "rep0", "trace_rank0.json")))["traceEvents"]
    assert not [e for e in ddp if e.get("cat") == "alltoall"], "DDP exchanged tokens"
PY

# Expert parallelism over a dense profile: refused at the system's line, nothing written.
spec dense dense
rm -rf "$SCRATCH/results"
code=0; "$HARNESS" simulate "$SCRATCH/dense.yaml" > /dev/null 2> "$SCRATCH/err" || code=$?
[[ $code == 2 && $(wc -l < "$SCRATCH/err") == 1 && ! -e "$SCRATCH/results" ]] ||
  fail "expert parallelism over a dense profile: exit $code, $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "dense.yaml:10:7: system 'ep' shards experts"

"$HARNESS" simulate experiments/simulate_moe_bandwidth.yaml --set "output=$SCRATCH/study" \
  > /dev/null || fail "experiments/simulate_moe_bandwidth.yaml failed"
"$PY" - "$SCRATCH/study" <<'PY'
import glob, json, sys
summary = json.load(open(glob.glob(sys.argv[1] + "/*/*/summary.json")[0]))
assert len(summary["points"]) == 5, len(summary["points"])
for point in summary["points"]:
    assert [s["name"] for s in point["systems"]] == ["ddp", "ep", "ep_zero1", "ep_zero2"], point
PY
echo "simulate experts: ok"
