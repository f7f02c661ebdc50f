// A layer profile as the profiling commands print it (`harness profile layers`, `harness
// profile estimate`): a row per layer with its kind, forward and backward medians, output and
// parameter bytes. Torch-free.
#pragma once

#include "runtime/profile/layer_profiler.h"

namespace runtime {

void print_layer_table(const LayerProfileResult& result);

}  // namespace runtime
