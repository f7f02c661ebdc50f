// harness: one CLI for the experiment harness. Subcommands register themselves on the app;
// `harness worker` (the rank program) bypasses CLI11 so its flags pass through untouched.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>

#include "common/input_error.h"
#include "harness/cli/compare_command.h"
#include "harness/cli/plan_command.h"
#include "harness/cli/plot_command.h"
#include "harness/cli/profile_command.h"
#include "harness/cli/report_command.h"
#include "harness/cli/simulate_command.h"
#include "harness/cli/trace_command.h"
#include "harness/spec/spec.h"
#include "harness/study/experiment_runner.h"
#include "rank/worker.h"
#include "runtime/profile/comm_benchmark.h"

namespace {

std::string self_executable(const char* argv0) {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) return std::string(path, static_cast<size_t>(n));
  return argv0;
}

int exit_code = 0;

// What identifies a built zoo model (and the batch it is timed at).
std::string model_key(const harness::ModelConfig& model) {
  std::string key = model.name + "/" + std::to_string(model.num_classes) + "/" +
                    std::to_string(model.depth) + "/" + std::to_string(model.width) + "/" +
                    std::to_string(model.batch_size);
  for (long long d : model.input_shape) key += "/" + std::to_string(d);
  return key;
}

// A zoo model's layer names (pipeline stages name and count them), built once per shape.
std::vector<std::string> zoo_layers(const harness::ModelConfig& model) {
  static std::map<std::string, std::vector<std::string>> cache;
  const std::string key = model_key(model);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  const std::vector<int64_t> shape(model.input_shape.begin(), model.input_shape.end());
  return cache[key] = runtime::zoo_layer_names(model.name, shape, model.num_classes, model.depth,
                                               model.width);
}

// Per-layer forward times (`stages: N` balances them), measured once per model and batch so
// that every system of a study splits a model the same way.
std::vector<double> zoo_layer_costs(const harness::ModelConfig& model) {
  static std::map<std::string, std::vector<double>> cache;
  const std::string key = model_key(model);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  const std::vector<int64_t> shape(model.input_shape.begin(), model.input_shape.end());
  return cache[key] = runtime::zoo_layer_forward_ms(model.name, shape, model.num_classes,
                                                    model.depth, model.width, model.batch_size);
}

// `kind: plan` specs: the top-level keys are checked here, the `plan:` map by the planner.
int run_plan_kind(const std::string& path, YAML::Node root, const std::vector<std::string>& sets,
                  bool dry_run) {
  harness::SpecOrigin origin(path);
  const harness::SpecHeader header = harness::read_spec_header(root, origin, sets, "plan", "plan");
  if (dry_run) {
    std::cout << "experiment " << header.name
              << ": kind plan (DAPPLE planner); nothing is launched\n";
    return 0;
  }
  const auto directory = harness::start_results_folder(header.output, header.name, root);
  std::cout << "results: " << directory.string() << "\n";
  return harness::run_plan_spec(path, root, directory.string());
}

void add_run_command(CLI::App& app, const std::string& executable) {
  auto* run = app.add_subcommand("run", "Run an experiment spec (experiments/*.yaml)");
  static std::string spec_path;
  static std::vector<std::string> overrides;
  static bool quick = false, dry_run = false, print_launch = false;
  static std::string launcher = "local", hosts, resume;
  run->add_option("spec", spec_path, "Experiment spec (YAML)")->required();
  run->add_option("--set", overrides, "Override a spec value: key.path=value (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  run->add_flag("--quick", quick, "Few iterations and a short sweep, for a smoke run");
  run->add_flag("--dry-run", dry_run, "Print the expanded matrix and exit");
  run->add_option("--launcher", launcher, "Who starts the ranks: local|mpirun|slurm|torchrun");
  run->add_option("--hosts", hosts, "Hosts and slots for mpirun/slurm/torchrun: h1:8,h2:8");
  run->add_flag("--print-launch", print_launch,
                "Print the command that starts each run's ranks and exit");
  run->add_option("--resume", resume,
                  "Finish this results folder: run only the runs without complete results");
  run->callback([executable]() {
    YAML::Node root = harness::parse_yaml_file(spec_path);
    const std::string kind =
        root.IsMap() && root["kind"] && root["kind"].IsScalar() ? root["kind"].Scalar() : "train";
    if (kind == "plan") {
      exit_code = run_plan_kind(spec_path, root, overrides, dry_run);
      return;
    }
    if (kind == "simulate") {
      exit_code = harness::run_simulate_spec(spec_path, root, overrides, dry_run, std::cout);
      return;
    }
    if (kind == "profile") {
      exit_code = harness::run_profile_spec(spec_path, root, overrides, dry_run, executable);
      return;
    }
    harness::LoadOptions options;
    options.quick = quick;
    options.overrides = overrides;
    options.known_models = runtime::zoo_model_names();
    options.model_layer_count = [](const harness::ModelConfig& model) {
      return static_cast<long long>(zoo_layers(model).size());
    };
    const harness::Experiment experiment =
        harness::load_experiment(root, harness::SpecOrigin(spec_path), options);
    harness::RunnerOptions runner;
    runner.executable = executable;
    runner.dry_run = dry_run;
    runner.interactive = isatty(STDERR_FILENO);
    runner.runtime_info = {{"torch_version", runtime::torch_version()}};
    runner.model_layer_names = zoo_layers;
    runner.model_layer_costs = zoo_layer_costs;
    runner.launcher = harness::parse_launcher(launcher);
    runner.hosts = harness::parse_hosts(hosts);
    runner.print_launch = print_launch;
    runner.resume_directory = resume;
    exit_code = harness::run_experiment(experiment, runner, std::cout);
  });
}

void add_models_command(CLI::App& app) {
  auto* models = app.add_subcommand("models", "List the model zoo with parameter counts");
  models->callback([]() {
    std::printf("%-10s %10s %14s  %-14s %s\n", "model", "tensors", "parameters", "input",
                "description");
    for (const auto& m : runtime::list_models()) {
      std::string shape;
      for (size_t i = 0; i < m.input_shape.size(); ++i) {
        shape += (i ? "x" : "") + std::to_string(m.input_shape[i]);
      }
      std::printf("%-10s %10lld %14lld  %-14s %s\n", m.name.c_str(),
                  static_cast<long long>(m.tensors), static_cast<long long>(m.parameters),
                  shape.c_str(), m.description.c_str());
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "worker") {
    return runtime::worker_main(std::vector<std::string>(argv + 2, argv + argc));
  }
  if (argc >= 2 && std::string(argv[1]) == "comm-worker") {
    return runtime::comm_benchmark_main(std::vector<std::string>(argv + 2, argv + argc));
  }
  CLI::App app{"harness: reproduce and compare parallel-training experiments"};
  app.require_subcommand(1);
  add_run_command(app, self_executable(argv[0]));
  add_models_command(app);
  harness::add_profile_command(app, self_executable(argv[0]));
  harness::add_plan_command(app);
  harness::add_simulate_command(app);
  harness::add_report_command(app);
  harness::add_plot_command(app);
  harness::add_compare_command(app);
  harness::add_trace_command(app);
  app.add_subcommand("worker", "One rank of a run (launched by `harness run`)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
