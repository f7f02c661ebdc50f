#!/usr/bin/env bash
# A mixture-of-experts model (issue 22) trained by DDP and by expert parallelism on 2 real
# ranks: both finish; the expert-parallel trace has the dispatch and combine all-to-alls of
# every mixture, forward and backward; `harness trace` breaks them out; each expert-parallel
# rank holds half the experts' bytes a DDP rank holds, and the same dense part.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/spec.yaml" <<YAML
name: e2e_moe
output: $SCRATCH/results
model: {name: bert_moe, depth: 2, width: 64, input_shape: [16], batch_size: 4, experts: 4, top_k: 2}
run: {world_size: 2, iterations: 3, warmup: 1}
systems:
  - {name: ddp, mode: overlap}
  - {name: ep, kind: expert_parallel}
baseline: ddp
YAML

out=$("$HARNESS" run "$SCRATCH/spec.yaml" 2>"$SCRATCH/stderr") || fail "run failed: $(cat "$SCRATCH/stderr")"
expect_contains "$out" "| ddp (baseline) | 6 |"
expect_contains "$out" "| ep | 6 |"
dir=$(ls -d "$SCRATCH"/results/e2e_moe/*/)
"$HARNESS" trace "$dir" >"$SCRATCH/trace.out" 2>&1 || fail "harness trace failed: $(cat "$SCRATCH/trace.out")"

"$PY" - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
run = lambda system: os.path.join(d, "raw", "p000", system, "rep0")
trace = json.load(open(os.path.join(run("ep"), "trace_rank0.json")))
names = sorted(e["name"] for e in trace["traceEvents"] if e.get("cat") == "alltoall")
# depth 2, a mixture every other layer: one mixture; dispatch and combine, each backward too.
assert names == ["moe 0 combine", "moe 0 combine backward", "moe 0 dispatch",
                 "moe 0 dispatch backward"], names
assert all(e["args"]["sent_bytes"] >= 0 for e in trace["traceEvents"] if e.get("cat") == "alltoall")
ddp_trace = json.load(open(os.path.join(run("ddp"), "trace_rank0.json")))
assert not any(e.get("cat") == "alltoall" for e in ddp_trace["traceEvents"])

breakdown = json.load(open(os.path.join(run("ep"), "trace_breakdown.json")))
for rank in breakdown["ranks"]:
    assert rank["alltoall_ms"] > 0 and rank["allreduce_ms"] > 0, rank
    assert rank["compute_ms"] < rank["forward_ms"] + rank["backward_ms"] + rank["step_ms"], rank
assert all(r["alltoall_ms"] == 0 for r in
           json.load(open(os.path.join(run("ddp"), "trace_breakdown.json")))["ranks"])

for r in (0, 1):
    ep = json.load(open(os.path.join(run("ep"), f"memory_rank{r}.json")))
    ddp = json.load(open(os.path.join(run("ddp"), f"memory_rank{r}.json")))
    # 4 experts of 64 -> 256 -> 64 (33,088 floats each): a DDP rank all 4, an expert one 2.
    assert ddp["expert_parameter_bytes"] == 4 * 33088 * 4, ddp
    assert ep["expert_parameter_bytes"] * 2 == ddp["expert_parameter_bytes"], (ep, ddp)
    assert ddp["parameter_bytes"] - ddp["expert_parameter_bytes"] == \
        ep["parameter_bytes"] - ep["expert_parameter_bytes"]
    assert ep["peak_resident_bytes"] > 0
# table.md's memory section and summary.json carry the same figures (largest over ranks).
table = open(os.path.join(d, "table.md")).read()
assert "### e2e_moe: default - memory per rank" in table, table
summary = json.load(open(os.path.join(d, "summary.json")))
systems = {s["name"]: s for s in summary["points"][0]["systems"]}
assert systems["ep"]["memory_per_rank"]["expert_parameter_bytes"] == 2 * 33088 * 4
assert systems["ddp"]["memory_per_rank"]["expert_parameter_bytes"] == 4 * 33088 * 4
assert "| ep | " in table.split("memory per rank")[1]
# breakdown.md (written by the run itself): all-to-all time for ep, none for ddp.
rows = {line.split("|")[1].strip(): line.split("|")[2:-1]
        for line in open(os.path.join(d, "breakdown.md")) if line.startswith("| ep ") or line.startswith("| ddp ")}
assert float(rows["ep"][2]) > 0 and float(rows["ddp"][2]) == 0, rows
PY

# The dense part's reducer with PowerSGD (collectives from a thread of its own) beside the
# all-to-alls of backward: on a process group of its own, every run completes.
out=$("$HARNESS" run "$SCRATCH/spec.yaml" --set ddp.compression=powersgd \
  --set ddp.powersgd_warmup_steps=0 --set run.iterations=5 2>"$SCRATCH/stderr2") ||
  fail "expert parallelism with PowerSGD failed: $(cat "$SCRATCH/stderr2")"
expect_contains "$out" "| ep | 10 |"
# A mixture-of-experts model under a schedule that splits the backward (I and W), whose ranks
# cannot carry the balancing loss: refused at its line before a rank starts, nothing written.
sed 's|^  - {name: ep, kind: expert_parallel}$|  - {name: zb, kind: pipeline, schedule: zb_h1, stages: 2}|' \
  "$SCRATCH/spec.yaml" > "$SCRATCH/zb.yaml"
expect_refused_exactly "$SCRATCH/zb.yaml" "error: $SCRATCH/zb.yaml:7:5: systems: zb: schedule: zb_h1 \
splits the backward into I and W, which does not carry a mixture-of-experts model's balancing loss \
(bert_moe): use gpipe, dapple or interleaved_1f1b" "$SCRATCH/zb_results"
# The dense part sharded at ZeRO-1, ZeRO-2 and FSDP beside the experts: from one seed each loss
# equals plain expert parallelism's at every iteration on both ranks, and each rank's memory
# file holds the dense part's padded buffer (FSDP: its chunk), its gradients (ZeRO-2 and FSDP:
# its chunk's) and AdamW's state of its chunk and its experts, and the bytes its dense group
# sent, as the formula says.
sed -e 's|^  - {name: ep, kind: expert_parallel}$|  - {name: ep, kind: expert_parallel}\
  - {name: ep_zero1, kind: expert_parallel, zero_stage: 1}\
  - {name: ep_zero2, kind: expert_parallel, zero_stage: 2}\
  - {name: ep_fsdp, kind: expert_parallel, zero_stage: 3}|' \
  -e 's|^run: |optimizer: {name: adamw, lr: 0.001}\nrun: |' "$SCRATCH/spec.yaml" > "$SCRATCH/zero.yaml"
dry=$("$HARNESS" run "$SCRATCH/zero.yaml" --dry-run 2>&1) || fail "dry run failed: $dry"
expect_contains "$dry" "dense part ZeRO-2"
"$HARNESS" run "$SCRATCH/zero.yaml" --set output="$SCRATCH/zero_results" >/dev/null \
  2>"$SCRATCH/zero.err" || fail "sharded dense part failed: $(cat "$SCRATCH/zero.err")"
"$PY" - "$(ls -d "$SCRATCH"/zero_results/e2e_moe/*/)" <<'PY'
import json, math, os, re, sys
run = lambda system: os.path.join(sys.argv[1], "raw", "p000", system, "rep0")
def losses(system, rank):
    text = open(os.path.join(run(system), f"rank{rank}.stdout")).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]
for rank in (0, 1):
    for system in ("ep_zero1", "ep_zero2", "ep_fsdp"):
        for a, b in zip(losses(system, rank), losses("ep", rank)):
            assert abs(a - b) <= 1e-5 * abs(b), (system, rank, losses(system, rank), losses("ep", rank))
for system, stage in (("ep_zero1", 1), ("ep_zero2", 2), ("ep_fsdp", 3)):
    for rank in (0, 1):
        plain = json.load(open(os.path.join(run("ep"), f"memory_rank{rank}.json")))
        m = json.load(open(os.path.join(run(system), f"memory_rank{rank}.json")))
        experts = plain["expert_parameter_bytes"] // 4
        dense = plain["parameter_bytes"] // 4 - experts
        chunk = math.ceil(dense / 2)
        s = m["sharded"]
        assert (s["stage"], s["unit"], s["elements"], s["shard_elements"]) == (stage, "dense", dense, chunk), s
        gradients = 4 * (dense if stage == 1 else chunk) + 4 * experts
        dense_held = chunk if stage == 3 else 2 * chunk  # FSDP frees the whole dense part
        assert (m["parameter_bytes"], m["gradient_bytes"], m["optimizer_state_bytes"]) == \
            (4 * (dense_held + experts), gradients, 2 * 4 * (chunk + experts)), (system, rank, m)
        assert abs(s["bytes_sent_per_iteration"] - s["formula"]["bytes_sent_per_iteration"]) < 1e-6, s
PY
echo "PASS moe"
