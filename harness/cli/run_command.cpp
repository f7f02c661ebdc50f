#include "harness/cli/run_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "harness/cli/plan_command.h"
#include "harness/cli/plot_command.h"
#include "harness/cli/profile_command.h"
#include "harness/launch/rank_program.h"
#include "harness/machine/machine_limits.h"
#include "harness/spec/spec.h"
#include "harness/spec/spec_errors.h"
#include "harness/spec/spec_kind.h"
#include "harness/spec/yaml_reader.h"
#include "harness/study/experiment_runner.h"
#include "harness/study/simulate_study.h"
#include "harness/study/spmd_search_study.h"
#include "runtime/models/model_catalog.h"
#include "runtime/protocol/fault_injection.h"

namespace harness {

namespace fs = std::filesystem;
namespace {

// The model whose FLOPs the study's first run counts; none when no system has them counted.
const ModelConfig* first_counted_model(const Experiment& experiment) {
  const bool counted =
      std::any_of(experiment.systems.begin(), experiment.systems.end(), counts_model_flops);
  if (!counted || experiment.points.empty()) return nullptr;
  return &experiment.points.front().config.model;
}

}  // namespace

void RunCommand::add_to(CLI::App& app) {
  auto* run = app.add_subcommand("run", "Run an experiment spec (experiments/*.yaml)");
  run->footer(
      "Examples:\n"
      "  harness run experiments/quickstart.yaml\n"
      "  harness run experiments/resnet50_ddp.yaml --quick --dry-run\n"
      "  harness run experiments/resnet50_ddp.yaml --set 'sweep.ddp.bucket_mb=[1, 5, 25, 100]'\n"
      "Results: <output>/<name>/<UTC stamp>/ (output: results, relative to this folder); "
      "experiments/README.md");
  run->add_option("spec", spec_path_, "Experiment spec (YAML)")->required();
  run->add_option("--set", overrides_, "Override a spec value: key.path=value (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  run->add_flag("--quick", quick_, "Few iterations and a short sweep, for a smoke run");
  run->add_flag("--dry-run", dry_run_, "Print the expanded matrix and exit");
  run->add_option("--launcher", launcher_, "Who starts the ranks: local|mpirun|slurm|torchrun");
  run->add_option("--hosts", hosts_, "Hosts and slots for mpirun/slurm/torchrun: h1:8,h2:8");
  run->add_flag("--print-launch", print_launch_,
                "Print the command that starts each run's ranks and exit");
  run->add_option("--resume", resume_,
                  "Finish this results folder: run only the runs without complete results");
  run->callback([this] {
    if (const int code = execute(); code != 0) throw CLI::RuntimeError(code);
  });
}

int RunCommand::execute() {
  YAML::Node root = parse_yaml_file(spec_path_);
  const SpecKind kind = read_spec_kind(root, SpecOrigin(spec_path_));
  // A spec run in full where --quick asked for a smoke run would pass in silence.
  if (quick_ &&
      (kind == SpecKind::kPlan || kind == SpecKind::kSimulate || kind == SpecKind::kProfile)) {
    throw InputError("--quick: a kind " + to_string(kind) +
                     " spec has no quick form (train and spmd_search specs do); shorten it with "
                     "--set");
  }
  switch (kind) {
    case SpecKind::kPlan:
      return run_plan_kind(root);
    case SpecKind::kSimulate:
      return run_simulate_spec(spec_path_, root, overrides_, dry_run_, std::cout);
    case SpecKind::kProfile:
      return run_profile_spec(spec_path_, root, overrides_, dry_run_, rank_program_);
    case SpecKind::kSpmdSearch:
      return run_spmd_search_spec(spec_path_, root, overrides_, quick_, dry_run_, std::cout);
    case SpecKind::kTrain:
      break;
  }
  return run_train_kind(root);
}

// `kind: plan` specs: the top-level keys are checked here, the `plan:` map by the planner.
int RunCommand::run_plan_kind(YAML::Node root) {
  SpecOrigin origin(spec_path_);
  SpecErrors errors(spec_path_);
  origin.report_to(&errors);
  const SpecHeader header = read_spec_header(root, origin, overrides_, "plan", "plan");
  // Everything the planner will read is checked before a folder is made.
  const PlanSpecRuns runs = read_plan_spec(spec_path_, root, errors);
  errors.throw_if_any();
  if (dry_run_) {
    std::cout << "experiment " << header.name
              << ": kind plan (DAPPLE planner); nothing is launched\n";
    return 0;
  }
  const auto directory = start_results_folder(header.output, header.name, root);
  std::cout << "results: " << directory.string() << "\n";
  const int code = run_plan_spec(runs, directory.string());
  if (code == 0 && !runs.plots.empty()) {
    // Figures are a view of the results: failing to draw them does not fail the study.
    try {
      run_plots(directory, runs.plots, std::cout);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "warning: figures not drawn: %s\n", e.what());
    }
  }
  return code;
}

int RunCommand::run_train_kind(YAML::Node root) {
  LoadOptions options;
  options.quick = quick_;
  options.overrides = overrides_;
  options.known_models = runtime::model_names();
  // The local launcher's ranks run here, on this machine's GPUs; a cluster launcher's
  // elsewhere, where each rank checks its own.
  if (parse_launcher(launcher_) == LauncherKind::local) {
    options.rank_devices = [this] { return rank_program_.devices(); };
  }
  options.model_layer_count = [this](const ModelConfig& model) {
    return static_cast<long long>(rank_program_.layer_names(model).size());
  };
  const Experiment experiment = load_experiment(root, SpecOrigin(spec_path_), options);
  // Every rank reads the fault-injection hook: a malformed value is refused here, before
  // anything is launched, not by each rank after it starts.
  try {
    runtime::parse_fault(std::getenv("HARNESS_FAULT"));
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  // An output folder that cannot be made is bad input before the rank program is asked anything.
  if (!dry_run_ && !print_launch_ && resume_.empty()) {
    check_output_place(fs::path(experiment.output) / experiment.name, "output");
  }
  RunnerOptions runner = runner_options(experiment);
  return run_experiment(experiment, runner, std::cout);
}

RunnerOptions RunCommand::runner_options(const Experiment& experiment) {
  RunnerOptions runner;
  runner.executable = rank_program_.path();
  runner.harness_executable = this_executable().string();
  runner.dry_run = dry_run_;
  runner.interactive = isatty(STDERR_FILENO);
  const bool local = parse_launcher(launcher_) == LauncherKind::local;
  if (!dry_run_ && !print_launch_) {
    // The run will ask this anyway; asked first, it brings the version below with it.
    if (const ModelConfig* model = first_counted_model(experiment)) {
      rank_program_.layer_forward_flops(*model);
    }
    runner.runtime_info = {{"torch_version", rank_program_.torch_version()}};
    runner.blas = rank_program_.blas();
    // The roofline MFU is reported against: this host's, so only where the ranks run here.
    if (local) runner.machine = machine_limits(rank_program_, false);
  }
  if (dry_run_ && local) runner.machine = cached_machine_for_estimate(experiment);
  runner.model_layer_names = [this](const ModelConfig& model) {
    return rank_program_.layer_names(model);
  };
  runner.model_layer_costs = [this](const ModelConfig& model) {
    return rank_program_.layer_forward_ms(model);
  };
  runner.model_layer_flops = [this](const ModelConfig& model) {
    return rank_program_.layer_forward_flops(model);
  };
  runner.launcher = parse_launcher(launcher_);
  runner.hosts = parse_hosts(hosts_);
  runner.print_launch = print_launch_;
  runner.resume_directory = resume_;
  return runner;
}

// --dry-run's duration estimate reads this machine's figures where they are cached, and measures
// nothing. The model's FLOPs are asked first, as a run asks them: the one question brings the
// version the cache's key needs with it. The estimate is an aside: without a rank program to
// ask, the matrix is printed without it (null).
nlohmann::json RunCommand::cached_machine_for_estimate(const Experiment& experiment) {
  try {
    if (const ModelConfig* model = first_counted_model(experiment)) {
      rank_program_.layer_forward_flops(*model);
    }
    return cached_machine_limits(rank_program_).value_or(nlohmann::json());
  } catch (const std::exception&) {
    return nlohmann::json();
  }
}

}  // namespace harness
