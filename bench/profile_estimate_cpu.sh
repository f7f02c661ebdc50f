#!/usr/bin/env bash
# `harness profile estimate` against a measured profile on this machine's CPU: the zoo's
# Llama-style decoder (2 blocks of width 1024, 16 heads, 512 tokens, batch 2, float32, THREADS
# intra-op threads, default 2) profiled by `harness profile layers`, and estimated from the same
# shapes at this machine's own rates as `harness machine` measured them (its float32 GEMM and
# triad bandwidth over all cores) at efficiency 1. What it checks is the estimate's structure --
# each layer's FLOPs and bytes -- not its default efficiencies, which are a GPU's. Prints each
# layer's measured and estimated forward and backward and their ratio, and the whole model's.
#
# Usage: [HARNESS=build/harness] [THREADS=2] [OUT=dir] bench/profile_estimate_cpu.sh
# Timings are only meaningful on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS=${HARNESS:-build/harness}
THREADS=${THREADS:-2}
OUT=${OUT:-$(mktemp -d /tmp/profile-estimate-XXXXXX)}
mkdir -p "$OUT"
"$HARNESS" machine > "$OUT/machine.txt"
read -r gemm triad < <(python3 -c '
import json, os
limits = json.load(open(os.path.expanduser("~/.cache/harness/machine.json")))
print(limits["gemm_fp32"]["gflops_all_cores"] * 1e9, limits["triad"]["gbs_all_cores"] * 1e9)')
"$HARNESS" profile layers --model llama --depth 2 --width 1024 --decoder 16,16,32000 \
  --input-shape 512 --batch 2 --repetitions 5 --warmup 1 --threads "$THREADS" \
  --out "$OUT/measured" > "$OUT/measured.txt"
"$HARNESS" profile estimate --depth 2 --width 1024 --heads 16 --tokens 512 --batch 2 \
  --precision fp32 --peak-flops "$gemm" --memory-bandwidth "$triad" --matmul-efficiency 1 \
  --memory-efficiency 1 --out "$OUT/estimated" > "$OUT/estimated.txt"
python3 - "$OUT" "$gemm" "$triad" <<'PY'
import json, os, sys
out, gemm, triad = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
measured, estimated = (json.load(open(os.path.join(out, d, "profile.json"))) for d in ("measured", "estimated"))
print(f"fp32 GEMM {gemm / 1e9:.1f} GFLOP/s, triad {triad / 1e9:.1f} GB/s (this machine, all cores)")
print("| layer | measured fwd / bwd ms | estimated fwd / bwd ms | estimated / measured |")
print("|---|---:|---:|---:|")
for m, e in zip(measured["layers"], estimated["layers"]):
    mf, mb = m["forward"]["median_ms"], m["backward"]["median_ms"]
    ef, eb = e["forward"]["median_ms"], e["backward"]["median_ms"]
    print(f"| {m['name']} | {mf:.1f} / {mb:.1f} | {ef:.1f} / {eb:.1f} | {ef / mf:.2f} / {eb / mb:.2f} |")
mw, ew = measured["whole_model"], estimated["whole_model"]
mf, mb, ef, eb = (x[k]["median_ms"] for x in (mw, ew) for k in ("forward", "backward"))
print(f"| whole model | {mf:.1f} / {mb:.1f} | {ef:.1f} / {eb:.1f} | {ef / mf:.2f} / {eb / mb:.2f} |")
PY
