#include "simulator/task_graph.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace harness::simulator {

TaskGraph::TaskGraph(int ranks, bool send_channel_per_peer)
    : ranks_(ranks),
      send_channel_per_peer_(send_channel_per_peer),
      queues_(static_cast<size_t>(3 * ranks)) {
  if (ranks < 1) throw std::invalid_argument("a task graph needs a rank");
}

int TaskGraph::add(Task task) {
  tasks_.push_back(task);
  successors_.emplace_back();
  dependency_count_.push_back(0);
  return static_cast<int>(tasks_.size()) - 1;
}

int TaskGraph::add_compute(int rank, TaskCategory category, double seconds, int micro_batch,
                           int bucket) {
  Task task;
  task.kind = TaskKind::kCompute;
  task.category = category;
  task.rank = rank;
  task.seconds = seconds;
  task.micro_batch = micro_batch;
  task.bucket = bucket;
  const int id = add(task);
  queues_[compute_resource(rank)].push_back(id);
  return id;
}

namespace {

// A task between two ranks: a transfer (from sender to receiver) or a ready notice (from
// receiver to sender).
Task between(TaskKind kind, int from, int to, int micro_batch) {
  if (from == to) throw std::invalid_argument("a transfer or notice needs two ranks");
  Task task;
  task.kind = kind;
  task.category = TaskCategory::kTransfer;
  task.rank = from;
  task.peer = to;
  task.micro_batch = micro_batch;
  return task;
}

}  // namespace

int TaskGraph::add_transfer(int src, int dst, double bytes, int micro_batch) {
  Task task = between(TaskKind::kTransfer, src, dst, micro_batch);
  task.bytes = bytes;
  task.send_channel = rank_send_resource(src);
  if (send_channel_per_peer_) {
    const auto [it, added] = peer_channels_.try_emplace(
        static_cast<std::int64_t>(src) * ranks_ + dst, static_cast<int>(queues_.size()));
    if (added) queues_.emplace_back();
    task.send_channel = it->second;
  }
  const int id = add(task);
  queues_[task.send_channel].push_back(id);
  return id;
}

int TaskGraph::add_send_call(int transfer, int made_by) {
  const Task& sent = tasks_.at(transfer);
  const Task& maker = tasks_.at(made_by);
  if (sent.kind != TaskKind::kTransfer || maker.kind != TaskKind::kCompute ||
      maker.rank != sent.rank) {
    throw std::invalid_argument("a send call follows its sender's compute and issues a transfer");
  }
  Task task;
  task.kind = TaskKind::kCompute;
  task.category = TaskCategory::kSendCall;
  task.rank = sent.rank;
  task.peer = sent.peer;
  task.bytes = sent.bytes;
  task.micro_batch = sent.micro_batch;
  task.transfer = transfer;
  const int id = add(task);
  std::vector<int>& queue = queues_[compute_resource(task.rank)];
  auto at = std::find(queue.begin(), queue.end(), made_by);
  if (at == queue.end()) throw std::logic_error("a compute task outside its rank's queue");
  for (++at; at != queue.end() && tasks_[*at].category == TaskCategory::kSendCall; ++at) {
  }
  queue.insert(at, id);
  depend(id, made_by);
  return id;
}

int TaskGraph::add_ready_notice(int receiver, int sender, int micro_batch) {
  return add(between(TaskKind::kReadyNotice, receiver, sender, micro_batch));
}

int TaskGraph::add_group(std::vector<int> ranks) {
  if (ranks.empty()) throw std::invalid_argument("empty collective group");
  groups_.push_back(std::move(ranks));
  return static_cast<int>(groups_.size()) - 1;
}

int TaskGraph::add_group_collective(int group, double bytes, int bucket, TaskCategory category,
                                    bool blocking) {
  Task task;
  task.kind = TaskKind::kCollective;
  task.category = category;
  task.rank = groups_.at(group).front();
  task.group = group;
  task.bytes = bytes;
  task.bucket = bucket;
  task.blocking = blocking;
  const int id = add(task);
  for (int r : groups_[group]) {
    queues_[blocking ? compute_resource(r) : collective_resource(r)].push_back(id);
  }
  return id;
}

int TaskGraph::add_blocking_collective(int group, double bytes, TaskCategory category) {
  return add_group_collective(group, bytes, -1, category, true);
}

int TaskGraph::add_collective(int group, double bytes, int bucket, TaskCategory category) {
  return add_group_collective(group, bytes, bucket, category, false);
}

void TaskGraph::depend(int task, int on) {
  successors_.at(on).push_back(task);
  ++dependency_count_.at(task);
}

int TaskGraph::add_after_idle_curve(AfterIdleCurve curve) {
  if (curve.empty()) return -1;
  after_idle_curves_.push_back(std::move(curve));
  return static_cast<int>(after_idle_curves_.size()) - 1;
}

void TaskGraph::set_after_idle(int task, int curve) {
  Task& t = tasks_.at(task);
  if (t.kind != TaskKind::kCompute ||
      (t.category != TaskCategory::kForward && t.category != TaskCategory::kBackward &&
       t.category != TaskCategory::kBackwardWeight)) {
    throw std::invalid_argument("only forward and backward tasks are priced after a wait");
  }
  if (curve < -1 || curve >= static_cast<int>(after_idle_curves_.size())) {
    throw std::invalid_argument("no after-idle curve " + std::to_string(curve));
  }
  t.after_idle = curve;
}

}  // namespace harness::simulator
