// Records one iteration of a rank as Chrome trace events (the trace event format's complete
// events, `ph: X`, microseconds) and writes trace_rank<r>.json, which Perfetto opens and
// `harness trace` merges. Timestamps are on the host's monotonic clock, so the traces of the
// ranks of one host line up. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace runtime {

// Categories and the trace "thread" each is drawn on (the contract of experiments/README.md,
// "Traces").
enum class TraceCategory {
  kForward,
  kBackward,
  kStep,
  kSend,
  kRecv,
  kAllReduce,
  kAllToAll,
  kAllGather,
  kReduceScatter,
  kBackwardWeight,  // a pipeline's W (weight gradients apart from the input's), on the compute lane
};
const char* category_name(TraceCategory category);
// The trace's threads (Chrome trace tids), named: a category's events go on category_thread.
inline constexpr const char* kTraceThreads[] = {
    "compute", "send", "recv", "allreduce", "alltoall", "allgather", "reducescatter"};
int category_thread(TraceCategory category);

class TraceRecorder {
 public:
  // Microseconds on the monotonic clock.
  static double now_us();

  // Only an enabled recorder keeps events: ranks enable it for the traced iterations.
  void set_enabled(bool enabled) { enabled_ = enabled; }
  bool enabled() const { return enabled_; }
  // A rank traces several iterations, each in a buffer of its own, and writes the one nearest the
  // run's median (runtime/protocol/traced_iteration.h): the events added from now on belong to
  // `iteration`; keep_iteration drops every other buffer.
  void set_iteration(long long iteration) { current_ = iteration; }
  void keep_iteration(long long iteration);

  void add(std::string name, TraceCategory category, double start_us, double end_us,
           nlohmann::json args = nlohmann::json::object());
  size_t size() const;  // events in every buffer

  // {"traceEvents": [metadata..., events...], "displayTimeUnit": "ms", "otherData": other}.
  // `other` must hold "rank"; "stage", when present, names the process "rank r (stage s)";
  // "clock" defaults to "steady".
  nlohmann::json to_json(const nlohmann::json& other) const;

 private:
  struct Event {
    std::string name;
    TraceCategory category;
    double start_us;
    double duration_us;
    nlohmann::json args;
  };
  bool enabled_ = false;
  long long current_ = 0;
  std::map<long long, std::vector<Event>> events_;  // by iteration
};

}  // namespace runtime
