// The SPMD search's cost inputs from the harness's own measurements: comm.json's fitted
// all-gather, all-reduce, reduce-scatter and all-to-all (`harness profile comm`), and a rank's
// FLOP/s (`harness machine`'s GEMM, given by the user).
#pragma once

#include <string>

#include "planner/spmd/spmd_costs.h"

namespace harness {

struct SpmdCostInputs {
  spmd::SpmdCosts costs;
  int measured_ranks = 0;  // comm.json's world size
  // What stands in for a fit the file lacks ("all-to-all priced by the all-gather fit"), or "".
  std::string substitutions;
};

// Reads comm.json at `path`: InputError naming the file where it is not one of `harness profile
// comm`'s, or lacks an all-reduce fit with positive bandwidth. An op without a fit (or with no
// positive bandwidth) is priced by the closest that has one: all-to-all and reduce-scatter by
// the all-gather, the all-gather by the all-reduce. Negative fitted latencies count as 0.
SpmdCostInputs read_spmd_costs(const std::string& path, double flops_per_s);

}  // namespace harness
