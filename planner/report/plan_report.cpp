#include "planner/report/plan_report.h"

#include <cstdio>

namespace harness::planner {
namespace {

std::string plan_text(const BatchPlan& batch) {
  return batch.plan ? describe_stages(*batch.plan) : std::string("-");
}

nlohmann::json stage_json(const ModelProfile& profile, const PlannedStage& stage,
                          const StageTiming& timing) {
  nlohmann::json layers = nlohmann::json::array(), layer_ids = nlohmann::json::array();
  for (int v : profile.layers_of_stage(stage.first_state, stage.last_state)) {
    layers.push_back(profile.graph.nodes[v].description);
    layer_ids.push_back(profile.graph.nodes[v].id);
  }
  return {{"first_state", stage.first_state},
          {"last_state", stage.last_state},
          {"layers", layers},
          {"layer_ids", layer_ids},
          {"gpus", stage.gpus.ids},
          {"replicas", stage.gpus.size()},
          {"units", stage.units},
          {"compute_time_s", timing.compute_s},
          {"all_reduce_time_s", timing.all_reduce_s},
          {"in_flight_micro_batches", timing.in_flight},
          {"memory_bytes", timing.memory_bytes}};
}

}  // namespace

std::string format_speedup(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4f", value);
  return buffer;
}

void write_table(std::ostream& out, const SweepResult& sweep) {
  out << "gbs, dp_no_overlap, dp_p3, dp_overlap, best_hybrid | plan\n";
  for (const BatchPlan& b : sweep.batches) {
    out << b.global_batch << ", " << format_speedup(b.data_parallel.no_overlap) << ", "
        << format_speedup(b.data_parallel.p3) << ", " << format_speedup(b.data_parallel.overlap)
        << ", " << format_speedup(b.best_hybrid) << " | " << plan_text(b) << '\n';
  }
}

void write_csv(std::ostream& out, const SweepResult& sweep) {
  out << "gbs,dp_no_overlap,dp_p3,dp_overlap,best_hybrid,plan\n";
  for (const BatchPlan& b : sweep.batches) {
    out << b.global_batch << ',' << format_speedup(b.data_parallel.no_overlap) << ','
        << format_speedup(b.data_parallel.p3) << ',' << format_speedup(b.data_parallel.overlap)
        << ',' << format_speedup(b.best_hybrid) << ',' << plan_text(b) << '\n';
  }
}

nlohmann::json plan_json(const ModelProfile& profile, const PlannerOptions& options,
                         const SweepResult& sweep) {
  const CostModel cost = make_cost_model(options);
  const Topology& topology = cost.topology();
  nlohmann::json policies = nlohmann::json::array();
  for (PlacementPolicy p : options.policies) policies.push_back(to_string(p));
  nlohmann::json doc = {
      {"schema", "harness.plan/1"},
      {"profile", profile.source},
      {"states", profile.num_states()},
      {"mode", to_string(options.mode)},
      {"profile_batch_size", options.setup.profile_batch_size},
      {"micro_batch_size", options.setup.effective_micro_batch()},
      {"optimizer_memory_scaling", options.setup.optimizer_memory_scaling},
      {"devices",
       {{"separators", options.devices.separators()}, {"num_gpus", options.devices.num_gpus()}}},
      {"topology",
       {{"name", topology.name},
        {"gpu_memory_bytes", topology.gpu_memory_bytes},
        {"intra_machine_bandwidth", topology.intra_machine_bandwidth},
        {"inter_machine_p2p_bandwidth", topology.inter_machine_p2p_bandwidth},
        {"inter_machine_collective_bandwidth", topology.inter_machine_collective_bandwidth}}},
      {"placement_policies", policies},
  };
  if (topology.intra_machine_collective_bandwidth > 0) {  // measured topologies only
    doc["topology"]["intra_machine_collective_bandwidth"] =
        topology.intra_machine_collective_bandwidth;
  }
  nlohmann::json results = nlohmann::json::array();
  for (const BatchPlan& b : sweep.batches) {
    const DataParallelEstimates& dp = b.data_parallel;
    nlohmann::json entry = {{"global_batch_size", b.global_batch},
                            {"dp_no_overlap", dp.no_overlap},
                            {"dp_p3", dp.p3},
                            {"dp_overlap", dp.overlap},
                            {"best_hybrid", b.best_hybrid},
                            {"max_single_gpu_batch", dp.max_single_gpu_batch},
                            {"accumulation_batch", dp.accumulation_batch},
                            {"candidates_considered", b.candidates_considered},
                            {"candidates_over_memory", b.candidates_over_memory},
                            {"plan", nullptr}};
    if (b.plan) {
      const PipelineCandidate& plan = *b.plan;
      nlohmann::json stages = nlohmann::json::array();
      for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        stages.push_back(stage_json(profile, plan.stages[s], b.timing.stages[s]));
      }
      const int micro_batches = b.timing.micro_batches;
      entry["plan"] = {{"kind", to_string(plan.kind)},
                       {"summary", describe_stages(plan)},
                       {"units", plan.units_total},
                       {"pipeline_copies", plan.gpus_per_unit},
                       {"micro_batch_count", micro_batches},
                       {"micro_batch_size", micro_batches > 0 ? b.global_batch / micro_batches : 0},
                       {"bottleneck_time_s",
                        plan.bottleneck_s * b.global_batch / options.setup.profile_batch_size},
                       {"iteration_time_s", b.timing.iteration_s},
                       {"speedup", b.best_hybrid},
                       {"fits_memory", b.timing.fits_memory},
                       {"stages", stages}};
    }
    results.push_back(std::move(entry));
  }
  doc["results"] = std::move(results);
  return doc;
}

}  // namespace harness::planner
