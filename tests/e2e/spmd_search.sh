#!/usr/bin/env bash
# `harness spmd` end to end: HiDup's search on the zoo's transformers, priced by a comm.json
# written here. Its plan file adds up (each strategy's prediction is its operators' sum), the
# searched strategy is never dearer than the harness's systems (DDP, Megatron's tensor
# parallelism, expert parallelism), links dear enough keep every operator whole and links cheap
# enough split every one; the noise study (HiDup's Table IV) loses nothing without noise and
# never beats the optimum; bad input is refused with exit 2 and nothing written.
source "$(dirname "$0")/common.sh"

comm() {  # file latency_us bus_bytes_per_s: every collective's fit
  cat > "$1" <<JSON
{"backend": "gloo", "world_size": 2, "fits": [
 {"op": "allreduce", "latency_us": $2, "bus_bandwidth_bytes_per_s": $3},
 {"op": "allgather", "latency_us": $2, "bus_bandwidth_bytes_per_s": $3},
 {"op": "reducescatter", "latency_us": $2, "bus_bandwidth_bytes_per_s": $3}]}
JSON
}
comm "$SCRATCH/loopback.json" 200 1e9
comm "$SCRATCH/dear.json" 1e6 1e6
comm "$SCRATCH/cheap.json" 0 1e15
LLAMA=(--model llama --depth 2 --width 64 --heads 2 --vocab 512 --tokens 8 --batch 4 --gflops 10)

"$HARNESS" spmd "${LLAMA[@]}" --ranks 2 --comm "$SCRATCH/loopback.json" --out "$SCRATCH/llama" \
  > "$SCRATCH/llama.out" || fail "spmd failed: $(cat "$SCRATCH/llama.out")"
expect_contains "$(cat "$SCRATCH/llama.out")" "all-to-all priced by the all-gather fit"
expect_contains "$(cat "$SCRATCH/llama.out")" "layers.1.gate_up"
for cost in dear cheap; do
  "$HARNESS" spmd "${LLAMA[@]}" --ranks 2 --comm "$SCRATCH/$cost.json" --out "$SCRATCH/$cost" \
    > /dev/null || fail "spmd on $cost links failed"
done
"$HARNESS" spmd --model bert_moe --depth 2 --width 64 --tokens 8 --batch 8 --experts 4 --top-k 1 \
  --ranks 4 --gflops 10 --comm "$SCRATCH/loopback.json" --out "$SCRATCH/moe" > /dev/null \
  || fail "spmd on bert_moe failed"
"$HARNESS" spmd --model bert --depth 1 --width 64 --tokens 8 --batch 4 --classes 3 --ranks 2 \
  --gflops 10 --comm "$SCRATCH/cheap.json" --out "$SCRATCH/bert3" > /dev/null \
  || fail "spmd on bert with 3 classes failed"
"$HARNESS" spmd --model vit_moe --image 3,32,32 --depth 2 --width 64 --classes 4 --batch 4 \
  --ranks 2 --gflops 10 --comm "$SCRATCH/loopback.json" --out "$SCRATCH/vit" > /dev/null \
  || fail "spmd on vit_moe failed"

"$PY" - "$SCRATCH" <<'PY'
import json, os, sys
def plan(name):
    return json.load(open(os.path.join(sys.argv[1], name, "spmd_plan.json")))
llama = plan("llama")
ops = llama["operators"]
# tokens, embedding, 10 a block, norm, lm_head, loss
assert len(ops) == 2 + 2 * 10 + 3, len(ops)
strategies = {s["name"]: s for s in llama["strategies"]}
assert set(strategies) == {"searched", "data", "tensor"}, strategies
total = sum(o["compute_s"] + o["communication_s"] for o in ops)
searched = strategies["searched"]
assert abs(total - searched["predicted_s"]) <= 1e-12 * total, (total, searched)
for s in strategies.values():
    assert searched["predicted_s"] <= s["predicted_s"] * (1 + 1e-12), s
assert llama["inputs"]["substitutions"] == "all-to-all priced by the all-gather fit"
# A rank's compute: 3 x forward FLOPs at 10 GFLOP/s, the lm_head's forward 2 x 32 x 64 x 512.
head = next(o for o in ops if o["name"] == "lm_head")
share = 0.5 if head["signature"] != "replicated" else 1.0
assert abs(head["compute_s"] - 3 * 2 * 32 * 64 * 512 * share / 10e9) < 1e-15, head
dear = plan("dear")
assert all(o["signature"] == "replicated" for o in dear["operators"]), dear["operators"]
assert all(o["communication_s"] == 0 for o in dear["operators"])
cheap = plan("cheap")
split = [o for o in cheap["operators"][1:] if o["signature"] == "replicated"]
assert not split, split
moe = plan("moe")
names = {s["name"] for s in moe["strategies"]}
assert names == {"searched", "data", "experts"}, names  # tensor: not bert_moe's
best = min(s["predicted_s"] for s in moe["strategies"])
assert moe["strategies"][0]["name"] == "searched" and moe["strategies"][0]["predicted_s"] == best
experts = [o for o in moe["operators"] if o["kind"] == "experts"]
assert len(experts) == 1, experts  # the 2nd block's
# 3 classes do not split over 2 ranks: on free links, where every operator splits that can, the
# classifier's outputs and the loss stay whole (the classifier may split its input's features).
bert3 = plan("bert3")
assert bert3["inputs"]["classes"] == 3, bert3["inputs"]
head = {o["name"]: o["signature"] for o in bert3["operators"]}
assert head["classifier"] not in ("column", "vocab") and head["loss"] != "vocab", head
# vit_moe: 4 patches and the class token; patches, their projection, the class token and
# positions, a dense block of 10 operators and a mixture's of 8, the head's norm and classifier, loss.
vit = plan("vit")
assert vit["inputs"]["tokens"] == 5 and vit["inputs"]["classes"] == 4, vit["inputs"]
names = [o["name"] for o in vit["operators"]]
assert names[:3] == ["patches", "embeddings.projection", "embeddings"], names
assert names[-3:] == ["head.norm", "head.classifier", "loss"] and len(names) == 3 + 10 + 8 + 3, names
assert {s["name"] for s in vit["strategies"]} == {"searched", "data", "experts"}, vit["strategies"]
PY

# Table IV: the strategy searched on noisy inputs, priced on the true ones, never better than the
# noise-free one; none lost without noise.
"$HARNESS" spmd "${LLAMA[@]}" --ranks 2 --comm "$SCRATCH/loopback.json" --noise-flops 80 \
  --noise-bandwidth 80 --noise-seeds 6 --out "$SCRATCH/noise" > "$SCRATCH/noise.out" \
  || fail "noise study failed"
expect_contains "$(cat "$SCRATCH/noise.out")" "over 6 seeds"
"$HARNESS" spmd "${LLAMA[@]}" --ranks 2 --comm "$SCRATCH/loopback.json" --comm-scale 1 \
  --noise-seeds 3 --out "$SCRATCH/quiet" > /dev/null || fail "noise-free study failed"
"$PY" - "$SCRATCH" <<'PY'
import json, os, sys
noisy, quiet = (json.load(open(os.path.join(sys.argv[1], d, "spmd_noise.json"))) for d in ("noise", "quiet"))
assert noisy["noise"] == {"flops_fraction": 0.8, "bandwidth_fraction": 0.8, "communication_scale": 1}
assert [s["seed"] for s in noisy["seeds"]] == [1, 2, 3, 4, 5, 6]
assert all(s["relative"] >= 1 - 1e-12 for s in noisy["seeds"]), noisy
assert all(s["relative"] == 1 and s["same_strategy"] for s in quiet["seeds"]), quiet
PY

refused() {  # want args...
  local want=$1; shift
  local rc=0
  "$HARNESS" spmd "$@" --out "$SCRATCH/refused/out" > "$SCRATCH/refused.out" 2> "$SCRATCH/refused.err" || rc=$?
  [ "$rc" -eq 2 ] || fail "spmd $* exited $rc, not 2: $(cat "$SCRATCH/refused.err")"
  expect_contains "$(cat "$SCRATCH/refused.err")" "$want"
  [ ! -e "$SCRATCH/refused" ] || fail "spmd $* wrote $SCRATCH/refused"
}
GOOD=(--ranks 2 --batch 4 --gflops 10 --comm "$SCRATCH/loopback.json")
refused "--model must be llama, bert, bert_moe, vit or vit_moe, got 'resnet50'" --model resnet50 "${GOOD[@]}"
refused "are bert_moe's" --model llama --experts 4 "${GOOD[@]}"
refused "--classes is the encoders'" --model llama --classes 3 "${GOOD[@]}"
refused "vit and vit_moe take --image, not --tokens" --model vit --tokens 8 "${GOOD[@]}"
refused "--image is vit's and vit_moe's" --model bert --image 3,32,32 "${GOOD[@]}"
refused "height and width multiples of 16" --model vit --image 3,40,40 "${GOOD[@]}"
refused "heads" --model llama --width 64 --heads 3 "${GOOD[@]}"
echo '{"fits": [{"op": "allgather", "latency_us": 1, "bus_bandwidth_bytes_per_s": 1e9}]}' > "$SCRATCH/no_ar.json"
refused "no_ar.json: no all-reduce fit" --model llama --ranks 2 --batch 4 --gflops 10 --comm "$SCRATCH/no_ar.json"
refused "missing.json" --model llama --ranks 2 --batch 4 --gflops 10 --comm "$SCRATCH/missing.json"
printf '{"fits": [' > "$SCRATCH/broken.json"
refused "broken.json:1:" --model llama --ranks 2 --batch 4 --gflops 10 --comm "$SCRATCH/broken.json"
refused "--noise-flops must be a percentage in [0, 100)" --model llama "${GOOD[@]}" --noise-flops 100
refused "give one of --gflops and --measure-compute" --model llama "${GOOD[@]}" --measure-compute
refused "give one of --gflops and --measure-compute" --model llama --ranks 2 --batch 4 --comm "$SCRATCH/loopback.json"
refused "llama trains by cross_entropy, not --loss mse" --model llama --ranks 2 --batch 4 --comm "$SCRATCH/loopback.json" --measure-compute --loss mse
"$HARNESS" spmd --model llama --ranks 2 --batch 4 --comm "$SCRATCH/loopback.json" --measure-compute \
  > "$SCRATCH/no_out.out" 2>&1 && fail "--measure-compute without --out ran"
expect_contains "$(cat "$SCRATCH/no_out.out")" "--measure-compute writes the plans it times and their times: give --out"

echo "e2e spmd search: OK"
