#include "simulator/pipeline_system.h"

#include <cmath>

#include "runtime/pipeline/layout_schedule.h"
#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/pipeline/schedule_check.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

namespace harness::simulator {

namespace {

std::vector<int> stage_of_layers(const LayerCosts& costs, const PipelineSystem& system) {
  std::vector<int> stage(static_cast<size_t>(costs.size()), -1);
  for (size_t s = 0; s < system.stages.size(); ++s) {
    for (int layer : system.stages[s].layers) {
      if (layer < 0 || layer >= costs.size()) {
        throw std::invalid_argument("stage " + std::to_string(s) + " names layer " +
                                    std::to_string(layer) + " of a " +
                                    std::to_string(costs.size()) + "-layer profile");
      }
      if (stage[layer] >= 0) {
        throw std::invalid_argument("layer " + costs.ids[layer] + " is in stages " +
                                    std::to_string(stage[layer]) + " and " + std::to_string(s));
      }
      stage[layer] = static_cast<int>(s);
    }
  }
  return stage;
}

}  // namespace

namespace {

void validate_tensor_axis(const LayerCosts& costs, const PipelineSystem& system, int world) {
  if (system.tensor < 1 || world % system.tensor != 0) {
    throw std::invalid_argument("a tensor axis of " + std::to_string(system.tensor) +
                                " does not divide " + std::to_string(world) + " ranks");
  }
  const std::vector<bool> split = split_layers(costs);
  if (system.tensor > 1 && std::find(split.begin(), split.end(), true) == split.end()) {
    throw std::invalid_argument("the profile has no transformer block for a tensor axis to split");
  }
}

}  // namespace

void validate_pipeline(const LayerCosts& costs, const PipelineSystem& system, int world) {
  if (system.stages.empty()) throw std::invalid_argument("a pipeline needs at least one stage");
  if (system.micro_batches < 1) throw std::invalid_argument("micro-batches must be >= 1");
  const std::vector<int> stage = stage_of_layers(costs, system);
  // Every layer placed first: an edge into an unplaced layer is that layer's problem.
  for (int layer = 0; layer < costs.size(); ++layer) {
    if (stage[layer] < 0) {
      throw std::invalid_argument("layer " + costs.ids[layer] + " (" + costs.names[layer] +
                                  ") is in no stage");
    }
  }
  for (int layer = 0; layer < costs.size(); ++layer) {
    for (int next : costs.successors[layer]) {
      if (stage[next] < stage[layer]) {
        throw std::invalid_argument("edge " + costs.ids[layer] + " -> " + costs.ids[next] +
                                    " goes from stage " + std::to_string(stage[layer]) +
                                    " back to stage " + std::to_string(stage[next]));
      }
    }
  }
  validate_tensor_axis(costs, system, world);
  const int places = world / system.tensor;  // ranks, or tensor groups
  const std::string place = system.tensor > 1 ? "tensor group " : "rank ";
  std::map<int, size_t> seen;  // rank -> its first stage
  for (size_t s = 0; s < system.stages.size(); ++s) {
    if (system.stages[s].ranks.empty()) {
      throw std::invalid_argument("stage " + std::to_string(s) + " has no ranks");
    }
    for (int r : system.stages[s].ranks) {
      if (r < 0 || r >= places) {
        throw std::invalid_argument("stage " + std::to_string(s) + " names " + place +
                                    std::to_string(r) + " outside the world of " +
                                    std::to_string(world) + (system.tensor > 1 ? " ranks" : ""));
      }
      const auto [first, added] = seen.emplace(r, s);
      if (!added && system.stages[first->second].ranks != system.stages[s].ranks) {
        throw std::invalid_argument("rank " + std::to_string(r) + " is in two stages");
      }
    }
  }
}

std::vector<double> boundary_bytes(const LayerCosts& costs, const PipelineSystem& system) {
  const std::vector<int> stage = stage_of_layers(costs, system);
  const int stages = static_cast<int>(system.stages.size());
  std::vector<double> bytes(static_cast<size_t>(std::max(stages - 1, 0)), 0.0);
  for (int layer = 0; layer < costs.size(); ++layer) {
    int last_consumer = stage[layer];
    for (int next : costs.successors[layer]) last_consumer = std::max(last_consumer, stage[next]);
    // Its activation crosses every boundary between its stage and its last consumer's.
    for (int s = stage[layer]; s < last_consumer; ++s) bytes[s] += costs.activation_bytes[layer];
  }
  return bytes;
}

namespace {

using Kind = runtime::PipelineAction::Kind;

// A compute action's task: the pass (0 forward, 1 the backward that makes the input gradient,
// 2 W), the stage, the micro-batch.
using PassKey = std::tuple<int, int, int>;
int pass_of(const runtime::PipelineAction& a) {
  return a.kind == Kind::kForward ? 0 : a.kind == Kind::kBackwardWeight ? 2 : 1;
}

// The graph of one iteration under way: every compute action's tasks per slot of its stage,
// keyed by its pass. A slot is a rank of the stage: replica i's lane j is slot i x tensor + j
// (one lane without a tensor axis).
struct PipelineGraph {
  const PipelineSystem& system;
  const runtime::ScheduleTable& table;  // with sends and receives
  TaskGraph& graph;
  std::vector<runtime::StageCosts> costs;  // per stage, one replica's share of a micro-batch
  std::vector<double> whole_backward;      // per stage, B run whole, the same share
  // (pass, slot) -> the action's last task on the slot's rank (a compute task), and its first.
  std::map<std::pair<PassKey, int>, int> task, first;
  // Where each receive is posted: after this compute action of the receiver's list (the last
  // one before the receive in it); absent for a receive posted before any compute.
  std::map<PassKey, PassKey> posted_after;
  std::map<int, int> action_end;       // compute task -> the last send call after it
  std::vector<std::vector<int>> sent;  // transfers each rank sends
  std::map<int, int> tensor_groups;    // tensor group -> its TaskGraph group

  // The stage's replicas: ranks, or tensor groups under a tensor axis.
  const std::vector<int>& ranks_of(int stage) const { return system.stages[stage].ranks; }
  int lanes() const { return system.tensor; }
  int slots(int stage) const { return static_cast<int>(ranks_of(stage).size()) * lanes(); }
  int rank_of(int stage, int slot) const {
    return ranks_of(stage)[slot / lanes()] * lanes() + slot % lanes();
  }
  // Lane j's rank in each of the stage's replicas, in replica order.
  std::vector<int> lane_ranks(int stage, int lane) const {
    std::vector<int> ranks;
    for (int group : ranks_of(stage)) ranks.push_back(group * lanes() + lane);
    return ranks;
  }
  int tensor_group(int group) {
    const auto [at, added] = tensor_groups.emplace(group, -1);
    if (added) {
      std::vector<int> ranks;
      for (int j = 0; j < lanes(); ++j) ranks.push_back(group * lanes() + j);
      at->second = graph.add_group(std::move(ranks));
    }
    return at->second;
  }
};

// A stage's replica's share of a micro-batch against the profile batch.
double micro_batch_scale(const PipelineSystem& system, const PipelineStage& stage,
                         const LayerCosts& costs) {
  const double micro_samples = system.global_batch / system.micro_batches;
  return micro_samples / static_cast<double>(stage.ranks.size()) / costs.profile_batch;
}

// Each stage's F, I and W seconds for one replica's share of a micro-batch, from the profile:
// its split backward where it timed one, else the whole backward at backward_input_share.
std::vector<runtime::StageCosts> stage_costs(const PipelineSystem& system,
                                             const LayerCosts& costs) {
  const bool split = !costs.backward_input_s.empty();
  std::vector<runtime::StageCosts> out;
  for (const PipelineStage& stage : system.stages) {
    double f = 0, i = 0, w = 0;
    for (int layer : stage.layers) {
      f += costs.forward_s[layer];
      i += split ? costs.backward_input_s[layer]
                 : costs.backward_s[layer] * system.backward_input_share;
      w += split ? costs.backward_weight_s[layer]
                 : costs.backward_s[layer] * (1.0 - system.backward_input_share);
    }
    const double scale = micro_batch_scale(system, stage, costs);
    out.push_back({f * scale, i * scale, w * scale});
  }
  return out;
}

// Each stage's B, run whole, for the same share: the profile's backward (its split's two passes
// cost more than one).
std::vector<double> whole_backward_costs(const PipelineSystem& system, const LayerCosts& costs) {
  std::vector<double> out;
  for (const PipelineStage& stage : system.stages) {
    double b = 0;
    for (int layer : stage.layers) b += costs.backward_s[layer];
    out.push_back(b * micro_batch_scale(system, stage, costs));
  }
  return out;
}

// One action of a replica whose tensor group splits the stage's blocks: the layers' compute on
// every lane, cut where a split block waits in its group's collectives (each cut a compute task
// per lane, the action ending in one so that its sends follow it).
class SplitAction {
 public:
  SplitAction(PipelineGraph& g, ComputeNoise& noise, const runtime::PipelineAction& a, int replica,
              TaskCategory category, int curve)
      : g_(g),
        noise_(noise),
        a_(a),
        replica_(replica),
        category_(category),
        curve_(curve),
        group_(g.tensor_group(g.ranks_of(a.stage)[replica])),
        last_(g.lanes(), -1),
        first_(g.lanes(), -1) {}
  void compute(double seconds) { open_ += seconds; }
  // The open compute placed, then the collective the lanes wait in (add returns it; -1: none).
  template <typename Add>
  void wait(Add add) {
    cut();
    if (const int collective = add(g_.graph, group_); collective >= 0) waiting_ = true;
  }
  void finish(const PassKey& key) {
    if (open_ > 0 || waiting_ || first_[0] < 0) cut();
    for (int j = 0; j < g_.lanes(); ++j) {
      const int slot = replica_ * g_.lanes() + j;
      g_.first[{key, slot}] = first_[j];
      g_.task[{key, slot}] = last_[j];
    }
  }

 private:
  void cut() {
    for (int j = 0; j < g_.lanes(); ++j) {
      const int rank = g_.rank_of(a_.stage, replica_ * g_.lanes() + j);
      const int id = g_.graph.add_compute(rank, category_, noise_.apply(open_), a_.micro_batch);
      g_.graph.set_after_idle(id, curve_);
      if (first_[j] < 0) first_[j] = id;
      last_[j] = id;
    }
    open_ = 0;
    waiting_ = false;
  }
  PipelineGraph& g_;
  ComputeNoise& noise_;
  const runtime::PipelineAction& a_;
  int replica_;
  TaskCategory category_;
  int curve_, group_;
  std::vector<int> last_, first_;
  double open_ = 0;
  bool waiting_ = false;
};

// The collectives of replica `replica`'s split action `a`, layer by layer (backward in reverse);
// compute at the micro-batch share `scale`, collectives of the block's output at that share.
void add_split_action(PipelineGraph& g, const LayerCosts& costs, const SplitBlocks& blocks,
                      ComputeNoise& noise, const runtime::PipelineAction& a, int replica,
                      TaskCategory category, int curve) {
  const PipelineStage& stage = g.system.stages[a.stage];
  const double scale = micro_batch_scale(g.system, stage, costs);
  const SplitBlockComm& comm = g.system.tensor_comm;
  const bool split_backward = !costs.backward_input_s.empty();
  const double share = g.system.backward_input_share;
  SplitAction action(g, noise, a, replica, category, curve);
  std::vector<int> layers = stage.layers;
  if (a.kind != Kind::kForward) std::reverse(layers.begin(), layers.end());
  for (int layer : layers) {
    const bool split = blocks.split[layer];
    const double bytes = costs.activation_bytes[layer] * scale;
    const auto forward = [&](TaskGraph& t, int group) {
      return add_split_forward(t, group, bytes, comm, layer == blocks.last);
    };
    const auto input = [&](TaskGraph& t, int group) {
      return add_split_backward_input(t, group, bytes, comm, layer == blocks.first);
    };
    const auto weight = [&](TaskGraph& t, int group) {
      return add_split_backward_weight(t, group, comm);
    };
    if (a.kind == Kind::kForward) {
      action.compute(costs.forward_s[layer] * scale);
      if (split) action.wait(forward);
    } else if (a.kind == Kind::kBackward) {
      if (split && g.system.recompute_every > 0 &&
          blocks.index[layer] % g.system.recompute_every == 0) {
        action.wait(forward);  // the recomputed forward's collectives
      }
      action.compute(costs.backward_s[layer] * scale);
      if (split) action.wait(input), action.wait(weight);
    } else if (a.kind == Kind::kBackwardInput) {
      action.compute(
          (split_backward ? costs.backward_input_s[layer] : costs.backward_s[layer] * share) *
          scale);
      if (split) action.wait(input);
    } else {
      action.compute((split_backward ? costs.backward_weight_s[layer]
                                     : costs.backward_s[layer] * (1.0 - share)) *
                     scale);
      if (split) action.wait(weight);
    }
  }
  action.finish({pass_of(a), a.stage, a.micro_batch});
}

// Pass 1: compute tasks, per rank in its list's order, with the stage's profiled times.
void add_compute_tasks(PipelineGraph& g, const LayerCosts& costs, const SplitBlocks& blocks,
                       ComputeNoise& noise, std::vector<int>& stage_of_rank) {
  // Each stage's compute-after-a-wait curve, added once and shared by its tasks.
  std::vector<int> after_idle(g.system.stages.size());
  for (size_t c = 0; c < g.system.stages.size(); ++c) {
    after_idle[c] = g.graph.add_after_idle_curve(costs.after_idle_of(g.system.stages[c].layers));
  }
  for (int p = 0; p < g.table.ranks; ++p) {
    const int first_stage = g.table.stages_of(p).front();
    const std::vector<int>& ranks = g.ranks_of(first_stage);
    for (int slot = 0; slot < g.slots(first_stage); ++slot) {
      stage_of_rank[g.rank_of(first_stage, slot)] = p;
    }
    std::optional<PassKey> previous;
    for (const runtime::PipelineAction& a : g.table.actions[p]) {
      if (a.kind == Kind::kRecvActivations || a.kind == Kind::kRecvGradients) {
        const PassKey consumer{a.kind == Kind::kRecvActivations ? 0 : 1, a.stage, a.micro_batch};
        if (previous) g.posted_after[consumer] = *previous;
      }
      if (!a.is_compute()) continue;
      const PassKey key{pass_of(a), a.stage, a.micro_batch};
      previous = key;
      const runtime::StageCosts& c = g.costs[a.stage];
      const double seconds = a.kind == Kind::kForward         ? c.forward
                             : a.kind == Kind::kBackward      ? g.whole_backward[a.stage]
                             : a.kind == Kind::kBackwardInput ? c.backward_input
                                                              : c.backward_weight;
      const TaskCategory category = a.kind == Kind::kForward ? TaskCategory::kForward
                                    : a.kind == Kind::kBackwardWeight
                                        ? TaskCategory::kBackwardWeight
                                        : TaskCategory::kBackward;
      for (size_t i = 0; i < ranks.size(); ++i) {
        if (g.lanes() > 1) {
          add_split_action(g, costs, blocks, noise, a, static_cast<int>(i), category,
                           after_idle[a.stage]);
          continue;
        }
        const int id = g.graph.add_compute(ranks[i], category, noise.apply(seconds), a.micro_batch);
        g.graph.set_after_idle(id, after_idle[a.stage]);
        g.task[{key, static_cast<int>(i)}] = g.first[{key, static_cast<int>(i)}] = id;
      }
    }
  }
}

// Pass 2: the activations a stage's replica sends down after each forward and the gradients it
// sends up after each backward (B or I), split over the receiving stage's replicas by the real
// hand-over mapping; each transfer depends on the compute that made it and feeds the one that
// needs it, and its send call follows that compute on the sender's stream (the executor sends
// an action's output before its next action). Stages of one rank hand over in memory.
//
// Point-to-point is a rendezvous, not an eager send: Gloo's TCP pair writes a message only once
// the receiver has posted its receive (the sender announces it and waits for the receiver's
// "ready"), and the runtime posts a receive where its list has it -- one compute action ahead
// of the action that needs it (runtime/pipeline/pipeline_schedule.h, with_communication). So a
// transfer also waits for the receiver to end the compute action before the receive: an
// activation sent early does not cross the link while the next stage still computes the
// backward before that. With
// ClusterConfig::p2p_ready_behind_sends the receiver's "ready" is a task of its own, a notice
// that may queue behind the receiver's own sends to the same peer (simulator/engine.cpp).
//
// A send channel carries its transfers one at a time in the order they were added, but Gloo
// holds a send whose receive is not posted aside and writes the next (its pair keeps pending
// sends per tag): a rank's sends go in the order they become ready, not the order it posted
// them. ZB-V shows the difference -- rank 0 posts stage 0's activations before stage 3's input
// gradient, whose receiver needs the gradient first. So each sender's sends are added in the
// order of when they can go in the schedule's own timing (free links, the stages' costs):
// the later of the send's making and its receive's posting, the list order among equals.
std::vector<std::pair<int, const runtime::PipelineAction*>> sends_in_ready_order(
    const PipelineGraph& g) {
  const runtime::ScheduleTimes own = runtime::time_schedule(g.table, g.costs);
  std::map<PassKey, double> ended;
  for (int p = 0; p < g.table.ranks; ++p) {
    size_t k = 0;
    for (const auto& a : g.table.actions[p]) {
      if (a.is_compute()) ended[{pass_of(a), a.stage, a.micro_batch}] = own.end[p][k++];
    }
  }
  struct Ready {
    double at;
    size_t order;
    int rank;
    const runtime::PipelineAction* send;
  };
  std::vector<Ready> ready;
  for (int p = 0; p < g.table.ranks; ++p) {
    for (const auto& a : g.table.actions[p]) {
      const bool down = a.kind == Kind::kSendActivations;
      if (!down && a.kind != Kind::kSendGradients) continue;
      const PassKey consumer{down ? 0 : 1, down ? a.stage + 1 : a.stage - 1, a.micro_batch};
      const auto before = g.posted_after.find(consumer);
      const double posted = before == g.posted_after.end() ? 0.0 : ended.at(before->second);
      ready.push_back({std::max(ended.at({down ? 0 : 1, a.stage, a.micro_batch}), posted),
                       ready.size(), p, &a});
    }
  }
  std::sort(ready.begin(), ready.end(), [](const Ready& x, const Ready& y) {
    return x.at != y.at ? x.at < y.at : x.order < y.order;
  });
  std::vector<std::pair<int, const runtime::PipelineAction*>> sends;
  for (const Ready& r : ready) sends.emplace_back(r.rank, r.send);
  return sends;
}

// The share of an activation a stage hands on after stage `upper`: under sequence parallelism,
// between two split blocks, the lane's token shard (1/tensor); else the whole of it.
double lane_share(const PipelineGraph& g, const SplitBlocks& blocks, int upper) {
  const int last = g.system.stages[upper].layers.back();
  const bool sharded =
      g.system.tensor_comm.sequence_parallel && blocks.split[last] && last != blocks.last;
  return sharded ? 1.0 / g.lanes() : 1.0;
}

struct Receive {
  int transfer, slot;
  PassKey consumer;
};

// One send action's transfers on lane `lane`: slice j of a stage's replicas hands over to
// slice j of the next stage's.
void add_lane_transfers(PipelineGraph& g, const runtime::PipelineAction& a, int lane,
                        double micro_batch_bytes, std::vector<Receive>& receives) {
  const bool down = a.kind == Kind::kSendActivations;
  const int from = a.stage, to = down ? a.stage + 1 : a.stage - 1, m = a.micro_batch;
  const PassKey made{down ? 0 : 1, from, m}, consumer{down ? 0 : 1, to, m};
  const int upper = down ? from : to;  // the boundary crossed is after this stage
  const std::vector<int> senders = g.lane_ranks(from, lane), receivers = g.lane_ranks(to, lane);
  // The runtime's row mapping (runtime/pipeline/pipeline_layout.h) on a micro-batch of
  // a x b rows, where every slice is whole: each transfer's share of the micro-batch.
  const int64_t rows = static_cast<int64_t>(senders.size() * receivers.size());
  const int upper_replicas = static_cast<int>(g.ranks_of(upper).size());
  const int lower_replicas = static_cast<int>(g.ranks_of(upper + 1).size());
  for (const auto& t : runtime::slice_transfers(rows, upper_replicas, lower_replicas)) {
    const int sender = down ? t.source_replica : t.destination_replica;
    const int receiver = down ? t.destination_replica : t.source_replica;
    const double bytes =
        micro_batch_bytes * static_cast<double>(t.rows.size()) / static_cast<double>(rows);
    const int made_task = g.task.at({made, sender * g.lanes() + lane});
    const int id = g.graph.add_transfer(senders[sender], receivers[receiver], bytes, m);
    g.sent[senders[sender]].push_back(id);
    g.graph.depend(id, made_task);
    g.action_end[made_task] = g.graph.add_send_call(id, made_task);
    receives.push_back({id, receiver * g.lanes() + lane, consumer});
    g.graph.depend(g.first.at({consumer, receiver * g.lanes() + lane}), id);
  }
}

void add_transfers(PipelineGraph& g, const LayerCosts& costs, const SplitBlocks& blocks,
                   bool ready_notices, const std::vector<double>& boundary) {
  const double micro_samples = g.system.global_batch / g.system.micro_batches;
  std::vector<Receive> receives;
  for (const auto& [p, send] : sends_in_ready_order(g)) {
    const bool down = send->kind == Kind::kSendActivations;
    const int upper = down ? send->stage : send->stage - 1;
    const double bytes =
        boundary[upper] * micro_samples / costs.profile_batch * lane_share(g, blocks, upper);
    for (int lane = 0; lane < g.lanes(); ++lane)
      add_lane_transfers(g, *send, lane, bytes, receives);
  }
  // A transfer starts once its receiver has posted the receive: after the compute action before
  // the receive in the receiver's list and that action's sends.
  for (const Receive& r : receives) {
    int posted = -1;
    const auto before = g.posted_after.find(r.consumer);
    if (before != g.posted_after.end()) {
      const int compute = g.task.at({before->second, r.slot});
      const auto end = g.action_end.find(compute);
      posted = end == g.action_end.end() ? compute : end->second;
    }
    if (ready_notices) {
      const int sender = g.graph.task(r.transfer).rank, receiver = g.graph.task(r.transfer).peer;
      const int notice = g.graph.add_ready_notice(receiver, sender, std::get<2>(r.consumer));
      if (posted >= 0) g.graph.depend(notice, posted);
      g.graph.depend(r.transfer, notice);
    } else if (posted >= 0) {
      g.graph.depend(r.transfer, posted);
    }
  }
}

// The replicas' sum of pipeline rank p's gradients once its last compute and every send of its
// ranks are done: an all-reduce of the stage's bytes, or a reduce-scatter of them padded to r
// chunks; each replica's bucket copy in first where `copy_s` >= 0.
int add_replica_sum(PipelineGraph& g, int group, const std::vector<int>& ranks, int lane, int p,
                    double parameters, double copy_s, bool scatters) {
  PassKey last{};
  for (const auto& a : g.table.actions[p]) {
    if (a.is_compute()) last = {pass_of(a), a.stage, a.micro_batch};
  }
  std::vector<int> ready(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    ready[i] = g.task.at({last, static_cast<int>(i) * g.lanes() + lane});
    if (copy_s >= 0)
      ready[i] = g.graph.add_compute(ranks[i], TaskCategory::kBucketCopy, copy_s, -1, p);
  }
  const double replicas = static_cast<double>(ranks.size());
  const int collective =
      scatters ? g.graph.add_collective(group, std::ceil(parameters / 4 / replicas) * 4 * replicas,
                                        p, TaskCategory::kReduceScatter)
               : g.graph.add_collective(group, parameters, p);
  for (int task : ready) g.graph.depend(collective, task);
  for (int rank : ranks) {
    for (int transfer : g.sent[rank]) g.graph.depend(collective, transfer);
  }
  return collective;
}

// Gradient all-reduce per pipeline rank after its last action and once every send of its ranks
// is complete (the runtime waits for its sends before the all-reduce:
// runtime/pipeline/pipeline_executor.cpp, finish_iteration), then the step: an optimizer step
// is a pass over the parameters, so a rank runs the whole model's step time scaled by its share
// of the parameter bytes. Replicas that shard the stage (zero_stage) reduce-scatter instead at
// stages 2 and 3, step their chunk (1/r of the share) and all-gather the chunks after. Stage 3
// gathers before the next iteration's first forward instead, which in a steady iteration is the
// same place on the rank's timeline. Under a tensor axis each lane (slice j of the replicas) sums
// its slice's gradients on its own.
void add_lane_reduction(PipelineGraph& g, const Cluster& cluster, const LayerCosts& costs,
                        ComputeNoise& noise, int p, int lane) {
  const double total_parameters = costs.total_parameter_bytes();
  const std::vector<int> stages_here = g.table.stages_of(p);
  const std::vector<int> ranks = g.lane_ranks(stages_here.front(), lane);
  double parameters = 0;
  for (int c : stages_here) {
    for (int layer : g.system.stages[c].layers) parameters += costs.parameter_bytes[layer];
  }
  const int group = g.graph.add_group(ranks);
  const int replicas = static_cast<int>(ranks.size());
  const bool shards = g.system.zero_stage > 0 && replicas > 1;
  // A replicated stage's reducer sums (no scaling): it copies the gradients in and back out
  // around the all-reduce, on the compute stream; a single replica has no reducer.
  const bool copies = cluster.models_bucket_copies() && replicas > 1;
  const double copy_s = cluster.bucket_copy_seconds(parameters);
  const int collective =
      add_replica_sum(g, group, ranks, lane, p, parameters, copies ? copy_s : -1.0,
                      shards && g.system.zero_stage >= 2);
  // The chunk a sharding replica steps and gathers: the stage's bytes padded to r chunks.
  const double chunk = std::ceil(parameters / 4 / replicas) * 4;
  const double share = total_parameters > 0 ? parameters / total_parameters : 1.0 / g.table.ranks;
  std::vector<int> steps;
  for (int rank : ranks) {
    if (copies) {
      g.graph.depend(g.graph.add_compute(rank, TaskCategory::kBucketCopy, copy_s, -1, p),
                     collective);
    }
    const double step_s = g.system.step_s * share / (shards ? replicas : 1);
    steps.push_back(g.graph.add_compute(rank, TaskCategory::kStep, noise.apply(step_s)));
    g.graph.depend(steps.back(), collective);
  }
  if (!shards) return;
  const int gather = g.graph.add_collective(group, chunk * replicas, p, TaskCategory::kAllGather);
  for (int step : steps) g.graph.depend(gather, step);
}

void add_reductions(PipelineGraph& g, const Cluster& cluster, const LayerCosts& costs,
                    ComputeNoise& noise) {
  for (int p = 0; p < g.table.ranks; ++p) {
    for (int lane = 0; lane < g.lanes(); ++lane)
      add_lane_reduction(g, cluster, costs, noise, p, lane);
  }
}

}  // namespace

std::vector<int> stage_positions(const PipelineSystem& system) {
  runtime::PipelineLayout layout;
  for (const PipelineStage& stage : system.stages) layout.stages.push_back({0, 0, stage.ranks});
  return layout.stage_positions();
}

runtime::ScheduleTable pipeline_schedule_of(const PipelineSystem& system) {
  return runtime::with_communication(runtime::positioned_schedule(
      system.schedule, stage_positions(system), system.micro_batches, system.schedule_csv));
}

SimulatedIteration simulate_pipeline(const Cluster& cluster, const LayerCosts& costs,
                                     const PipelineSystem& system, int world, ComputeNoise& noise) {
  validate_pipeline(costs, system, world);
  if (world > cluster.num_gpus()) throw std::invalid_argument("world size outside the cluster");
  const runtime::ScheduleTable table = pipeline_schedule_of(system);

  SimulatedIteration result;
  result.graph = TaskGraph(world, cluster.config().p2p_send_channel_per_peer);
  result.schedule = to_string(system.schedule);
  result.stage_of_rank.assign(static_cast<size_t>(world), -1);
  PipelineGraph g{system,
                  table,
                  result.graph,
                  stage_costs(system, costs),
                  whole_backward_costs(system, costs),
                  {},
                  {},
                  {},
                  {},
                  {},
                  {}};
  g.sent.assign(static_cast<size_t>(world), {});
  const SplitBlocks blocks(costs);
  add_compute_tasks(g, costs, blocks, noise, result.stage_of_rank);
  add_transfers(g, costs, blocks, cluster.config().p2p_ready_behind_sends,
                boundary_bytes(costs, system));
  add_reductions(g, cluster, costs, noise);
  result.times = run_tasks(cluster, result.graph);
  result.ranks = rank_phases(result.graph, result.times);
  return result;
}

}  // namespace harness::simulator
