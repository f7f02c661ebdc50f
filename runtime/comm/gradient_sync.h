// How the ranks that hold the same parameters (a data-parallel group, or a pipeline stage's
// replicas) combine their gradients after backward. The runtime calls this interface and
// never names an implementation, in the manner of c10d's CommHookInterface: baselines/ddp's
// bucketed reducer is one; the rank program chooses it and hands it in.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/comm/communicator.h"
#include "runtime/protocol/trace_recorder.h"

namespace runtime {

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  // Call after loss.backward(); returns when every gradient holds the combined value.
  virtual void finish_backward() = 0;
  // The collective finish_backward runs, as a trace names it (a pipeline records the call).
  virtual TraceCategory collective() const { return TraceCategory::kAllReduce; }
};

// Builds the synchronisation of `parameters` (registration order; `names` the same length)
// over `group`. Called once per stage, after the stage has found its parameters.
using GradientSyncFactory = std::function<std::unique_ptr<GradientSync>(
    std::vector<at::Tensor> parameters, std::vector<std::string> names, Communicator& group)>;

}  // namespace runtime
