#include "simulator/chrome_trace.h"

#include <set>

namespace harness::simulator {

using nlohmann::json;

namespace {

const char* category_name(TaskCategory category) {
  switch (category) {
    case TaskCategory::kForward:
      return "forward";
    case TaskCategory::kBackward:
      return "backward";
    case TaskCategory::kStep:
      return "step";
    case TaskCategory::kTransfer:
      return "send";
    case TaskCategory::kAllReduce:
      return "allreduce";
  }
  return "?";
}

json event(const std::string& name, const std::string& category, double start_s, double end_s,
           int rank, int tid, json args) {
  return {{"name", name},
          {"cat", category},
          {"ph", "X"},
          {"ts", start_s * 1e6},
          {"dur", (end_s - start_s) * 1e6},
          {"pid", rank},
          {"tid", tid},
          {"args", std::move(args)}};
}

}  // namespace

json rank_trace(const SimulatedIteration& iteration, int rank, const std::string& system,
                int iteration_index) {
  const bool pipeline = !iteration.stage_of_rank.empty();
  const int stage = pipeline ? iteration.stage_of_rank[rank] : -1;
  json events = json::array();
  const std::string process =
      "rank " + std::to_string(rank) + (stage >= 0 ? " (stage " + std::to_string(stage) + ")" : "");
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", rank},
                    {"tid", 0},
                    {"args", {{"name", process}}}});
  const char* threads[] = {"compute", "send", "recv", "allreduce"};
  for (int tid = 0; tid < 4; ++tid) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", rank},
                      {"tid", tid},
                      {"args", {{"name", threads[tid]}}}});
  }
  const auto& tasks = iteration.graph.tasks();
  const auto& groups = iteration.graph.groups();
  for (size_t t = 0; t < tasks.size(); ++t) {
    const Task& task = tasks[t];
    const double start = iteration.times.start[t];
    const double end = iteration.times.end[t];
    const std::string mb = task.micro_batch >= 0 ? " mb" + std::to_string(task.micro_batch) : "";
    json args = json::object();
    if (task.micro_batch >= 0) args["micro_batch"] = task.micro_batch;
    switch (task.kind) {
      case TaskKind::kCompute:
        if (task.rank != rank) break;
        events.push_back(event(category_name(task.category) + mb, category_name(task.category),
                               start, end, rank, 0, args));
        break;
      case TaskKind::kTransfer:
        if (task.rank != rank && task.peer != rank) break;
        args["bytes"] = task.bytes;
        args["peer"] = task.rank == rank ? task.peer : task.rank;
        if (task.rank == rank) {
          events.push_back(event("send" + mb, "send", start, end, rank, 1, args));
        } else {
          events.push_back(event("recv" + mb, "recv", start, end, rank, 2, args));
        }
        break;
      case TaskKind::kCollective: {
        bool member = false;
        for (int r : groups[task.group]) member |= r == rank;
        if (!member) break;
        args["bytes"] = task.bytes;
        args["bucket"] = task.bucket;
        args["ranks"] = groups[task.group].size();
        events.push_back(event("allreduce " + std::string(pipeline ? "stage " : "bucket ") +
                                   std::to_string(task.bucket),
                               "allreduce", start, end, rank, 3, args));
        break;
      }
    }
  }
  json other = {{"rank", rank},
                {"world_size", iteration.graph.ranks()},
                {"system", system},
                {"iteration", iteration_index},
                {"clock", "simulated"}};
  if (pipeline) {
    if (stage >= 0) other["stage"] = stage;  // ranks a plan leaves idle have none
    other["schedule"] = iteration.schedule;
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

std::vector<int> traced_ranks(int world, int limit) {
  std::vector<int> ranks;
  if (limit <= 0) return ranks;
  if (world <= limit) {
    for (int r = 0; r < world; ++r) ranks.push_back(r);
    return ranks;
  }
  std::set<int> chosen;
  for (int i = 0; i < limit; ++i) {
    chosen.insert(
        limit == 1 ? 0 : static_cast<int>(static_cast<long long>(i) * (world - 1) / (limit - 1)));
  }
  return {chosen.begin(), chosen.end()};
}

}  // namespace harness::simulator
