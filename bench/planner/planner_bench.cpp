// Import and full-sweep timings on the published profiles, plus synthetic chains for growth
// with layers and GPUs. Goals (issue 3): ResNet-50 [8,16] sweep of 65 batch sizes < 1 s on 2
// cores; GNMT-16 import < 0.2 s.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "planner/model/synthetic_profile.h"
#include "planner/search/batch_range.h"
#include "planner/search/planner.h"

namespace harness::planner {
namespace {

// The published profiles: where $HARNESS_PROFILES says (scripts/fetch-profiles.sh), else the
// project's shared reference folder beside the checkout.
const std::string kProfiles = [] {
  const char* fetched = std::getenv("HARNESS_PROFILES");
  return fetched != nullptr && *fetched != '\0'
             ? std::string(fetched) + "/"
             : std::string(PLANNER_REFERENCE_DIR) + "/dapple_profiles/";
}();

struct ProfileCase {
  const char* name;
  const char* path;
  int pbs;
};
const ProfileCase kCases[] = {
    {"vgg19", "vgg19/graph.txt", 32},     {"resnet50", "resnet50/graph.txt", 32},
    {"gnmt16", "gnmt_16/graph.txt", 64},  {"bert48", "bert_48/bert-48-pbs-2.txt", 2},
    {"xlnet36", "xlnet_36/graph.txt", 1}, {"amoebanet36", "amoebanet_36/graph.txt", 1},
};

void BM_Import(benchmark::State& state, const ProfileCase& c) {
  const std::string path = kProfiles + c.path;
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("reference profiles absent");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(import_profile(path));
}

void BM_Sweep(benchmark::State& state, const ProfileCase& c, const char* devices,
              PlannerMode mode) {
  const std::string path = kProfiles + c.path;
  if (!std::filesystem::exists(path)) {
    state.SkipWithError("reference profiles absent");
    return;
  }
  const ModelProfile profile = import_profile(path);
  PlannerOptions options;
  options.mode = mode;
  options.setup.profile_batch_size = c.pbs;
  options.devices = parse_devices(devices, "bench");
  options.threads = static_cast<int>(state.range(0));
  const auto batches = parse_batch_sizes("32:4096:64", "bench");
  for (auto _ : state) benchmark::DoNotOptimize(plan_sweep(profile, options, batches));
  state.counters["batch_sizes"] = static_cast<double>(batches.size());
}

// Planning-time study (issue 3): one compat sweep point (gbs 1024) on a synthetic chain of
// state.range(0) layers (seed 1) and state.range(1) GPUs in machines of 8. Time grows with the
// straight pipelines' program (states x units x GPU occupancies) and the two-stage candidates
// (states x GPUs x placements); see planner/README.md for the measured grid and its limits.
void BM_SyntheticChain(benchmark::State& state) {
  const ModelProfile profile =
      synthetic_chain_profile({.layers = static_cast<int>(state.range(0)), .seed = 1});
  PlannerOptions options;
  options.mode = PlannerMode::kCompat;
  options.setup.profile_batch_size = 32;
  const int gpus = static_cast<int>(state.range(1));
  options.devices = parse_devices(
      std::to_string(std::max(1, gpus / 8)) + "x" + std::to_string(std::min(8, gpus)), "bench");
  options.threads = static_cast<int>(state.range(2));
  for (auto _ : state) benchmark::DoNotOptimize(plan_sweep(profile, options, {1024}));
}

void register_all() {
  for (const ProfileCase& c : kCases) {
    benchmark::RegisterBenchmark((std::string("Import/") + c.name).c_str(), BM_Import, c)
        ->Unit(benchmark::kMillisecond);
    for (PlannerMode mode : {PlannerMode::kCompat, PlannerMode::kDapple}) {
      benchmark::RegisterBenchmark(
          (std::string("Sweep65/") + c.name + "/8,16/" + to_string(mode)).c_str(), BM_Sweep, c,
          "8,16", mode)
          ->Arg(1)
          ->Arg(2)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  benchmark::RegisterBenchmark("Sweep65/resnet50/16x1/dapple", BM_Sweep, kCases[1], "16x1",
                               PlannerMode::kDapple)
      ->Arg(2)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  // layers x GPUs x threads. The full grid up to 1024 x 1024 takes minutes on 2 cores; use
  // --benchmark_filter=SyntheticChain/1024 etc. to run parts of it.
  benchmark::RegisterBenchmark("SyntheticChain", BM_SyntheticChain)
      ->ArgsProduct({{16, 64, 256, 1024}, {8, 64, 256, 1024}, {2}})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(1);
}

}  // namespace
}  // namespace harness::planner

int main(int argc, char** argv) {
  harness::planner::register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
