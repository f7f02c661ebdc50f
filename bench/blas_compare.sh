#!/usr/bin/env bash
# Which BLAS should LibTorch load? Debian's LibTorch calls whatever libblas.so.3 resolves to.
# For each BLAS build Debian ships (installed by scripts/install-deps.sh), chosen per process
# with LD_LIBRARY_PATH (the system-wide choice is left alone), this measures:
#   - fp32 GEMM GFLOP/s on one core and on all cores (harness-rank machine, 1024^3);
#   - real DDP iterations: the BERT-style encoder (depth 4, width 256, 32 tokens, batch 8) and
#     ResNet-50 (batch 8, 3x64x64), world 2, 1 thread per rank, `overlap`, p50 of 8 iterations
#     after 2 warm-up, per rank pooled.
# Candidates are measured in turn, in the order given; rerun to see the spread.
#
#   bench/blas_compare.sh [BUILD_DIR]          (default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
lib=/usr/lib/x86_64-linux-gnu
candidates=(blas openblas-openmp openblas-pthread blis-openmp blis-pthread)
scratch="$(mktemp -d /tmp/blas-compare-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT

spec() {  # $1: name, $2: model map
  cat > "$scratch/$1.yaml" <<YAML
name: $1
output: $scratch/results
model: $2
run: {world_size: 2, threads_per_rank: 1, iterations: 8, warmup: 2, trace: false}
systems: [overlap]
YAML
}
spec bert "{name: bert, depth: 4, width: 256, batch_size: 8, input_shape: [32]}"
spec resnet50 "{name: resnet50, batch_size: 8, input_shape: [3, 64, 64]}"

p50_of() {  # $1: results folder of one run
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1]+"/summary.json")); print("%.1f" % d["points"][0]["systems"][0]["phases"]["iteration"]["p50"])' "$1"
}

printf '%-18s %-40s %12s %12s %14s %14s\n' "candidate" "library loaded (sgemm_)" "GEMM 1 core" "GEMM all" "BERT p50 ms" "ResNet50 p50"
for candidate in "${candidates[@]}"; do
  if [[ ! -e "$lib/$candidate/libblas.so.3" ]]; then
    printf '%-18s not installed\n' "$candidate"
    continue
  fi
  export LD_LIBRARY_PATH="$lib/$candidate"
  machine="$("$build/harness-rank" machine --gemm-seconds 1 --triad-mib 16)"
  read -r loaded one all < <(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); g=d["gemm_fp32"]; print(d["blas"]["library"], "%.1f" % g["gflops_one_core"], "%.1f" % g["gflops_all_cores"])' "$machine")
  times=()
  for model in bert resnet50; do
    "$build/harness" run "$scratch/$model.yaml" > "$scratch/$model.log" 2>&1 ||
      { echo "error: $candidate $model run failed: $(tail -3 "$scratch/$model.log")" >&2; exit 1; }
    times+=("$(p50_of "$(ls -d "$scratch/results/$model"/*/ | tail -1)")")
  done
  printf '%-18s %-40s %12s %12s %14s %14s\n' "$candidate" "$loaded" "$one" "$all" "${times[0]}" "${times[1]}"
  unset LD_LIBRARY_PATH
done
