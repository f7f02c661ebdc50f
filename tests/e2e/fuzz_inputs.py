#!/usr/bin/env python3
"""Seeded mutation fuzzing of the harness's input readers: train, plan, profile and simulate specs
(`harness run SPEC --dry-run`) and planner profiles (`harness plan --profile graph.txt`).

Each input is a valid base with 1-3 random edits (a character deleted, a line doubled,
dropped, cut off or re-indented, a value replaced by a hostile token: nan, -1, 1e309, '', [],
{}, ...). Every input must end with exit 0, or exit 2 and one line "error: ..." per error on
stderr (a spec reports all its errors at once: at most 20, and a last line counting the rest),
each naming the input file; nothing may be written (--dry-run, no --out) and nothing may hang
(20 s each).

Usage: fuzz_inputs.py HARNESS REPO_ROOT COUNT (FUZZ_SEED picks the stream; default 1).
Prints the counts and up to 10 failing inputs; exit 1 when any failed.
"""
import hashlib, os, random, shutil, subprocess, sys, tempfile, time
harness, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(int(os.environ.get("FUZZ_SEED", "1")))
scratch = tempfile.mkdtemp(prefix="harness-fuzz-")
out_dir = os.path.join(scratch, "results")
base_spec = f"""name: fuzz
output: {out_dir}
model: {{name: mlp, batch_size: 8, input_shape: [16]}}
run: {{world_size: 2, iterations: 4, warmup: 1, threads_per_rank: 1}}
ddp: {{bucket_mb: 0.25, first_bucket_mb: 0.05}}
systems: [overlap, sync]
baseline: overlap
sweep:
  ddp.bucket_mb: [0.25, 1]
plots: [cdf]
"""
graph_path = os.path.join(root, "tests/data/planner/three_layers.txt")
base_graph = open(graph_path).read()
base_plan = f"""kind: plan
name: fuzzplan
output: {out_dir}
plan:
  profile: {graph_path}
  pbs: 1
  gbs: "1:8:1"
  devices: {{flat: "2", two: "1,2"}}
  mode: [compat, dapple]
  noise: {{compute: 5, seeds: 2}}
"""
base_profile = f"""kind: profile
name: fuzzprofile
output: {out_dir}
profile: {{what: comm, world: 2, sizes: "8:1K:x4", ops: "allreduce,sendrecv", iterations: 2}}
"""
base_simulate = f"""kind: simulate
name: fuzzsimulate
output: {out_dir}
simulate:
  model: {{profile: {graph_path}, pbs: 1, batch_size: 2}}
  cluster: {{gpus_per_machine: 2, inter_bandwidth: 1.0e9}}
  run: {{world_size: 4, iterations: 3}}
  pipeline: {{micro_batches: 2}}
  systems:
    - {{name: overlap, kind: ddp, mode: overlap}}
    - {{name: pipe, kind: pipeline, schedule: dapple, stages: [{{layers: "0-1", replicas: 2}}, {{layers: "2", replicas: 2}}]}}
  baseline: overlap
  sweep:
    cluster.inter_bandwidth: [1.0e9, 4.0e9]
"""
# Results folders: one file of a copy of the reference run mutated, then read back by `report`
# (which rewrites the folder's tables on success) and by the `compare` gate (0, 1, or 3:
# inconclusive, since the reference holds one run a side). Exit 2 must leave the copy exactly as it was.
reference_run = os.path.join(root, "results/reference/ci_regression")
results_files = ["raw/p000/overlap/rep0/rank0.csv", "raw/p000/sync/rep0/rank1.csv",
                 "manifest.json", "raw/p000/overlap/rep0/status.json", "status.json",
                 "raw/p000/sync/rep0/trace_rank0.json"]
def snapshot(folder):
    state = {}
    for dirpath, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(dirpath, name)
            state[path] = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return state
tokens = ["nan", "-1", "0", "1e309", "''", "[]", "{}", "99999999999999999999", "a/b", "..",
          "[1, 2]", "{x: 1}", "true", "-0.0", "1e-9", "\t", ":", "- x", "\"", "&a", "*a", "!!int x"]
def mutate(text):
    lines = text.split("\n")
    op = rng.randrange(7)
    i = rng.randrange(len(lines))
    if op == 0 and lines[i]:
        j = rng.randrange(len(lines[i])); lines[i] = lines[i][:j] + lines[i][j + 1:]
    elif op == 1:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif op == 2:
        del lines[i]
    elif op == 3 and ":" in lines[i]:
        k = lines[i].rfind(":"); lines[i] = lines[i][:k + 1] + " " + rng.choice(tokens)
    elif op == 4 and "=" in lines[i] and rng.random() < 0.5:
        k = lines[i].find("="); end = lines[i].find(",", k)
        lines[i] = lines[i][:k + 1] + rng.choice(tokens) + (lines[i][end:] if end > 0 else "")
    elif op == 4 and lines[i]:
        j = rng.randrange(len(lines[i])); lines[i] = lines[i][:j] + rng.choice(tokens) + lines[i][j:]
    elif op == 5:
        lines = lines[:i]
    else:
        lines[i] = " " * rng.randrange(4) + lines[i].lstrip()
    return "\n".join(lines)
failures, counts, several = [], {0: 0, 2: 0}, 0
start = time.monotonic()
def run_results_input(k):
    """A mutated results folder: returns (ok, why, what was mutated)."""
    folder = os.path.join(scratch, "run")
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(reference_run, folder)
    target = os.path.join(folder, rng.choice(results_files))
    text = open(target).read()
    for _ in range(rng.randrange(1, 4)):
        text = mutate(text)
    open(target, "w").write(text)
    command = rng.choice(["report", "compare"])
    args = [harness, "report", folder] if command == "report" else \
        [harness, "compare", reference_run, folder]
    before = snapshot(folder)
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return None, "hang", target + ":\n" + text
    lines = p.stderr.splitlines()
    allowed = (0, 1, 3) if command == "compare" else (0,)
    ok = p.returncode in allowed or (p.returncode == 2 and len(lines) == 1 and
                                     lines[0].startswith("error: ") and snapshot(folder) == before)
    return p.returncode if ok else None, f"{command} exit {p.returncode}: {p.stderr[:300]!r}", \
        target + ":\n" + text

for k in range(n):
    kind = ("spec", "graph", "plan", "profile", "simulate", "results")[k % 6]
    if kind == "results":
        code, why, text = run_results_input(k)
        if code is None:
            failures.append((k, kind, why, text))
        else:
            counts[code] = counts.get(code, 0) + 1
        continue
    text = {"spec": base_spec, "graph": base_graph, "plan": base_plan, "profile": base_profile,
            "simulate": base_simulate}[kind]
    for _ in range(rng.randrange(1, 4)):
        text = mutate(text)
    path = os.path.join(scratch, "graph.txt" if kind == "graph" else "input.yaml")
    open(path, "w").write(text)
    args = [harness, "plan", "--profile", path, "--pbs", "1", "--gbs", "1:8:1", "--devices", "2"] \
        if kind == "graph" else [harness, "run", path, "--dry-run"]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        failures.append((k, kind, "hang", text)); continue
    err = p.stderr
    lines = err.splitlines()
    ok = p.returncode == 0 or (p.returncode == 2 and 1 <= len(lines) <= 21 and err.endswith("\n")
                               and all(line.startswith("error: " + path) for line in lines))
    if p.returncode == 2 and len(lines) > 1:
        several += 1
    if os.path.exists(out_dir):
        ok = False; err += " [wrote " + out_dir + "]"
        subprocess.run(["rm", "-rf", out_dir])
    if not ok:
        failures.append((k, kind, f"exit {p.returncode}: {err[:300]!r}", text))
    else:
        counts[p.returncode] += 1
elapsed = time.monotonic() - start
for k, kind, why, text in failures[:10]:
    print(f"--- input {k} ({kind}): {why}\n{text}\n")
print(f"fuzz: {n} inputs in {elapsed:.1f} s: {counts[0]} accepted, {counts.get(1, 0)} regressions "
      f"found and {counts.get(3, 0)} inconclusive (compare of a mutated results folder), {counts[2]} rejected (exit 2; {several} with "
      f"several errors), {len(failures)} failed")
subprocess.run(["rm", "-rf", scratch])
sys.exit(1 if failures else 0)
