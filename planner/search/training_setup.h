// What the planner needs to know about training besides the profile: batch sizes and the
// memory model.
#pragma once

#include <optional>

namespace harness::planner {

struct TrainingSetup {
  int profile_batch_size = 1;  // batch size the profile was measured at
  int micro_batch_size = 0;    // smallest micro-batch a pipeline runs; 0 means the profile batch
  // Parameters, gradients and optimizer state take this many times the parameter bytes.
  double optimizer_memory_scaling = 2.0;
  // Bytes of activations per sample; by default the profile's total activations / pbs.
  std::optional<double> peak_activation_per_sample;

  int effective_micro_batch() const {
    return micro_batch_size > 0 ? micro_batch_size : profile_batch_size;
  }
};

}  // namespace harness::planner
