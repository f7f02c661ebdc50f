// Which traced iteration a run's ranks write: each rank traces a window of measured iterations
// from the middle of the run, and every rank writes the one whose time -- the slowest rank's, as
// an iteration lasts until its last rank is done -- is nearest the run's median, so that `harness
// trace`'s breakdown and the timeline figure show a typical iteration, not an outlier. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <vector>

namespace runtime {

// The measured iterations a run traces: at most kMaxTracedIterations from its middle, as
// WorkerConfig::trace_iteration (the first, counted with the warm-up) and trace_iterations.
inline constexpr long long kMaxTracedIterations = 16;
struct TraceWindow {
  long long first = -1;  // -1: no trace
  long long count = 0;
};
TraceWindow middle_trace_window(long long warmup, long long iterations);

struct TracedIteration {
  long long iteration = -1;  // measured iteration (0 = the first after the warm-up)
  double iteration_ms = 0;   // its time, the slowest rank's
  double median_ms = 0;      // the run's median (linear interpolation), the slowest rank's
  size_t measured = 0;       // iterations the median rests on
  long long traced = 0;      // iterations traced to choose from
};

// `times[i]`: measured iteration i's time on the slowest rank; the traced ones are measured
// iterations [first, first + count). The one nearest the median of all of them, the earliest
// among equals. Throws std::invalid_argument when the window is not within the times.
TracedIteration nearest_to_median(const std::vector<double>& times, long long first,
                                  long long count);

// What a trace's otherData says of it: iteration, iteration_ms, median_iteration_ms,
// measured_iterations, traced_iterations.
nlohmann::json traced_iteration_json(const TracedIteration& traced);

}  // namespace runtime
