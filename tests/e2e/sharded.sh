#!/usr/bin/env bash
# Sharded data parallelism end to end: DDP and ZeRO stages 1, 2 and 3 (stage 3 also as one unit
# without prefetch) train a small Llama-style decoder with AdamW on 3 ranks (units that do not
# divide by 3). From one seed, every sharded system's loss equals DDP's at every iteration; each
# rank's memory file holds the bytes the stage's formula says (checked here by hand from the
# parameter count), the bytes it sent per iteration equal the formula, and the traced iteration
# shows the stage's all-gathers and reduce-scatters.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/spec.yaml" <<YAML
name: e2e_sharded
output: $SCRATCH/results
model: {name: llama, batch_size: 2, input_shape: [8], depth: 1, width: 64, heads: 2, kv_heads: 1, vocab: 100}
optimizer: {name: adamw, lr: 0.01}
run: {world_size: 3, iterations: 4, warmup: 1, trace: true}
systems:
  - overlap
  - {name: zero1, kind: sharded, stage: 1}
  - {name: zero2, kind: sharded, stage: 2}
  - {name: zero3, kind: sharded, stage: 3}
  - {name: zero3_whole, kind: sharded, stage: 3, unit: model, prefetch: false}
YAML
out=$("$HARNESS" run "$SCRATCH/spec.yaml" 2>"$SCRATCH/stderr") || fail "run failed: $(cat "$SCRATCH/stderr")"
expect_contains "$out" "| zero3 |"
expect_contains "$out" "all-gather | reduce-scatter"
dir=$(ls -d "$SCRATCH"/results/e2e_sharded/*/)

"$PY" - "$dir" <<'PY'
import json, math, os, re, sys
d = sys.argv[1]
raw = lambda system: os.path.join(d, "raw", "p000", system, "rep0")

def losses(system):
    text = open(os.path.join(raw(system), "rank0.stdout")).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]

ddp = losses("overlap")
assert len(ddp) == 5, ddp
for system in ("zero1", "zero2", "zero3", "zero3_whole"):
    got = losses(system)
    assert len(got) == len(ddp), (system, got)
    for a, b in zip(got, ddp):
        assert abs(a - b) <= 1e-5 * abs(b), (system, got, ddp)

# The decoder's units over 3 ranks: embeddings 100 x 64; the block (q, o 64 x 64, k, v 64 x 32,
# SwiGLU 3 x 64 x 256, two norms); the last norm; the head 64 x 100.
units = [100 * 64, 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 256 + 2 * 64, 64, 64 * 100]
n = 3
shard = sum(math.ceil(u / n) for u in units)
padded, elements = n * shard, sum(units)
assert padded > elements  # the block and the last norm do not divide by 3
expected = {  # stage: (parameters, gradients) in fp32 bytes; AdamW keeps 2 x the shard
    1: (4 * padded, 4 * elements),
    2: (4 * padded, 4 * shard),
    3: (4 * shard, 4 * shard),
}
sent = {1: 2 * (n - 1) / n * 4 * elements + (n - 1) * 4 * shard,
        2: 2 * (n - 1) * 4 * shard,
        3: 3 * (n - 1) * 4 * shard}
for system, stage in (("zero1", 1), ("zero2", 2), ("zero3", 3), ("zero3_whole", 3)):
    for r in range(n):
        m = json.load(open(os.path.join(raw(system), f"memory_rank{r}.json")))
        s = m["sharded"]
        assert s["stage"] == stage and s["elements"] == elements, (system, s)
        if system == "zero3_whole":  # one unit: padded once, over the whole model
            continue
        assert (m["parameter_bytes"], m["gradient_bytes"]) == expected[stage], (system, m)
        assert m["optimizer_state_bytes"] == 2 * 4 * shard, (system, m)
        assert abs(s["bytes_sent_per_iteration"] - sent[stage]) < 1e-6, (system, s, sent[stage])
        assert s["formula"]["bytes_sent_per_iteration"] == s["bytes_sent_per_iteration"], s
    trace = json.load(open(os.path.join(raw(system), "trace_rank0.json")))
    cats = [e.get("cat") for e in trace["traceEvents"] if e.get("ph") == "X"]
    gathers, scatters = cats.count("allgather"), cats.count("reducescatter")
    per_unit = 1 if system == "zero3_whole" else len(units)
    assert gathers == {1: 1, 2: 1, 3: 2}[stage] * per_unit, (system, cats)
    assert scatters == (0 if stage == 1 else per_unit), (system, cats)
ddp_memory = json.load(open(os.path.join(raw("overlap"), "memory_rank0.json")))
assert ddp_memory["parameter_bytes"] == 4 * elements, ddp_memory
PY
echo "PASS sharded"
