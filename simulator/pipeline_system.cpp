#include "simulator/pipeline_system.h"

#include "runtime/pipeline/pipeline_layout.h"

#include <algorithm>
#include <array>
#include <set>
#include <stdexcept>
#include <unordered_map>

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

// Pairs (i, j, fraction): replica i of a stage of `a` replicas hands `fraction` of a
// micro-batch to replica j of a stage of `b` replicas -- the runtime's row mapping
// (runtime/pipeline/pipeline_layout.h) on a micro-batch of a x b rows, where every slice is whole.
struct Handover {
  int from, to;
  double fraction;
};
std::vector<Handover> handovers(int a, int b) {
  const int64_t rows = static_cast<int64_t>(a) * b;
  std::vector<Handover> out;
  for (const auto& t : runtime::slice_transfers(rows, a, b)) {
    out.push_back({t.source_replica, t.destination_replica,
                   static_cast<double>(t.rows.size()) / static_cast<double>(rows)});
  }
  return out;
}

}  // namespace

void validate_pipeline(const LayerCosts& costs, const PipelineSystem& system, int world) {
  if (system.stages.empty()) throw std::invalid_argument("a pipeline needs at least one stage");
  if (system.micro_batches < 1) throw std::invalid_argument("micro-batches must be >= 1");
  const std::vector<int> stage = stage_of_layers(costs, system);
  for (int layer = 0; layer < costs.size(); ++layer) {
    if (stage[layer] < 0) {
      throw std::invalid_argument("layer " + costs.ids[layer] + " (" + costs.names[layer] +
                                  ") is in no stage");
    }
    for (int next : costs.successors[layer]) {
      if (stage[next] < stage[layer]) {
        throw std::invalid_argument("edge " + costs.ids[layer] + " -> " + costs.ids[next] +
                                    " goes from stage " + std::to_string(stage[layer]) +
                                    " back to stage " + std::to_string(stage[next]));
      }
    }
  }
  std::set<int> seen;
  for (size_t s = 0; s < system.stages.size(); ++s) {
    if (system.stages[s].ranks.empty()) {
      throw std::invalid_argument("stage " + std::to_string(s) + " has no ranks");
    }
    for (int r : system.stages[s].ranks) {
      if (r < 0 || r >= world) {
        throw std::invalid_argument("stage " + std::to_string(s) + " names rank " +
                                    std::to_string(r) + " outside the world of " +
                                    std::to_string(world));
      }
      if (!seen.insert(r).second) {
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

// The activations a stage's replica sends down after each forward and the gradients it sends
// up after each backward, split over the next (previous) stage's replicas by the real
// hand-over mapping; each transfer depends on the compute that made it and feeds the one that
// needs it, and its send call follows that compute on the sender's stream (the executor sends
// an action's output before its next action). ids[s][replica][micro_batch]: the compute tasks
// of pass 1.
//
// Point-to-point is a rendezvous, not an eager send: Gloo's TCP pair writes a message only once
// the receiver has posted its receive (the sender announces it and waits for the receiver's
// "ready"), and the runtime posts a receive when its schedule reaches the action that needs it
// (runtime/pipeline/pipeline_executor.cpp). So a transfer also waits for the receiver to end
// the action before that one: an activation sent early does not cross the link while the next
// stage still computes its previous backward. With ClusterConfig::p2p_ready_behind_sends the
// receiver's "ready" is a task of its own, a notice that may queue behind the receiver's own
// sends to the same peer (simulator/engine.cpp). Returns the transfers each rank sends.
std::vector<std::vector<int>> add_stage_transfers(
    TaskGraph& graph, const LayerCosts& costs, const PipelineSystem& system, bool ready_notices,
    const std::vector<double>& boundary,
    const std::vector<std::vector<runtime::PipelineAction>>& orders,
    const std::vector<std::vector<std::vector<int>>>& forward_id,
    const std::vector<std::vector<std::vector<int>>>& backward_id) {
  const int p = static_cast<int>(system.stages.size());
  const double micro_samples = system.global_batch / system.micro_batches;
  std::vector<std::vector<int>> sent(static_cast<size_t>(graph.ranks()));
  // The compute task after which replica i of stage s posts the receive for its action
  // (forward or backward of micro-batch k): the action before it in its order; -1 for the first.
  // previous[s][forward ? 0 : 1][k]: the action before that one in stage s's order (null: none).
  std::vector<std::array<std::vector<const runtime::PipelineAction*>, 2>> previous(p);
  for (int s = 0; s < p; ++s) {
    for (auto& slots : previous[s]) slots.assign(system.micro_batches, nullptr);
    for (size_t j = 1; j < orders[s].size(); ++j) {
      const runtime::PipelineAction& op = orders[s][j];
      previous[s][op.kind == runtime::PipelineAction::Kind::kForward ? 0 : 1][op.micro_batch] =
          &orders[s][j - 1];
    }
  }
  // The last task of an action on its rank's stream: its compute, or the last send call after it
  // (the executor sends an action's outputs before it posts the next action's receive).
  std::unordered_map<int, int> action_end;
  const auto posted_after = [&](int s, int i, bool forward, int k) {
    const runtime::PipelineAction* before = previous[s][forward ? 0 : 1][k];
    if (before == nullptr) return -1;
    const int compute = (before->kind == runtime::PipelineAction::Kind::kForward
                             ? forward_id
                             : backward_id)[s][i][before->micro_batch];
    const auto end = action_end.find(compute);
    return end == action_end.end() ? compute : end->second;
  };
  // Transfer t may start once its receiver (replica i of stage s) has posted the receive; added
  // once every send call exists.
  struct Receive {
    int transfer, stage, replica;
    bool forward;
    int micro_batch;
  };
  std::vector<Receive> receives;
  const auto after_receive_posted = [&](int t, int s, int i, bool forward, int k) {
    const int posted = posted_after(s, i, forward, k);
    if (ready_notices) {
      const int sender = graph.task(t).rank, receiver = graph.task(t).peer;
      const int notice = graph.add_ready_notice(receiver, sender, k);
      if (posted >= 0) graph.depend(notice, posted);
      graph.depend(t, notice);
    } else if (posted >= 0) {
      graph.depend(t, posted);
    }
  };
  for (int s = 0; s < p; ++s) {
    const int replicas = static_cast<int>(system.stages[s].ranks.size());
    std::vector<Handover> down, up;  // to stage s+1 (activations), to s-1 (gradients)
    if (s + 1 < p) down = handovers(replicas, static_cast<int>(system.stages[s + 1].ranks.size()));
    if (s > 0) up = handovers(static_cast<int>(system.stages[s - 1].ranks.size()), replicas);
    for (int i = 0; i < replicas; ++i) {
      const int rank = system.stages[s].ranks[i];
      for (const runtime::PipelineAction& op : orders[s]) {
        const int k = op.micro_batch;
        const bool forward = op.kind == runtime::PipelineAction::Kind::kForward;
        if (forward && s + 1 < p) {
          for (const Handover& h : down) {
            if (h.from != i) continue;
            const double bytes = boundary[s] * micro_samples / costs.profile_batch * h.fraction;
            const int t = graph.add_transfer(rank, system.stages[s + 1].ranks[h.to], bytes, k);
            sent[rank].push_back(t);
            graph.depend(t, forward_id[s][i][k]);
            action_end[forward_id[s][i][k]] = graph.add_send_call(t, forward_id[s][i][k]);
            receives.push_back({t, s + 1, h.to, true, k});
            graph.depend(forward_id[s + 1][h.to][k], t);
          }
        } else if (!forward && s > 0) {
          for (const Handover& h : up) {
            if (h.to != i) continue;
            const double bytes = boundary[s - 1] * micro_samples / costs.profile_batch * h.fraction;
            const int t = graph.add_transfer(rank, system.stages[s - 1].ranks[h.from], bytes, k);
            sent[rank].push_back(t);
            graph.depend(t, backward_id[s][i][k]);
            action_end[backward_id[s][i][k]] = graph.add_send_call(t, backward_id[s][i][k]);
            receives.push_back({t, s - 1, h.from, false, k});
            graph.depend(backward_id[s - 1][h.from][k], t);
          }
        }
      }
    }
  }
  for (const Receive& r : receives)
    after_receive_posted(r.transfer, r.stage, r.replica, r.forward, r.micro_batch);
  return sent;
}

}  // namespace

SimulatedIteration simulate_pipeline(const Cluster& cluster, const LayerCosts& costs,
                                     const PipelineSystem& system, int world, ComputeNoise& noise) {
  validate_pipeline(costs, system, world);
  if (world > cluster.num_gpus()) throw std::invalid_argument("world size outside the cluster");
  const int p = static_cast<int>(system.stages.size());
  const int m = system.micro_batches;
  const double micro_samples = system.global_batch / m;
  const std::vector<double> boundary = boundary_bytes(costs, system);

  SimulatedIteration result;
  result.graph = TaskGraph(world, cluster.config().p2p_send_channel_per_peer);
  result.schedule = to_string(system.schedule);
  result.stage_of_rank.assign(static_cast<size_t>(world), -1);
  TaskGraph& graph = result.graph;

  // Pass 1: compute tasks, per rank in schedule order. ids[s][i][k]: forward, backward.
  std::vector<std::vector<std::vector<int>>> forward_id(p), backward_id(p);
  std::vector<std::vector<runtime::PipelineAction>> orders(p);
  for (int s = 0; s < p; ++s) {
    const PipelineStage& stage = system.stages[s];
    const int replicas = static_cast<int>(stage.ranks.size());
    double f = 0, b = 0;
    for (int layer : stage.layers) {
      f += costs.forward_s[layer];
      b += costs.backward_s[layer];
    }
    const double scale = micro_samples / replicas / costs.profile_batch;
    const int after_idle = graph.add_after_idle_curve(costs.after_idle_of(stage.layers));
    orders[s] = runtime::make_stage_schedule(system.schedule, p, s, m);
    forward_id[s].assign(replicas, std::vector<int>(m));
    backward_id[s].assign(replicas, std::vector<int>(m));
    for (int i = 0; i < replicas; ++i) {
      const int rank = stage.ranks[i];
      result.stage_of_rank[rank] = s;
      for (const runtime::PipelineAction& op : orders[s]) {
        const bool forward = op.kind == runtime::PipelineAction::Kind::kForward;
        const int id =
            graph.add_compute(rank, forward ? TaskCategory::kForward : TaskCategory::kBackward,
                              noise.apply((forward ? f : b) * scale), op.micro_batch);
        graph.set_after_idle(id, after_idle);
        (forward ? forward_id : backward_id)[s][i][op.micro_batch] = id;
      }
    }
  }
  // Pass 2: transfers, on each sender's channel in its schedule order.
  const std::vector<std::vector<int>> sent =
      add_stage_transfers(graph, costs, system, cluster.config().p2p_ready_behind_sends, boundary,
                          orders, forward_id, backward_id);
  // Gradient all-reduce per stage after its last backward and once every send of its ranks is
  // complete (the runtime waits for its sends before the all-reduce:
  // runtime/pipeline/pipeline_executor.cpp, finish_iteration), then the step: an optimizer step
  // is a pass over the parameters, so a stage runs the whole model's step time scaled by its
  // share of the parameter bytes.
  const double total_parameters = costs.total_parameter_bytes();
  for (int s = 0; s < p; ++s) {
    const PipelineStage& stage = system.stages[s];
    double parameters = 0;
    for (int layer : stage.layers) parameters += costs.parameter_bytes[layer];
    const int group = graph.add_group(stage.ranks);
    // A replicated stage's reducer sums (no scaling): it copies the gradients in and back out
    // around the all-reduce, on the compute stream; a single replica has no reducer.
    const bool copies = cluster.models_bucket_copies() && stage.ranks.size() > 1;
    const double copy_s = cluster.bucket_copy_seconds(parameters);
    std::vector<int> ready(stage.ranks.size());
    for (size_t i = 0; i < stage.ranks.size(); ++i) {
      const runtime::PipelineAction& final_op = orders[s].back();
      ready[i] = final_op.kind == runtime::PipelineAction::Kind::kForward
                     ? forward_id[s][i][final_op.micro_batch]
                     : backward_id[s][i][final_op.micro_batch];
      if (copies) {
        ready[i] = graph.add_compute(stage.ranks[i], TaskCategory::kBucketCopy, copy_s, -1, s);
      }
    }
    const int collective = graph.add_collective(group, parameters, s);
    for (int task : ready) graph.depend(collective, task);
    for (int rank : stage.ranks) {
      for (int transfer : sent[rank]) graph.depend(collective, transfer);
    }
    for (int rank : stage.ranks) {
      if (copies) {
        graph.depend(graph.add_compute(rank, TaskCategory::kBucketCopy, copy_s, -1, s), collective);
      }
      const double share = total_parameters > 0 ? parameters / total_parameters : 1.0 / p;
      const int step =
          graph.add_compute(rank, TaskCategory::kStep, noise.apply(system.step_s * share));
      graph.depend(step, collective);
    }
  }
  result.times = run_tasks(cluster, graph);
  result.ranks = rank_phases(graph, result.times);
  return result;
}

}  // namespace harness::simulator
