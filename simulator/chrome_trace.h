// Chrome traces of a simulated iteration, one file per rank, following the per-rank trace
// contract of the real ranks (trace_rank<r>.json: complete events, ts/dur in microseconds,
// cat forward|backward|step|send|recv|allreduce, tid 0 compute, 1 send, 2 recv, 3 allreduce,
// metadata naming the process and threads). The clock is the simulation's: "clock":
// "simulated", every rank starting at 0.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "simulator/system_result.h"

namespace harness::simulator {

nlohmann::json rank_trace(const SimulatedIteration& iteration, int rank, const std::string& system,
                          int iteration_index);

// The ranks whose traces are written: all of them up to `limit`, else `limit` ranks spread
// evenly from the first to the last (always both).
std::vector<int> traced_ranks(int world, int limit);

}  // namespace harness::simulator
