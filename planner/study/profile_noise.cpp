#include "planner/study/profile_noise.h"

#include "common/seeded_random.h"

namespace harness::planner {
namespace {

// Compute and bandwidth noise use separate streams, so the compute noise of a seed is the same
// whether or not bandwidth noise is on (and vice versa).
constexpr std::uint64_t kComputeStream = 0x636F6D7075746531ull;
constexpr std::uint64_t kBandwidthStream = 0x62616E6477696474ull;

// 1 + fraction * u with u uniform in [-1, 1); exactly 1 when fraction is 0.
double factor(SeededRandom& random, double fraction) {
  return 1.0 + fraction * random.uniform(-1.0, 1.0);
}

}  // namespace

ModelProfile perturb_compute(const ModelProfile& profile, double fraction, std::uint64_t seed) {
  ModelProfile noisy = profile;
  SeededRandom random(seed ^ kComputeStream);
  for (LayerNode& node : noisy.graph.nodes) {
    const double f = factor(random, fraction);
    node.forward_ms *= f;
    node.backward_ms *= f;
  }
  compute_state_totals(noisy);
  return noisy;
}

Topology perturb_bandwidth(const Topology& topology, double fraction, std::uint64_t seed) {
  Topology noisy = topology;
  SeededRandom random(seed ^ kBandwidthStream);
  noisy.intra_machine_bandwidth *= factor(random, fraction);
  noisy.inter_machine_p2p_bandwidth *= factor(random, fraction);
  noisy.inter_machine_collective_bandwidth *= factor(random, fraction);
  // Drawn after the others, so that a topology without it perturbs as it always has.
  if (noisy.intra_machine_collective_bandwidth > 0) {
    noisy.intra_machine_collective_bandwidth *= factor(random, fraction);
  }
  return noisy;
}

}  // namespace harness::planner
