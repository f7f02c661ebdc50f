// HiDup's profiled cost model: one rank's time for every operator of an SPMD strategy, each run
// alone on the rank's part of its inputs (runtime/parallel/spmd_transformer.h, time_operators)
// with its peers left out (runtime/parallel/peerless_group.h), so that the search prices an
// operator under a signature by what it takes on this machine rather than by its FLOPs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/models/model_zoo.h"
#include "runtime/parallel/spmd_plan.h"
#include "runtime/parallel/spmd_transformer.h"
#include "runtime/protocol/worker_config.h"

namespace runtime {

struct SpmdTimesRequest {
  std::string model;  // llama, bert, bert_moe, vit, vit_moe
  ModelOptions options;
  std::string loss = "cross_entropy";
  int64_t batch = 0;  // the global batch every rank runs its part of
  int ranks = 1;
  int repetitions = 5;
  int threads = 1;  // LibTorch's intra-op threads, as a rank of the run has
  uint64_t seed = 0;
  WorkerOptimizer optimizer;  // whose step is timed over the whole model
  // Before every timed run (operator or step): co-located copies' lockstep barrier.
  std::function<void()> before_each;
};

struct SpmdTimes {
  // For each plan (its steps in the model's order), each operator's forward and backward.
  std::vector<std::vector<SpmdTransformer::OperatorSeconds>> plans;
  // The optimizer's step over the whole model's parameters (the median of the repetitions),
  // over their bytes; and the same in the process's CPU time.
  double step_seconds_per_parameter_byte = 0;
  double step_cpu_seconds_per_parameter_byte = 0;
};

// Throws std::invalid_argument where a plan does not fit the model.
SpmdTimes time_spmd_operators(const SpmdTimesRequest& request,
                              const std::vector<std::vector<SpmdStep>>& plans);

// Co-located copies' times of the same plans, combined: an operator ends, for the collective
// after it, when the last rank has run it. Each time (every operator's forward and backward, and
// the step) is the slowest copy's, and at least the copies' CPU times summed over the `cores`
// they share: copies that outnumber the cores cannot all finish sooner, though the barrier that
// starts them together lets the first ones run alone while the others wake (docs/spmd.md says by
// how much). Each CPU time is the most one copy took. Throws std::invalid_argument where the
// copies' plans differ in shape.
SpmdTimes slowest_of(const std::vector<SpmdTimes>& copies, int cores);

}  // namespace runtime
