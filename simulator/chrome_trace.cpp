#include "simulator/chrome_trace.h"

#include "runtime/protocol/trace_recorder.h"

#include <set>
#include <string>
#include <utility>

namespace harness::simulator {

using nlohmann::json;

namespace {

runtime::TraceCategory compute_category(TaskCategory category) {
  switch (category) {
    case TaskCategory::kForward:
      return runtime::TraceCategory::kForward;
    case TaskCategory::kBackward:
    case TaskCategory::kBucketCopy:
      return runtime::TraceCategory::kBackward;
    case TaskCategory::kBackwardWeight:
      return runtime::TraceCategory::kBackwardWeight;
    case TaskCategory::kAllReduce:
      return runtime::TraceCategory::kAllReduce;
    case TaskCategory::kSendCall:
      return runtime::TraceCategory::kSend;
    default:
      return runtime::TraceCategory::kStep;
  }
}

// A collective's event: its name (the unit, bucket or stage it moves) and its category.
std::pair<std::string, runtime::TraceCategory> collective_event(const Task& task, bool pipeline) {
  const std::string index = std::to_string(task.bucket);
  switch (task.category) {
    case TaskCategory::kAllGather:
      return {"allgather unit " + index, runtime::TraceCategory::kAllGather};
    case TaskCategory::kReduceScatter:
      return {"reducescatter unit " + index, runtime::TraceCategory::kReduceScatter};
    case TaskCategory::kAllToAll:
      return {"alltoall", runtime::TraceCategory::kAllToAll};
    default:
      return {"allreduce " + std::string(pipeline ? "stage " : "bucket ") + index,
              runtime::TraceCategory::kAllReduce};
  }
}

}  // namespace

json rank_trace(const SimulatedIteration& iteration, int rank, const std::string& system,
                int iteration_index) {
  const bool pipeline = !iteration.stage_of_rank.empty();
  const int stage = pipeline ? iteration.stage_of_rank[rank] : -1;
  // The real ranks' recorder writes the events and metadata; times in simulated seconds.
  runtime::TraceRecorder trace;
  trace.set_enabled(true);
  const auto add = [&](const std::string& name, runtime::TraceCategory category, size_t t,
                       json args) {
    trace.add(name, category, iteration.times.start[t] * 1e6, iteration.times.end[t] * 1e6,
              std::move(args));
  };
  const auto& tasks = iteration.graph.tasks();
  const auto& groups = iteration.graph.groups();
  for (size_t t = 0; t < tasks.size(); ++t) {
    const Task& task = tasks[t];
    const std::string mb = task.micro_batch >= 0 ? " mb" + std::to_string(task.micro_batch) : "";
    json args = json::object();
    if (task.micro_batch >= 0) args["micro_batch"] = task.micro_batch;
    switch (task.kind) {
      case TaskKind::kCompute: {
        if (task.rank != rank) break;
        const runtime::TraceCategory category = compute_category(task.category);
        if (task.category == TaskCategory::kBucketCopy) {
          args["bucket"] = task.bucket;
          add("bucket copy " + std::to_string(task.bucket), category, t, args);
        } else if (task.category == TaskCategory::kSendCall) {
          // Only a call that wrote its message took time (engine.cpp); the rest are markers.
          if (iteration.times.end[t] <= iteration.times.start[t]) break;
          args["bytes"] = task.bytes;
          args["peer"] = task.peer;
          add("send call" + mb, category, t, args);
        } else {
          add(runtime::category_name(category) + mb, category, t, args);
        }
        break;
      }
      case TaskKind::kTransfer:
        if (task.rank != rank && task.peer != rank) break;
        args["bytes"] = task.bytes;
        args["peer"] = task.rank == rank ? task.peer : task.rank;
        if (task.rank == rank) {
          add("send" + mb, runtime::TraceCategory::kSend, t, args);
        } else {
          add("recv" + mb, runtime::TraceCategory::kRecv, t, args);
        }
        break;
      case TaskKind::kReadyNotice:  // a few bytes on the wire; not a phase of either rank
        break;
      case TaskKind::kCollective: {
        bool member = false;
        for (int r : groups[task.group]) member |= r == rank;
        if (!member) break;
        args["bytes"] = task.bytes;
        args["bucket"] = task.bucket;
        args["ranks"] = groups[task.group].size();
        const auto [name, category] = collective_event(task, pipeline);
        add(name, category, t, args);
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
  return trace.to_json(other);
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
