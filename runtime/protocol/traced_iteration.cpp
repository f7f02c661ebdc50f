#include "runtime/protocol/traced_iteration.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/statistics.h"

namespace runtime {

TraceWindow middle_trace_window(long long warmup, long long iterations) {
  if (iterations <= 0) return {};
  const long long count = std::min(iterations, kMaxTracedIterations);
  return {warmup + (iterations - count) / 2, count};
}

TracedIteration nearest_to_median(const std::vector<double>& times, long long first,
                                  long long count) {
  if (first < 0 || count < 1 || first + count > static_cast<long long>(times.size())) {
    throw std::invalid_argument("traced iterations " + std::to_string(first) + " to " +
                                std::to_string(first + count - 1) + " are not within the " +
                                std::to_string(times.size()) + " measured");
  }
  TracedIteration chosen;
  chosen.median_ms = harness::percentile(times, 50);
  chosen.measured = times.size();
  chosen.traced = count;
  for (long long i = first; i < first + count; ++i) {
    const bool nearer =
        chosen.iteration < 0 ||
        std::abs(times[i] - chosen.median_ms) < std::abs(chosen.iteration_ms - chosen.median_ms);
    if (nearer) chosen.iteration = i, chosen.iteration_ms = times[i];
  }
  return chosen;
}

nlohmann::json traced_iteration_json(const TracedIteration& traced) {
  return {{"iteration", traced.iteration},
          {"iteration_ms", traced.iteration_ms},
          {"median_iteration_ms", traced.median_ms},
          {"measured_iterations", traced.measured},
          {"traced_iterations", traced.traced}};
}

}  // namespace runtime
