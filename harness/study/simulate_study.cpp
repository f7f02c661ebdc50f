#include "harness/study/simulate_study.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "common/atomic_file.h"
#include "common/environment_info.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/cli/plot_command.h"
#include "harness/profile/comm_profile.h"
#include "harness/results/run_manifest.h"
#include "harness/spec/pipeline_plan_source.h"
#include "harness/spec/simulate_spec.h"
#include "harness/spec/spec.h"
#include "harness/spec/system_keys.h"
#include "harness/spec/yaml_reader.h"
#include "harness/study/experiment_runner.h"
#include "planner/cluster/topology.h"
#include "planner/model/model_profile.h"
#include "planner/search/planner.h"
#include "runtime/parallel/tensor_traffic.h"
#include "runtime/pipeline/layout_schedule.h"
#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/protocol/comm_ops.h"
#include "simulator/chrome_trace.h"
#include "simulator/data_parallel_system.h"
#include "simulator/expert_system.h"
#include "simulator/layer_costs.h"
#include "simulator/pipeline_system.h"
#include "simulator/rank_memory.h"
#include "simulator/sharded_system.h"
#include "simulator/tensor_system.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
namespace sim = simulator;
using nlohmann::json;

// The send calls a run was simulated with: [[bytes, us], ...].
json send_call_json(const std::vector<std::pair<double, double>>& table) {
  json calls = json::array();
  for (const auto& [bytes, seconds] : table) calls.push_back({bytes, seconds * 1e6});
  return calls;
}

// ---- inputs of one run ----------------------------------------------------------------------

// An all-gather's, reduce-scatter's or all-to-all's fit, where measured (latency < 0: none), and
// its measured sizes: {buffer bytes, bus bandwidth}, ascending (comm.json's rows).
struct OpFit {
  double latency_s = -1, bus_bandwidth = 0;
  std::vector<std::pair<double, double>> rates;
};

// The ops a collective channel prices from their own measurement (sim::MeasuredCollective).
constexpr const char* kOwnMeasuredOps[] = {"allgather", "reducescatter", "alltoall"};

struct ProfiledComm {
  bool has_allreduce = false, has_sendrecv = false;
  double allreduce_latency_s = 0, allreduce_bus_bandwidth = 0;
  double sendrecv_latency_s = 0, sendrecv_bandwidth = 0;
  double copy_latency_s = 0, copy_bandwidth = 0;  // 0: comm.json has no `copy` fit
  double allreduce_cpu_cores = 0;                 // 0: not measured (older comm.json)
  // Sharded systems' all-gathers and reduce-scatters, expert parallelism's all-to-alls.
  OpFit allgather, reducescatter, alltoall;
  // A send call between ranks of one machine, its receive posted: {bytes, seconds} ascending,
  // from a loopback profile's `handover` rows; empty where none.
  std::vector<std::pair<double, double>> intra_send_calls;
  long long world = 0;

  OpFit* measured(const std::string& op) {
    return op == "allgather"       ? &allgather
           : op == "reducescatter" ? &reducescatter
           : op == "alltoall"      ? &alltoall
                                   : nullptr;
  }
};

// A loopback comm.json's `handover` rows, the send call to a computing receiver (an emulated
// cluster's profile crosses its link: not one machine's), by message size.
std::vector<std::pair<double, double>> intra_send_calls(const json& doc) {
  std::vector<std::pair<double, double>> calls;
  if (doc.contains("emulated_cluster") && !doc.at("emulated_cluster").is_null()) return calls;
  for (const auto& row : doc.value("rows", json::array())) {
    if (!row.is_object() || row.value("op", "") != runtime::kHandOverOp) continue;
    const double bytes = row.value("bytes", 0.0), ms = row.value("p50_ms", -1.0);
    if (bytes > 0 && ms >= 0) calls.emplace_back(bytes, ms * 1e-3);
  }
  std::sort(calls.begin(), calls.end());
  return calls;
}

// comm.json's rows of `op`: each measured size's bus bandwidth, by buffer size, at its mean
// time where the row has one (as priced_fits prices the fits), else at its p50.
std::vector<std::pair<double, double>> measured_rates(const json& doc, const std::string& op) {
  std::vector<std::pair<double, double>> rates;
  for (const auto& row : doc.value("rows", json::array())) {
    if (!row.is_object() || row.value("op", "") != op) continue;
    const double p50 = row.value("p50_ms", 0.0), mean = row.value("mean_ms", 0.0);
    const double bytes = row.value("bytes", 0.0),
                 rate = row.value("busbw_gbps", 0.0) * 1e9 * (mean > 0 && p50 > 0 ? p50 / mean : 1);
    if (bytes > 0 && rate > 0) rates.emplace_back(bytes, rate);
  }
  std::sort(rates.begin(), rates.end());
  return rates;
}

ProfiledComm read_comm_profile(const std::string& path) {
  ProfiledComm fit;
  json doc;
  try {
    doc = parse_json(read_file(path));
  } catch (const std::exception& e) {
    throw InputError(path + ": not a comm.json of `harness profile comm`: " + e.what());
  }
  fit.world = doc.value("world_size", 0LL);
  for (const CommFit& row : priced_fits(doc)) {
    const double latency_s = std::max(0.0, row.latency_us) * 1e-6;
    if (row.op == "allreduce") {
      fit.has_allreduce = true;
      fit.allreduce_latency_s = latency_s;
      fit.allreduce_bus_bandwidth = row.bus_bandwidth;
      fit.allreduce_cpu_cores = std::max(0.0, row.cpu_cores);
    } else if (row.op == "sendrecv") {
      fit.has_sendrecv = true;
      fit.sendrecv_latency_s = latency_s;
      fit.sendrecv_bandwidth = row.bus_bandwidth;
    } else if (OpFit* own = fit.measured(row.op)) {
      own->latency_s = latency_s;
      own->bus_bandwidth = std::max(0.0, row.bus_bandwidth);
    } else if (row.op == "copy") {
      fit.copy_latency_s = latency_s;
      fit.copy_bandwidth = std::max(0.0, row.bus_bandwidth);
    }
  }
  if (!fit.has_allreduce || fit.world < 2 || !(fit.allreduce_bus_bandwidth > 0)) {
    throw InputError(path + ": no all-reduce fit over 2 or more ranks in 'fits'");
  }
  for (const char* op : kOwnMeasuredOps) fit.measured(op)->rates = measured_rates(doc, op);
  fit.intra_send_calls = intra_send_calls(doc);
  return fit;
}

// The profile's layer costs with what its profile.json adds: compute after a wait, the split
// backward, what the layers keep for backward.
sim::LayerCosts load_costs(const ModelSettings& m) {
  sim::LayerCosts costs = sim::load_layer_costs(m.profile, static_cast<double>(m.pbs));
  try {
    for (const AfterIdleSettings& range : m.after_idle) {
      sim::add_after_idle(costs, range.first_layer, range.last_layer,
                          sim::after_idle_curve(range.gap_ms, range.forward_ms, range.backward_ms));
    }
    if (!m.backward_input_ms.empty()) {
      sim::add_backward_split(costs, m.backward_input_ms, m.backward_weight_ms);
    }
    if (!m.stored_bytes.empty()) {
      sim::add_held_bytes(costs,
                          {m.stored_bytes, m.weight_pending_bytes, m.backward_working_bytes});
    }
    if (!m.mixtures.empty()) sim::add_mixtures(costs, m.mixtures);
  } catch (const std::invalid_argument& e) {
    throw InputError((fs::path(m.profile).parent_path() / "profile.json").string() + ": " +
                     e.what());
  }
  return costs;
}

// Caches the files a study reads many times.
class Inputs {
 public:
  const sim::LayerCosts& costs(const ModelSettings& m) {
    const std::string key = m.profile + "#" + std::to_string(m.pbs) +
                            (m.after_idle.empty() ? "" : "#after_idle") +
                            (m.backward_input_ms.empty() ? "" : "#split");
    auto& slot = costs_[key];
    if (!slot) slot = std::make_unique<sim::LayerCosts>(load_costs(m));
    return *slot;
  }
  const planner::ModelProfile& profile(const std::string& path) {
    auto& slot = profiles_[path];
    if (!slot) slot = std::make_unique<planner::ModelProfile>(planner::import_profile(path));
    return *slot;
  }
  const planner::Topology& topology(const std::string& path) {
    const std::string resolved = path.empty() ? planner::default_topology_path() : path;
    auto it = topologies_.find(resolved);
    if (it == topologies_.end()) {
      it = topologies_.emplace(resolved, planner::load_topology(resolved)).first;
    }
    return it->second;
  }
  const ProfiledComm& comm(const std::string& path) {
    auto it = comm_.find(path);
    if (it == comm_.end()) it = comm_.emplace(path, read_comm_profile(path)).first;
    return it->second;
  }

 private:
  std::map<std::string, std::unique_ptr<sim::LayerCosts>> costs_;
  std::map<std::string, std::unique_ptr<planner::ModelProfile>> profiles_;
  std::map<std::string, planner::Topology> topologies_;
  std::map<std::string, ProfiledComm> comm_;
};

struct ResolvedCluster {
  sim::ClusterConfig config;
  planner::Topology topology;  // with the overrides, for `plan: auto`
};

// An all-gather, reduce-scatter or all-to-all = L + S x (n-1)/n / busbw: n-1 steps of L / (n-1);
// where the profile timed it size by size, at the rate its size ran at instead.
void apply_op_fit(const OpFit& op, long long world, sim::MeasuredCollective& out) {
  if (op.latency_s >= 0) {
    out.step_latency_s = op.latency_s / (world - 1.0);
    out.rate_cap = op.bus_bandwidth;
  }
  if (!op.rates.empty()) {
    out.rate_by_bytes = op.rates;
    out.step_latency_s = 0;
  }
}

// What `harness profile comm` measured, as the cluster's collectives and links.
void apply_comm_profile(const ProfiledComm& fit, sim::ClusterConfig& config) {
  // The measured fit: all-reduce time = L + S x 2(n-1)/n / busbw, reproduced on a ring by a
  // per-step latency L / 2(n-1) and a per-edge rate cap of busbw; send/recv sets the links.
  config.collective_step_latency_s = fit.allreduce_latency_s / (2.0 * (fit.world - 1));
  config.collective_rate_cap = fit.allreduce_bus_bandwidth;
  apply_op_fit(fit.allgather, fit.world, config.gather);
  apply_op_fit(fit.reducescatter, fit.world, config.scatter);
  apply_op_fit(fit.alltoall, fit.world, config.alltoall);
  if (fit.has_sendrecv && fit.sendrecv_bandwidth > 0) {
    config.intra_bandwidth = fit.sendrecv_bandwidth;
    config.intra_latency_s = fit.sendrecv_latency_s;
  }
  config.intra_send_call = fit.intra_send_calls;
  // The gradient reducer's passes over its buckets, as the ranks' `copy` measured them.
  config.bucket_copy_bandwidth = fit.copy_bandwidth;
  config.bucket_copy_latency_s = fit.copy_latency_s;
  // What a rank's communication thread keeps busy of a core, as the all-reduce measured it.
  if (fit.allreduce_cpu_cores > 0) {
    config.comm_cores_per_rank = std::min(1.0, fit.allreduce_cpu_cores);
  }
}

// A spec's (or the link probe's) all-gather and reduce-scatter fits, L + S (n-1)/n / busbw: n-1
// ring steps of L/(n-1); they win over the profile's sizes.
void apply_gather_scatter_fits(const ClusterSettings& c, long long world,
                               sim::ClusterConfig& config) {
  const double steps = std::max(1.0, static_cast<double>(world - 1));
  if (c.gather_latency_us) config.gather.step_latency_s = *c.gather_latency_us * 1e-6 / steps;
  if (c.gather_bandwidth) {
    config.gather.rate_cap = *c.gather_bandwidth;
    config.gather.rate_by_bytes.clear();
  }
  if (c.scatter_latency_us) config.scatter.step_latency_s = *c.scatter_latency_us * 1e-6 / steps;
  if (c.scatter_bandwidth) {
    config.scatter.rate_cap = *c.scatter_bandwidth;
    config.scatter.rate_by_bytes.clear();
  }
}

ResolvedCluster resolve_cluster(const PointSettings& p, Inputs& inputs) {
  ResolvedCluster out;
  out.topology = inputs.topology(p.cluster.topology);
  const ClusterSettings& c = p.cluster;
  sim::ClusterConfig& config = out.config;
  long long per_machine = c.gpus_per_machine;
  if (per_machine == 0) {
    per_machine = out.topology.gpus_per_machine.empty() ? p.run.world_size
                                                        : out.topology.gpus_per_machine.front();
  }
  config.gpus_per_machine = sim::ClusterConfig::machines_for(static_cast<int>(p.run.world_size),
                                                             static_cast<int>(per_machine));
  config.intra_bandwidth = out.topology.intra_machine_bandwidth;
  config.inter_bandwidth = out.topology.inter_machine_collective_bandwidth;
  config.inter_p2p_bandwidth = out.topology.inter_machine_p2p_bandwidth;
  config.intra_collective_bandwidth = out.topology.intra_machine_collective_bandwidth;
  if (!c.comm_profile.empty()) apply_comm_profile(inputs.comm(c.comm_profile), config);
  if (c.intra_bandwidth) config.intra_bandwidth = *c.intra_bandwidth;
  if (c.inter_bandwidth) config.inter_bandwidth = *c.inter_bandwidth;
  if (c.inter_p2p_bandwidth) config.inter_p2p_bandwidth = *c.inter_p2p_bandwidth;
  if (c.intra_latency_us) config.intra_latency_s = *c.intra_latency_us * 1e-6;
  if (c.inter_latency_us) config.inter_latency_s = *c.inter_latency_us * 1e-6;
  sim::parse_collective_algorithm(c.collective, config.algorithm);
  config.p2p_half_duplex = c.p2p_duplex == "half";
  config.p2p_ready_behind_sends = c.p2p_ready == "behind_sends";
  config.p2p_send_channel_per_peer = c.p2p_sends == "per_peer";
  config.inter_burst_bytes = c.inter_burst_bytes;
  if (c.inter_burst_latency_us) config.inter_burst_latency_s = *c.inter_burst_latency_us * 1e-6;
  if (c.inter_burst_bandwidth) config.inter_burst_bandwidth = *c.inter_burst_bandwidth;
  config.inter_past_bucket_latency_s = c.inter_past_bucket_latency_us * 1e-6;
  apply_gather_scatter_fits(c, p.run.world_size, config);
  for (const auto& [bytes, us] : c.inter_send_call_us)
    config.inter_send_call.emplace_back(bytes, us * 1e-6);
  if (c.intra_send_call_us) {
    config.intra_send_call.clear();
    for (const auto& [bytes, us] : *c.intra_send_call_us)
      config.intra_send_call.emplace_back(bytes, us * 1e-6);
  }
  config.cpu_cores_per_machine = c.cpu_cores;
  config.machines_per_host = static_cast<int>(c.machines_per_host);
  if (c.comm_cores_per_rank) config.comm_cores_per_rank = *c.comm_cores_per_rank;
  if (c.intra_comm_cores_per_rank) config.intra_comm_cores_per_rank = *c.intra_comm_cores_per_rank;
  if (c.bucket_copy_bandwidth) config.bucket_copy_bandwidth = *c.bucket_copy_bandwidth;
  if (c.bucket_copy_latency_us) config.bucket_copy_latency_s = *c.bucket_copy_latency_us * 1e-6;
  config.cores_per_rank = p.model.threads;
  out.topology.intra_machine_bandwidth = config.intra_bandwidth;
  out.topology.inter_machine_collective_bandwidth = config.inter_bandwidth;
  out.topology.inter_machine_p2p_bandwidth = config.inter_p2p_bandwidth;
  return out;
}

// A run that cannot be simulated (no plan, a plan for another cluster): reported in its
// status.json; the study goes on.
struct RunFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PipelineChoice {
  sim::PipelineSystem system;
  std::string source;  // "inline", "planner (auto)", or the plan file
  std::string summary;
};

// A pipeline written inline in the spec: layer positions per stage, ranks or replicas.
void inline_stages(const SystemSettings& s, const sim::LayerCosts& costs, long long world,
                   PipelineChoice& choice) {
  choice.source = "inline";
  int next_rank = 0;
  for (const InlineStage& stage : s.stages) {
    sim::PipelineStage out;
    for (int position : stage.layer_positions) {
      if (position >= costs.size()) {
        throw InputError(s.where + ": stage layer " + std::to_string(position) + " but " +
                         costs.source + " has layers 0-" + std::to_string(costs.size() - 1));
      }
      out.layers.push_back(costs.order[position]);
    }
    out.ranks = stage.ranks;
    long long replicas = stage.replicas;
    if (out.ranks.empty() && s.stages_per_rank > 1) {  // placed: world / positions per stage
      const int positions = static_cast<int>(s.stages.size()) / s.stages_per_rank;
      if (positions * s.stages_per_rank != static_cast<int>(s.stages.size()) ||
          world % positions != 0) {
        throw InputError(s.where + ": " + std::to_string(s.stages.size()) +
                         " stages at stages_per_rank " + std::to_string(s.stages_per_rank) +
                         " do not place evenly on " + std::to_string(world) + " ranks");
      }
      const auto placement = runtime::placement_for(choice.system.schedule, positions,
                                                    static_cast<int>(s.stages.size()));
      const long long per_position = world / positions;
      const int c = static_cast<int>(choice.system.stages.size());
      for (long long i = 0; i < per_position; ++i) {
        out.ranks.push_back(static_cast<int>(placement[c] * per_position + i));
      }
      choice.system.stages.push_back(std::move(out));
      continue;
    }
    if (out.ranks.empty() && replicas == 0) {  // neither ranks nor replicas: world / stages
      const long long stages = static_cast<long long>(s.stages.size());
      if (world % stages != 0) {
        throw InputError(s.where +
                         ": stages without ranks or replicas split the world evenly, but " +
                         std::to_string(world) + " ranks do not divide into " +
                         std::to_string(stages) + " stages");
      }
      replicas = world / stages;
    }
    if (out.ranks.empty()) {
      for (long long i = 0; i < replicas; ++i) out.ranks.push_back(next_rank++);
    }
    choice.system.stages.push_back(std::move(out));
  }
}

// A pipeline the planner chooses for this cluster and global batch (`plan: auto`); returns
// the plan's micro-batch count.
int planned_stages(const PointSettings& p, const ResolvedCluster& cluster, Inputs& inputs,
                   long long gbs, PipelineChoice& choice) {
  int plan_micro_batches = 0;
  choice.source = "planner (auto)";
  planner::PlannerOptions options;
  options.topology = cluster.topology;
  options.setup.profile_batch_size = static_cast<int>(p.model.pbs);
  std::vector<int> separators;
  for (int g : cluster.config.gpus_per_machine) {
    separators.push_back((separators.empty() ? 0 : separators.back()) + g);
  }
  options.devices = planner::Devices(separators);
  const planner::ModelProfile& profile = inputs.profile(p.model.profile);
  const planner::SweepResult sweep = planner::plan_sweep(profile, options, {static_cast<int>(gbs)});
  const planner::BatchPlan& batch = sweep.batches.front();
  if (!batch.plan) {
    throw RunFailure("the planner found no pipeline plan for global batch " + std::to_string(gbs) +
                     " on " + options.devices.describe());
  }
  for (const planner::PlannedStage& stage : batch.plan->stages) {
    choice.system.stages.push_back(
        {profile.layers_of_stage(stage.first_state, stage.last_state), stage.gpus.ids});
  }
  plan_micro_batches = batch.timing.micro_batches;
  choice.summary = planner::describe_stages(*batch.plan);
  return plan_micro_batches;
}

// A pipeline read from a planner plan.json at this global batch; returns its micro-batch
// count.
int plan_file_stages(const SystemSettings& s, const std::string& plan, const sim::LayerCosts& costs,
                     long long gbs, PipelineChoice& choice) {
  int plan_micro_batches = 0;
  choice.source = plan;
  json doc;
  try {
    doc = parse_json(read_file(plan));
  } catch (const std::exception& e) {
    throw InputError(s.where + ": cannot read plan '" + plan + "': " + e.what());
  }
  const json* chosen = nullptr;
  std::string sizes;
  // By reference into `doc`: `chosen` must outlive the loop (json::value() returns a copy,
  // which left it pointing into a destroyed temporary).
  const json no_results = json::array();
  const json& results = doc.contains("results") ? doc.at("results") : no_results;
  for (const auto& result : results) {
    const long long size = result.value("global_batch_size", 0LL);
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
    if (size == gbs) chosen = &result;
  }
  if (!chosen) {
    throw RunFailure(plan + " has no result for global batch " + std::to_string(gbs) +
                     " (has: " + sizes + ")");
  }
  if (!chosen->contains("plan") || (*chosen)["plan"].is_null()) {
    throw RunFailure(plan + ": no pipeline plan at global batch " + std::to_string(gbs));
  }
  const json& planned = (*chosen)["plan"];
  for (const auto& stage : planned.at("stages")) {
    sim::PipelineStage out;
    for (const auto& id : stage.at("layer_ids")) {
      const int index = costs.index_of(id.get<std::string>());
      if (index < 0) {
        throw InputError(plan + ": layer '" + id.get<std::string>() + "' is not in " +
                         costs.source);
      }
      out.layers.push_back(index);
    }
    for (const auto& gpu : stage.at("gpus")) out.ranks.push_back(gpu.get<int>());
    choice.system.stages.push_back(std::move(out));
  }
  plan_micro_batches = planned.value("micro_batch_count", 0);
  choice.summary = planned.value("summary", "");
  return plan_micro_batches;
}

// Which split blocks a recomputing profile recomputed in full: the first of each this many (0:
// none; selective recomputation repeats no collective).
int full_recompute_every(const PointSettings& p) {
  return p.model.activation_checkpointing == "full" ? static_cast<int>(p.model.recompute_every) : 0;
}

// How an axis's split blocks talk. Under sequence parallelism a block's partial gradients are
// width-sized fp32 vectors; the width is a block's output over its tokens (fp32 activations at
// the profile's batch).
sim::SplitBlockComm split_block_comm(const runtime::TensorAxis& axis, const PointSettings& p,
                                     const sim::LayerCosts& costs) {
  sim::SplitBlockComm comm;
  comm.sequence_parallel = axis.sequence_parallel;
  if (!comm.sequence_parallel) return comm;
  comm.recompute_gather = axis.recompute_gather;
  const std::vector<bool> split = sim::split_layers(costs);
  const auto block = std::find(split.begin(), split.end(), true) - split.begin();
  comm.partial_vectors = static_cast<int>(runtime::partial_vectors_of(p.model.zoo_model));
  comm.partial_bytes = costs.activation_bytes[block] / (costs.profile_batch * p.model.tokens);
  return comm;
}

// A recomputing profile's backward holds the block's forward again; a zero-bubble schedule's I and
// W would each need a share of it, which no profile measures (nor do the runs recompute there).
// Gathering again in backward likewise, as a train spec refuses it.
void refuse_split_recomputation(const SystemSettings& s, const PointSettings& p,
                                runtime::PipelineSchedule schedule) {
  const bool splits = runtime::splits_every_backward(schedule);
  if (splits && s.tensor.recompute_gather) {
    throw InputError(s.where + ": pipeline system '" + s.name +
                     "': recompute_gather: " + runtime::to_string(schedule) +
                     " splits the backward into I and W, inside which the split blocks would "
                     "gather again (use gpipe, dapple or interleaved_1f1b)");
  }
  if (p.model.activation_checkpointing == "none" || !splits) return;
  throw InputError(s.where + ": pipeline system '" + s.name + "': the profile recomputes " +
                   p.model.activation_checkpointing +
                   " (profile.json's activation_checkpointing), " + "which " +
                   runtime::to_string(schedule) +
                   " would split into input and weight passes (use gpipe, dapple or "
                   "interleaved_1f1b)");
}

// A tensor axis inside the stages, and the blocks it recomputes in full.
void split_stage_layers(const SystemSettings& s, const PointSettings& p,
                        const sim::LayerCosts& costs, sim::PipelineSystem& system) {
  system.tensor = s.tensor.degree;
  if (s.tensor.split()) {
    if (s.stages.empty() && s.balanced_stage_count == 0) {
      throw InputError(s.where + ": pipeline system '" + s.name +
                       "': a tensor axis inside the stages needs inline 'stages' (their ranks "
                       "are tensor groups), not a plan");
    }
    system.tensor_comm = split_block_comm(s.tensor, p, costs);
  }
  system.recompute_every = full_recompute_every(p);
}

// `stages: N` as inline stages: cut where the profile's forward times balance (as a train spec's
// `stages: N` balances its model's), each stage an equal share of the world.
SystemSettings with_balanced_stages(const SystemSettings& s, const sim::LayerCosts& costs) {
  std::vector<double> forward;
  for (const int layer : costs.order) forward.push_back(costs.forward_s[layer]);
  if (s.balanced_stage_count > costs.size()) {
    throw InputError(s.where + ": pipeline system '" + s.name +
                     "': " + std::to_string(s.balanced_stage_count) + " stages but " +
                     costs.source + " has " + std::to_string(costs.size()) + " layers");
  }
  SystemSettings placed = s;
  for (const PipelineStageSpec& cut : balanced_stages(s.balanced_stage_count, forward, 1)) {
    InlineStage stage;
    for (int position = cut.first_layer; position <= cut.last_layer; ++position) {
      stage.layer_positions.push_back(position);
    }
    placed.stages.push_back(std::move(stage));
  }
  return placed;
}

PipelineChoice choose_pipeline(const SystemSettings& s, const PointSettings& p,
                               const ResolvedCluster& cluster, Inputs& inputs) {
  const sim::LayerCosts& costs = inputs.costs(p.model);
  const long long world = p.run.world_size;
  const long long gbs = p.model.batch_size * world;
  PipelineChoice choice;
  choice.system.global_batch = static_cast<double>(gbs);
  choice.system.step_s = p.model.step_ms / 1000.0;
  choice.system.zero_stage = s.data.zero_stage;
  split_stage_layers(s, p, costs, choice.system);
  choice.system.schedule =
      runtime::parse_pipeline_schedule(s.schedule.value_or(p.pipeline.schedule));
  refuse_split_recomputation(s, p, choice.system.schedule);
  int plan_micro_batches = 0;
  const std::string plan = s.plan.value_or(s.stages.empty() ? p.pipeline.plan : "");
  if (s.balanced_stage_count > 0) {
    inline_stages(with_balanced_stages(s, costs), costs, world / s.tensor.degree, choice);
  } else if (!s.stages.empty()) {
    inline_stages(s, costs, world / s.tensor.degree, choice);
  } else if (plan == "auto") {
    plan_micro_batches = planned_stages(p, cluster, inputs, gbs, choice);
  } else if (!plan.empty()) {
    plan_micro_batches = plan_file_stages(s, plan, costs, gbs, choice);
  } else {
    throw InputError(s.where + ": pipeline system '" + s.name +
                     "' needs 'stages', 'plan' or simulate.pipeline.plan");
  }
  long long m = s.micro_batches.value_or(p.pipeline.micro_batches);
  if (m == 0) m = plan_micro_batches;
  if (m <= 0) {
    throw InputError(s.where + ": pipeline system '" + s.name +
                     "' needs micro_batches (simulate.pipeline.micro_batches)");
  }
  choice.system.micro_batches = static_cast<int>(m);
  try {
    sim::validate_pipeline(costs, choice.system, static_cast<int>(world));
  } catch (const std::invalid_argument& e) {
    const std::string what =
        "pipeline of system '" + s.name + "' (" + choice.source + "): " + e.what();
    // Stages the spec wrote are the spec's error; a plan's belong to its run.
    if (choice.source == "inline") throw InputError(s.where + ": " + what);
    throw RunFailure(what);
  }
  // The schedule on these stages: counts it does not take, or a schedule that cannot run.
  try {
    sim::pipeline_schedule_of(choice.system);
  } catch (const std::invalid_argument& e) {
    throw InputError(s.where + ": pipeline system '" + s.name + "' (" + choice.source +
                     "): schedule: " + e.what());
  }
  if (choice.summary.empty()) {
    for (const auto& stage : choice.system.stages) {
      choice.summary += (choice.summary.empty() ? "" : " ") + std::to_string(stage.layers.size()) +
                        "L x" + std::to_string(stage.ranks.size());
    }
  }
  return choice;
}

std::uint64_t iteration_seed(long long seed, long long repeat, long long iteration) {
  SeededRandom mix(static_cast<std::uint64_t>(seed) * 1000003ull +
                   static_cast<std::uint64_t>(repeat));
  for (long long i = 0; i <= iteration; ++i) mix.next();
  return mix.next();
}

struct RunOutcome {
  std::vector<sim::SimulatedIteration> iterations;  // one, or one per iteration with noise
  json system_config;
  std::uint64_t events = 0;
};

// The optimizer states per parameter a simulated rank's memory is counted with: AdamW's.
constexpr int kSimulatedOptimizerStates = 2;

// config.json's memory_per_rank: what the fullest rank holds, float32 states with AdamW's
// moments, and the activations where the profile counts them.
json memory_json(const sim::RankMemory& m) {
  json doc = {{"parameter_bytes", m.parameter_bytes},
              {"gradient_bytes", m.gradient_bytes},
              {"optimizer_state_bytes", m.optimizer_state_bytes},
              {"optimizer", "adamw"}};
  if (m.activation_bytes) doc["activation_bytes"] = *m.activation_bytes;
  return doc;
}

// A sharded system as the simulator prices it, and what its config.json records: the stage,
// unit and prefetch, its units, and what a rank holds by the stage's formula (fp32, with
// AdamW's two moments: the profile names no optimizer; SGD's would be none or one).
sim::ShardedSystem sharded_system(const SystemSettings& s, const PointSettings& p,
                                  const sim::LayerCosts& costs, int world, json& config) {
  const sim::ShardedSystem system{world,
                                  static_cast<double>(p.model.batch_size),
                                  baselines::zero_stage_from(s.data.zero_stage),
                                  s.data.prefetch,
                                  s.data.unit,
                                  s.bucket_mb.value_or(p.bucket_mb),
                                  p.first_bucket_mb,
                                  p.model.step_ms / 1000.0};
  config["stage"] = s.data.zero_stage;
  config["unit"] = runtime::to_string(s.data.unit);
  config["prefetch"] = s.data.prefetch;
  const baselines::ShardLayout layout = sim::shard_layout_of(costs, world, s.data.unit);
  config["units"] = layout.units.size();
  const baselines::ShardMemory memory =
      baselines::sharded_memory(layout, system.stage, 4, kSimulatedOptimizerStates);
  // Its padded shards by the stage's formula; its activations a replica's, every layer's batch.
  config["memory_per_rank"] = memory_json(
      {double(memory.parameter_bytes), double(memory.gradient_bytes),
       double(memory.optimizer_state_bytes),
       sim::replicated_memory(costs, static_cast<double>(p.model.batch_size)).activation_bytes});
  return system;
}

// A tensor-parallel system prices a slice: its profile must be of slices of its degree, and the
// degree divide the ranks; any other system prices whole layers.
void check_tensor_profile(const SystemSettings& s, const PointSettings& p, Inputs& inputs) {
  const int degree = s.tensor.degree;
  const std::string fix =
      "(measure one with `harness profile layers --tensor " + std::to_string(degree) + "`)";
  if (p.model.tensor != degree) {
    throw InputError(s.where + ": system '" + s.name + "' prices " +
                     (degree > 1 ? "slices of tensor " + std::to_string(degree) : "whole layers") +
                     ", and " + p.model.profile + " was measured at tensor " +
                     std::to_string(p.model.tensor) + " " + fix);
  }
  if (degree == 1) return;
  if (s.tensor.vocabulary_parallel != p.model.vocabulary_parallel) {
    throw InputError(s.where + ": system '" + s.name + "' " +
                     (s.tensor.vocabulary_parallel ? "splits" : "keeps whole") +
                     " the embedding and the head, and " + p.model.profile + " was measured " +
                     (p.model.vocabulary_parallel ? "with" : "without") +
                     " them split (measure one with `harness profile layers --tensor " +
                     std::to_string(degree) +
                     (s.tensor.vocabulary_parallel ? " --vocabulary-parallel`)" : "`)"));
  }
  if (p.model.sequence_parallel && *p.model.sequence_parallel != s.tensor.sequence_parallel) {
    throw InputError(s.where + ": system '" + s.name + "' " +
                     (s.tensor.sequence_parallel ? "runs" : "does not run") +
                     " sequence parallelism, and " + p.model.profile + " was estimated " +
                     (s.tensor.sequence_parallel ? "without" : "with") +
                     " it (`harness profile estimate` with" +
                     (s.tensor.sequence_parallel ? "" : "out") + " --sequence-parallel)");
  }
  if (p.run.world_size % degree != 0) {
    throw InputError(s.where + ": tensor " + std::to_string(degree) + " does not divide " +
                     "run.world_size " + std::to_string(p.run.world_size));
  }
  if (const std::string problem =
          tensor_replicas_problem(s.data.zero_stage, degree, p.run.world_size);
      s.kind == runtime::SystemKind::kTensorParallel && !problem.empty()) {
    throw InputError(s.where + ": " + problem);
  }
  const std::vector<bool> split = sim::split_layers(inputs.costs(p.model));
  if (std::find(split.begin(), split.end(), true) == split.end()) {
    throw InputError(s.where + ": " + p.model.profile +
                     " has no transformer block (DecoderLayer, EncoderLayer) to split");
  }
  if ((s.tensor.sequence_parallel || s.tensor.vocabulary_parallel) && p.model.tokens <= 0) {
    throw InputError(s.where +
                     ": sequence and vocabulary parallelism price their collectives from the "
                     "profile's model and tokens, which " +
                     p.model.profile + "'s profile.json does not give");
  }
}

// The tensor-parallel system at the point, and what its config.json records.
sim::TensorSystem tensor_system(const SystemSettings& s, const PointSettings& p,
                                const sim::LayerCosts& costs, json& config) {
  sim::TensorSystem system;
  system.world = static_cast<int>(p.run.world_size);
  system.tensor = s.tensor.degree;
  system.sequence_parallel = s.tensor.sequence_parallel;
  // A replica's slices share its batch: batch_size x degree samples, as the real ranks do.
  system.batch_per_group = static_cast<double>(p.model.batch_size * s.tensor.degree);
  system.bucket_mb = s.bucket_mb.value_or(p.bucket_mb);
  system.first_bucket_mb = p.first_bucket_mb;
  system.overlap = s.mode == "overlap";
  system.step_s = p.model.step_ms / 1000.0;
  const sim::SplitBlockComm comm = split_block_comm(s.tensor, p, costs);
  system.partial_vectors = comm.partial_vectors;
  system.partial_bytes = comm.partial_bytes;
  system.vocabulary_parallel = s.tensor.vocabulary_parallel;
  system.recompute_gather = s.tensor.recompute_gather;
  system.recompute_every = full_recompute_every(p);
  system.zero_stage = s.data.zero_stage;
  // The vocabulary-parallel loss's numbers: one float32 a token of the group's batch.
  system.token_bytes = system.batch_per_group * static_cast<double>(p.model.tokens) * 4;
  config["tensor"] = system.tensor;
  config["sequence_parallel"] = system.sequence_parallel;
  config["vocabulary_parallel"] = system.vocabulary_parallel;
  config["recompute_gather"] = system.recompute_gather;
  config["zero_stage"] = system.zero_stage;
  config["mode"] = s.mode;
  return system;
}

// The most experts a mixture of the profile has (0: a dense model).
long long most_experts(const sim::LayerCosts& costs) {
  long long experts = 0;
  for (const runtime::LayerMixtures& m : costs.mixtures) {
    experts = std::max<long long>(experts, m.experts);
  }
  return experts;
}

// An expert-parallel system shards the profile's mixtures: it needs some, each with experts
// that shard evenly over the ranks.
void check_expert_profile(const SystemSettings& s, const PointSettings& p, Inputs& inputs) {
  if (s.kind != runtime::SystemKind::kExpertParallel) return;
  const sim::LayerCosts& costs = inputs.costs(p.model);
  const long long world = p.run.world_size;
  if (most_experts(costs) == 0) {
    throw InputError(s.where + ": system '" + s.name + "' shards experts, and " + p.model.profile +
                     "'s profile.json names no mixture of experts (profile a bert_moe or vit_moe "
                     "with `harness profile layers --moe`)");
  }
  for (const runtime::LayerMixtures& m : costs.mixtures) {
    if (m.count > 0 && m.experts % world != 0) {
      throw InputError(s.where + ": " + std::to_string(m.experts) +
                       " experts do not shard evenly over run.world_size " + std::to_string(world));
    }
  }
}

// The expert-parallel system at the point, and what its config.json records.
sim::ExpertSystem expert_system(const SystemSettings& s, const PointSettings& p,
                                const sim::LayerCosts& costs, json& config) {
  const long long world = p.run.world_size;
  const sim::ExpertSystem system{static_cast<int>(world), static_cast<double>(p.model.batch_size),
                                 s.data.zero_stage,       s.bucket_mb.value_or(p.bucket_mb),
                                 p.first_bucket_mb,       s.mode == "overlap",
                                 p.model.step_ms / 1000.0};
  config["mode"] = s.mode;
  config["zero_stage"] = system.zero_stage;
  config["experts_per_rank"] = most_experts(costs) / world;
  config["memory_per_rank"] = memory_json(
      sim::expert_parallel_memory(costs, system.batch_per_rank, system.world, system.zero_stage));
  return system;
}

// What a simulated pipeline's config.json says of it.
void record_pipeline(const SystemSettings& s, const PipelineChoice& pipeline, json& config) {
  config["schedule"] = runtime::to_string(pipeline.system.schedule);
  config["micro_batches"] = pipeline.system.micro_batches;
  config["tensor"] = pipeline.system.tensor;
  config["sequence_parallel"] = pipeline.system.tensor_comm.sequence_parallel;
  if (s.data.sharded()) config["zero_stage"] = s.data.zero_stage;
  config["plan"] = pipeline.source;
  config["stages"] = pipeline.summary;
  json stages = json::array();
  for (const auto& stage : pipeline.system.stages) {
    stages.push_back({{"layers", stage.layers.size()}, {"ranks", stage.ranks}});
  }
  config["stage_ranks"] = stages;
}

// DDP at the point (with gradient accumulation), and what its config.json records.
sim::DataParallelSystem data_parallel_system(const SystemSettings& s, const PointSettings& p,
                                             const sim::LayerCosts& costs, int world,
                                             json& config) {
  sim::DataParallelSystem dp;
  dp.world = world;
  dp.batch_per_rank = static_cast<double>(p.model.batch_size);
  dp.accumulation = static_cast<int>(s.accumulation);
  dp.bucket_mb = s.bucket_mb.value_or(p.bucket_mb);
  dp.first_bucket_mb = p.first_bucket_mb;
  dp.overlap = s.mode == "overlap";
  dp.step_s = p.model.step_ms / 1000.0;
  config["mode"] = s.mode;
  if (s.bucket_mb) config["bucket_mb"] = *s.bucket_mb;
  config["accumulation"] = s.accumulation;
  config["buckets"] = sim::layer_buckets(costs, dp.first_bucket_mb, dp.bucket_mb).size();
  config["memory_per_rank"] =
      memory_json(sim::replicated_memory(costs, dp.batch_per_rank / dp.accumulation));
  return dp;
}

RunOutcome simulate_run(const SystemSettings& s, const PointSettings& p, long long repeat,
                        Inputs& inputs) {
  const sim::LayerCosts& costs = inputs.costs(p.model);
  const ResolvedCluster resolved = resolve_cluster(p, inputs);
  const sim::Cluster cluster(resolved.config);
  const int world = static_cast<int>(p.run.world_size);
  RunOutcome outcome;
  json& config = outcome.system_config;
  config = {{"name", s.name}, {"kind", runtime::to_string(s.kind)}};
  std::optional<PipelineChoice> pipeline;
  std::optional<sim::ShardedSystem> sharded;
  std::optional<sim::TensorSystem> tensor;
  std::optional<sim::ExpertSystem> experts;
  sim::DataParallelSystem dp;
  if (s.kind == runtime::SystemKind::kTensorParallel) {
    tensor = tensor_system(s, p, costs, config);
    config["memory_per_rank"] =
        memory_json(sim::sharded_over(sim::replicated_memory(costs, tensor->batch_per_group),
                                      tensor->world / tensor->tensor, tensor->zero_stage));
  } else if (s.kind == runtime::SystemKind::kSharded) {
    sharded = sharded_system(s, p, costs, world, config);
  } else if (s.kind == runtime::SystemKind::kExpertParallel) {
    experts = expert_system(s, p, costs, config);
  } else if (s.kind == runtime::SystemKind::kPipeline) {
    pipeline = choose_pipeline(s, p, resolved, inputs);
    record_pipeline(s, *pipeline, config);
    config["memory_per_rank"] =
        memory_json(sim::pipeline_memory(costs, pipeline->system, s.data.zero_stage));
  } else {
    dp = data_parallel_system(s, p, costs, world, config);
  }
  const bool noisy = p.run.noise_percent > 0;
  const long long runs = noisy ? p.run.iterations : 1;
  for (long long i = 0; i < runs; ++i) {
    sim::ComputeNoise noise(p.run.noise_percent / 100.0, iteration_seed(p.run.seed, repeat, i));
    try {
      outcome.iterations.push_back(
          pipeline  ? sim::simulate_pipeline(cluster, costs, pipeline->system, world, noise)
          : sharded ? sim::simulate_sharded(cluster, costs, *sharded, noise)
          : tensor  ? sim::simulate_tensor_parallel(cluster, costs, *tensor, noise)
          : experts ? sim::simulate_expert_parallel(cluster, costs, *experts, noise)
                    : sim::simulate_data_parallel(cluster, costs, dp, noise));
    } catch (const std::logic_error& e) {
      throw RunFailure(e.what());
    }
    outcome.events += outcome.iterations.back().times.events;
  }
  return outcome;
}

std::string format_ms(double ms) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6f", ms);
  return buffer;
}

void write_rank_samples(const fs::path& raw, const RunOutcome& outcome, long long iterations) {
  const int world = outcome.iterations.front().graph.ranks();
  for (int r = 0; r < world; ++r) {
    std::string csv = "iteration,forward_ms,backward_ms,step_ms,iteration_ms\n";
    for (long long i = 0; i < iterations; ++i) {
      const auto& it = outcome.iterations[outcome.iterations.size() == 1 ? 0 : i];
      const sim::RankPhases& phases = it.ranks[r];
      csv += std::to_string(i) + "," + format_ms(phases.forward_ms) + "," +
             format_ms(phases.backward_ms) + "," + format_ms(phases.step_ms) + "," +
             format_ms(phases.iteration_ms) + "\n";
    }
    write_file_atomic(raw / ("rank" + std::to_string(r) + ".csv"), csv);
  }
}

std::string describe_point_run(const SimPoint& point, const SystemSettings& system,
                               long long repeat) {
  const PointSettings& p = point.settings;
  char line[512];
  std::snprintf(line, sizeof line,
                "%-6s %-32s %-14s rep %lld  %s: %lld GPUs, batch %lld/GPU, %lld iteration(s)",
                point.id.c_str(), point.label.c_str(), system.name.c_str(), repeat,
                p.model.profile.c_str(), p.run.world_size, p.model.batch_size, p.run.iterations);
  return line;
}

// config.json's record of compute after a wait: the layer ranges whose after-idle timings
// priced it ("2-3"; empty: none).
json after_idle_layers(const ModelSettings& model) {
  json ranges = json::array();
  for (const AfterIdleSettings& range : model.after_idle) {
    ranges.push_back(std::to_string(range.first_layer) + "-" + std::to_string(range.last_layer));
  }
  return ranges;
}

// The config.json of a simulated run: the model, the system as simulated, the cluster as
// resolved, the run and the simulation's own cost.
json simulated_run_config(const PointSettings& p, const RunOutcome& outcome,
                          const ResolvedCluster& resolved, double seconds,
                          const std::vector<int>& traced) {
  const sim::Cluster cluster(resolved.config);
  return {{"simulated", true},
          {"model",
           {{"profile", p.model.profile},
            {"pbs", p.model.pbs},
            {"batch_size", p.model.batch_size},
            {"global_batch", p.model.batch_size * p.run.world_size},
            {"step_ms", p.model.step_ms},
            {"activation_checkpointing", p.model.activation_checkpointing},
            {"recompute_every", p.model.recompute_every},
            {"after_idle_layers", after_idle_layers(p.model)},
            {"backward_split", p.model.backward_input_ms.empty() ? "share" : "profiled"}}},
          {"system", outcome.system_config},
          {"cluster",
           {{"machines", cluster.describe()},
            {"intra_bandwidth", cluster.config().intra_bandwidth},
            {"inter_bandwidth", cluster.config().inter_bandwidth},
            {"inter_p2p_bandwidth", cluster.config().inter_p2p_bandwidth},
            {"intra_latency_us", cluster.config().intra_latency_s * 1e6},
            {"inter_latency_us", cluster.config().inter_latency_s * 1e6},
            {"collective", sim::to_string(cluster.config().algorithm)},
            {"collective_rate_cap", cluster.config().collective_rate_cap},
            {"bucket_copy_bandwidth", cluster.config().bucket_copy_bandwidth},
            {"bucket_copy_latency_us", cluster.config().bucket_copy_latency_s * 1e6},
            {"cpu_cores_per_machine", cluster.config().cpu_cores_per_machine},
            {"machines_per_host", cluster.config().machines_per_host},
            {"cores_per_rank", cluster.config().cores_per_rank},
            {"comm_cores_per_rank", cluster.config().comm_cores_per_rank},
            {"intra_comm_cores_per_rank", cluster.config().intra_comm_cores_per_rank},
            {"collective_step_latency_us", cluster.config().collective_step_latency_s * 1e6},
            {"p2p_duplex", cluster.config().p2p_half_duplex ? "half" : "full"},
            {"p2p_ready", cluster.config().p2p_ready_behind_sends ? "behind_sends" : "separate"},
            {"p2p_sends", cluster.config().p2p_send_channel_per_peer ? "per_peer" : "one"},
            {"inter_burst_bytes", cluster.config().inter_burst_bytes},
            {"inter_burst_latency_us",
             cluster.config().inter_burst_latency_s >= 0
                 ? nlohmann::json(cluster.config().inter_burst_latency_s * 1e6)
                 : nlohmann::json()},
            {"inter_burst_bandwidth", cluster.config().inter_burst_bandwidth},
            {"inter_past_bucket_latency_us", cluster.config().inter_past_bucket_latency_s * 1e6},
            {"inter_send_call_us", send_call_json(cluster.config().inter_send_call)},
            {"intra_send_call_us", send_call_json(cluster.config().intra_send_call)}}},
          {"run",
           {{"iterations", p.run.iterations},
            {"seed", p.run.seed},
            {"noise_percent", p.run.noise_percent},
            {"simulated_iterations", outcome.iterations.size()}}},
          {"events", outcome.events},
          {"simulation_seconds", seconds},
          {"trace_ranks", traced}};
}

// manifest.json and env.json of a simulation study's folder.
void write_study_files(const SimulateSpec& spec, const fs::path& directory) {
  Manifest manifest;
  manifest.experiment = spec.name;
  manifest.baseline = spec.baseline;
  for (const auto& system : spec.systems) {
    manifest.systems.push_back({system.name, runtime::to_string(system.kind), system.mode});
  }
  for (const auto& point : spec.points) {
    manifest.points.push_back({point.id, point.label, point.coordinates,
                               point.settings.run.world_size, point.settings.run.repeats,
                               point.settings.run.iterations, /*warmup=*/0, /*machines=*/1,
                               /*inter_machine_bits_per_s=*/std::nullopt});
  }
  write_file_atomic(directory / "manifest.json", json_text(manifest_to_json(manifest), 2) + "\n");
  json env = collect_environment({{"simulated", "true"}});
  env["simulated"] = true;
  write_file_atomic(directory / "env.json", json_text(env, 2) + "\n");
}

// Inputs are checked before anything is printed or a folder is made (--dry-run too): a bad
// profile or topology is a spec error.
void check_inputs(const SimulateSpec& spec, Inputs& inputs) {
  for (const auto& point : spec.points) {
    inputs.costs(point.settings.model);
    const ResolvedCluster cluster = resolve_cluster(point.settings, inputs);
    // Stages written inline must place at every point; plans are made (or read) per run.
    for (const auto& system : spec.systems) {
      if (const std::string problem =
              mesh_world_problem(system.mesh, point.settings.run.world_size);
          !problem.empty()) {
        throw InputError(system.where + ": " + problem);
      }
      if (system.kind == runtime::SystemKind::kPipeline &&
          (!system.stages.empty() || system.balanced_stage_count > 0)) {
        choose_pipeline(system, point.settings, cluster, inputs);
      }
      check_tensor_profile(system, point.settings, inputs);
      check_expert_profile(system, point.settings, inputs);
    }
  }
}

}  // namespace

int run_simulate_spec(const std::string& spec_path, YAML::Node root,
                      const std::vector<std::string>& overrides, bool dry_run, std::ostream& out) {
  const SimulateSpec spec = read_simulate_spec(spec_path, root, overrides);
  Inputs inputs;
  check_inputs(spec, inputs);
  if (dry_run) {
    out << "experiment " << spec.name << ": kind simulate, " << spec.points.size() << " point(s) x "
        << spec.systems.size() << " system(s); nothing is launched\n";
    for (const auto& point : spec.points) {
      for (const auto& system : spec.systems) {
        for (long long k = 0; k < point.settings.run.repeats; ++k) {
          out << "  " << describe_point_run(point, system, k) << "\n";
        }
      }
    }
    return 0;
  }

  const fs::path directory = start_results_folder(spec.output, spec.name, spec.resolved);
  out << "results: " << directory.string() << "\n";
  write_study_files(spec, directory);

  json failures = json::array();
  size_t runs = 0;
  for (const auto& point : spec.points) {
    const PointSettings& p = point.settings;
    for (const auto& system : spec.systems) {
      for (long long repeat = 0; repeat < p.run.repeats; ++repeat) {
        ++runs;
        const fs::path raw = run_raw_directory(directory, point.id, system.name, repeat);
        fs::create_directories(raw);
        const std::string what = describe_point_run(point, system, repeat);
        const auto start = std::chrono::steady_clock::now();
        json status = {{"ranks", p.run.world_size}, {"simulated", true}};
        try {
          const RunOutcome outcome = simulate_run(system, p, repeat, inputs);
          const double seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          const std::vector<int> traced = sim::traced_ranks(static_cast<int>(p.run.world_size),
                                                            static_cast<int>(p.run.trace_ranks));
          const json config =
              simulated_run_config(p, outcome, resolve_cluster(p, inputs), seconds, traced);
          write_file_atomic(raw / "config.json", json_text(config, 2) + "\n");
          write_rank_samples(raw, outcome, p.run.iterations);
          for (int r : traced) {
            write_file_atomic(
                raw / ("trace_rank" + std::to_string(r) + ".json"),
                json_text(sim::rank_trace(outcome.iterations.front(), r, system.name, 0)) + "\n");
          }
          status["status"] = "complete";
          status["elapsed_s"] = seconds;
          status["events"] = outcome.events;
          status["iteration_ms"] = outcome.iterations.front().times.makespan * 1000.0;
          if (traced.size() < static_cast<size_t>(p.run.world_size)) {
            status["note"] = "traces written for " + std::to_string(traced.size()) + " of " +
                             std::to_string(p.run.world_size) + " ranks (run.trace_ranks)";
          }
          char line[160];
          std::snprintf(line, sizeof line, "  %.3f ms/iteration, %llu events, %.3f s\n",
                        outcome.iterations.front().times.makespan * 1000.0,
                        static_cast<unsigned long long>(outcome.events), seconds);
          out << what << line;
        } catch (const RunFailure& e) {
          status["status"] = "failed";
          status["failure"] = {{"reason", e.what()}};
          failures.push_back({{"run", what}, {"detail", status}});
          std::fprintf(stderr, "error: %s: %s\n", what.c_str(), e.what());
        }
        write_file_atomic(raw / "status.json", json_text(status, 2) + "\n");
        out.flush();
      }
    }
  }
  const json top_status = {
      {"complete", failures.empty()}, {"runs", runs}, {"failures", failures}, {"simulated", true}};
  write_file_atomic(directory / "status.json", json_text(top_status, 2) + "\n");
  const std::string tables = write_summary_files(directory);
  out << "\n" << tables << "\n";
  if (!spec.plots.empty()) {
    try {
      run_plots(directory, spec.plots, out);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "warning: figures not drawn: %s\n", e.what());
    }
  }
  out << "results written to " << directory.string() << "\n";
  return failures.empty() ? 0 : 1;
}

}  // namespace harness
