#include "simulator/engine.h"

#include <algorithm>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "simulator/collective.h"
#include "simulator/event_queue.h"
#include "simulator/network.h"
#include "simulator/pair_streams.h"
#include "simulator/token_buckets.h"

namespace harness::simulator {
namespace {

class Engine {
 public:
  Engine(const Cluster& cluster, const TaskGraph& graph)
      : cluster_(cluster),
        graph_(graph),
        network_(cluster.link_bandwidths(), queue_),
        deps_(graph.dependency_count()),
        heads_reached_(graph.tasks().size(), 0),
        head_(graph.resource_queues().size(), 0),
        progress_(graph.tasks().size()),
        group_phases_(4 * graph.groups().size()),
        idle_(static_cast<size_t>(graph.ranks())),
        streams_(graph.ranks()),
        buckets_(cluster.num_machines(), cluster.config().inter_burst_bytes,
                 cluster.nic_bandwidth()) {
    times_.start.assign(graph.tasks().size(), -1.0);
    times_.end.assign(graph.tasks().size(), -1.0);
    // CPU ranks: a host whose ranks want more cores than it has -- each its compute threads
    // and its communication thread's share of a core (Gloo's) -- runs their compute, transfers
    // and collective steps as flows on its CPU link, every flow weighted by the cores it wants
    // (LinkUse::edges), so each gets that want times cores / total want; elsewhere compute
    // keeps its time and communication only meets the network. A compute flow moves
    // core-seconds at up to cores_per_rank cores. A host is one machine unless
    // machines_per_host groups several (emulated machines of one host).
    const ClusterConfig& config = cluster.config();
    std::vector<double> demand(static_cast<size_t>(cluster.num_machines()), 0.0);
    for (int r = 0; r < graph.ranks(); ++r) {
      demand[cluster.host_of(cluster.machine_of(r))] +=
          config.cores_per_rank + std::max(config.comm_cores(true), config.comm_cores(false));
    }
    for (int m = 0; m < cluster.num_machines(); ++m) {
      const bool oversubscribed = config.cpu_cores_per_machine > 0 &&
                                  demand[cluster.host_of(m)] > config.cpu_cores_per_machine;
      cpu_use_.push_back(LinkUse{oversubscribed ? cluster.cpu_link(m) : -1, config.cores_per_rank,
                                 config.cores_per_rank});
    }
  }

  TaskTimes run() {
    const auto& queues = graph_.resource_queues();
    for (size_t r = 0; r < queues.size(); ++r) {
      if (!queues[r].empty()) ++heads_reached_[queues[r].front()];
    }
    for (size_t t = 0; t < graph_.tasks().size(); ++t) try_start(static_cast<int>(t));
    while (!queue_.empty()) {
      const Event event = queue_.pop();
      now_ = event.time;
      ++times_.events;
      switch (event.type) {
        case EventType::kComputeDone:
        case EventType::kTaskDone:
          finish(static_cast<int>(event.id));
          break;
        case EventType::kLatencyDone:
          start_flow(static_cast<int>(event.id));
          break;
        case EventType::kFlowDone: {
          std::uint32_t owner = 0;
          if (network_.complete(now_, event.id, event.version, owner)) {
            flow_done(static_cast<int>(owner), event.id);
          }
          break;
        }
      }
    }
    for (size_t t = 0; t < graph_.tasks().size(); ++t) {
      if (times_.end[t] < 0) {
        const Task& task = graph_.task(static_cast<int>(t));
        throw std::logic_error("simulation deadlock: task " + std::to_string(t) + " of rank " +
                               std::to_string(task.rank) + " never ended (" +
                               std::to_string(deps_[t]) + " dependencies left)");
      }
    }
    // The last task's end, not the last event: a flow that sped up leaves its earlier, later
    // completion event behind (stale, ignored when it pops, but it moves the clock).
    times_.makespan = 0.0;
    for (double end : times_.end) times_.makespan = std::max(times_.makespan, end);
    return std::move(times_);
  }

 private:
  struct Progress {  // of a transfer or collective
    int phase = 0;
    int step = 0;
    int flow = -1;               // collectives: the flow of the current phase, held between steps
    double rest = 0.0;           // transfers: the bytes left after the burst from the bucket
    std::vector<LinkUse> route;  // transfers
  };

  int resource_count(const Task& task) const {
    switch (task.kind) {
      case TaskKind::kCollective:
        return static_cast<int>(graph_.groups()[task.group].size());
      case TaskKind::kReadyNotice:
        return 0;
      case TaskKind::kCompute:
      case TaskKind::kTransfer:
        return 1;
    }
    return 1;
  }

  void try_start(int id) {
    const Task& task = graph_.task(id);
    if (deps_[id] != 0 || heads_reached_[id] != resource_count(task) || times_.start[id] >= 0) {
      return;
    }
    times_.start[id] = now_;
    switch (task.kind) {
      case TaskKind::kCompute: {
        const LinkUse& cpu = cpu_use_[cluster_.machine_of(task.rank)];
        const double seconds = task.category == TaskCategory::kSendCall
                                   ? send_call_seconds(task)
                                   : task.seconds * after_idle_ratio(task);
        if (cpu.link < 0 || seconds <= 0) {
          queue_.push(now_ + seconds, EventType::kComputeDone, id);
        } else {
          network_.start(now_, seconds * cpu.scale, &cpu, 1, cpu.scale,
                         static_cast<std::uint32_t>(id));
        }
        break;
      }
      case TaskKind::kTransfer:
        if (cluster_.config().p2p_ready_behind_sends) streams_.sent(id, task.rank, task.peer);
        begin_transfer(id);
        break;
      case TaskKind::kCollective:
        begin_step(id);
        break;
      case TaskKind::kReadyNotice:
        // Behind the transfers its rank has in flight to the same peer, it arrives with the
        // last of them (its bytes follow theirs over the same latency): finished by finish().
        if (streams_.queue_notice(id, task.rank, task.peer)) {
          queue_.push(now_ + cluster_.latency(task.rank, task.peer), EventType::kTaskDone, id);
        }
        break;
    }
  }

  // A send call writes its transfer's bytes on the calling thread when the transfer leaves at
  // once, its receive posted (Gloo's TCP pair writes into the socket there, and an emulated
  // link's kernel path runs on that thread too); otherwise it only queues the transfer, which
  // the pair's own thread writes when the receiver's "ready" arrives. The transfer is its
  // maker's successor before the call is, so it has started by now if it could.
  double send_call_seconds(const Task& call) const {
    return times_.start[call.transfer] >= 0
               ? cluster_.send_call_seconds(call.rank, call.peer, call.bytes)
               : 0.0;
  }

  // A rank's compute stream idles from the end of one compute task to the start of the next
  // (every rank computed up to the iteration's start). After an idle stretch the first forward
  // and the first backward -- what the profile timed after sleeping the gap -- take their
  // curve's ratio at the stretch's length; the tasks after them run warm.
  struct IdleStretch {
    double last_end = 0.0;
    double gap = 0.0;
    bool forward_priced = false;
    bool backward_priced = false;
  };

  double after_idle_ratio(const Task& task) {
    IdleStretch& stretch = idle_[task.rank];
    if (now_ > stretch.last_end) {
      stretch.gap = now_ - stretch.last_end;
      stretch.forward_priced = stretch.backward_priced = false;
    }
    const bool backward =
        task.category == TaskCategory::kBackward || task.category == TaskCategory::kBackwardWeight;
    if (task.after_idle < 0) return 1.0;
    bool& priced = backward ? stretch.backward_priced : stretch.forward_priced;
    if (priced) return 1.0;
    priced = true;
    return graph_.after_idle_curves()[task.after_idle].ratio(stretch.gap, backward);
  }

  // A group's all-reduce phases, its all-gather's and reduce-scatter's (one ring each way), or
  // its all-to-all's.
  std::vector<CollectivePhase> plan_of(const Task& task) const {
    const std::vector<int>& ranks = graph_.groups()[task.group];
    switch (task.category) {
      case TaskCategory::kAllGather:
        return plan_ring_half(cluster_, ranks, RingHalf::kAllGather);
      case TaskCategory::kReduceScatter:
        return plan_ring_half(cluster_, ranks, RingHalf::kReduceScatter);
      case TaskCategory::kAllToAll:
        return plan_all_to_all(cluster_, ranks);
      default:
        return plan_allreduce(cluster_, ranks, cluster_.config().algorithm);
    }
  }
  static int op_slot(TaskCategory category) {
    switch (category) {
      case TaskCategory::kAllGather:
        return 1;
      case TaskCategory::kReduceScatter:
        return 2;
      case TaskCategory::kAllToAll:
        return 3;
      default:
        return 0;
    }
  }

  const std::vector<CollectivePhase>& phases_of(const Task& task) {
    const int group = task.group;
    auto& slot = group_phases_[4 * group + op_slot(task.category)];
    if (!slot) {
      slot = std::make_unique<std::vector<CollectivePhase>>(plan_of(task));
      // Every member's thread works through every step (the measured rate, with a core each).
      const ClusterConfig& config = cluster_.config();
      const double per_core =
          config.collective_rate_cap > 0 ? config.collective_rate_cap : config.intra_bandwidth;
      for (CollectivePhase& phase : *slot) {
        add_cpu_uses(graph_.groups()[group], config.comm_cores(phase.crosses_machines), per_core,
                     phase.links);
      }
    }
    return *slot;
  }

  // The op's own measurement (all-gather, reduce-scatter, all-to-all); none for an all-reduce.
  const MeasuredCollective* measured_op(TaskCategory category) const {
    const ClusterConfig& config = cluster_.config();
    switch (category) {
      case TaskCategory::kAllGather:
        return &config.gather;
      case TaskCategory::kReduceScatter:
        return &config.scatter;
      case TaskCategory::kAllToAll:
        return &config.alltoall;
      default:
        return nullptr;
    }
  }

  // The measured per-edge rate of a collective's steps: its own op's rate at its size, or its
  // fit, where there is one; else the all-reduce's.
  double collective_cap(const Task& task) const {
    if (const MeasuredCollective* op = measured_op(task.category)) {
      if (!op->rate_by_bytes.empty()) return ClusterConfig::rate_at(op->rate_by_bytes, task.bytes);
      if (op->rate_cap > 0) return op->rate_cap;
    }
    return cluster_.config().collective_rate_cap;
  }

  // Starts the current step of a collective (skipping empty phases), or ends it. The flow of
  // a phase keeps its links between steps (Network::complete) and is released with the phase.
  void begin_step(int id) {
    const Task& task = graph_.task(id);
    const auto& phases = phases_of(task);
    Progress& p = progress_[id];
    while (p.phase < static_cast<int>(phases.size()) && p.step >= phases[p.phase].steps) {
      if (p.flow >= 0) {
        network_.release(now_, static_cast<std::uint32_t>(p.flow));
        p.flow = -1;
      }
      ++p.phase;
      p.step = 0;
    }
    if (p.phase >= static_cast<int>(phases.size())) {
      queue_.push(now_, EventType::kTaskDone, id);
      return;
    }
    queue_.push(now_ + phases[p.phase].latency_s, EventType::kLatencyDone, id);
  }

  // Appends, for each rank on a machine with shared cores, its communication thread's want
  // (`cores`: ClusterConfig::comm_cores, or comm_cores_per_rank for a transfer) on its host's
  // CPU link (merged per link), moving `per_core` bytes/s when it gets all it wants.
  void add_cpu_uses(std::span<const int> ranks, double cores, double per_core,
                    std::vector<LinkUse>& uses) const {
    for (int rank : ranks) {
      const int link = cpu_use_[cluster_.machine_of(rank)].link;
      if (link < 0) continue;
      auto same = std::find_if(uses.begin(), uses.end(),
                               [&](const LinkUse& use) { return use.link == link; });
      if (same != uses.end()) {
        same->edges += cores;
      } else {
        uses.push_back(LinkUse{link, cores, per_core});
      }
    }
  }

  // A transfer once its sender has issued it and its receiver posted the receive: across
  // machines with a token bucket, what the sender's bucket lets through at once is its burst,
  // which crosses after the burst latency at the host's own path (Cluster::burst_seconds);
  // otherwise the link's latency. Then the rest flows over the links (start_flow).
  void begin_transfer(int id) {
    const Task& task = graph_.task(id);
    const double burst = cluster_.config().inter_burst_bytes > 0 && task.bytes > 0 &&
                                 !cluster_.same_machine(task.rank, task.peer)
                             ? buckets_.take(id, cluster_.machine_of(task.rank), task.bytes, now_)
                             : 0.0;
    progress_[id].rest = task.bytes - burst;
    const double delay = burst > 0 ? cluster_.burst_seconds(burst, progress_[id].rest)
                                   : cluster_.latency(task.rank, task.peer);
    if (task.bytes <= 0 && delay <= 0) {
      queue_.push(now_, EventType::kTaskDone, id);
    } else {
      queue_.push(now_ + delay, EventType::kLatencyDone, id);
    }
  }

  void start_flow(int id) {
    const Task& task = graph_.task(id);
    Progress& p = progress_[id];
    if (task.kind == TaskKind::kTransfer) {
      const double bytes = p.rest;
      if (bytes <= 0) {
        finish(id);
        return;
      }
      cluster_.route_p2p(task.rank, task.peer, p.route);
      // Alone, a transfer moves at the links' speed with a core at each end.
      const int ends[] = {task.rank, task.peer};  // no allocation on the transfer path
      add_cpu_uses(ends, cluster_.config().comm_cores_per_rank, cluster_.config().intra_bandwidth,
                   p.route);
      network_.start(now_, bytes, p.route.data(), static_cast<int>(p.route.size()),
                     cluster_.p2p_cap(task.rank, task.peer), static_cast<std::uint32_t>(id));
      return;
    }
    const CollectivePhase& phase = phases_of(task)[p.phase];
    const double bytes = phase.bytes_fraction * task.bytes;
    if (bytes <= 0) {
      flow_done(id, -1);
      return;
    }
    if (p.flow >= 0) {
      network_.resume(now_, static_cast<std::uint32_t>(p.flow), bytes);
      return;
    }
    p.flow = static_cast<int>(network_.start(
        now_, bytes, phase.links.data(), static_cast<int>(phase.links.size()),
        tighter_cap(collective_cap(task), phase.rate_cap), static_cast<std::uint32_t>(id)));
  }

  void flow_done(int id, long long flow) {
    const Task& task = graph_.task(id);
    if (task.kind != TaskKind::kCollective) {  // a transfer, or compute on shared cores
      network_.release(now_, static_cast<std::uint32_t>(flow));
      finish(id);
      return;
    }
    ++progress_[id].step;
    begin_step(id);
  }

  void finish(int id) {
    times_.end[id] = now_;
    const Task& task = graph_.task(id);
    const auto& queues = graph_.resource_queues();
    auto advance = [&](int resource) {
      const auto& queue = queues[resource];
      const size_t next = ++head_[resource];
      if (next < queue.size()) {
        ++heads_reached_[queue[next]];
        try_start(queue[next]);
      }
    };
    switch (task.kind) {
      case TaskKind::kCompute:
        idle_[task.rank].last_end = now_;
        advance(TaskGraph::compute_resource(task.rank));
        break;
      case TaskKind::kTransfer:
        advance(TaskGraph::send_resource(task));
        buckets_.returned(id, now_);
        if (cluster_.config().p2p_ready_behind_sends) {
          std::vector<int> released;
          streams_.arrived(id, task.rank, task.peer, released);
          for (int notice : released) finish(notice);
        }
        break;
      case TaskKind::kCollective:
        for (int r : graph_.groups()[task.group]) {
          if (!task.blocking) {
            advance(TaskGraph::collective_resource(r));
            continue;
          }
          idle_[r].last_end = now_;  // its thread was busy in the collective, not idle
          advance(TaskGraph::compute_resource(r));
        }
        break;
      case TaskKind::kReadyNotice:
        break;
    }
    // A rank issues the sends that a finished task enables before it posts its next receive
    // (the runtime's executor sends an action's outputs, then moves on to the next action):
    // ready notices start after the transfers that end at the same instant. Without notices
    // (ClusterConfig::p2p_ready_behind_sends off, none in the graph) one pass does it all.
    const auto& successors = graph_.successors()[id];
    for (const bool notices : {false, true}) {
      for (int successor : successors) {
        if ((graph_.task(successor).kind == TaskKind::kReadyNotice) != notices) continue;
        --deps_[successor];
        try_start(successor);
      }
      if (!cluster_.config().p2p_ready_behind_sends) break;
    }
  }

  const Cluster& cluster_;
  const TaskGraph& graph_;
  EventQueue queue_;
  Network network_;
  std::vector<int> deps_;
  std::vector<int> heads_reached_;
  std::vector<size_t> head_;
  std::vector<Progress> progress_;
  std::vector<std::unique_ptr<std::vector<CollectivePhase>>> group_phases_;
  std::vector<LinkUse> cpu_use_;   // per machine; link -1: its ranks' compute is not shared
  std::vector<IdleStretch> idle_;  // per rank
  PairStreams streams_;            // ClusterConfig::p2p_ready_behind_sends
  TokenBuckets buckets_;           // ClusterConfig::inter_burst_bytes
  TaskTimes times_;
  double now_ = 0.0;
};

}  // namespace

TaskTimes run_tasks(const Cluster& cluster, const TaskGraph& graph) {
  if (graph.ranks() > cluster.num_gpus()) {
    throw std::invalid_argument("the task graph has more ranks than the cluster has GPUs");
  }
  Engine engine(cluster, graph);
  return engine.run();
}

}  // namespace harness::simulator
