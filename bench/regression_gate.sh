#!/usr/bin/env bash
# The regression gate measured for both of its errors on this machine: PAIRS comparisons of
# the CI recipe (`harness ab experiments/ci_regression.yaml`, ROUNDS rounds) per scenario:
#   A/A        one build against itself: every timing regression is a false alarm
#   A/B        the new side runs a slower iteration (--new-set model.batch_size=SLOW_BATCH, 35
#              against 32: 9.4% more FLOPs, about 9% more time): every timing regression is a
#              detection (the FLOPs counter flags the change anyway; only timing rows count here)
# each on a quiet machine and with a second process keeping one core busy (LOAD=quiet|loaded|
# both). For the same A/A data it also prints what the old rule said (a Mann-Whitney U test
# over the pooled iterations of one study a side, p < 0.05 and a change beyond 5%).
#
#   PAIRS=20 ROUNDS=24 bash bench/regression_gate.sh [BUILD_DIR]
#
# UNTIL_RESOLVED=MAX runs each comparison as `harness ab --rounds ROUNDS --until-resolved
# --max-rounds MAX` (more rounds while a row is unresolved, alpha spent over the looks), and the
# table adds the rounds each comparison used.
#
# Cost: PAIRS x 2 x ROUNDS x 2 studies of ~3.5 s per scenario (20 pairs, 24 rounds: ~2.6 h for
# each of quiet and loaded). Writes its folders under $OUT (default a new temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PAIRS=${PAIRS:-20}
ROUNDS=${ROUNDS:-24}
LOAD=${LOAD:-both}
SLOW_BATCH=${SLOW_BATCH:-35}
SPEC=${SPEC:-experiments/ci_regression.yaml}
sequential=()
if [[ -n ${UNTIL_RESOLVED:-} ]]; then sequential=(--until-resolved --max-rounds "$UNTIL_RESOLVED"); fi
OUT=${OUT:-$(mktemp -d /tmp/regression-gate-XXXXXX)}
[[ -x "$BUILD/harness" ]] || { echo "error: no harness in $BUILD (build it first)" >&2; exit 2; }
mkdir -p "$OUT"
load_pid=""
trap '[[ -n "$load_pid" ]] && kill "$load_pid" 2>/dev/null; true' EXIT

scenarios=()
[[ $LOAD == quiet || $LOAD == both ]] && scenarios+=(quiet)
[[ $LOAD == loaded || $LOAD == both ]] && scenarios+=(loaded)
echo "regression gate: $PAIRS pairs x $ROUNDS rounds${UNTIL_RESOLVED:+ (until resolved, at most $UNTIL_RESOLVED)} of $SPEC per scenario; folders in $OUT"
for scenario in "${scenarios[@]}"; do
  if [[ $scenario == loaded ]]; then
    (while :; do :; done) &
    load_pid=$!
  fi
  for pair in $(seq "$PAIRS"); do
    for kind in aa ab; do
      extra=()
      [[ $kind == ab ]] && extra=(--new-set "model.batch_size=$SLOW_BATCH")
      start=$SECONDS
      set +e
      "$BUILD/harness" ab "$SPEC" --base "$BUILD" --new "$BUILD" --rounds "$ROUNDS" \
        ${sequential[@]+"${sequential[@]}"} "${extra[@]}" --out "$OUT/$scenario/$kind$pair" >/dev/null 2>"$OUT/$scenario-$kind$pair.err"
      code=$?
      set -e
      echo "$scenario $kind $pair: exit $code, $((SECONDS - start)) s" >&2
      [[ $code == 0 || $code == 1 || $code == 3 ]] || { cat "$OUT/$scenario-$kind$pair.err" >&2; exit 1; }
    done
  done
  if [[ -n "$load_pid" ]]; then kill "$load_pid"; load_pid=""; fi
done

exec python3 - "$OUT" <<'PY'
import csv, glob, json, math, os, statistics, sys
out = sys.argv[1]

def timing_rows(folder):
    report = json.load(open(os.path.join(folder, "compare.json")))
    return [r for r in report["rows"] if r["judged"]]

def pooled(folder):  # every iteration of a results folder, per system
    samples = {}
    for path in glob.glob(folder + "/raw/p000/*/rep0/rank*.csv"):
        system = path.split("/")[-3]
        samples.setdefault(system, []).extend(
            float(r["iteration_ms"]) for r in csv.DictReader(open(path)))
    return samples

def old_rule(a, b):  # U over pooled iterations, normal approximation, p < 0.05 and > 5%
    n1, n2 = len(a), len(b)
    ranked = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    rank_sum = sum(i + 1 for i, (_, side) in enumerate(ranked) if side == 0)
    u = rank_sum - n1 * (n1 + 1) / 2
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    p = math.erfc(z / math.sqrt(2))
    change = statistics.median(b) / statistics.median(a) - 1
    return p < 0.05 and change > 0.05

print(f"\n| scenario | comparisons | false alarms (A/A) | old rule on the same A/A | detections (A/B) "
      f"| A/B change, median [range] | A/A interval width, median | minutes each | rounds used, A/A; A/B "
      f"(median [range]) |")
print("|---|---:|---:|---:|---:|---|---:|---:|---|")

def rounds_used(folders):
    used = [len(glob.glob(f + "/logs/round*_base.log")) for f in folders]
    return f"{statistics.median(used):g} [{min(used)}, {max(used)}]"
for scenario in sorted(os.listdir(out)):
    if not os.path.isdir(os.path.join(out, scenario)):
        continue
    aa = sorted(glob.glob(f"{out}/{scenario}/aa*"))
    ab = sorted(glob.glob(f"{out}/{scenario}/ab*"))
    alarms = sum(any(r["verdict"] == "regression" for r in timing_rows(f)) for f in aa)
    found = sum(any(r["verdict"] == "regression" for r in timing_rows(f)) for f in ab)
    old = 0
    for f in aa:
        first = lambda side: sorted(glob.glob(f"{f}/{side}/*/*/"))[0]
        a, b = pooled(first("base")), pooled(first("new"))
        old += any(old_rule(a[s], b[s]) for s in a)
    changes = [r["change_pct"] for f in ab for r in timing_rows(f)]
    widths = [r.get("change_high_pct", 0) - r.get("change_low_pct", 0)
              for f in aa for r in timing_rows(f)]
    minutes = []
    for f in aa + ab:
        logs = glob.glob(f + "/logs/*.log")
        minutes.append((max(map(os.path.getmtime, logs)) - min(map(os.path.getctime, logs))) / 60)
    print(f"| {scenario} | {len(aa)} + {len(ab)} | {alarms}/{len(aa)} | {old}/{len(aa)} "
          f"| {found}/{len(ab)} | {statistics.median(changes):+.1f}% [{min(changes):+.1f}, "
          f"{max(changes):+.1f}] | {statistics.median(widths):.1f} points "
          f"| {statistics.median(minutes):.1f} | {rounds_used(aa)}; {rounds_used(ab)} |")
PY
