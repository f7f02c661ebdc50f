#include "harness/study/planned_run.h"

#include <map>
#include <utility>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/spec/pipeline_plan_source.h"
#include "harness/study/spmd_measured_compute.h"
#include "harness/study/spmd_search_run.h"
#include "runtime/protocol/traced_iteration.h"

namespace harness {

namespace fs = std::filesystem;

void resolve_pipeline_runs(std::vector<PlannedRun>& runs, const fs::path& directory,
                           const RunnerOptions& options,
                           const std::function<std::string(const Point&)>& emulated_topology) {
  PlanSourceContext context;
  context.model_layer_names = options.model_layer_names;
  context.model_layer_costs = options.model_layer_costs;
  context.executable = options.executable;
  context.work_directory = directory;
  std::map<std::pair<const Point*, std::string>, std::vector<PipelineStageSpec>> resolved;
  for (auto& run : runs) {
    if (run.system->kind() != SystemKind::kPipeline) continue;
    const auto key = std::make_pair(run.point, run.system->name);
    if (!resolved.count(key)) {
      if ((!run.system->plan.empty() || run.system->stage_count > 0) &&
          !options.model_layer_names) {
        throw InputError("system " + run.system->name + ": plans need the model's layer names");
      }
      context.point_id = run.point->id;
      context.emulated_topology = emulated_topology ? emulated_topology(*run.point) : "";
      resolved[key] = resolve_pipeline_stages(*run.system, run.point->config, context);
    }
    run.stages = resolved[key];
  }
}

namespace {

// Each operator timed under each signature by the rank program, where the system measures
// compute; nothing where it prices FLOPs. A local launch puts every rank on this machine: they
// are timed sharing its cores.
ComputeTimer compute_timer(const PlannedRun& run, const fs::path& folder,
                           const RunnerOptions& options) {
  if (!run.system->spmd->measured_compute) return {};
  const PointConfig& c = run.point->config;
  const long long co_located = options.launcher == LauncherKind::local ? c.run.world_size : 1;
  return measured_compute_timer({c.model, c.optimizer, c.model.batch_size * c.run.world_size,
                                 c.run.threads_per_rank, co_located},
                                options.executable, folder);
}

nlohmann::json searched_operators(const PlannedRun& run, const fs::path& folder,
                                  const RunnerOptions& options) {
  const ModelConfig& m = run.point->config.model;
  const long long world = run.point->config.run.world_size;
  const SpmdModel model = spmd_model_of(m, m.batch_size * world);
  const runtime::SpmdStrategy& strategy = *run.system->spmd;
  const auto shape = zoo_transformer_shape(model);
  const SpmdSearch search = run_spmd_search(shape, static_cast<int>(world), strategy.comm,
                                            strategy.gflops, compute_timer(run, folder, options));
  const nlohmann::json plan = search.plan_document(
      spmd_inputs_json(m.name, shape, static_cast<int>(world), strategy.comm, strategy.gflops,
                       strategy.measured_compute, search.inputs));
  write_file_atomic(folder / "spmd_plan.json", json_text(plan, 1) + "\n");
  return plan.at("operators");
}

}  // namespace

void resolve_spmd_runs(std::vector<PlannedRun>& runs, const fs::path& directory,
                       const RunnerOptions& options) {
  std::map<std::pair<const Point*, std::string>, nlohmann::json> resolved;
  for (auto& run : runs) {
    if (run.system->kind() != SystemKind::kSpmd) continue;
    const auto key = std::make_pair(run.point, run.system->name);
    if (!resolved.count(key)) {
      resolved[key] =
          searched_operators(run, directory / "plans" / run.system->name / run.point->id, options);
    }
    run.spmd_operators = resolved[key];
  }
}

std::vector<PlannedRun> plan_runs(const Experiment& experiment) {
  // Systems interleave within a point and repeat, so slow drift of the machine spreads over
  // all systems instead of biasing the last one.
  std::vector<PlannedRun> runs;
  for (const auto& point : experiment.points) {
    for (long long repeat = 0; repeat < point.config.run.repeats; ++repeat) {
      for (const auto& system : experiment.systems) runs.push_back({&point, &system, repeat, {}});
    }
  }
  return runs;
}

double system_bucket_mb(const PlannedRun& run) {
  return run.system->bucket_mb.value_or(run.point->config.ddp.bucket_mb);
}

namespace {

// The system's DDP mode with the point's buckets and compression (and the system's own cap).
runtime::GradientReduction gradient_reduction_at(const PlannedRun& run) {
  const DdpConfig& ddp = run.point->config.ddp;
  runtime::GradientReduction sync = run.system->gradients;
  sync.bucket_mb = system_bucket_mb(run);
  sync.first_bucket_mb = ddp.first_bucket_mb;
  sync.compression = ddp.compression;
  sync.powersgd_rank = ddp.powersgd_rank;
  sync.powersgd_warmup_steps = ddp.powersgd_warmup_steps;
  return sync;
}

}  // namespace

std::string describe_run(const PlannedRun& run) {
  std::string text = run.point->id + " " + run.point->label + " | " + run.system->name;
  if (run.point->config.run.repeats > 1) text += " | repeat " + std::to_string(run.repeat);
  return text;
}

runtime::WorkerConfig worker_config(const PlannedRun& run) {
  const PointConfig& c = run.point->config;
  runtime::WorkerConfig config;
  config.model = {c.model.name,
                  c.model.batch_size,
                  c.model.input_shape,
                  c.model.num_classes,
                  c.model.loss,
                  c.model.depth,
                  c.model.width,
                  c.model.precision,
                  c.model.moe,
                  c.model.decoder,
                  c.model.activation_checkpointing,
                  c.model.recompute_every};
  config.optimizer = {c.optimizer.name,        c.optimizer.lr,    c.optimizer.momentum,
                      c.optimizer.beta1,       c.optimizer.beta2, c.optimizer.eps,
                      c.optimizer.weight_decay};
  config.iterations = c.run.iterations;
  config.warmup = c.run.warmup;
  config.seed = c.run.seed + run.repeat;
  config.threads = static_cast<int>(c.run.threads_per_rank);
  config.heap = c.run.heap;
  config.pin_cpus = c.run.pin_cpus;
  config.device = c.run.device;
  config.backend = c.run.backend;
  // Collectives give up later than the harness declares a stall, so that the harness, which
  // can name the stuck rank, reports it.
  config.collective_timeout_s = c.run.stall_timeout_s * 2 + 30;
  config.log_buckets = run.repeat == 0;
  // Measured iterations from the middle of the run, traced on every rank (repeat 0); each rank
  // writes the one nearest the run's median.
  if (c.run.trace && run.repeat == 0) {
    const runtime::TraceWindow window =
        runtime::middle_trace_window(c.run.warmup, c.run.iterations);
    config.trace_iteration = window.first;
    config.trace_iterations = window.count;
  }
  config.system = *run.system;  // the description, whole
  config.system.gradients = gradient_reduction_at(run);
  if (config.system.spmd) config.system.spmd->operators = run.spmd_operators;
  if (config.system.pipeline) {
    // The stages resolved for this point (inline, from a plan file or planned now).
    config.system.pipeline->micro_batches = static_cast<int>(c.pipeline.micro_batches);
    config.system.pipeline->stages = run.stages;
  }
  return config;
}

}  // namespace harness
