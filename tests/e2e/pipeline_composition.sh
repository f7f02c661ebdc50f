#!/usr/bin/env bash
# Pipelines whose stage replicas are ZeRO-1, ZeRO-2 or FSDP, end to end: a Llama-style decoder
# with AdamW on 4 ranks, 2 stages x 2 replicas. From one seed, each composed system's loss equals
# the plain pipeline's at every iteration on every rank; each rank's memory file holds the padded
# stage buffer (FSDP: its chunk), the gradients its stage keeps and the optimizer state of its
# chunk, and the bytes it sent on its replica group per iteration, all as the formula says from
# the stage's parameter count; the traced iteration shows the replicas' all-reduce (ZeRO-2 and
# FSDP: reduce-scatter) and the chunks' all-gather (FSDP: one, before the first forward). A
# composition that cannot shard is refused before anything runs.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/spec.yaml" <<YAML
name: e2e_composition
output: $SCRATCH/results
model: {name: llama, batch_size: 2, input_shape: [8], depth: 2, width: 64, heads: 2, kv_heads: 1, vocab: 101}
optimizer: {name: adamw, lr: 0.01}
run: {world_size: 4, iterations: 3, warmup: 1, trace: true}
pipeline: {micro_batches: 2}
systems:
  - {name: pipeline, kind: pipeline, stages: 2}
  - {name: pipeline_zero1, kind: pipeline, stages: 2, zero_stage: 1}
  - {name: pipeline_zero2, kind: pipeline, stages: 2, zero_stage: 2}
  - {name: pipeline_fsdp, kind: pipeline, stages: 2, zero_stage: 3}
YAML
dry=$("$HARNESS" run "$SCRATCH/spec.yaml" --dry-run 2>&1) || fail "dry run failed: $dry"
expect_contains "$dry" "2 balanced stages, replicas ZeRO-1"
expect_contains "$dry" "2 balanced stages, replicas ZeRO-3"
# The mesh, rank by rank: pipeline outermost, replica j's rows to replica j of the next stage.
expect_contains "$dry" "mesh: pipeline 2 x data 2"
expect_contains "$dry" "rank 1 (pipeline 0, data 1): all-reduces and all-gathers in [0, 1]; sends to [3]"
expect_contains "$dry" "rank 2 (pipeline 1, data 0): reduce-scatters and all-gathers in [2, 3]"
"$HARNESS" run "$SCRATCH/spec.yaml" >/dev/null 2>"$SCRATCH/stderr" ||
  fail "run failed: $(cat "$SCRATCH/stderr")"
dir=$(ls -d "$SCRATCH"/results/e2e_composition/*/)

"$PY" - "$dir" <<'PY'
import json, math, os, re, sys
d = sys.argv[1]
raw = lambda system: os.path.join(d, "raw", "p000", system, "rep0")

def losses(system, rank):
    text = open(os.path.join(raw(system), f"rank{rank}.stdout")).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]

for rank in range(4):
    plain = losses("pipeline", rank)
    assert len(plain) == 4, plain
    for system in ("pipeline_zero1", "pipeline_zero2", "pipeline_fsdp"):
        got = losses(system, rank)
        assert len(got) == len(plain), (system, got)
        for a, b in zip(got, plain):
            assert abs(a - b) <= 1e-5 * max(abs(b), 1e-6), (system, rank, got, plain)

n = 2  # replicas per stage
for system, stage in (("pipeline_zero1", 1), ("pipeline_zero2", 2), ("pipeline_fsdp", 3)):
    for rank in range(4):
        m = json.load(open(os.path.join(raw(system), f"memory_rank{rank}.json")))
        plain = json.load(open(os.path.join(raw("pipeline"), f"memory_rank{rank}.json")))
        s = m["sharded"]
        elements = plain["parameter_bytes"] // 4  # the stage's parameters, counted by the plain run
        shard = math.ceil(elements / n)
        assert (s["stage"], s["replicas"], s["elements"], s["shard_elements"]) == \
            (stage, n, elements, shard), (system, rank, s)
        gradients = 4 * elements if stage == 1 else 4 * shard
        parameters = 4 * shard if stage == 3 else 4 * n * shard  # FSDP frees the whole stage
        assert (m["parameter_bytes"], m["gradient_bytes"], m["optimizer_state_bytes"]) == \
            (parameters, gradients, 2 * 4 * shard), (system, rank, m)
        sent = (2 * (n - 1) / n * 4 * elements if stage == 1 else (n - 1) / n * 4 * n * shard) \
            + (n - 1) * 4 * shard
        assert abs(s["bytes_sent_per_iteration"] - sent) < 1e-6, (system, rank, s, sent)
        assert s["formula"]["bytes_sent_per_iteration"] == s["bytes_sent_per_iteration"], s
        # The traced iteration names the replicas' sum and the chunks' gather.
        trace = json.load(open(os.path.join(raw(system), f"trace_rank{rank}.json")))
        cats = [e.get("cat") for e in trace["traceEvents"] if e.get("ph") == "X"]
        summed = "allreduce" if stage == 1 else "reducescatter"
        assert (cats.count(summed), cats.count("allgather")) == (1, 1), (system, rank, cats)
PY

sed -e 's/stages: 2, zero_stage: 1/stages: 4, zero_stage: 1/' "$SCRATCH/spec.yaml" > "$SCRATCH/one.yaml"
expect_refused "$SCRATCH/one.yaml" "zero_stage 1 shards each stage over its replicas, and every stage here has one"
sed -e 's/zero_stage: 3/zero_stage: 4/' "$SCRATCH/spec.yaml" > "$SCRATCH/four.yaml"
expect_refused "$SCRATCH/four.yaml" "zero_stage: must be <= 3 (got 4)"
echo "PASS pipeline composition"
