#!/usr/bin/env bash
# `kind: spmd` end to end: the harness searches HiDup's strategy for each point before the runs
# (its plan in plans/<system>/<point>/), hands it to the ranks in their config, and every rank
# trains the global batch under it beside DDP; every rank reports the batch's whole loss, the
# losses of one process trained on that batch, and the collectives of a strategy that splits
# operators are traced. A
# model, precision or comm.json the system cannot take is refused at its line, nothing run.
source "$(dirname "$0")/common.sh"
cd "$(dirname "$0")/../.."  # the comm.json's path is the repository's

spec() {  # name model-extra system-extra
  cat > "$SCRATCH/$1.yaml" <<YAML
name: $1
output: $SCRATCH/results
model: {name: llama, depth: 2, width: 64, heads: 4, vocab: 96, input_shape: [16], batch_size: 2,
        loss: cross_entropy$2}
run: {world_size: 2, iterations: 3, warmup: 1}
systems:
  - overlap
  - {name: hidup, kind: spmd, comm: profiles/gloo-2ranks-cpu/comm.json, gflops: 80$3}
YAML
}
spec ok "" ""
cat >> "$SCRATCH/ok.yaml" <<'YAML'
  - {name: slow_flops, kind: spmd, comm: profiles/gloo-2ranks-cpu/comm.json, gflops: 0.001}
  - {name: measured, kind: spmd, comm: profiles/gloo-2ranks-cpu/comm.json, compute: measured}
YAML
"$HARNESS" run "$SCRATCH/ok.yaml" > "$SCRATCH/ok.out" 2>&1 || fail "spmd run failed: $(tail -20 "$SCRATCH/ok.out")"
expect_contains "$(cat "$SCRATCH/ok.out")" "| hidup |"
"$PY" - "$SCRATCH/results/ok" <<'PY'
import glob, json, os, re, sys
run = glob.glob(os.path.join(sys.argv[1], "*"))[0]
plan = json.load(open(os.path.join(run, "plans", "hidup", "p000", "spmd_plan.json")))
assert plan["inputs"]["ranks"] == 2 and plan["inputs"]["batch"] == 4, plan["inputs"]
raw = os.path.join(run, "raw", "p000", "hidup", "rep0")
config = json.load(open(os.path.join(raw, "config.json")))
assert config["system"]["kind"] == "spmd", config["system"]
assert config["system"]["spmd"]["operators"] == plan["operators"]
losses = []
for rank in (0, 1):
    text = open(os.path.join(raw, f"rank{rank}.stdout")).read()
    losses.append(re.findall(r"iteration 0 done loss (\S+)", text))
assert losses[0] and losses[0] == losses[1], losses  # the whole loss on every rank
assert len(glob.glob(os.path.join(raw, "rank*.csv"))) == 2
# Priced as if compute were dear, the search splits operators; their collectives are traced.
slow = os.path.join(run, "raw", "p000", "slow_flops", "rep0")
names = [e.get("name", "") for e in json.load(open(os.path.join(slow, "trace_rank0.json")))["traceEvents"]]
assert any(n.startswith("spmd ") for n in names), sorted(set(names))
signatures = {o["signature"] for o in json.load(open(os.path.join(slow, "config.json")))["system"]["spmd"]["operators"]}
assert signatures - {"replicated"}, signatures
# Priced by each operator's measured time: every signature of every operator of the plan timed,
# forward and backward, and the optimizer's step; the plan's compute is their sum.
folder = os.path.join(run, "plans", "measured", "p000")
measured = json.load(open(os.path.join(folder, "spmd_plan.json")))
assert measured["inputs"]["compute"] == "measured" and plan["inputs"]["compute"] == "flops"
times = json.load(open(os.path.join(folder, "spmd_compute.json")))
# Both ranks of the local launch share this machine: timed as two processes in lockstep.
assert times["optimizer"] == "sgd" and times["threads"] == 1 and times["co_located"] == 2, times
assert times["step_ms_per_mib"] > 0, times
assert [o["name"] for o in times["operators"]] == [o["name"] for o in measured["operators"]]
chosen = 0.0
for timed, op in zip(times["operators"], measured["operators"]):
    kinds = [t["signature"] for t in timed["signatures"]]
    assert op["signature"] in kinds and len(set(kinds)) == len(kinds), (op, kinds)
    t = timed["signatures"][kinds.index(op["signature"])]
    assert t["forward_ms"] > 0 or op["kind"] == "tokens", (op["name"], t)
    chosen += t["forward_ms"] + t["backward_ms"]
searched = next(s for s in measured["strategies"] if s["name"] == "searched")
assert chosen < searched["compute_s"] * 1e3 < chosen + 50, (chosen, searched)
PY

# The same training as one process: DDP at world 1 on the doubled batch draws the batch the spmd
# ranks share (shard 0 of batch_size x world samples), so its losses are theirs, in fp32.
spec one "" ""
sed -i 's/batch_size: 2/batch_size: 4/; s/world_size: 2/world_size: 1/; /kind: spmd/d' "$SCRATCH/one.yaml"
"$HARNESS" run "$SCRATCH/one.yaml" > "$SCRATCH/one.out" 2>&1 || fail "one-process run failed: $(tail -5 "$SCRATCH/one.out")"
"$PY" - "$SCRATCH/results" <<'PY'
import glob, re, sys
def losses(study, system, rank):
    text = open(glob.glob(f"{sys.argv[1]}/{study}/*/raw/p000/{system}/rep0/rank{rank}.stdout")[0]).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]
want = losses("one", "overlap", 0)
assert len(want) == 4, want
for system in ("hidup", "slow_flops", "measured"):
    for rank in (0, 1):
        got = losses("ok", system, rank)
        worst = max(abs(a - b) / abs(b) for a, b in zip(got, want))
        assert len(got) == len(want) and worst < 1e-4, (system, rank, got, want)
PY

# A model under the searched strategy `hidup` against DDP at world 1 on the batch the ranks share:
# both specs are the llama one edited by `edit`; every rank's losses are DDP's (fp32, 1e-4).
against_one_process() {  # name edit
  local name=$1 edit=$2 study
  for study in "$name" "${name}_one"; do
    spec "$study" "" ""
    sed -i "$edit" "$SCRATCH/$study.yaml"
  done
  sed -i 's/batch_size: 2/batch_size: 4/; s/world_size: 2/world_size: 1/; /kind: spmd/d' "$SCRATCH/${name}_one.yaml"
  for study in "$name" "${name}_one"; do
    "$HARNESS" run "$SCRATCH/$study.yaml" > "$SCRATCH/$study.out" 2>&1 || fail "$study failed: $(tail -5 "$SCRATCH/$study.out")"
  done
  "$PY" - "$SCRATCH/results" "$name" <<'PY'
import glob, re, sys
results, name = sys.argv[1], sys.argv[2]
def losses(study, system, rank):
    text = open(glob.glob(f"{results}/{study}/*/raw/p000/{system}/rep0/rank{rank}.stdout")[0]).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]
want = losses(name + "_one", "overlap", 0)
for rank in (0, 1):
    got = losses(name, "hidup", rank)
    assert len(got) == len(want) == 4 and max(abs(a - b) / abs(b) for a, b in zip(got, want)) < 1e-4, (name, got, want)
PY
}
plan_of() {  # study: its hidup plan's operators' names and signatures, one a line
  "$PY" -c 'import json, sys; [print(o["name"], o["signature"]) for o in json.load(open(sys.argv[1]))["operators"]]' \
    "$(ls "$SCRATCH/results/$1"/*/plans/hidup/p000/spmd_plan.json)"
}

# bert (its classifier trained by mse), split by a search priced at 0.001 GFLOP/s.
against_one_process bert 's/name: llama/name: bert/; s/width: 64, heads: 4, vocab: 96, input_shape: \[16\]/width: 128, input_shape: [8]/; s/loss: cross_entropy/loss: mse/; s/gflops: 80/gflops: 0.001/'
[ "$(plan_of bert | grep -cvE ' (replicated|data)$')" -gt 0 ] || fail "bert's search split no operator"
# vit (4 patches and the class token, 4 classes; the images' patches taken on the ranks).
against_one_process vit 's/name: llama/name: vit/; s/heads: 4, vocab: 96, input_shape: \[16\]/input_shape: [3, 32, 32], num_classes: 4/; s/gflops: 80/gflops: 0.001/'
[ "$(plan_of vit | awk 'NR == 1 {print $1}')" = patches ] || fail "vit's plan does not start from its patches"

# bert_moe (a mixture of 4 experts, top-2, in its second block): two strategies that run the
# mixture differently (searched at 80 and at 0.001 GFLOP/s) train as one process routing the
# batch in 2 capacity groups, so their losses are equal.
spec moe "" ""
sed -i 's/name: llama/name: bert_moe/; s/width: 64, heads: 4, vocab: 96, input_shape: \[16\]/width: 128, input_shape: [8]/' "$SCRATCH/moe.yaml"
echo "  - {name: slow_flops, kind: spmd, comm: profiles/gloo-2ranks-cpu/comm.json, gflops: 0.001}" \
  >> "$SCRATCH/moe.yaml"
"$HARNESS" run "$SCRATCH/moe.yaml" > "$SCRATCH/moe.out" 2>&1 || fail "bert_moe failed: $(tail -5 "$SCRATCH/moe.out")"
"$PY" - "$SCRATCH/results" <<'PY'
import glob, json, re, sys
def losses(system, rank):
    text = open(glob.glob(f"{sys.argv[1]}/moe/*/raw/p000/{system}/rep0/rank{rank}.stdout")[0]).read()
    return [float(x) for x in re.findall(r"iteration \d+ done loss (\S+)", text)]
def mixture(system):
    plan = json.load(open(glob.glob(f"{sys.argv[1]}/moe/*/plans/{system}/p000/spmd_plan.json")[0]))
    return [o["signature"] for o in plan["operators"] if o["kind"] == "experts"]
assert mixture("hidup") != mixture("slow_flops"), mixture("hidup")
# The experts' bytes a rank reports: 4 experts of 128 x 512 + 512 and 512 x 128 + 128 floats,
# whole, two of them (experts spread), or a column split's half with the second bias on rank 0
# alone.
for system in ("hidup", "slow_flops"):
    for rank in (0, 1):
        memory = json.load(open(glob.glob(f"{sys.argv[1]}/moe/*/raw/p000/{system}/rep0/memory_rank{rank}.json")[0]))
        whole = 4 * (128 * 512 + 512 + 512 * 128 + 128) * 4
        column = 4 * (128 * 256 + 256 + 256 * 128 + (128 if rank == 0 else 0)) * 4
        want_bytes = {"column": column, "experts": whole // 2}.get(mixture(system)[0], whole)
        assert memory["expert_parameter_bytes"] == want_bytes, (system, rank, memory, mixture(system))
want = losses("hidup", 0)
for system, rank in (("hidup", 1), ("slow_flops", 0), ("slow_flops", 1)):
    got = losses(system, rank)
    assert len(got) == len(want) == 4 and max(abs(a - b) / abs(b) for a, b in zip(got, want)) < 1e-4, (system, got, want)
PY

# `harness spmd --measure-compute`: every operator timed under each signature by the rank
# program (bert by mse, AdamW's step), the plan priced by those times: its compute is the chosen
# signatures' times and the step over the parameters a rank holds.
"$HARNESS" spmd --model bert --depth 1 --width 128 --tokens 8 --ranks 2 --batch 4 --loss mse \
  --comm profiles/gloo-2ranks-cpu/comm.json --measure-compute --out "$SCRATCH/measured" > "$SCRATCH/measured.out" \
  || fail "spmd --measure-compute: $(tail -3 "$SCRATCH/measured.out")"
"$PY" - "$SCRATCH/measured" <<'PY'
import json, os, sys
plan = json.load(open(os.path.join(sys.argv[1], "spmd_plan.json")))
times = json.load(open(os.path.join(sys.argv[1], "spmd_compute.json")))
assert plan["inputs"]["compute"] == "measured" and times["optimizer"] == "adamw", (plan["inputs"], times)
assert times["step_ms_per_mib"] > 0, times
for op, timed in zip(plan["operators"], times["operators"], strict=True):
    assert op["name"] == timed["name"], (op["name"], timed["name"])
    chosen = next(t for t in timed["signatures"] if t["signature"] == op["signature"])
    step = op["compute_s"] - (chosen["forward_ms"] + chosen["backward_ms"]) / 1e3
    # The step over the operator's weights: none where it has none.
    weighted = op["kind"] in ("embedding", "norm", "linear")
    assert (step > 0) if weighted else abs(step) < 1e-12, (op["name"], op["compute_s"], chosen)
searched = next(s for s in plan["strategies"] if s["name"] == "searched")
total = sum(op["compute_s"] for op in plan["operators"])
assert abs(searched["compute_s"] - total) < 1e-9, (searched["compute_s"], total)
PY
spec mlp "" ""
sed -i 's/name: llama/name: mlp/; s/, heads: 4, vocab: 96//' "$SCRATCH/mlp.yaml"
expect_refused "$SCRATCH/mlp.yaml" "spmd runs llama's, bert's, bert_moe's, vit's and vit_moe's operators, not mlp's" --dry-run
spec bf16 ", precision: bf16" ""
expect_refused "$SCRATCH/bf16.yaml" "spmd runs in fp32, not model.precision bf16" --dry-run
spec nocomm "" ""
sed -i 's|comm: profiles/gloo-2ranks-cpu/comm.json|comm: /nonexistent/comm.json|' "$SCRATCH/nocomm.yaml"
expect_refused "$SCRATCH/nocomm.yaml" "nocomm.yaml:8:" --dry-run
spec guessed "" ", compute: guessed"
expect_refused "$SCRATCH/guessed.yaml" "guessed.yaml:8:" --dry-run
expect_refused "$SCRATCH/guessed.yaml" "'guessed'" --dry-run
[ ! -e "$SCRATCH/results/mlp" ] && [ ! -e "$SCRATCH/results/nocomm" ] && [ ! -e "$SCRATCH/results/guessed" ] || fail "a refused spec wrote results"
# The shipped studies stay valid, and a dry run says how each searched system runs.
"$HARNESS" run experiments/hidup_bert.yaml --dry-run > /dev/null || fail "experiments/hidup_bert.yaml"
dry=$("$HARNESS" run experiments/hidup_llama.yaml --dry-run) || fail "experiments/hidup_llama.yaml"
expect_contains "$dry" "hidup        rep 0  llama batch 2 x 2 ranks, 5+20 iters, HiDup's search priced by profiles/gloo-2ranks-cpu/comm.json and 86 GFLOP/s a rank"
expect_contains "$dry" "mesh: one group of all 4 ranks, each operator split as the search chooses before the runs (plans/hidup/<point>/spmd_plan.json)"
echo "e2e spmd run: OK"
