#!/usr/bin/env python3
"""Seeded mutation fuzzing of the harness's input readers: train, plan and profile specs
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
import os, random, subprocess, sys, tempfile, time
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
for k in range(n):
    kind = ("spec", "graph", "plan", "profile")[k % 4]
    text = {"spec": base_spec, "graph": base_graph, "plan": base_plan, "profile": base_profile}[kind]
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
print(f"fuzz: {n} inputs in {elapsed:.1f} s: {counts[0]} accepted, {counts[2]} rejected (exit 2; "
      f"{several} with several errors), {len(failures)} failed")
subprocess.run(["rm", "-rf", scratch])
sys.exit(1 if failures else 0)
