#!/usr/bin/env python3
"""A bad-input campaign over every command: each class of bad argument (a path that is a FIFO, a
device, a folder where a file goes, a file where a folder goes, an output that cannot be written,
a name git or Markdown would misread, a number out of range or not a number, an unknown option or
value) given to every command that reads it. Each must exit 2 with one line "error: ..." on
stderr, within 20 s, and leave the scratch folder, the history database and the results folder
as they were.

Usage: bad_commands.py HARNESS REPO_ROOT. Prints the count; exit 1 naming every case that failed.
"""
import hashlib, os, shutil, sqlite3, subprocess, sys, tempfile

harness, root = sys.argv[1], sys.argv[2]
scratch = tempfile.mkdtemp(prefix="harness-bad-commands-")
results = os.path.join(scratch, "results")
shutil.copytree(os.path.join(root, "results/reference/ci_regression"), results)
profile = os.path.join(root, "tests/data/planner/three_layers.txt")
comm = os.path.join(root, "profiles/gloo-2ranks-cpu/comm.json")
spmd = ["spmd", "--model", "llama", "--depth", "1", "--ranks", "2", "--batch", "2"]
spec = os.path.join(scratch, "spec.yaml")
with open(spec, "w") as f:
    f.write(f"name: bad\noutput: {scratch}/out\nmodel: {{name: mlp, batch_size: 4}}\n"
            "run: {world_size: 1, iterations: 2}\nsystems: [overlap]\n")
fifo = os.path.join(scratch, "fifo")
os.mkfifo(fifo)
folder = os.path.join(scratch, "a-folder")
os.mkdir(folder)
a_file = os.path.join(scratch, "a-file")
open(a_file, "w").write("x\n")
db = os.path.join(scratch, "history.sqlite")
subprocess.run([harness, "history", "add", results, "--commit", "c1", "--db", db],
               check=True, stdout=subprocess.DEVNULL)


def tree_digest(path):
    """Every file's name and bytes; a SQLite history by its content (SQLite's own -wal and -shm
    files come and go with any reader)."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(path)):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if name.endswith(("-wal", "-shm")):
                continue
            digest.update(full.encode())
            if name.endswith(".sqlite"):
                digest.update("\n".join(sqlite3.connect(full).iterdump()).encode())
            elif os.path.isfile(full) and not os.path.islink(full):
                digest.update(open(full, "rb").read())
            else:
                digest.update(b"special")
    return digest.hexdigest()


# Every bad path class, for each option that reads a file or writes one.
unreadable = {"a FIFO": fifo, "a device": "/dev/zero", "a folder": folder,
              "missing": os.path.join(scratch, "none.yaml")}
unwritable = {"under a file": os.path.join(a_file, "x"), "in /proc": "/proc/harness-bad/x"}
names = {"an option": "--output=/tmp/x", "a newline": "c\nx", "a pipe": "c|x", "empty": ""}
numbers = {"negative": "-1", "not a number": "ten", "nan": "nan", "huge": "1e400"}

cases = []
for kind, path in unreadable.items():
    cases += [
        (f"run: spec {kind}", ["run", path, "--dry-run"]),
        (f"simulate: spec {kind}", ["simulate", path, "--dry-run"]),
        (f"plan: profile {kind}", ["plan", "--profile", path, "--pbs", "1", "--gbs", "8"]),
        (f"spmd: --comm {kind}", spmd + ["--gflops", "1", "--comm", path]),
        (f"report: results {kind}", ["report", path]),
        (f"compare: base {kind}", ["compare", path, results]),
        (f"trace: results {kind}", ["trace", path]),
        (f"actions: measured {kind}", ["actions", path, results]),
        (f"actions: simulated {kind}", ["actions", results, path]),
        (f"history add: results {kind}", ["history", "add", path, "--commit", "c9", "--db", db]),
        (f"history add: control {kind}",
         ["history", "add", results, "--control", path, "--commit", "c9", "--db", db]),
        (f"history check: db {kind}", ["history", "check", "--db", path]),
        (f"ab: spec {kind}", ["ab", path, "--base", os.path.dirname(harness),
                              "--new", os.path.dirname(harness), "--rounds", "1"]),
    ]
for kind, path in unwritable.items():
    cases += [
        (f"run: output {kind}", ["run", spec, "--set", f"output={path}"]),
        (f"plan: --out {kind}", ["plan", "--profile", profile, "--pbs", "1", "--gbs", "8",
                                 "--out", path]),
        (f"history check: --out {kind}", ["history", "check", "--db", db, "--out", path]),
        (f"history check: --json {kind}", ["history", "check", "--db", db, "--json", path]),
        (f"history report: --out {kind}", ["history", "report", "--db", db, "--out", path]),
        (f"ab: --out {kind}", ["ab", spec, "--base", os.path.dirname(harness),
                               "--new", os.path.dirname(harness), "--rounds", "1", "--out", path]),
        (f"machine: --out {kind}", ["machine", "--out", path]),
        (f"actions: --json {kind}", ["actions", results, results, "--json", path]),
        (f"spmd: --out {kind}", spmd + ["--gflops", "1", "--comm", comm, "--out", path]),
        (f"history add: --db {kind}", ["history", "add", results, "--commit", "c9", "--db", path]),
    ]
for kind, name in names.items():
    cases += [
        (f"history add: --commit {kind}", ["history", "add", results, "--commit", name, "--db", db]),
        (f"history add: --branch {kind}",
         ["history", "add", results, "--commit", "c9", "--branch", name or "-", "--db", db]),
        (f"history add: --machine {kind}",
         ["history", "add", results, "--commit", "c9", "--machine", name, "--db", db]),
        (f"history check: --since {kind}", ["history", "check", "--db", db, "--since", name]),
    ]
for kind, number in numbers.items():
    cases += [
        (f"history check: --alpha {kind}", ["history", "check", "--db", db, "--alpha", number]),
        (f"history check: --min-commits {kind}",
         ["history", "check", "--db", db, "--min-commits", number]),
        (f"compare: --alpha {kind}", ["compare", results, results, "--alpha", number]),
        (f"compare: --threshold {kind}", ["compare", results, results, "--threshold", number]),
        (f"ab: --rounds {kind}", ["ab", spec, "--base", os.path.dirname(harness),
                                  "--new", os.path.dirname(harness), "--rounds", number]),
        (f"plan: --pbs {kind}", ["plan", "--profile", profile, "--pbs", number, "--gbs", "8"]),
        (f"spmd: --gflops {kind}", spmd + ["--gflops", number, "--comm", comm]),
        (f"spmd: --noise-flops {kind}", spmd + ["--gflops", "1", "--comm", comm,
                                               "--noise-flops", number]),
        (f"run: --set run.iterations {kind}",
         ["run", spec, "--dry-run", "--set", f"run.iterations={number}"]),
        (f"history add: --commit-time {kind}",
         ["history", "add", results, "--commit", "c9", "--commit-time", number, "--db", db]),
    ]
cases += [
    ("run: unknown option", ["run", spec, "--dry-rnu"]),
    ("history: unknown subcommand", ["history", "ad"]),
    ("compare: unknown --metric", ["compare", results, results, "--metric", "p42"]),
    ("history check: unknown --metric", ["history", "check", "--db", db, "--metric", "nosuch"]),
    ("history add: the same commit twice", ["history", "add", results, "--commit", "c1", "--db", db]),
    ("trace: unknown --system", ["trace", results, "--system", "nosuch"]),
    ("actions: not a pipeline run", ["actions", results, results]),
    ("plot: unknown --kind", ["plot", results, "--kind", "nosuch"]),
    ("run: unknown --launcher", ["run", spec, "--launcher", "ssh"]),
    ("profile comm: world 0", ["profile", "comm", "--world", "0", "--out", os.path.join(scratch, "c")]),
]

before = {"scratch": tree_digest(scratch)}
failed = []
for what, args in cases:
    try:
        done = subprocess.run([harness, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=20, cwd=scratch, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        failed.append(f"{what}: no answer in 20 s")
        continue
    err = done.stderr.decode("utf-8", "replace").rstrip("\n").split("\n")
    if done.returncode != 2 or len(err) != 1 or not err[0].startswith("error: "):
        failed.append(f"{what}: exit {done.returncode}, stderr {err[:3]!r}")
    elif tree_digest(scratch) != before["scratch"]:
        failed.append(f"{what}: changed the scratch folder ({err[0]})")
        before["scratch"] = tree_digest(scratch)
shutil.rmtree(scratch)
print(f"bad commands: {len(cases) - len(failed)} of {len(cases)} refused with one line, exit 2, "
      "nothing changed")
for line in failed:
    print("FAIL", line)
sys.exit(1 if failed else 0)
