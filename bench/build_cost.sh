#!/usr/bin/env bash
# What building costs a newcomer: the README's two builds on a clean build folder, without
# ccache (a fresh machine has none), as scripts/build.sh does them -- first the quickstart's two
# programs, then the rest of the tree with the tests. For each: wall time, the compile time of
# every step from ninja's log (with one job per core each step has a core to itself, so a step's
# time is its CPU time), the ten costliest steps, and the total in units of one translation unit
# that holds nothing but `#include <torch/torch.h>`, compiled with the build's own flags on this
# machine (the median of six compiles, three after each build) -- a unit that compares across
# machines.
#
#   bench/build_cost.sh [BUILD_DIR]      (default: a new folder under /tmp; removed unless KEEP=1)
#
# Extra cmake arguments go through HARNESS_CMAKE_ARGS, e.g. "-DHARNESS_PCH=OFF" or
# HARNESS_BUILD_TYPE=RelWithDebInfo for the build with debug info.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-$(mktemp -d /tmp/harness-build-cost-XXXXXX)/build}
[[ ! -e "$dir/CMakeCache.txt" ]] || { echo "error: $dir holds a build already (give a new folder)" >&2; exit 2; }
read -r -a cmake_args <<< "${HARNESS_CMAKE_ARGS:-}"
export CCACHE_DISABLE=1
stamp() { date +%s.%N; }
# The unit's compiles (after each build) and the report, in one script.
script=$dir.report.py
mkdir -p "$(dirname "$dir")"
cat >"$script" <<'PY'
import json, os, resource, shlex, statistics, subprocess, sys, tempfile
mode, build = sys.argv[1], sys.argv[2]

def steps(path):
    out = {}
    for line in open(path):
        if line.startswith("#"):
            continue
        start, end, _, output, _ = line.rstrip("\n").split("\t")
        out[output] = (int(end) - int(start)) / 1000
    return out

# The unit: one line of LibTorch, compiled with a LibTorch file's flags from this build.
commands = json.load(open(os.path.join(build, "compile_commands.json")))
# (the first of runtime's translation units: they all include LibTorch, through its precompiled
# header unless HARNESS_PCH=OFF)
entry = next(e for e in commands
             if "/runtime.dir/" in e["command"] and not e["file"].endswith(".hxx.cxx"))
args = shlex.split(entry["command"])
keep, skip = [], False
for a in args:
    if skip:
        skip = False
        continue
    if a in ("-o", "-c", "-include", "-MF", "-MT"):
        skip = True
        continue
    if a.startswith("-Winvalid-pch") or a.endswith(".cpp") or a in ("-MD",):
        continue
    keep.append(a)
if mode == "unit":  # three compiles of the unit, their CPU seconds on one line
    times = []
    with tempfile.TemporaryDirectory() as scratch:
        source = os.path.join(scratch, "torch_only.cpp")
        open(source, "w").write("#include <torch/torch.h>\n")
        for _ in range(3):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(keep + ["-c", source, "-o", os.path.join(scratch, "t.o")], check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    print(" ".join(f"{t:.3f}" for t in times))
    sys.exit(0)
# The median of six, three after each build: this kind of VM runs at two speeds in phases, and
# three compiles in a row can fall in one phase.
times = [float(t) for line in open(build + ".unit") for t in line.split()]
unit = statistics.median(times)

quick = steps(build + ".quickstart.ninja_log")
every = steps(os.path.join(build, ".ninja_log"))
rest = {k: v for k, v in every.items() if k not in quick}
t0, t1, t1b, t2 = map(float, sys.argv[3:7])
print(f"unit: one `#include <torch/torch.h>` file, {unit:.1f} s CPU (median of "
      f"{', '.join(f'{t:.1f}' for t in times)}) with this build's flags "
      f"({' '.join(a for a in keep if a.startswith(('-O', '--param')) or a == '-g')})")
for name, log, wall in (("quickstart (harness, harness-rank)", quick, t1 - t0),
                        ("whole tree with tests", {**quick, **rest}, t1 - t0 + t2 - t1b)):
    total = sum(log.values())
    print(f"\n{name}: {len(log)} steps, compile {total:.0f} s = {total / unit:.1f} units, "
          f"wall {wall:.0f} s on {os.cpu_count()} cores")
    for output, seconds in sorted(log.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {seconds:6.1f} s  {output}")
PY
t0=$(stamp)
HARNESS_BUILD_DIR="$dir" HARNESS_BUILD_TARGETS="harness harness-rank" scripts/build.sh \
  -DHARNESS_BUILD_TESTS=OFF -DHARNESS_BUILD_BENCH=OFF \
  ${cmake_args[@]+"${cmake_args[@]}"} >"$dir.quickstart.log" 2>&1 ||
  { tail -20 "$dir.quickstart.log"; exit 1; }
t1=$(stamp)
cp "$dir/.ninja_log" "$dir.quickstart.ninja_log"
python3 "$script" unit "$dir" >"$dir.unit"
t1b=$(stamp)  # the second build's clock starts after the unit's compiles
HARNESS_BUILD_DIR="$dir" scripts/build.sh -DHARNESS_BUILD_TESTS=ON -DHARNESS_BUILD_BENCH=ON \
  ${cmake_args[@]+"${cmake_args[@]}"} >"$dir.all.log" 2>&1 ||
  { tail -20 "$dir.all.log"; exit 1; }
t2=$(stamp)
python3 "$script" unit "$dir" >>"$dir.unit"
python3 "$script" report "$dir" "$t0" "$t1" "$t1b" "$t2"
if [[ -z ${1:-} && ${KEEP:-0} != 1 ]]; then rm -rf "$(dirname "$dir")"; fi
