// Seeded perturbations of the planner's inputs for the noise-sensitivity study (issue 3): how
// much does a plan chosen on a mis-measured profile or topology lose on the true one?
#pragma once

#include <cstdint>

#include "planner/cluster/topology.h"
#include "planner/model/model_profile.h"

namespace harness::planner {

// Every layer's forward and backward times scaled by one factor uniform in
// [1 - fraction, 1 + fraction), drawn per layer in node order. States, activations and
// parameters are unchanged, so plans of the noisy profile apply to the true one as they are.
ModelProfile perturb_compute(const ModelProfile& profile, double fraction, std::uint64_t seed);

// The three bandwidths each scaled by an independent factor uniform in
// [1 - fraction, 1 + fraction) (intra-machine, inter-machine p2p, collective, in that order).
// GPU memory and machines are unchanged.
Topology perturb_bandwidth(const Topology& topology, double fraction, std::uint64_t seed);

}  // namespace harness::planner
