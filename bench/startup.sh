#!/usr/bin/env bash
# Start-up cost of the CLI: `harness --help` and `harness plan` on the published VGG-19
# profile (65 global batch sizes, [8,16] devices), this build's binary against another
# revision's, run alternately (A B A B ...) so that drift of the machine's speed hits both.
# Prints per command each binary's median and the ratio of the medians (new / baseline).
#
#   BASELINE=/path/to/old/build/harness bench/startup.sh [ROUNDS]
#
# Build the baseline from a revision with: git worktree add /tmp/base REV &&
# (cd /tmp/base && scripts/build.sh) -- then BASELINE=/tmp/base/build/harness.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BASELINE:?set BASELINE to the harness binary to compare against}"
NEW=${NEW:-build/harness}
ROUNDS=${1:-20}
PROFILE=${PROFILE:-../shared/reference/dapple_profiles/vgg19/graph.txt}
[[ -f "$PROFILE" ]] || { echo "error: no profile at $PROFILE (set PROFILE)" >&2; exit 2; }
exec python3 - "$NEW" "$BASELINE" "$ROUNDS" "$PROFILE" <<'PY'
import statistics, subprocess, sys, time
new, base, rounds, profile = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
commands = {
    "--help": ["--help"],
    "plan vgg19": ["plan", "--profile", profile, "--pbs", "32", "--gbs", "32:4096:64",
                   "--devices", "8,16"],
}
def once(binary, args):
    start = time.perf_counter()
    subprocess.run([binary, *args], stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000
print(f"{'command':<12} {'new p50 ms':>11} {'base p50 ms':>12} {'new/base':>9}  (n={rounds} each)")
for name, args in commands.items():
    once(new, args); once(base, args)  # warm the page cache
    samples = {new: [], base: []}
    for _ in range(rounds):
        for binary in (new, base):
            samples[binary].append(once(binary, args))
    a, b = statistics.median(samples[new]), statistics.median(samples[base])
    print(f"{name:<12} {a:>11.1f} {b:>12.1f} {a / b:>9.3f}")
PY
