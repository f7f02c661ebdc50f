#include "planner/spmd/noise_study.h"

#include <stdexcept>

#include "common/seeded_random.h"
#include "planner/spmd/strategy_search.h"

namespace harness::spmd {

OperatorGraph perturb_flops(const OperatorGraph& graph, double fraction, std::uint64_t seed) {
  SeededRandom random(seed);
  OperatorGraph noisy = graph;
  for (Operator& op : noisy.operators) {
    const double factor = random.uniform(1 - fraction, 1 + fraction);
    op.forward_flops *= factor;
    for (Signature& signature : op.signatures) {
      if (signature.measured_compute_s) *signature.measured_compute_s *= factor;
    }
  }
  return noisy;
}

SpmdCosts perturb_collectives(const SpmdCosts& costs, double bandwidth_fraction, double scale,
                              std::uint64_t seed) {
  // Another stream than the FLOPs' (the same seed would correlate the two draws).
  SeededRandom random(seed ^ 0x5bd1e995u);
  SpmdCosts noisy = costs;
  for (CollectiveFit& fit : noisy.fits) {
    fit.bus_bytes_per_s *= random.uniform(1 - bandwidth_fraction, 1 + bandwidth_fraction) / scale;
    fit.latency_s *= scale;
  }
  return noisy;
}

std::vector<NoisySearch> noise_study(const OperatorGraph& graph, const SpmdCosts& costs,
                                     const SpmdNoise& noise, int seeds, std::uint64_t first_seed) {
  const auto in_range = [](double f) { return f >= 0 && f < 1; };
  if (!in_range(noise.flops_fraction) || !in_range(noise.bandwidth_fraction) ||
      !(noise.communication_scale > 0)) {
    throw std::invalid_argument("noise fractions lie in [0, 1) and the scale is positive");
  }
  const SearchResult best = search_strategy(graph, costs);
  std::vector<NoisySearch> outcomes;
  for (int i = 0; i < seeds; ++i) {
    const std::uint64_t seed = first_seed + static_cast<std::uint64_t>(i);
    const SearchResult found = search_strategy(
        perturb_flops(graph, noise.flops_fraction, seed),
        perturb_collectives(costs, noise.bandwidth_fraction, noise.communication_scale, seed));
    const double seconds = strategy_cost(graph, costs, found.strategy).seconds();
    outcomes.push_back({seed, seconds, seconds / best.seconds, found.strategy == best.strategy});
  }
  return outcomes;
}

}  // namespace harness::spmd
