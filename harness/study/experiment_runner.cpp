#include "harness/study/experiment_runner.h"
#include "common/ports.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "common/environment_info.h"
#include "common/input_error.h"
#include "common/text_util.h"
#include "harness/analysis/comparison_table.h"
#include "harness/analysis/pipeline_table.h"
#include "harness/cli/plot_command.h"
#include "harness/external/external_system.h"
#include "harness/launch/cluster_launcher.h"
#include "harness/launch/local_launcher.h"
#include "harness/results/run_manifest.h"
#include "harness/results/run_summary.h"
#include "harness/spec/pipeline_plan_source.h"
#include "harness/study/progress_display.h"
#include "harness/study/run_resume.h"
#include "runtime/protocol/worker_config.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct PlannedRun {
  const Point* point;
  const SystemConfig* system;
  long long repeat;
  std::vector<PipelineStageSpec> stages;  // pipeline systems: resolved for this point
};

// Stages of every pipeline run, from the spec, a plan file or the planner (`plan: auto`,
// whose outputs go to <results>/plans/). One resolution per point and system.
void resolve_pipeline_runs(std::vector<PlannedRun>& runs, const fs::path& directory,
                           const RunnerOptions& options) {
  PlanSourceContext context;
  context.model_layer_names = options.model_layer_names;
  context.model_layer_costs = options.model_layer_costs;
  context.executable = options.executable;
  context.work_directory = directory;
  std::map<std::pair<const Point*, std::string>, std::vector<PipelineStageSpec>> resolved;
  for (auto& run : runs) {
    if (run.system->kind != "pipeline") continue;
    const auto key = std::make_pair(run.point, run.system->name);
    if (!resolved.count(key)) {
      if ((!run.system->plan.empty() || run.system->stage_count > 0) &&
          !options.model_layer_names) {
        throw InputError("system " + run.system->name + ": plans need the model's layer names");
      }
      resolved[key] = resolve_pipeline_stages(*run.system, run.point->config, context);
    }
    run.stages = resolved[key];
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

std::string describe_run(const PlannedRun& run) {
  std::string text = run.point->id + " " + run.point->label + " | " + run.system->name;
  if (run.point->config.run.repeats > 1) text += " | repeat " + std::to_string(run.repeat);
  return text;
}

runtime::WorkerConfig worker_config(const PlannedRun& run) {
  const PointConfig& c = run.point->config;
  runtime::WorkerConfig config;
  config.model = {c.model.name, c.model.batch_size, c.model.input_shape, c.model.num_classes,
                  c.model.loss, c.model.depth,      c.model.width};
  config.optimizer = {c.optimizer.name, c.optimizer.lr, c.optimizer.momentum};
  config.iterations = c.run.iterations;
  config.warmup = c.run.warmup;
  config.seed = c.run.seed + run.repeat;
  config.threads = static_cast<int>(c.run.threads_per_rank);
  config.heap = c.run.heap;
  config.device = c.run.device;
  config.backend = c.run.backend;
  // Collectives give up later than the harness declares a stall, so that the harness, which
  // can name the stuck rank, reports it.
  config.collective_timeout_s = c.run.stall_timeout_s * 2 + 30;
  config.log_buckets = run.repeat == 0;
  // One measured iteration from the middle of the run, traced on every rank (repeat 0).
  config.trace_iteration =
      c.run.trace && run.repeat == 0 ? c.run.warmup + c.run.iterations / 2 : -1;
  config.system.name = run.system->name;
  config.system.kind = runtime::parse_system_kind(run.system->kind);
  config.system.mode = run.system->mode;
  config.system.bucket_mb = system_bucket_mb(run);
  config.system.first_bucket_mb = c.ddp.first_bucket_mb;
  if (config.system.kind == runtime::SystemKind::kPipeline) {
    // The stages resolved for this point (inline, from a plan file or planned now).
    config.system.schedule = runtime::parse_pipeline_schedule(run.system->schedule);
    config.system.micro_batches = static_cast<int>(c.pipeline.micro_batches);
    config.system.stages = run.stages;
  }
  return config;
}

// One rank of the harness's own rank program ("harness-rank worker ...").
RankProcess worker_rank(const PlannedRun& run, const fs::path& raw, int port, long long r) {
  const RunConfig& c = run.point->config.run;
  RankProcess rank;
  rank.arguments = {"worker",
                    "--config",
                    (raw / "config.json").string(),
                    "--out",
                    raw.string(),
                    "--rank",
                    std::to_string(r),
                    "--world-size",
                    std::to_string(c.world_size),
                    "--rendezvous",
                    c.rendezvous,
                    "--master-addr",
                    "127.0.0.1",
                    "--master-port",
                    std::to_string(port),
                    "--store-path",
                    (raw / "store").string()};
  rank.stdout_path = raw / ("rank" + std::to_string(r) + ".stdout");
  rank.stderr_path = raw / ("rank" + std::to_string(r) + ".stderr");
  // torchrun's variables, so programs and libraries that read them see a familiar world.
  rank.environment = {{"RANK", std::to_string(r)},
                      {"LOCAL_RANK", std::to_string(r)},
                      {"WORLD_SIZE", std::to_string(c.world_size)},
                      {"MASTER_ADDR", "127.0.0.1"},
                      {"MASTER_PORT", std::to_string(port)},
                      {"OMP_NUM_THREADS", std::to_string(c.threads_per_rank)}};
  return rank;
}

// The same worker under a cluster launcher: config inline, identity from the launcher.
WorkerLaunch cluster_worker(const PlannedRun& run, const fs::path& raw, int port,
                            const RunnerOptions& options) {
  WorkerLaunch worker;
  worker.executable = options.executable;
  worker.config_json = runtime::to_json(worker_config(run)).dump();
  worker.out_dir = raw.string();
  worker.world_size = run.point->config.run.world_size;
  worker.threads_per_rank = run.point->config.run.threads_per_rank;
  worker.master_addr = master_address(options.hosts);
  worker.master_port = port;
  for (const char* name : {"HARNESS_FAULT", "HARNESS_GLOO_HOST"}) {
    if (const char* value = std::getenv(name); value && *value) {
      worker.forwarded_variables.push_back(name);
    }
  }
  return worker;
}

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
    if (options.launcher == LauncherKind::local || run.system->external) {
      if (run.system->external) {
        out << "  external system (started by the local launcher): "
            << preview_external_command(*run.system->external, run.point->config, run.repeat)
            << "\n";
        continue;
      }
      for (long long r = 0; r < c.world_size; ++r) {
        const RankProcess rank = worker_rank(run, raw, port, r);
        LaunchCommand command;
        for (const auto& [key, value] : rank.environment) command.argv.push_back(key + "=" + value);
        command.argv.push_back(options.executable);
        command.argv.insert(command.argv.end(), rank.arguments.begin(), rank.arguments.end());
        out << "  " << render_command(command) << "\n";
      }
      continue;
    }
    const WorkerLaunch worker = cluster_worker(run, raw, port, options);
    for (const auto& command :
         plan_launch(options.launcher, worker, options.hosts, ::geteuid() == 0)) {
      out << "  " << render_command(command) << "\n";
    }
  }
  out << "(the master port is picked free per run; 29500 stands for it here)\n";
  return 0;
}

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

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
    // Pipelines: schedule, micro-batches and where the stages come from.
    std::string how = "bucket " + format_number(system_bucket_mb(run)) + " MiB";
    if (run.system->kind == "pipeline") {
      how = run.system->schedule + " pipeline, " + std::to_string(c.pipeline.micro_batches) +
            " micro-batches, " +
            (!run.system->plan.empty() ? "plan " + run.system->plan
             : run.system->stage_count > 0
                 ? std::to_string(run.system->stage_count) + " balanced stages"
                 : std::to_string(run.system->stages.size()) + " stages");
    }
    char line[640];
    std::snprintf(line, sizeof line,
                  "%4zu  %-6s %-28s %-12s rep %lld  %s batch %lld x %lld ranks, %lld+%lld iters, "
                  "%s, %lld thread(s)/rank\n",
                  i + 1, run.point->id.c_str(), run.point->label.c_str(), run.system->name.c_str(),
                  run.repeat, c.model.name.c_str(), c.model.batch_size, c.run.world_size,
                  c.run.warmup, c.run.iterations, how.c_str(), c.run.threads_per_rank);
    out << line;
  }
  return out.str();
}

std::string write_summary_files(const fs::path& run_directory) {
  const RunSummary summary = summarize_run_directory(run_directory);
  write_file_atomic(run_directory / "summary.json", summary_to_json(summary).dump(2) + "\n");
  const std::string markdown = render_markdown_tables(summary);
  write_file_atomic(run_directory / "table.md", markdown);
  write_file_atomic(run_directory / "table.csv", render_csv_table(summary));
  // Pipeline studies get their own table: throughput, bubbles, activation memory.
  const auto pipeline_rows = read_pipeline_table(run_directory);
  if (pipeline_rows.empty()) return markdown;
  const std::string pipeline = render_pipeline_markdown(pipeline_rows);
  write_file_atomic(run_directory / "pipeline.md", pipeline);
  write_file_atomic(run_directory / "pipeline.csv", render_pipeline_csv(pipeline_rows));
  return markdown + "\n" + pipeline;
}

int run_experiment(const Experiment& spec, const RunnerOptions& options, std::ostream& out) {
  if (options.dry_run) {
    out << describe_matrix(spec);
    return 0;
  }
  if (options.print_launch) return print_launch_plan(spec, options, out);
  if (options.launcher == LauncherKind::torchrun) {
    throw InputError(
        "--launcher torchrun: torchrun is started on every host by you or your scheduler; "
        "`--print-launch` prints each host's command (experiments/README.md, Launchers)");
  }
  if (options.launcher != LauncherKind::local) {
    const std::string program = options.launcher == LauncherKind::mpirun ? "mpirun" : "srun";
    if (find_program(program).empty()) {
      throw InputError("--launcher " + launcher_name(options.launcher) + ": '" + program +
                       "' is not on PATH" +
                       (program == "mpirun" ? " (Debian: apt-get install openmpi-bin)" : ""));
    }
  }
  // External systems whose requirements are missing (say, python3-torch) are left out of the
  // study, said so, and recorded; the rest runs.
  Experiment experiment = spec;
  json skipped = json::array();
  for (auto it = experiment.systems.begin(); it != experiment.systems.end();) {
    const auto reason = it->external ? failed_requirement(*it->external) : std::nullopt;
    if (!reason) {
      ++it;
      continue;
    }
    std::fprintf(stderr, "note: skipping system '%s': its requirement failed: %s\n",
                 it->name.c_str(), reason->c_str());
    skipped.push_back({{"system", it->name}, {"reason", *reason}});
    it = experiment.systems.erase(it);
  }
  if (experiment.systems.empty()) {
    std::fprintf(stderr, "error: every system was skipped; nothing to run\n");
    return 1;
  }
  if (std::none_of(experiment.systems.begin(), experiment.systems.end(),
                   [&](const SystemConfig& s) { return s.name == experiment.baseline; })) {
    std::fprintf(stderr, "note: baseline '%s' was skipped; '%s' is the baseline instead\n",
                 experiment.baseline.c_str(), experiment.systems.front().name.c_str());
    experiment.baseline = experiment.systems.front().name;
  }
  auto runs = plan_runs(experiment);
  const bool resuming = !options.resume_directory.empty();
  if (resuming) check_resumable(options.resume_directory, experiment);
  const fs::path directory =
      resuming ? fs::path(options.resume_directory)
               : start_results_folder(experiment.output, experiment.name, experiment.resolved);
  out << (resuming ? "resuming: " : "results: ") << directory.string() << "\n";
  out.flush();
  if (!resuming) {
    write_file_atomic(directory / "manifest.json",
                      manifest_to_json(make_manifest(experiment)).dump(2) + "\n");
  }
  resolve_pipeline_runs(runs, directory, options);
  if (!resuming) {
    json env = collect_environment(options.runtime_info);
    const RunConfig& run = experiment.points.front().config.run;
    env["backend"] = run.backend;
    env["device"] = run.device;
    env["threads_per_rank"] = run.threads_per_rank;
    env["world_size"] = run.world_size;
    write_file_atomic(directory / "env.json", env.dump(2) + "\n");
  }

  install_stop_signal_handlers();
  ProgressDisplay progress(runs.size(), options.interactive);
  int exit_code = 0;
  json failures = json::array();
  size_t kept = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const PlannedRun& run = runs[i];
    const PointConfig& c = run.point->config;
    const fs::path raw = run_raw_directory(directory, run.point->id, run.system->name, run.repeat);
    if (resuming) {
      // Complete runs are kept as they are; anything else is run again from scratch.
      if (run_has_complete_results(raw, c.run.world_size, c.run.iterations)) {
        ++kept;
        continue;
      }
      fs::remove_all(raw);
    }
    fs::create_directories(raw);
    const bool cluster = options.launcher != LauncherKind::local && !run.system->external;
    int port = c.run.rendezvous == "tcp" || cluster ? choose_port(c.run) : 0;
    bool run_failed = false;
    // A port taken between picking it and rank 0 binding it: the run is tried again on another.
    for (int attempt = 1;; ++attempt) {
      std::string executable = options.executable;
      std::vector<RankProcess> ranks;
      std::optional<RankFailure> failure;
      ExternalRunContext external_run{&run.point->config, run.repeat, raw, port};
      ExternalLaunch external_launch;
      if (run.system->external) {
        // External programs rendezvous through MASTER_ADDR/MASTER_PORT (env://), so the
        // TCP port is picked whatever run.rendezvous says.
        if (port == 0) external_run.master_port = pick_free_port();
        external_launch = plan_external_launch(*run.system->external, external_run);
        write_file_atomic(raw / "config.json",
                          external_run_config(*run.system, external_launch).dump(2) + "\n");
        executable = external_launch.executable;
        ranks = external_launch.ranks;
        failure = external_launch.error;
      } else {
        write_file_atomic(raw / "config.json", runtime::to_json(worker_config(run)).dump(2) + "\n");
        for (long long r = 0; r < c.run.world_size; ++r) {
          ranks.push_back(worker_rank(run, raw, port, r));
        }
      }
      LaunchLimits limits;
      limits.timeout_s = c.run.timeout_s;
      limits.stall_timeout_s = c.run.stall_timeout_s;

      progress.begin_run(i, describe_run(run), c.run.warmup + c.run.iterations);
      LaunchOutcome outcome;
      if (!failure && cluster) {
        ClusterLaunch launch;
        launch.command = plan_launch(options.launcher, cluster_worker(run, raw, port, options),
                                     options.hosts, ::geteuid() == 0)
                             .front();
        launch.world_size = static_cast<int>(c.run.world_size);
        launch.directory = raw;
        outcome = launch_cluster(launch, limits, [&](long long beats) { progress.update(beats); });
        failure = outcome.failure;
      } else if (!failure) {
        outcome = launch_local(executable, ranks, limits,
                               [&](long long beats) { progress.update(beats); });
        failure = outcome.failure;
        // An external program that died: say how far it got, as the worker's heartbeats would.
        if (failure && run.system->external && !failure->reason.starts_with("hung")) {
          const std::string note = external_progress_note(*run.system->external, external_run,
                                                          external_launch, failure->rank);
          if (!note.empty()) failure->reason += " " + note;
        }
      }
      if (failure && failure->rank == 0 && attempt < 3 && !run.system->external &&
          failed_on_busy_port(failure->stderr_tail)) {
        const int other = pick_free_port();
        std::fprintf(stderr,
                     "note: rank 0 could not listen on port %d (in use); running it again on "
                     "port %d\n",
                     port, other);
        port = other;
        continue;
      }
      if (failure && failure->rank >= 0 && failure->host.empty()) {
        failure->host =
            rank_host_from_stdout(raw / ("rank" + std::to_string(failure->rank) + ".stdout"));
        if (failure->host.empty() && !cluster) failure->host = this_host();
      }
      bool complete = outcome.ok;
      json status = {{"elapsed_s", outcome.elapsed_s},
                     {"ranks", c.run.world_size},
                     {"launcher", launcher_name(cluster ? options.launcher : LauncherKind::local)}};
      if (complete && run.system->external) {
        json details;
        failure =
            collect_external_samples(*run.system->external, external_run, external_launch, details);
        complete = !failure;
        status["external"] = details;
      } else if (complete) {
        for (long long r = 0; r < c.run.world_size; ++r) {
          if (!fs::exists(raw / ("rank" + std::to_string(r) + ".csv"))) {
            complete = false;
            status["failure"] = {{"rank", r}, {"reason", "exited 0 without writing its samples"}};
          }
        }
      }
      if (failure) {
        status["failure"] = {{"rank", failure->rank}, {"reason", failure->reason}};
        if (!failure->host.empty()) status["failure"]["host"] = failure->host;
      } else if (outcome.interrupted) {
        status["failure"] = {{"reason", "interrupted"}};
      }
      status["status"] = complete ? "complete" : (outcome.interrupted ? "interrupted" : "failed");
      write_file_atomic(raw / "status.json", status.dump(2) + "\n");
      progress.end_run(complete, outcome.elapsed_s);
      if (complete) break;

      if (outcome.interrupted) {
        std::fprintf(stderr, "interrupted: stopped every rank of run %zu/%zu; finished runs kept\n",
                     i + 1, runs.size());
        exit_code = 130;
      } else {
        const int rank = status["failure"].value("rank", -1);
        const std::string reason = status["failure"].value("reason", "");
        std::fprintf(stderr, "error: run %zu/%zu (%s) failed: rank %d %s\n", i + 1, runs.size(),
                     describe_run(run).c_str(), rank, reason.c_str());
        std::fprintf(stderr, "  rank %d ran on host %s (launcher %s); run.on_failure: %s\n", rank,
                     failure && !failure->host.empty() ? failure->host.c_str() : "(unknown)",
                     status.value("launcher", "local").c_str(), c.run.on_failure.c_str());
        if (failure && !failure->stderr_tail.empty()) {
          const fs::path stderr_path = raw / ("rank" + std::to_string(rank) + ".stderr");
          std::fprintf(stderr, "--- last lines of rank %d's stderr (%s) ---\n%s---\n", rank,
                       stderr_path.c_str(), failure->stderr_tail.c_str());
        }
        exit_code = 1;
      }
      failures.push_back({{"run", describe_run(run)}, {"detail", status}});
      run_failed = true;
      break;
    }  // attempts
    if (exit_code == 130) break;
    // run.on_failure: stop ends the study here; runs already finished stay in the folder.
    if (run_failed && c.run.on_failure == "stop") break;
  }
  if (resuming) {
    out << "resume: " << kept << " of " << runs.size() << " run(s) already complete were kept\n";
  }
  progress.finish();

  json top_status = {{"complete", exit_code == 0}, {"runs", runs.size()}, {"failures", failures}};
  if (!skipped.empty()) top_status["skipped"] = skipped;
  write_file_atomic(directory / "status.json", top_status.dump(2) + "\n");
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
  return exit_code;
}

}  // namespace harness
