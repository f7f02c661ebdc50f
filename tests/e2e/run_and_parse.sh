#!/usr/bin/env bash
# A real 2-rank study (MLP, four synchronisation modes, two bucket sizes): the results folder
# is complete and every file parses back with the numbers it should hold.
source "$(dirname "$0")/common.sh"

cat > "$SCRATCH/spec.yaml" <<YAML
name: e2e_mlp
output: $SCRATCH/results
model: {name: mlp, batch_size: 16}
ddp: {first_bucket_mb: 0.001}
run: {world_size: 2, iterations: 6, warmup: 2}
systems: [overlap, sync, async, per_tensor]
baseline: overlap
sweep:
  ddp.bucket_mb: [0.001, 25]
YAML

# --dry-run: the matrix, and nothing launched or written.
dry=$("$HARNESS" run "$SCRATCH/spec.yaml" --dry-run --set run.iterations=3)
expect_contains "$dry" "2 point(s) x 4 system(s) = 8 run(s); baseline overlap"
expect_contains "$dry" "2+3 iters"
[[ ! -e "$SCRATCH/results" ]] || fail "--dry-run wrote results"

out=$("$HARNESS" run "$SCRATCH/spec.yaml" 2>"$SCRATCH/stderr") || fail "run failed: $(cat "$SCRATCH/stderr")"
expect_contains "$out" "## ddp.bucket_mb=0.001 | iteration"
expect_contains "$out" "| overlap (baseline) | 12 |"
expect_contains "$(cat "$SCRATCH/stderr")" "[run 8/8]"
dir=$(ls -d "$SCRATCH"/results/e2e_mlp/*/)

"$PY" - "$dir" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
def load(name): return json.load(open(os.path.join(d, name)))
for f in ["spec.yaml", "env.json", "manifest.json", "summary.json", "table.md", "table.csv", "status.json"]:
    assert os.path.getsize(os.path.join(d, f)) > 0, f
env = load("env.json")
for key in ["harness_git_revision", "torch_version", "backend", "cpu_model", "threads_per_rank", "hostname"]:
    assert key in env, key
assert env["backend"] == "gloo" and env["threads_per_rank"] == 1
assert load("status.json")["complete"] is True
# The machine's load before and during the study: shares of the cores, the busy rule applied.
for when in ("before", "during"):
    load_ = env["machine_load"][when]
    assert 0 <= load_["others_share"] <= 1 and 0 <= load_["steal_share"] <= 1, load_
    assert load_["core_seconds"] > 0 and load_["load_average_1m"] >= 0, load_
    assert load_["busy"] == (load_["others_share"] > 0.25 or load_["steal_share"] > 0.05), load_
# The BLAS the ranks load and the machine's roofline; every run's model FLOPs and MFU.
assert env["blas"]["library"] not in ("", "unknown") and env["blas"]["path"], env["blas"]
# A rank's peak: one core's GEMM times its threads (1 here), but never more than all cores
# measured together, which on a busy machine can come out below one core's figure (as it did
# in a clean clone's CI: the MFU is then against the all-core figure).
gemm = env["machine"]["gemm_fp32"]
peak = gemm["gflops_one_core"] * env["threads_per_rank"]
if gemm.get("gflops_all_cores", 0) > 0:
    peak = min(peak, gemm["gflops_all_cores"])
assert peak > 0, env["machine"]
flops = json.load(open(os.path.join(d, "raw/p000/overlap/rep0/flops.json")))
# The MLP (64 -> 256 -> 256 -> 10 features) at batch 16: forward FLOPs per sample
# 2 x (64*256 + 256*256 + 256*10) = 168960, x3 for an iteration, x16 samples per rank.
forward = 2 * (64 * 256 + 256 * 256 + 256 * 10)
assert flops["forward_flops_per_sample"] == forward, flops["forward_flops_per_sample"]
assert flops["iteration_flops_per_rank"] == [3 * forward * 16] * 2, flops["iteration_flops_per_rank"]
for point in load("summary.json")["points"]:
    for system in point["systems"]:
        u = system["utilisation"]
        p50 = system["phases"]["iteration"]["p50"]
        assert abs(u["iteration_p50_ms"] - p50) < 1e-9, (u, p50)
        assert abs(u["gflops_per_rank"] - 3 * forward * 16 / (p50 / 1e3) / 1e9) < 1e-9, u
        assert u["peak_gflops_per_rank"] == peak, (u, gemm)
        assert abs(u["mfu"] - u["gflops_per_rank"] / peak) < 1e-12, u
assert "compute utilisation" in open(os.path.join(d, "table.md")).read()
summary = load("summary.json")
assert [p["label"] for p in summary["points"]] == ["ddp.bucket_mb=0.001", "ddp.bucket_mb=25"]
for point in summary["points"]:
    assert [s["name"] for s in point["systems"]] == ["overlap", "sync", "async", "per_tensor"]
    for system in point["systems"]:
        assert system["complete_runs"] == 1
        for phase in ["forward", "backward", "step", "iteration"]:
            s = system["phases"][phase]
            assert s["count"] == 12, (phase, s)  # 6 iterations x 2 ranks
            assert 0 < s["min"] <= s["p50"] <= s["p90"] <= s["p95"] <= s["p99"] <= s["max"], s
# Summary statistics agree with the raw samples (mean recomputed here).
raw = os.path.join(d, "raw", "p001", "sync", "rep0")
samples = []
for rank in (0, 1):
    rows = list(csv.DictReader(open(os.path.join(raw, f"rank{rank}.csv"))))
    assert [int(r["iteration"]) for r in rows] == list(range(6)), rows
    samples += [float(r["iteration_ms"]) for r in rows]
    for r in rows:  # the phases add up to at most the whole iteration
        assert float(r["forward_ms"]) + float(r["backward_ms"]) + float(r["step_ms"]) <= float(r["iteration_ms"]) + 1e-3
    # Each rank reports what it actually trained on: its parameters' device, its communicator.
    memory = json.load(open(os.path.join(raw, f"memory_rank{rank}.json")))
    assert memory["placement"] == {"device": "cpu", "backend": "gloo", "precision": "fp32"}, memory
    assert memory["optimizer_state_bytes"] == 0, memory  # SGD without momentum keeps nothing
mean = sum(samples) / len(samples)
reported = summary["points"][1]["systems"][1]["phases"]["iteration"]["mean"]
assert abs(mean - reported) < 1e-3 * mean, (mean, reported)
# Buckets logged once per point and system: 3 buckets at 0.001 MiB (hand-computed for the MLP).
buckets = json.load(open(os.path.join(d, "raw", "p000", "overlap", "rep0", "buckets.json")))
assert [b["parameters"] for b in buckets] == [["fc3.bias", "fc3.weight"], ["fc2.bias", "fc2.weight"], ["fc1.bias", "fc1.weight"]], buckets
# table.csv: a row per point x phase x system, delta% empty for the baseline only.
rows = list(csv.DictReader(open(os.path.join(d, "table.csv"))))
assert len(rows) == 2 * 4 * 4, len(rows)
for r in rows:
    assert (r["p50_delta_pct"] == "") == (r["system"] == "overlap"), r
    if r["system"] != "overlap":
        base = next(b for b in rows if b["point_id"] == r["point_id"] and b["phase"] == r["phase"] and b["system"] == "overlap")
        expected = (float(r["p50_ms"]) - float(base["p50_ms"])) / float(base["p50_ms"]) * 100
        # The CSV rounds values to 1e-4 ms (error <= 5e-5 each); the recomputed delta's error
        # is then at most 100 * 5e-5 * (base + value) / base^2 (twice that allowed), which for
        # a 0.08 ms step phase with a +137% delta is 0.2 points.
        b, v = float(base["p50_ms"]), float(r["p50_ms"])
        tolerance = 0.01 + 100 * 1e-4 * (b + v) / (b * b)
        assert abs(expected - float(r["p50_delta_pct"])) < tolerance, (r, expected)
print("results parsed back:", d)
PY

# A second run, rendezvousing through a c10d FileStore instead of a TCPStore, never reuses
# the folder. It runs a copy of the harness whose harness-rank logs each start: LibTorch is
# loaded once before the ranks (a third of a second a process), the model's FLOPs and the
# version asked in one process.
mkdir "$SCRATCH/counted"
cp "$HARNESS" "$SCRATCH/counted/harness"
cat > "$SCRATCH/counted/harness-rank" <<SH
#!/bin/sh
echo "\$1" >> "$SCRATCH/counted/starts"
exec "$HARNESS_RANK" "\$@"
SH
chmod +x "$SCRATCH/counted/harness-rank"
"$SCRATCH/counted/harness" run "$SCRATCH/spec.yaml" --set run.iterations=1 \
  --set 'sweep.ddp.bucket_mb=[25]' --set 'systems=[overlap]' --set run.rendezvous=file \
  >"$SCRATCH/out2" 2>&1 ||
  fail "FileStore run failed: $(cat "$SCRATCH/out2")"
expect_contains "$(cat "$SCRATCH/out2")" "| overlap (baseline) | 2 |"
[[ $(ls "$SCRATCH/results/e2e_mlp" | wc -l) == 2 ]] || fail "expected two results folders"
# One question, then the 2 ranks of its one system.
[[ $(head -n 1 "$SCRATCH/counted/starts") == layers &&
   $(tail -n +2 "$SCRATCH/counted/starts" | sort | uniq -c | tr -s ' ') == " 2 worker" ]] ||
  fail "harness-rank started as: $(tr '\n' ' ' <"$SCRATCH/counted/starts")"
# The version that rode on the model question is `harness-rank version`'s, and env.json has it.
"$PY" - "$("$HARNESS_RANK" version)" "$("$HARNESS_RANK" layers --model mlp --flops --version)" \
  "$(ls -d "$SCRATCH"/results/e2e_mlp/*/ | tail -n 1)env.json" <<'PY'
import json, sys
alone, riding, env = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.load(open(sys.argv[3]))
assert riding["version"] == alone, (riding, alone)
assert riding["forward_flops"] and len(riding["forward_flops"]) == len(riding["names"]), riding
assert env["torch_version"] == alone["torch_version"], env["torch_version"]
assert env["blas"]["path"] == alone["blas"]["path"], env["blas"]
PY

# AdamW (optimizer.name: adamw) on a small Llama-style decoder (2 heads, 1 key/value head, 500
# tokens): the rank is given both's settings, builds the decoder they describe (its parameters
# counted here by hand) and keeps AdamW's two moments, 8 bytes per fp32 parameter, which the
# memory table reports as optimizer state.
cat > "$SCRATCH/adamw.yaml" <<YAML
name: e2e_adamw
output: $SCRATCH/results
model: {name: llama, batch_size: 2, input_shape: [8], depth: 1, width: 64, heads: 2, kv_heads: 1, vocab: 500}
optimizer: {name: adamw, lr: 0.001, betas: [0.8, 0.95], weight_decay: 0.1}
run: {world_size: 1, iterations: 2, warmup: 1}
systems: [overlap]
YAML
"$HARNESS" run "$SCRATCH/adamw.yaml" >"$SCRATCH/adamw.out" 2>&1 || fail "adamw: $(tail -5 "$SCRATCH/adamw.out")"
"$PY" - "$(ls -d "$SCRATCH"/results/e2e_adamw/*/)raw/p000/overlap/rep0" <<'PY'
import json, os, sys
raw = sys.argv[1]
config = json.load(open(os.path.join(raw, "config.json")))
assert config["optimizer"] == {"name": "adamw", "lr": 0.001, "momentum": 0.0, "betas": [0.8, 0.95],
                               "eps": 1e-08, "weight_decay": 0.1}, config["optimizer"]
assert config["model"]["decoder"] == {"heads": 2, "kv_heads": 1, "vocab": 500}, config["model"]
assert config["model"]["loss"] == "cross_entropy", config["model"]
memory = json.load(open(os.path.join(raw, "memory_rank0.json")))
# Embeddings and head 500 x 64; a block: q, o 64 x 64, k, v 64 x 32 (one head of 32), SwiGLU
# 3 x 64 x 256 (2/3 of 4 x 64, to 256), two norms; a last norm.
parameters = 2 * 500 * 64 + (2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 256 + 2 * 64) + 64
assert memory["parameter_bytes"] == 4 * parameters, (memory, parameters)
assert memory["optimizer_state_bytes"] == 2 * memory["parameter_bytes"], memory
PY
# `harness models NAME`: the layer chain the stages' layer ranges count, with each layer's
# parameters (64 -> 256 -> 256 -> 10: 64 x 256 + 256, 256 x 256 + 256, 256 x 10 + 10) and output.
chain=$("$HARNESS" models mlp) || fail "harness models mlp failed"
expect_contains "$chain" "mlp: 6 layers"
expect_contains "$chain" "    1  fc1                          Linear                          16640  256"
expect_contains "$chain" "    5  fc3                          Linear                           2570  10"
expect_contains "$chain" "       total                                                        85002"
expect_contains "$("$HARNESS" models bert --depth 3 --width 64 --input-shape 16)" "    3  encoder.layer.2              EncoderLayer                    49984  16x64"
set +e
"$HARNESS" models nosuch > /dev/null 2> "$SCRATCH/models.err"
code=$?
set -e
[[ $code == 2 && $(cat "$SCRATCH/models.err") == "error: nosuch: unknown model 'nosuch'" ]] ||
  fail "harness models nosuch: exit $code, $(cat "$SCRATCH/models.err")"
echo "PASS run_and_parse"
