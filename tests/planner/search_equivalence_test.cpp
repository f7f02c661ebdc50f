// The pruned search (bounds, greedy upper bound, streamed two-stage candidates) must return
// exactly what the straightforward search returns: same plans, same speedups bit for bit,
// same candidate counts. Small inputs, where the straightforward search runs in milliseconds.
#include <gtest/gtest.h>

#include "planner/model/synthetic_profile.h"
#include "planner/search/pipeline_search.h"
#include "planner/search/planner.h"
#include "planner/study/noise_study.h"
#include "tests/planner/planner_test_data.h"

namespace harness::planner {
namespace {

void expect_same_sweeps(const ModelProfile& profile, PlannerOptions options,
                        const std::vector<int>& batches) {
  options.exhaustive_search = true;
  const SweepResult slow = plan_sweep(profile, options, batches);
  options.exhaustive_search = false;
  const SweepResult fast = plan_sweep(profile, options, batches);
  ASSERT_EQ(slow.batches.size(), fast.batches.size());
  for (std::size_t b = 0; b < slow.batches.size(); ++b) {
    const BatchPlan& x = slow.batches[b];
    const BatchPlan& y = fast.batches[b];
    SCOPED_TRACE(profile.source + " " + options.devices.describe() + " " + to_string(options.mode) +
                 " gbs " + std::to_string(x.global_batch));
    EXPECT_EQ(x.best_hybrid, y.best_hybrid);
    EXPECT_EQ(x.candidates_considered, y.candidates_considered);
    EXPECT_EQ(x.candidates_over_memory, y.candidates_over_memory);
    ASSERT_EQ(x.plan.has_value(), y.plan.has_value());
    if (x.plan) {
      EXPECT_TRUE(same_plan(*x.plan, *y.plan))
          << describe_stages(*x.plan) << " vs " << describe_stages(*y.plan);
      EXPECT_EQ(x.plan->kind, y.plan->kind);
      EXPECT_EQ(x.plan->bottleneck_s, y.plan->bottleneck_s);
      EXPECT_EQ(x.timing.iteration_s, y.timing.iteration_s);
    }
  }
}

PlannerOptions options_for(PlannerMode mode, const std::string& devices, int pbs) {
  PlannerOptions o;
  o.mode = mode;
  o.setup.profile_batch_size = pbs;
  o.devices = parse_devices(devices, "test");
  o.threads = 2;
  return o;
}

TEST(SearchEquivalence, SyntheticChainsBothModes) {
  const std::vector<int> batches{32, 128, 512, 2048};
  for (int layers : {6, 20, 36}) {
    const ModelProfile chain =
        synthetic_chain_profile({.layers = layers, .seed = static_cast<std::uint64_t>(layers)});
    for (const char* devices : {"2x4", "4x2", "8x1", "3,8", "1x6"}) {
      for (PlannerMode mode : {PlannerMode::kCompat, PlannerMode::kDapple}) {
        expect_same_sweeps(chain, options_for(mode, devices, 32), batches);
      }
    }
  }
}

TEST(SearchEquivalence, MemoryBoundDappleSearches) {
  // Small GPUs: the one-stage plan does not fit, so the search has no average-load bound and
  // runs the greedy pass first; some straight pipelines fit, some do not.
  const ModelProfile chain = synthetic_chain_profile({.layers = 24, .seed = 9});
  for (double memory : {150e6, 300e6, 600e6}) {
    for (const char* devices : {"2x4", "8x1"}) {
      PlannerOptions o = options_for(PlannerMode::kDapple, devices, 32);
      o.topology.gpu_memory_bytes = memory;
      expect_same_sweeps(chain, o, {64, 256, 1024});
    }
  }
}

// A sweep's batch sizes need every in-flight cap from 1 to the units; the default search runs
// a chain's largest cap once and keeps its plan for every cap down to where memory would
// change what it sees. The straightforward search runs each cap on its own: they must agree
// where memory binds at some caps and not at others.
TEST(SearchEquivalence, SharedInFlightCapsEqualOneSearchPerCap) {
  const ModelProfile chain = synthetic_chain_profile({.layers = 16, .seed = 5});
  std::vector<int> batches;
  for (int gbs = 32; gbs <= 1024; gbs += 32) batches.push_back(gbs);
  for (double memory : {200e6, 400e6, 1e9, 16e9}) {
    for (const char* devices : {"2x4", "8x1"}) {
      PlannerOptions o = options_for(PlannerMode::kDapple, devices, 32);
      o.topology.gpu_memory_bytes = memory;
      expect_same_sweeps(chain, o, batches);
      // Memory binds below 16 GB (candidates turned down), and never at 16 GB.
      int binding = 0;
      for (const BatchPlan& b : plan_sweep(chain, o, batches).batches) {
        binding += b.candidates_over_memory > 0;
      }
      EXPECT_EQ(binding > 0, memory < 16e9) << devices << " " << memory;
    }
  }
}

TEST(SearchEquivalence, BranchingProfilesAndSinglePolicies) {
  const ModelProfile diamond = import_profile(kData + "/diamond_crlf.txt");
  const ModelProfile three = import_profile(kData + "/three_layers.txt");
  for (const ModelProfile* profile : {&diamond, &three}) {
    for (PlannerMode mode : {PlannerMode::kCompat, PlannerMode::kDapple}) {
      for (PlacementPolicy policy : {PlacementPolicy::kFreshFirst, PlacementPolicy::kAppendFirst,
                                     PlacementPolicy::kScatterFirst}) {
        PlannerOptions o = options_for(mode, "2,4", 4);
        o.policies = {policy};
        expect_same_sweeps(*profile, o, {8, 16, 64});
      }
      expect_same_sweeps(*profile, options_for(mode, "2x2", 4), {8, 16, 64});
    }
  }
}

TEST(SearchEquivalence, SingleSearchesMatch) {
  // Straight pipelines of every length on a 2x4 cluster, one by one.
  const ModelProfile chain = synthetic_chain_profile({.layers = 16, .seed = 4});
  const CostModel cost(Devices({4, 8}), Topology::published_constants(), PlannerMode::kDapple);
  for (int units = 1; units <= 8; ++units) {
    for (bool straight : {false, true}) {
      SearchRequest request;
      request.units = units;
      request.gpus_per_unit = 8 / units;
      request.straight = straight;
      request.memory = StageMemoryLimit{400e6, 2.0, 1.0, 4};
      const auto fast = search_pipeline(chain, cost, request);
      request.exhaustive = true;
      const auto slow = search_pipeline(chain, cost, request);
      ASSERT_EQ(fast.has_value(), slow.has_value()) << units << straight;
      if (fast) {
        EXPECT_TRUE(same_plan(*fast, *slow))
            << describe_stages(*fast) << " vs " << describe_stages(*slow);
        EXPECT_EQ(fast->bottleneck_s, slow->bottleneck_s);
      }
    }
  }
}

}  // namespace
}  // namespace harness::planner
