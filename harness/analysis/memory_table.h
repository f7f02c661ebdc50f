// The memory table: per point and system, what a rank holds (the largest over ranks, in MiB):
// parameters and of them the experts (expert parallelism holds experts/world of them), their
// gradients, the optimizer's state, and peak resident memory. Empty when no system wrote
// memory files (harness/results/rank_memory.h).
#pragma once

#include <string>

#include "harness/results/run_summary.h"

namespace harness {

std::string render_memory_markdown(const RunSummary& summary);

}  // namespace harness
