#include "harness/study/experiment_runner.h"

#include "common/ports.h"
#include "harness/spec/pipeline_schedule_source.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "common/atomic_file.h"
#include "common/environment_info.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/text_util.h"
#include "harness/analysis/breakdown_table.h"
#include "harness/analysis/comparison_table.h"
#include "harness/analysis/memory_table.h"
#include "harness/analysis/pipeline_table.h"
#include "harness/analysis/system_verdicts.h"
#include "harness/analysis/utilisation_table.h"
#include "harness/cli/plot_command.h"
#include "harness/emulation/emulated_network.h"
#include "harness/external/external_system.h"
#include "harness/launch/local_launcher.h"
#include "harness/machine/cpu_wake_latency.h"
#include "harness/machine/machine_load.h"
#include "harness/results/model_flops.h"
#include "harness/results/report_samples.h"
#include "harness/results/run_manifest.h"
#include "harness/results/run_summary.h"
#include "harness/study/duration_estimate.h"
#include "harness/study/link_probe.h"
#include "harness/study/planned_run.h"
#include "harness/study/progress_display.h"
#include "harness/study/run_launchers.h"
#include "harness/study/run_resume.h"
#include "runtime/models/model_catalog.h"
#include "runtime/parallel/device_mesh.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The rendezvous port of a run: run.master_port when it is free here, else any free one.
int choose_port(const RunConfig& run) {
  if (run.master_port > 0) {
    if (port_is_free(static_cast<int>(run.master_port))) return static_cast<int>(run.master_port);
    const int other = pick_free_port();
    std::fprintf(stderr, "note: run.master_port %lld is in use; using port %d instead\n",
                 run.master_port, other);
    return other;
  }
  return pick_free_port();
}

// --print-launch: what would start each run's ranks, one block per run.
int print_launch_plan(const Experiment& experiment, const RunnerOptions& options,
                      std::ostream& out) {
  const auto runs = plan_runs(experiment);
  const fs::path results = fs::path("RESULTS_DIR");
  out << "launch plan (" << launcher_name(options.launcher) << "), " << runs.size()
      << " run(s); RESULTS_DIR is " << experiment.output << "/" << experiment.name
      << "/<UTC timestamp>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const PlannedRun& run = runs[i];
    const RunConfig& c = run.point->config.run;
    const fs::path raw = run_raw_directory(results, run.point->id, run.system->name, run.repeat);
    const int port = c.master_port > 0 ? static_cast<int>(c.master_port) : 29500;
    out << "run " << i + 1 << "/" << runs.size() << ": " << describe_run(run) << "\n";
    // The emulated machines the run would get (their names carry this process's id).
    const auto shape = emulated_cluster_of(*run.point);
    const std::optional<NetworkPlan> network =
        shape ? std::optional(plan_network(*shape, static_cast<int>(getpid()))) : std::nullopt;
    make_run_launcher(run, options)
        ->print({run, raw, port, network ? &*network : nullptr, "RUN_KEY"}, out);
  }
  out << "(the master port is picked free per run, 29500 stands for it here; RUN_KEY for the "
         "run's own key in the rendezvous store)\n";
  return 0;
}

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

// The system's device mesh at the point: each rank's coordinates and the groups it meets in;
// a plan's once the plan is made.
std::string describe_point_mesh(const SystemConfig& system, const PointConfig& point) {
  if (system.spmd) {
    return "      mesh: one group of all " + std::to_string(point.run.world_size) +
           " ranks, each operator split as the search chooses before the runs (plans/" +
           system.name + "/<point>/spmd_plan.json)\n";
  }
  runtime::ParallelSystem described = system;
  if (described.pipeline) {
    const auto stages = known_stage_ranks(system, point);
    if (!stages) return "      mesh: pipeline positions and replicas once the plan is made\n";
    described.pipeline->stages = *stages;
    described.pipeline->micro_batches = static_cast<int>(point.pipeline.micro_batches);
  }
  const int world = static_cast<int>(point.run.world_size);
  const runtime::DeviceMesh mesh =
      runtime::device_mesh(described, world, point.model.batch_size * world);
  return runtime::describe_mesh(described, mesh);
}

// How a pipeline runs: its schedule, micro-batches, where its stages come from and how its
// replicas hold them.
std::string describe_pipeline(const SystemConfig& system, const PointConfig& point) {
  const std::string per_rank = system.stages_per_rank > 1
                                   ? " x " + std::to_string(system.stages_per_rank) + " per rank"
                                   : "";
  std::string how =
      (system.schedule_csv_path.empty() ? runtime::to_string(system.pipeline->schedule)
                                        : "schedule_csv " + system.schedule_csv_path) +
      " pipeline, " + std::to_string(point.pipeline.micro_batches) + " micro-batches, " +
      (!system.plan.empty()     ? "plan " + system.plan
       : system.stage_count > 0 ? std::to_string(system.stage_count) + " balanced stages" + per_rank
                                : std::to_string(system.stages.size()) + " stages");
  if (system.data.sharded()) how += ", replicas ZeRO-" + std::to_string(system.data.zero_stage);
  return how;
}

std::string describe_matrix(const Experiment& experiment) {
  std::ostringstream out;
  const auto runs = plan_runs(experiment);
  out << "experiment " << experiment.name << ": " << experiment.points.size() << " point(s) x "
      << experiment.systems.size() << " system(s) = " << runs.size() << " run(s); baseline "
      << experiment.baseline << "\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    const PointConfig& c = run.point->config;
    if (run.system->external) {
      char line[512];
      std::snprintf(line, sizeof line,
                    "%4zu  %-6s %-28s %-12s rep %lld  external, %lld ranks, %lld+%lld iters, "
                    "%s timings: ",
                    i + 1, run.point->id.c_str(), run.point->label.c_str(),
                    run.system->name.c_str(), run.repeat, c.run.world_size, c.run.warmup,
                    c.run.iterations, run.system->external->timings.format.c_str());
      out << line << preview_external_command(*run.system->external, c, run.repeat) << "\n";
      continue;
    }
    std::string how = run.system->kind() == SystemKind::kPipeline
                          ? describe_pipeline(*run.system, c)
                          : "bucket " + format_number(system_bucket_mb(run)) + " MiB";
    if (run.system->spmd) {
      how = "HiDup's search priced by " + run.system->spmd->comm + " and " +
            (run.system->spmd->measured_compute
                 ? "each operator's measured time"
                 : format_number(run.system->spmd->gflops) + " GFLOP/s a rank");
    }
    if (run.system->experts && run.system->data.sharded()) {
      how += ", dense part ZeRO-" + std::to_string(run.system->data.zero_stage);
    }
    if (run.system->tensor.split()) {
      // A replica's slices share its batch: batch_size x degree samples each.
      how += ", tensor " + std::to_string(run.system->tensor.degree) +
             (run.system->tensor.sequence_parallel ? " sequence-parallel" : "") +
             (run.system->tensor.vocabulary_parallel ? " vocabulary-parallel" : "") +
             (run.system->tensor.recompute_gather ? " gathered again in backward" : "");
      if (run.system->data.sharded() && !run.system->pipeline) {  // a pipeline's says so
        how += ", replicas ZeRO-" + std::to_string(run.system->data.zero_stage);
      }
    }
    char line[640];
    std::snprintf(line, sizeof line,
                  "%4zu  %-6s %-28s %-12s rep %lld  %s batch %lld x %lld ranks, %lld+%lld iters, "
                  "%s, %lld thread(s)/rank\n",
                  i + 1, run.point->id.c_str(), run.point->label.c_str(), run.system->name.c_str(),
                  run.repeat, c.model.name.c_str(), c.model.batch_size, c.run.world_size,
                  c.run.warmup, c.run.iterations, how.c_str(), c.run.threads_per_rank);
    out << line;
    // The mesh, and a pipeline's action lists, once per point and system.
    if (run.repeat != 0) continue;
    out << describe_point_mesh(*run.system, c);
    if (run.system->kind() == SystemKind::kPipeline) out << describe_known_schedule(*run.system, c);
  }
  return out.str();
}

namespace {

// The optional systems status.json says were skipped, under the tables: a table without a
// system the spec names says why.
std::string skipped_systems_note(const fs::path& run_directory) {
  const fs::path status = run_directory / "status.json";
  if (!fs::is_regular_file(status)) return "";
  const json skipped = read_json_file(status).value("skipped", json::array());
  if (!skipped.is_array() || skipped.empty()) return "";
  std::string note = "Skipped (optional, could not run here):\n";
  for (const json& entry : skipped) {
    note += "- " + entry.value("system", std::string("?")) + ": " +
            entry.value("reason", std::string("?")) + "\n";
  }
  return note + "\n";
}

}  // namespace

std::string write_summary_files(const fs::path& run_directory) {
  // Read once: the pooled tables and the verdicts over runs rest on the same samples.
  const ResultSamples samples = read_result_samples(run_directory);
  const RunSummary summary = summarize_samples(samples);
  write_file_atomic(run_directory / "summary.json", json_text(summary_to_json(summary), 2) + "\n");
  const std::string utilisation = render_utilisation_markdown(summary);
  const std::string memory = render_memory_markdown(summary);
  // Each extra section ends with a blank line; the comparison tables do not.
  const std::string verdicts =
      render_system_verdicts(system_verdicts(samples, kSystemVerdictAlpha),
                             summary.manifest.baseline, kSystemVerdictAlpha);
  const std::string extras = verdicts + utilisation + memory + skipped_systems_note(run_directory);
  const std::string markdown =
      render_markdown_tables(summary) + (extras.empty() ? "" : "\n" + extras);
  write_file_atomic(run_directory / "table.md", markdown);
  write_file_atomic(run_directory / "table.csv", render_csv_table(summary));
  // Traced studies get the time breakdown of their traced iterations (all-to-all included).
  std::string printed = markdown;
  const std::string breakdown =
      render_breakdown_markdown(run_directory, summary.manifest.experiment);
  if (!breakdown.empty()) {
    write_file_atomic(run_directory / "breakdown.md", breakdown);
    printed += "\n" + breakdown;
  }
  // Pipeline studies get their own table: throughput, bubbles, activation memory.
  const auto pipeline_rows = read_pipeline_table(run_directory);
  if (pipeline_rows.empty()) return printed;
  const std::string pipeline = render_pipeline_markdown(pipeline_rows);
  write_file_atomic(run_directory / "pipeline.md", pipeline);
  write_file_atomic(run_directory / "pipeline.csv", render_pipeline_csv(pipeline_rows));
  return printed + "\n" + pipeline;
}

namespace {

// A system the study names that cannot run on this machine.
struct UnrunnableSystem : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// External systems whose requirements are missing (say, python3-torch): an optional one is left
// out of the study, said so, and recorded in `skipped`; the rest runs. The baseline moves to the
// first system left when its own was skipped. One that is not optional stops the study here,
// before anything is written.
Experiment without_unrunnable_systems(const Experiment& spec, json& skipped) {
  Experiment experiment = spec;
  for (auto it = experiment.systems.begin(); it != experiment.systems.end();) {
    const auto reason = it->external ? failed_requirement(*it->external) : std::nullopt;
    if (!reason) {
      ++it;
      continue;
    }
    if (!it->external->optional) {
      throw UnrunnableSystem("system '" + it->name + "' cannot run here: its requirement failed: " +
                             *reason + " (install what it needs, or mark it optional: true)");
    }
    std::fprintf(stderr, "note: skipping optional system '%s': its requirement failed: %s\n",
                 it->name.c_str(), reason->c_str());
    skipped.push_back({{"system", it->name}, {"reason", *reason}});
    it = experiment.systems.erase(it);
  }
  if (!experiment.systems.empty() &&
      std::none_of(experiment.systems.begin(), experiment.systems.end(),
                   [&](const SystemConfig& s) { return s.name == experiment.baseline; })) {
    std::fprintf(stderr, "note: baseline '%s' was skipped; '%s' is the baseline instead\n",
                 experiment.baseline.c_str(), experiment.systems.front().name.c_str());
    experiment.baseline = experiment.systems.front().name;
  }
  return experiment;
}

// The machine's load before the study: from the command's start to now (the harness's own work
// and its probes' subtracted), at least kLoadWindow long, so that the estimate rests on enough
// clock ticks.
constexpr auto kLoadWindow = std::chrono::milliseconds(200);

MachineLoad load_before_study(const LoadSample& command_start, LoadSample& now) {
  const auto waited = std::chrono::steady_clock::now() - command_start.at;
  if (waited < kLoadWindow) std::this_thread::sleep_for(kLoadWindow - waited);
  now = sample_machine_load();
  return load_between(command_start, now, sysconf(_SC_CLK_TCK));
}

// The load during the study into env.json beside the load before it, and one warning line when
// either was busy: a table's times are then slower and noisier than a quiet machine's.
void record_machine_load(const fs::path& directory, const MachineLoad& before,
                         const LoadSample& study_start) {
  const MachineLoad during = load_between(study_start, sample_machine_load(), sysconf(_SC_CLK_TCK));
  json env = read_json_file(directory / "env.json");
  env["machine_load"]["during"] = load_to_json(during);
  write_file_atomic(directory / "env.json", json_text(env, 2) + "\n");
  std::vector<std::string> busy;
  if (was_busy(before)) busy.push_back(describe_load("before the study", before));
  if (was_busy(during)) busy.push_back(describe_load("during it", during));
  if (busy.empty()) return;
  std::fprintf(stderr,
               "warning: the machine was busy (%s): its times are slower and noisier than a "
               "quiet machine's (env.json machine_load)\n",
               join(busy, "; ").c_str());
}

// env.json: the machine and libraries, and the run settings every point shares.
void write_environment(const Experiment& experiment, const RunnerOptions& options,
                       const fs::path& directory, const ProbedLinks& links,
                       const MachineLoad& load_before) {
  json env = collect_environment(options.runtime_info);
  env["machine_load"]["before"] = load_to_json(load_before);
  const RunConfig& run = experiment.points.front().config.run;
  env["backend"] = run.backend;
  env["device"] = run.device;
  env["threads_per_rank"] = run.threads_per_rank;
  env["world_size"] = run.world_size;
  if (!options.blas.is_null()) {
    env["blas"] = options.blas;
    env["blas"]["threads"] = run.threads_per_rank;  // every rank sets it (rank/worker.cpp)
  }
  if (!options.machine.is_null()) env["machine"] = options.machine;
  // What an idle core did: the machine's idle states, and whether the runs held them at polling
  // (run.cpu_idle; "per point" when a sweep sets it differently).
  env["cpu_idle"] = cpu_idle_description();
  const bool same_policy =
      std::all_of(experiment.points.begin(), experiment.points.end(),
                  [&](const Point& point) { return point.config.run.cpu_idle == run.cpu_idle; });
  env["cpu_idle"]["policy"] = same_policy ? to_string(run.cpu_idle) : "per point";
  if (!links.links.empty()) env["emulated_links"] = links.to_json(directory);
  write_file_atomic(directory / "env.json", json_text(env, 2) + "\n");
}

// How one run ended, as its status.json says.
struct RunResult {
  bool complete = false;
  bool interrupted = false;
  json status;
};

// The run's status.json: how long, how many ranks, who launched them, how it ended.
json run_status(const LaunchOutcome& outcome, const std::optional<RankFailure>& failure,
                bool complete, const PlannedRun& run, LauncherKind launcher, json status) {
  status["elapsed_s"] = outcome.elapsed_s;
  status["ranks"] = run.point->config.run.world_size;
  status["launcher"] = launcher_name(launcher);
  if (failure) {
    status["failure"] = {{"rank", failure->rank}, {"reason", failure->reason}};
    if (!failure->host.empty()) status["failure"]["host"] = failure->host;
  } else if (outcome.interrupted) {
    status["failure"] = {{"reason", "interrupted"}};
  }
  status["status"] = complete ? "complete" : (outcome.interrupted ? "interrupted" : "failed");
  return status;
}

// A failed run on stderr: which rank, why, on which host, and the end of its stderr.
void print_run_failure(size_t index, size_t total, const PlannedRun& run, const json& status,
                       const std::optional<RankFailure>& failure, const fs::path& raw) {
  const int rank = status["failure"].value("rank", -1);
  const std::string reason = status["failure"].value("reason", "");
  std::fprintf(stderr, "error: run %zu/%zu (%s) failed: rank %d %s\n", index + 1, total,
               describe_run(run).c_str(), rank, reason.c_str());
  std::fprintf(stderr, "  rank %d ran on host %s (launcher %s); run.on_failure: %s\n", rank,
               failure && !failure->host.empty() ? failure->host.c_str() : "(unknown)",
               status.value("launcher", "local").c_str(), run.point->config.run.on_failure.c_str());
  if (failure && !failure->stderr_tail.empty()) {
    const fs::path stderr_path = raw / ("rank" + std::to_string(rank) + ".stderr");
    std::fprintf(stderr, "--- last lines of rank %d's stderr (%s) ---\n%s---\n", rank,
                 stderr_path.c_str(), failure->stderr_tail.c_str());
  }
}

// Where the failed rank ran: what it said in its first lines, else (local ranks) this host.
// A launcher that names only a host (Slurm's "Node failure on n2") gets the first rank that
// said it ran there.
void find_failed_host(std::optional<RankFailure>& failure, const fs::path& raw,
                      LauncherKind launcher, long long world_size) {
  if (!failure) return;
  const auto stdout_of = [&](long long r) {
    return raw / ("rank" + std::to_string(r) + ".stdout");
  };
  if (failure->rank < 0 && !failure->host.empty()) {
    for (long long r = 0; r < world_size && failure->rank < 0; ++r) {
      if (rank_host_from_stdout(stdout_of(r)) == failure->host) failure->rank = static_cast<int>(r);
    }
    if (failure->rank >= 0) {
      const std::string tail =
          tail_lines(raw / ("rank" + std::to_string(failure->rank) + ".stderr"), 20);
      if (!tail.empty()) failure->stderr_tail = tail;
    }
    return;
  }
  if (failure->rank < 0 || !failure->host.empty()) return;
  failure->host = rank_host_from_stdout(stdout_of(failure->rank));
  if (failure->host.empty() && launcher == LauncherKind::local) failure->host = this_host();
}

// Before anything is written: emulated machines need the local launcher and a host that can
// build them (root, iproute2, the qdiscs the links need). Leftovers of dead harnesses go.
void check_emulated_clusters(const Experiment& experiment, const RunnerOptions& options) {
  // One probe for what any point needs (a rate, a delay or loss), not one per point.
  std::optional<EmulatedClusterShape> needed;
  for (const auto& point : experiment.points) {
    const auto shape = emulated_cluster_of(point);
    if (!shape) continue;
    if (!needed) needed = shape;
    if (shape->inter_machine.rate_bits_per_s) {
      needed->inter_machine.rate_bits_per_s = shape->inter_machine.rate_bits_per_s;
    }
    needed->inter_machine.delay_s =
        std::max(needed->inter_machine.delay_s, shape->inter_machine.delay_s);
    needed->inter_machine.loss_percent =
        std::max(needed->inter_machine.loss_percent, shape->inter_machine.loss_percent);
  }
  if (!needed) return;
  if (options.launcher == LauncherKind::slurm) {
    // Slurm's machines are its nodes: scripts/emulated-slurm.sh makes them emulated ones.
    throw InputError(experiment.spec_path + ": cluster.machines: emulated machines run under " +
                     "the local launcher, mpirun and torchrun; for Slurm on emulated machines " +
                     "run the study inside scripts/emulated-slurm.sh (without cluster.machines)");
  }
  if (options.launcher != LauncherKind::local && !options.hosts.empty()) {
    throw InputError(experiment.spec_path + ": cluster.machines: the emulated machines are " +
                     launcher_name(options.launcher) + "'s hosts; drop --hosts");
  }
  if (const std::string why = emulation_unavailable_reason(*needed); !why.empty()) {
    throw InputError(experiment.spec_path + ": cluster.machines: " + why);
  }
  remove_stale_namespaces();
}

bool any_point_polls(const Experiment& experiment) {
  return std::any_of(experiment.points.begin(), experiment.points.end(), [](const Point& point) {
    return point.config.run.cpu_idle == CpuIdle::kPoll;
  });
}

// Before anything is written: run.cpu_idle: poll is held by this harness on this machine, so it
// needs every rank here (no --hosts, no Slurm allocation) and write access to the kernel's
// request file.
void check_cpu_idle(const Experiment& experiment, const RunnerOptions& options) {
  if (!any_point_polls(experiment)) return;
  if (options.launcher == LauncherKind::slurm || !options.hosts.empty()) {
    throw InputError(experiment.spec_path + ": run.cpu_idle: poll holds the wake-up latency of " +
                     "this machine's CPUs, and " + launcher_name(options.launcher) +
                     " starts ranks on other machines (hold it there, e.g. with tuned's " +
                     "latency-performance profile, and leave run.cpu_idle: os)");
  }
  if (const std::string why = cpu_wake_latency_unavailable(); !why.empty()) {
    throw InputError(experiment.spec_path + ": run.cpu_idle: poll needs write access to " + why);
  }
}

// The wake-up latency held at zero while the result lives, when `poll`; nothing otherwise.
std::optional<CpuWakeLatencyHold> hold_cpu_idle(bool poll) {
  if (!poll) return std::nullopt;
  return CpuWakeLatencyHold();
}

// flops.json beside the run's samples: the model FLOPs each rank does per iteration, which
// the summary turns into GFLOP/s and MFU.
void write_iteration_flops(const PlannedRun& run, const fs::path& raw,
                           const RunnerOptions& options) {
  if (!options.model_layer_flops || !counts_model_flops(*run.system)) return;
  const PointConfig& config = run.point->config;
  const std::vector<double> layers = options.model_layer_flops(config.model);
  const auto stages =
      run.system->kind() == SystemKind::kPipeline ? run.stages : std::vector<PipelineStageSpec>{};
  const long long batch = config.model.batch_size, world = config.run.world_size;
  const int tensor = stages.empty() ? 1 : run.system->tensor.degree;  // a stage's ranks: groups
  std::vector<double> hardware;
  if (const ModelConfig& m = config.model; m.activation_checkpointing != "none") {
    const auto again =
        recomputed_forward_flops(m.activation_checkpointing, m.name, m.depth, m.moe,
                                 m.input_shape.at(0), m.width, layers, m.recompute_every);
    hardware = hardware_iteration_flops(layers, again, batch, world, stages, tensor);
  }
  fs::create_directories(raw);
  write_file_atomic(
      raw / "flops.json",
      json_text(
          flops_json(layers, rank_iteration_flops(layers, batch, world, stages, tensor), hardware),
          2) +
          "\n");
}

// One run to its end: its launcher's attempts (rank 0 finding its port taken is tried again on
// another), its status.json, the progress line, and on failure the report on stderr.
RunResult run_one(const PlannedRun& run, size_t index, size_t total, const fs::path& raw,
                  const RunnerOptions& options, ProgressDisplay& progress) {
  const RunConfig& c = run.point->config.run;
  write_iteration_flops(run, raw, options);
  const auto launcher = make_run_launcher(run, options);
  int port = launcher->needs_port(run) ? choose_port(c) : 0;
  LaunchLimits limits;
  limits.timeout_s = c.timeout_s;
  limits.stall_timeout_s = c.stall_timeout_s;
  // Emulated machines live for the run (all its attempts) and are removed with it.
  std::unique_ptr<EmulatedNetwork> network;
  if (const std::optional<EmulatedClusterShape> shape = emulated_cluster_of(*run.point)) {
    network = std::make_unique<EmulatedNetwork>(plan_network(*shape, static_cast<int>(getpid())));
  }
  for (int attempt = 1;; ++attempt) {
    const RunAttempt current{run, raw, port, network ? &network->plan() : nullptr,
                             new_rendezvous_key()};
    progress.begin_run(index, describe_run(run), c.warmup + c.iterations);
    const LaunchOutcome outcome =
        launcher->launch(current, limits, [&](long long beats) { progress.update(beats); });
    std::optional<RankFailure> failure = outcome.failure;
    if (failure && failure->rank == 0 && attempt < 3 && launcher->retries_busy_port() &&
        failed_on_busy_port(failure->stderr_tail)) {
      const int other = pick_free_port();
      std::fprintf(stderr,
                   "note: rank 0 could not listen on port %d (in use); running it again on "
                   "port %d\n",
                   port, other);
      port = other;
      continue;
    }
    find_failed_host(failure, raw, launcher->kind(), c.world_size);
    json details = json::object();
    bool complete = outcome.ok;
    if (complete) {
      failure = launcher->collect(current, details);
      complete = !failure;
    }
    RunResult result{complete, outcome.interrupted,
                     run_status(outcome, failure, complete, run, launcher->kind(), details)};
    write_file_atomic(raw / "status.json", json_text(result.status, 2) + "\n");
    progress.end_run(complete, outcome.elapsed_s);
    if (!complete && !outcome.interrupted) {
      print_run_failure(index, total, run, result.status, failure, raw);
    }
    return result;
  }
}

// The end of a study: status.json, the tables (printed too), the spec's figures.
void finish_study(const Experiment& experiment, const fs::path& directory, bool complete,
                  size_t runs, const json& failures, const json& skipped, std::ostream& out) {
  json top_status = {{"complete", complete}, {"runs", runs}, {"failures", failures}};
  if (!skipped.empty()) top_status["skipped"] = skipped;
  write_file_atomic(directory / "status.json", json_text(top_status, 2) + "\n");
  const std::string tables = write_summary_files(directory);
  out << "\n" << tables << "\n";
  if (!experiment.plots.empty()) {
    // Figures are a view of the results: failing to draw them does not fail the study.
    try {
      run_plots(directory, experiment.plots, out);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "warning: figures not drawn: %s\n", e.what());
    }
  }
  out << "results written to " << directory.string() << "\n";
}

}  // namespace

bool counts_model_flops(const SystemConfig& system) {
  return system.kind() != SystemKind::kExternal;
}

namespace {

// A study expected to take longer than kLongStudySeconds says so before its first run.
void give_notice_of_a_long_study(const Experiment& experiment, const std::vector<PlannedRun>& runs,
                                 const RunnerOptions& options, std::ostream& out) {
  const DurationEstimate estimate =
      estimate_study(experiment, runs, options.machine, options.model_layer_flops);
  if (estimate.seconds <= kLongStudySeconds) return;
  out << "notice: " << describe_estimate(estimate)
      << "; --quick runs a short version, Ctrl-C stops it keeping finished runs\n";
  out.flush();
}

// --dry-run: the matrix, and what an emulated cluster would be made of (the first point that asks
// for one).
int print_dry_run(const Experiment& spec, const RunnerOptions& options, std::ostream& out) {
  out << describe_matrix(spec);
  const std::string estimate = describe_estimate(
      estimate_study(spec, plan_runs(spec), options.machine, options.model_layer_flops));
  if (!estimate.empty()) out << estimate << "\n";
  for (const auto& point : spec.points) {
    if (const auto shape = emulated_cluster_of(point)) {
      out << describe_network_plan(plan_network(*shape, static_cast<int>(getpid())));
      break;
    }
  }
  return 0;
}

// What the study decides for each run before the first starts: pipeline stages (planned with the
// links measured for emulated points) and searched SPMD strategies.
void resolve_system_runs(std::vector<PlannedRun>& runs, const fs::path& directory,
                         const RunnerOptions& options, const ProbedLinks& links) {
  resolve_pipeline_runs(runs, directory, options, [&](const Point& point) {
    const ProbedLink* link = links.find(point);
    return link ? link->topology.string() : std::string();
  });
  resolve_spmd_runs(runs, directory, options);
}

}  // namespace

int run_experiment(const Experiment& spec, const RunnerOptions& options, std::ostream& out) {
  if (options.dry_run) return print_dry_run(spec, options, out);
  if (options.print_launch) return print_launch_plan(spec, options, out);
  const LoadSample command_start = sample_machine_load();
  check_launcher_usable(options);
  check_emulated_clusters(spec, options);
  check_cpu_idle(spec, options);
  json skipped = json::array();
  Experiment experiment;
  try {
    experiment = without_unrunnable_systems(spec, skipped);
  } catch (const UnrunnableSystem& e) {
    std::fprintf(stderr, "error: %s\n", terminal_safe(e.what()).c_str());
    return 1;
  }
  if (experiment.systems.empty()) {
    std::fprintf(stderr, "error: every system was skipped; nothing to run\n");
    return 1;
  }
  auto runs = plan_runs(experiment);
  const bool resuming = !options.resume_directory.empty();
  if (!resuming) give_notice_of_a_long_study(experiment, runs, options, out);
  if (resuming) check_resumable(options.resume_directory, experiment);
  const fs::path directory =
      resuming ? fs::path(options.resume_directory)
               : start_results_folder(experiment.output, experiment.name, experiment.resolved);
  out << (resuming ? "resuming: " : "results: ") << directory.string() << "\n";
  out.flush();
  if (!resuming) {
    write_file_atomic(directory / "manifest.json",
                      json_text(manifest_to_json(make_manifest(experiment)), 2) + "\n");
  }
  // Emulated machines: their links measured first; plans of their points priced by that.
  ProbedLinks links;
  try {
    // The links measured as the runs will meet them: polling if any point polls.
    const auto cpu_idle = hold_cpu_idle(any_point_polls(experiment));
    RankProgram rank_program(options.executable);
    links = probe_emulated_links(experiment, directory, rank_program, out);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  resolve_system_runs(runs, directory, options, links);
  LoadSample study_start;
  const MachineLoad load_before = load_before_study(command_start, study_start);
  if (!resuming) write_environment(experiment, options, directory, links, load_before);

  install_stop_signal_handlers();
  ProgressDisplay progress(runs.size(), options.interactive);
  int exit_code = 0;
  json failures = json::array();
  size_t kept = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const PlannedRun& run = runs[i];
    const RunConfig& c = run.point->config.run;
    const fs::path raw = run_raw_directory(directory, run.point->id, run.system->name, run.repeat);
    if (resuming) {
      // Complete runs are kept as they are; anything else is run again from scratch.
      if (run_has_complete_results(raw, c.world_size, c.iterations)) {
        ++kept;
        continue;
      }
      fs::remove_all(raw);
    }
    fs::create_directories(raw);
    const auto cpu_idle = hold_cpu_idle(c.cpu_idle == CpuIdle::kPoll);
    const RunResult result = run_one(run, i, runs.size(), raw, options, progress);
    if (result.complete) continue;
    failures.push_back({{"run", describe_run(run)}, {"detail", result.status}});
    if (result.interrupted) {
      std::fprintf(stderr, "interrupted: stopped every rank of run %zu/%zu; finished runs kept\n",
                   i + 1, runs.size());
      exit_code = 130;
      break;
    }
    exit_code = 1;
    // run.on_failure: stop ends the study here; runs already finished stay in the folder.
    if (c.on_failure == "stop") break;
  }
  if (resuming) {
    out << "resume: " << kept << " of " << runs.size() << " run(s) already complete were kept\n";
  }
  progress.finish();
  if (!resuming) record_machine_load(directory, load_before, study_start);
  finish_study(experiment, directory, exit_code == 0, runs.size(), failures, skipped, out);
  return exit_code;
}

}  // namespace harness
