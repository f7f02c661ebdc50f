// The compute utilisation table: per point and system, the model FLOPs a rank does per
// iteration, the iteration p50 they took, the achieved GFLOP/s per rank and MFU against the
// machine's measured GEMM peak (harness/results/model_flops.h). Empty when no system has
// FLOP counts (external systems, folders from before them).
#pragma once

#include <string>

#include "harness/results/run_summary.h"

namespace harness {

std::string render_utilisation_markdown(const RunSummary& summary);

}  // namespace harness
