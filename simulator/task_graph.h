// What the ranks of one simulated iteration do, as tasks on resources with dependencies.
// Every rank has three in-order resources, as a training process has: the compute stream, the
// send channel (point-to-point transfers it sends, one at a time), and the collective channel
// (collectives it takes part in, one at a time, in the order they were added -- the order a
// framework launches them). With per-peer send channels a rank has one send channel per peer
// instead (a connection per pair of ranks, as Gloo's TCP pairs and NCCL's peer channels are:
// in order to one peer, side by side to different ones). A task starts when it is first in
// line on each of its resources and every task it depends on has ended; a collective is in
// line on every participant.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "simulator/compute_after_idle.h"

namespace harness::simulator {

// kReadyNotice: a receiver telling a transfer's sender that it posted the receive
// (ClusterConfig::p2p_ready_behind_sends); it moves no bytes worth counting and holds no
// resource: the transfer depends on it.
enum class TaskKind : std::uint8_t { kCompute, kTransfer, kCollective, kReadyNotice };
// Trace categories (the trace contract: forward, backward, step, send/recv, allreduce).
// kBucketCopy: the gradient reducer's host-side passes over a bucket (copy in, scale, copy
// out), on the compute stream; it counts as backward time, as the real ranks' timers see it.
// kSendCall: a rank's send call of one transfer, on its compute stream right after the
// compute that made the data (TaskGraph::add_send_call).
// kAllGather, kReduceScatter: sharded data parallelism's collectives (ring, n-1 steps).
// kAllToAll: expert parallelism's token exchanges (n-1 pairwise steps).
enum class TaskCategory : std::uint8_t {
  kForward,
  kBackward,
  kStep,
  kTransfer,
  kAllReduce,
  kBucketCopy,
  kSendCall,
  kAllGather,
  kReduceScatter,
  kBackwardWeight,  // a pipeline's W: the weight gradients apart from the input's
  kAllToAll,
};

struct Task {
  TaskKind kind = TaskKind::kCompute;
  TaskCategory category = TaskCategory::kForward;
  // compute: its rank; transfer: sender; collective: first member; ready notice: receiver.
  int rank = 0;
  int peer = -1;          // transfer: receiver; ready notice: the sender it tells
  int group = -1;         // collective: index into TaskGraph::groups
  double seconds = 0.0;   // compute
  double bytes = 0.0;     // transfer, collective (the buffer)
  int micro_batch = -1;   // -1: none
  int bucket = -1;        // collective, bucket copy: bucket or stage, for the trace
  int send_channel = -1;  // transfer: the resource queue it waits in (TaskGraph::send_resource)
  int after_idle = -1;    // forward, backward: its curve (TaskGraph::after_idle_curves), -1: none
  int transfer = -1;      // send call: the transfer it issues
  // Collective: queued on its ranks' compute streams rather than their collective channels --
  // the thread that computes waits in it (Megatron's f and g inside a split layer).
  bool blocking = false;
};

class TaskGraph {
 public:
  explicit TaskGraph(int ranks, bool send_channel_per_peer = false);

  int ranks() const { return ranks_; }
  int add_compute(int rank, TaskCategory category, double seconds, int micro_batch = -1,
                  int bucket = -1);
  int add_transfer(int src, int dst, double bytes, int micro_batch = -1);
  // The sender's call that issues `transfer`, on its compute stream right after `made_by` (the
  // compute that made the data; after the calls already placed there, in order), depending on
  // it. Its cost is decided when it starts (simulator/engine.cpp): the transfer's bytes go
  // into the socket on the calling thread only if the receiver has posted its receive by then.
  int add_send_call(int transfer, int made_by);
  // The notice `receiver` sends `sender` when it posts the receive of one transfer.
  int add_ready_notice(int receiver, int sender, int micro_batch = -1);
  int add_group(std::vector<int> ranks);  // distinct ranks, in ring order
  // `bytes`: the whole buffer (an all-gather's output, a reduce-scatter's input).
  int add_collective(int group, double bytes, int bucket = -1,
                     TaskCategory category = TaskCategory::kAllReduce);
  // A collective the ranks' compute waits in (Task::blocking): in line on each member's compute
  // stream, after what it computed before, and before what it computes next.
  int add_blocking_collective(int group, double bytes,
                              TaskCategory category = TaskCategory::kAllReduce);
  void depend(int task, int on);
  // A curve of compute after a wait (simulator/compute_after_idle.h), for set_after_idle: its
  // index, or -1 for an empty curve.
  int add_after_idle_curve(AfterIdleCurve curve);
  // Prices a forward or backward task's compute after an idle stretch of its rank by curve
  // `curve` (-1: none).
  void set_after_idle(int task, int curve);

  const std::vector<Task>& tasks() const { return tasks_; }
  const Task& task(int id) const { return tasks_[id]; }
  const std::vector<std::vector<int>>& groups() const { return groups_; }
  const std::vector<AfterIdleCurve>& after_idle_curves() const { return after_idle_curves_; }
  const std::vector<std::vector<int>>& successors() const { return successors_; }
  const std::vector<int>& dependency_count() const { return dependency_count_; }
  // Resource queues, tasks in order: 3 per rank (compute, send, collective), then with per-peer
  // send channels one per pair of ranks that has a transfer (send_resource says which).
  static int compute_resource(int rank) { return 3 * rank; }
  static int collective_resource(int rank) { return 3 * rank + 2; }
  // The send channel a transfer queues on: its sender's, or its sender's to its receiver.
  static int send_resource(const Task& transfer) { return transfer.send_channel; }
  const std::vector<std::vector<int>>& resource_queues() const { return queues_; }

 private:
  int add(Task task);
  // A collective over `group`, in line on its members' collective channels or, blocking, on
  // their compute streams.
  int add_group_collective(int group, double bytes, int bucket, TaskCategory category,
                           bool blocking);
  static int rank_send_resource(int rank) { return 3 * rank + 1; }
  int ranks_;
  bool send_channel_per_peer_;
  std::unordered_map<std::int64_t, int> peer_channels_;  // sender * ranks + receiver -> resource
  std::vector<Task> tasks_;
  std::vector<std::vector<int>> successors_;
  std::vector<int> dependency_count_;
  std::vector<std::vector<int>> groups_;
  std::vector<std::vector<int>> queues_;
  std::vector<AfterIdleCurve> after_idle_curves_;
};

}  // namespace harness::simulator
