#include "runtime/protocol/trace_recorder.h"

#include <chrono>

namespace runtime {

using nlohmann::json;

const char* category_name(TraceCategory category) {
  switch (category) {
    case TraceCategory::kForward:
      return "forward";
    case TraceCategory::kBackward:
      return "backward";
    case TraceCategory::kStep:
      return "step";
    case TraceCategory::kSend:
      return "send";
    case TraceCategory::kRecv:
      return "recv";
    case TraceCategory::kAllReduce:
      return "allreduce";
    case TraceCategory::kAllToAll:
      return "alltoall";
    case TraceCategory::kAllGather:
      return "allgather";
    case TraceCategory::kReduceScatter:
      return "reducescatter";
    case TraceCategory::kBackwardWeight:
      return "backward_weight";
  }
  return "unknown";
}

int category_thread(TraceCategory category) {
  switch (category) {
    case TraceCategory::kSend:
      return 1;
    case TraceCategory::kRecv:
      return 2;
    case TraceCategory::kAllReduce:
      return 3;
    case TraceCategory::kAllToAll:
      return 4;
    case TraceCategory::kAllGather:
      return 5;
    case TraceCategory::kReduceScatter:
      return 6;
    default:
      return 0;
  }
}

double TraceRecorder::now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void TraceRecorder::add(std::string name, TraceCategory category, double start_us, double end_us,
                        json args) {
  if (!enabled_) return;
  events_[current_].push_back(
      {std::move(name), category, start_us, end_us - start_us, std::move(args)});
}

void TraceRecorder::keep_iteration(long long iteration) {
  std::erase_if(events_, [&](const auto& buffer) { return buffer.first != iteration; });
}

size_t TraceRecorder::size() const {
  size_t events = 0;
  for (const auto& [iteration, buffer] : events_) events += buffer.size();
  return events;
}

json TraceRecorder::to_json(const json& other) const {
  const int rank = other.at("rank").get<int>();
  std::string process = "rank " + std::to_string(rank);
  if (other.contains("stage"))
    process += " (stage " + std::to_string(other["stage"].get<int>()) + ")";
  json events = json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", rank},
                    {"tid", 0},
                    {"args", {{"name", process}}}});
  events.push_back({{"name", "process_sort_index"},
                    {"ph", "M"},
                    {"pid", rank},
                    {"tid", 0},
                    {"args", {{"sort_index", rank}}}});
  for (int tid = 0; tid < static_cast<int>(std::size(kTraceThreads)); ++tid) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", rank},
                      {"tid", tid},
                      {"args", {{"name", kTraceThreads[tid]}}}});
  }
  for (const auto& [iteration, buffer] : events_) {
    for (const auto& e : buffer) {
      events.push_back({{"name", e.name},
                        {"cat", category_name(e.category)},
                        {"ph", "X"},
                        {"ts", e.start_us},
                        {"dur", e.duration_us},
                        {"pid", rank},
                        {"tid", category_thread(e.category)},
                        {"args", e.args}});
    }
  }
  json other_data = other;
  if (!other_data.contains("clock")) other_data["clock"] = "steady";  // the simulator: "simulated"
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", other_data}};
}

}  // namespace runtime
