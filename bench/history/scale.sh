#!/usr/bin/env bash
# harness history at scale (issue 70's goal: at 10,000 runs x 50 metrics, `add` < 0.2 s, `check`
# < 2 s, `report` < 20 s on a 2-core machine). Writes a SQLite history of COMMITS commits x RUNS
# runs each x METRICS metrics (default 2,000 x 5 x 50: 10,000 runs, 500,000 values; one benchmark,
# noise with a 10% step at the middle commit) straight through Python's sqlite3 in the schema the
# harness itself made (harness/history/history_store.cpp), then times, REPEATS times each and
# alternating: `history add` of the reference results folder (a new commit), `history check`
# judging all METRICS metrics, and `history report`. Prints min / median / max seconds. KEEP=1
# keeps WORK (the histories, h<r>.sqlite).
#
# Usage: [COMMITS=2000] [RUNS=5] [METRICS=50] [REPEATS=5] [HARNESS=build/harness] bench/history/scale.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
harness=${HARNESS:-build/harness}
work=${WORK:-$(mktemp -d /tmp/harness-history-scale-XXXXXX)}
commits=${COMMITS:-2000} runs=${RUNS:-5} metrics=${METRICS:-50} repeats=${REPEATS:-5}
# An empty history in the harness's own schema, from the harness itself: add, then drop the values.
"$harness" history add results/reference/ci_regression --commit seed --db "$work/base.sqlite" > /dev/null
python3 - "$work/base.sqlite" "$commits" "$runs" "$metrics" <<'PY'
import random, sqlite3, sys
db, commits, runs, metrics = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
c = sqlite3.connect(db)
for table in ("run_values", "additions", "commits", "metrics"):
    c.execute(f"DELETE FROM {table}")
(environment,) = c.execute("SELECT id FROM environments").fetchone()
random.seed(70)
metric_ids = []
for m in range(metrics):
    metric_ids.append(c.execute(
        "INSERT INTO metrics (benchmark, metric, unit, better) VALUES (?, ?, 'ms', 'lower') RETURNING id",
        ("scale / default / sys", f"m{m:02d}")).fetchone()[0])
values = []
for k in range(commits):
    commit = c.execute("INSERT INTO commits (sha, branch, committed_utc, added_utc, position) "
                       "VALUES (?, 'main', '', '', ?) RETURNING id", (f"{k:040x}", k)).fetchone()[0]
    addition = c.execute("INSERT INTO additions (commit_id, environment_id, results, added_utc) "
                         "VALUES (?, ?, 'synthetic', '') RETURNING id", (commit, environment)).fetchone()[0]
    level = 10 * (1.10 if k >= commits // 2 else 1)
    for metric in metric_ids:
        for run in range(runs):
            values.append((addition, metric, run, level * random.gauss(1, 0.02)))
c.executemany("INSERT INTO run_values (addition_id, metric_id, run, value) VALUES (?, ?, ?, ?)", values)
c.commit()
print(f"history: {commits} commits x {runs} runs x {metrics} metrics = {len(values)} values")
PY
metric_flags=()
for ((m = 0; m < metrics; m++)); do metric_flags+=(--metric "$(printf 'm%02d' "$m")"); done
python3 - "$harness" "$work" "$repeats" "${metric_flags[@]}" <<'PY'
import shutil, statistics, subprocess, sys, time
harness, work, repeats, metric_flags = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
times = {"add": [], "check": [], "report": []}
for r in range(repeats):
    db = f"{work}/h{r}.sqlite"
    shutil.copy(f"{work}/base.sqlite", db)
    commands = {
        "add": [harness, "history", "add", "results/reference/ci_regression", "--commit", f"new{r}", "--db", db],
        "check": [harness, "history", "check", "--db", db, "--since", f"{1000:040x}", *metric_flags],
        "report": [harness, "history", "report", "--db", db, "--out", f"{work}/site{r}"],
    }
    for name, command in commands.items():
        start = time.perf_counter()
        code = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
        times[name].append(time.perf_counter() - start)
        if name != "check" and code != 0 or code not in (0, 1):
            sys.exit(f"{name}: exit {code}")
for name, t in times.items():
    print(f"{name}: min {min(t):.3f} s, median {statistics.median(t):.3f} s, max {max(t):.3f} s ({len(t)} runs)")
PY
if [[ ${KEEP:-0} != 1 ]]; then rm -rf "$work"; else echo "kept $work"; fi
