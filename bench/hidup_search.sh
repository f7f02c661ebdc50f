#!/usr/bin/env bash
# HiDup's search experiments (SoCC 2022, VI.I Table IV and VI.J Figure 12) with the harness's own
# search (`harness spmd`), at the papers' full sizes (a search needs no ranks):
#   table4:   the strategy searched on inputs with random noise on every operator's FLOPs and every
#             collective's bandwidth (10% to 80%), or with communication believed 0.5x or 1.5x,
#             priced on the true inputs, relative to the noise-free strategy: mean over 10 seeds,
#             for BERT-SGMoE (top-2) and BERT-Switch (top-1), 12 blocks of 768, 16 experts, on 16
#             ranks, and a Llama-2 7B-shaped decoder on 8.
#   figure12: the search's time against the model's depth (4..48 blocks of BERT-SGMoE at 16 ranks)
#             and the ranks (4..64 at 24 blocks), 64 experts: the median of 5 searches, in ms.
# Both priced by this repository's 2-rank Gloo comm.json and 86 GFLOP/s a rank (the 2-core VM's
# one-core fp32 GEMM). Output: OUT/table4.md, OUT/figure12.md (and the plans' JSON beside them).
#
# Usage: [OUT=dir] [HARNESS=build/harness] bench/hidup_search.sh table4|figure12|all
set -euo pipefail
cd "$(dirname "$0")/.."
HARNESS=${HARNESS:-build/harness}
OUT=${OUT:-$(mktemp -d /tmp/hidup-search-XXXXXX)}
WHAT=${1:-all}
COSTS=(--comm profiles/gloo-2ranks-cpu/comm.json --gflops 86)
SGMOE=(--model bert_moe --depth 12 --width 768 --experts 16 --top-k 2 --batch 256)
SWITCH=(--model bert_moe --depth 12 --width 768 --experts 16 --top-k 1 --batch 256)
LLAMA=(--model llama --depth 32 --width 4096 --heads 32 --tokens 4096 --batch 64)
mkdir -p "$OUT"

mean_relative() {  # dir: the noise study's mean relative time
  python3 -c 'import json, sys; print("%.4f" % json.load(open(sys.argv[1]))["mean_relative"])' \
    "$1/spmd_noise.json"
}

table4_row() {  # name ranks model-args...
  local name=$1 ranks=$2 row
  shift 2
  row="| $name | $ranks |"
  for level in 10 20 40 80; do
    local dir="$OUT/table4/$name/noise$level"
    "$HARNESS" spmd "$@" --ranks "$ranks" "${COSTS[@]}" --noise-flops "$level" \
      --noise-bandwidth "$level" --out "$dir" > /dev/null
    row+=" $(mean_relative "$dir") |"
  done
  for scale in 0.5 1.5; do
    local dir="$OUT/table4/$name/comm$scale"
    "$HARNESS" spmd "$@" --ranks "$ranks" "${COSTS[@]}" --comm-scale "$scale" --out "$dir" > /dev/null
    row+=" $(mean_relative "$dir") |"
  done
  echo "$row"
}

table4() {
  {
    echo "| model | ranks | 10% | 20% | 40% | 80% | comm x0.5 | comm x1.5 |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    table4_row bert_sgmoe 16 "${SGMOE[@]}"
    table4_row bert_switch 16 "${SWITCH[@]}"
    table4_row llama_7b 8 "${LLAMA[@]}"
  } > "$OUT/table4.md"
  cat "$OUT/table4.md"
}

search_row() {  # args...: "| operators | median of 5 searches' ms |"
  local times=()
  for _ in 1 2 3 4 5; do
    "$HARNESS" spmd "$@" "${COSTS[@]}" --out "$OUT/figure12/plan" > /dev/null
    times+=("$(python3 -c 'import json, sys; print("%.3f" % json.load(open(sys.argv[1]))["search"]["milliseconds"])' \
      "$OUT/figure12/plan/spmd_plan.json")")
  done
  local operators
  operators=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["operators"]))' \
    "$OUT/figure12/plan/spmd_plan.json")
  echo "| $operators | $(printf '%s\n' "${times[@]}" | sort -g | sed -n 3p) |"
}

figure12() {
  mkdir -p "$OUT/figure12"
  local model=(--model bert_moe --width 768 --experts 64 --top-k 2 --batch 256)
  {
    echo "| blocks | ranks | operators | search ms |"
    echo "|---:|---:|---:|---:|"
    for depth in 4 8 16 24 32 48; do
      echo "| $depth | 16 $(search_row "${model[@]}" --depth "$depth" --ranks 16)"
    done
    for ranks in 4 8 32 64; do
      echo "| 24 | $ranks $(search_row "${model[@]}" --depth 24 --ranks "$ranks")"
    done
  } > "$OUT/figure12.md"
  cat "$OUT/figure12.md"
}

case $WHAT in
  table4) table4 ;;
  figure12) figure12 ;;
  all) table4 && figure12 ;;
  *) echo "usage: $0 table4|figure12|all" >&2; exit 2 ;;
esac
echo "written to $OUT"
