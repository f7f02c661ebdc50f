// Micro-benchmarks of the harness's own hot paths: summary statistics and percentiles of
// latency samples, the Mann-Whitney test of `harness compare`, and DDP bucket assignment.
// JSON output (--benchmark_out=FILE --benchmark_out_format=json, with
// --benchmark_repetitions=N for samples) is what `harness compare --gbench` reads.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "baselines/ddp/bucket_assignment.h"
#include "common/statistics.h"
#include "harness/analysis/mann_whitney.h"

namespace {

std::vector<double> latencies(size_t n, unsigned seed) {
  std::mt19937 engine(seed);
  std::lognormal_distribution<double> distribution(3.0, 0.2);  // ~20 ms, right-skewed
  std::vector<double> samples(n);
  for (double& x : samples) x = distribution(engine);
  return samples;
}

void BM_Summarize(benchmark::State& state) {
  const auto samples = latencies(static_cast<size_t>(state.range(0)), 1);
  for (auto _ : state) benchmark::DoNotOptimize(harness::summarize(samples));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Summarize)->Arg(100)->Arg(10'000)->Arg(1'000'000);

void BM_Percentile(benchmark::State& state) {
  const auto samples = latencies(static_cast<size_t>(state.range(0)), 2);
  for (auto _ : state) benchmark::DoNotOptimize(harness::percentile(samples, 99));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Percentile)->Arg(10'000);

// Sizes at the two regimes: exact (counting) at 20 + 20, normal approximation above.
void BM_MannWhitney(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  const auto base = latencies(n, 3);
  const auto candidate = latencies(n, 4);
  for (auto _ : state) benchmark::DoNotOptimize(harness::mann_whitney_u(base, candidate));
}
BENCHMARK(BM_MannWhitney)->Arg(20)->Arg(1'000)->Arg(100'000);

// A ResNet-50-shaped parameter list (161 float32 tensors): 3x3 convolution weights whose
// channels double at the stage boundaries, each followed by a BatchNorm weight and bias, then
// the 2048 x 1000 classifier. Only the count and spread of sizes matter here.
std::vector<baselines::TensorSlot> resnet_like_tensors() {
  std::vector<baselines::TensorSlot> tensors;
  size_t channels = 64;
  for (int layer = 0; layer < 53; ++layer) {
    if (layer == 10 || layer == 23 || layer == 42) channels *= 2;
    tensors.push_back({channels * channels * 9 * 4, "float32"});
    tensors.push_back({channels * 4, "float32"});
    tensors.push_back({channels * 4, "float32"});
  }
  tensors.push_back({2048 * 1000 * 4, "float32"});
  tensors.push_back({1000 * 4, "float32"});
  return tensors;
}

void BM_AssignBuckets(benchmark::State& state) {
  const auto tensors = resnet_like_tensors();
  const auto limits = baselines::ddp_size_limits(1, static_cast<double>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        baselines::assign_buckets(tensors, baselines::BucketOrder::kReverse, limits));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(tensors.size()));
}
BENCHMARK(BM_AssignBuckets)->Arg(1)->Arg(25);

}  // namespace

BENCHMARK_MAIN();
