#!/usr/bin/env bash
# An emulated cluster on this host (issue 21, first part): `harness profile comm --machines 2
# --link-rate R` runs its two ranks in two network namespaces joined through a shaped link and
# measures what the link delivers: all-reduce bus bandwidth at 16 MiB within 10% of R for
# three rates, the configured link in comm.json, and no namespace left afterwards. Without
# root or the qdiscs it says so in one line (exit 2) and this test skips (77).
source "$(dirname "$0")/common.sh"
set +e
"$HARNESS" profile comm --world 2 --machines 2 --link-rate 100mbit --ops allreduce \
  --sizes 16M --iterations 1 --warmup 0 --out "$SCRATCH/probe" >/dev/null 2>"$SCRATCH/err"
code=$?
set -e
if [[ $code == 2 ]]; then
  [[ $(wc -l < "$SCRATCH/err") == 1 ]] || fail "not one line: $(cat "$SCRATCH/err")"
  expect_contains "$(cat "$SCRATCH/err")" "error: --machines: "
  [[ ! -e "$SCRATCH/probe" ]] || fail "an unavailable emulation wrote its folder"
  echo "SKIP: $(cat "$SCRATCH/err")"
  exit 77
fi
[[ $code == 0 ]] || fail "probe run: exit $code: $(cat "$SCRATCH/err")"
for rate in 100mbit 500mbit 2gbit; do
  "$HARNESS" profile comm --world 2 --machines 2 --link-rate "$rate" --ops allreduce \
    --sizes 4M:16M:x4 --iterations 5 --warmup 2 --out "$SCRATCH/$rate" > "$SCRATCH/log" 2>&1 ||
    fail "$rate: $(tail -3 "$SCRATCH/log")"
  expect_contains "$(cat "$SCRATCH/log")" "emulated cluster: 2 machine(s)"
  "$PY" - "$SCRATCH/$rate/comm.json" "$rate" <<'PY'
import json, sys
comm, rate = json.load(open(sys.argv[1])), sys.argv[2]
configured = {"100mbit": 100e6, "500mbit": 500e6, "2gbit": 2e9}[rate]
emulated = comm["emulated_cluster"]
assert emulated["machines"] == 2 and emulated["ranks_per_machine"] == 1, emulated
assert emulated["inter_machine_configured"]["rate_bits_per_s"] == configured, emulated
row = next(r for r in comm["rows"] if r["op"] == "allreduce" and r["bytes"] == 16 << 20)
measured = row["busbw_gbps"] * 8e9
assert abs(measured / configured - 1) <= 0.10, (rate, measured, configured)
print(f"{rate}: all-reduce busbw {measured / 1e6:.1f} Mbit/s ({100 * (measured / configured - 1):+.1f}%)")
PY
done
# The last run's namespaces ("harness-<its pid>-sw", -m0, -m1) are gone.
prefix=$(sed -n 's/^emulated cluster: .* joined through \(harness-[0-9]*-\)sw$/\1/p' "$SCRATCH/log")
[[ -n "$prefix" ]] || fail "no plan printed: $(head -3 "$SCRATCH/log")"
if ip netns list | grep -q "^$prefix"; then fail "namespaces left: $(ip netns list)"; fi
# Options that need machines, and machines that do not divide the ranks.
set +e
"$HARNESS" profile comm --world 3 --machines 2 --out "$SCRATCH/x" >/dev/null 2>"$SCRATCH/err"; c1=$?
"$HARNESS" profile comm --link-rate 1gbit --out "$SCRATCH/x" >/dev/null 2>"$SCRATCH/err2"; c2=$?
"$HARNESS" profile comm --machines 2 --link-rate 1gb --out "$SCRATCH/x" >/dev/null 2>"$SCRATCH/err3"; c3=$?
set -e
[[ $c1 == 2 && "$(cat "$SCRATCH/err")" == "error: --machines 2: does not divide --world 3" ]] || fail "world 3: $(cat "$SCRATCH/err")"
[[ $c2 == 2 && "$(cat "$SCRATCH/err2")" == "error: --link-*: need --machines 2 or more (the ranks' machines)" ]] || fail "no machines: $(cat "$SCRATCH/err2")"
[[ $c3 == 2 ]] && expect_contains "$(cat "$SCRATCH/err3")" "error: --link-rate: '1gb' is not a rate like 100mbit"
[[ ! -e "$SCRATCH/x" ]] || fail "bad options wrote a folder"
echo "ok"
