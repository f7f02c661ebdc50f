// `harness plan --explain`: where compat and dapple differ for one input, rule by rule and
// batch size by batch size.
#pragma once

#include <ostream>
#include <vector>

#include "planner/model/model_profile.h"
#include "planner/search/planner.h"

namespace harness::planner {

// Plans the batch sizes in both modes (options.mode is ignored) and writes the differences.
void write_mode_differences(std::ostream& out, const ModelProfile& profile,
                            const PlannerOptions& options, const std::vector<int>& batches);

}  // namespace harness::planner
