// HiDup's Table IV for the SPMD search: a strategy searched on mis-measured inputs, priced on the
// true ones, against the strategy the true inputs give. Each operator's FLOPs (and its measured
// times, where the graph carries them) and each collective's bus bandwidth are scaled by a factor
// uniform in [1 - f, 1 + f) (a seeded draw, operators in graph order, then the collectives), and
// every collective's time by a fixed scale (HiDup's +-50% communication).
#pragma once

#include <cstdint>
#include <vector>

#include "planner/spmd/operator_graph.h"
#include "planner/spmd/spmd_costs.h"

namespace harness::spmd {

struct SpmdNoise {
  double flops_fraction = 0;
  double bandwidth_fraction = 0;
  double communication_scale = 1;  // > 0
};

OperatorGraph perturb_flops(const OperatorGraph& graph, double fraction, std::uint64_t seed);
SpmdCosts perturb_collectives(const SpmdCosts& costs, double bandwidth_fraction, double scale,
                              std::uint64_t seed);

struct NoisySearch {
  std::uint64_t seed = 0;
  double true_seconds = 0;  // the strategy found on the noisy inputs, priced on the true ones
  double relative = 1;      // over the true optimum's seconds (>= 1)
  bool same_strategy = true;
};

// One search per seed (first_seed, first_seed + 1, ...). Throws std::invalid_argument for
// fractions outside [0, 1) or a scale that is not positive.
std::vector<NoisySearch> noise_study(const OperatorGraph& graph, const SpmdCosts& costs,
                                     const SpmdNoise& noise, int seeds, std::uint64_t first_seed);

}  // namespace harness::spmd
