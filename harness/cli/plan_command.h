// `harness plan` (the DAPPLE planner on a profile) and the `kind: plan` experiment specs that
// `harness run` hands over.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "planner/study/noise_study.h"

namespace CLI {
class App;
}

namespace harness {

class SpecErrors;

struct PlanRequest {
  std::string profile;
  int profile_batch = 0;
  std::string global_batches = "32:4096:64";
  std::string devices;  // empty: the topology's machines
  std::string mode = "dapple";
  std::string topology;   // empty: planner/topologies/v100_8x2.yaml
  std::string placement;  // empty: all policies, as the published planner
  int threads = 1;
  int micro_batch = 0;  // 0: the profile batch
  double optimizer_memory_scaling = 2.0;
  std::optional<double> peak_activation_per_sample;
  bool explain = false;
  std::string out_dir;  // empty: print only
  // Noise-sensitivity studies run after the sweep (planner/README.md); none by default.
  std::vector<planner::NoiseSettings> noise_studies;
};

// Plans and prints the table (and the explanation, and the noise studies); writes plan.csv
// and plan.json (and noise_c<X>_b<Y>.{csv,json}) into out_dir when set. Throws InputError on bad
// input. Returns the process exit code.
int run_plan(const PlanRequest& request, std::ostream& out);

// Registers `harness plan` on the CLI. Input errors print "error: <message>" and exit 2.
void add_plan_command(CLI::App& app);

// A `kind: plan` spec (keys documented in planner/README.md): every model at every device
// layout in every mode.
struct PlanSpecModel {
  std::string name;
  PlanRequest request;
};
struct PlanSpecRuns {
  std::vector<PlanSpecModel> models;
  std::vector<std::pair<std::string, std::string>> layouts;  // name, devices
  std::vector<std::string> modes;
  std::vector<std::string> plots;  // `harness plot` kinds drawn into the results folder after
};

// Reads and checks the spec's `plan:` map whole (every model complete, its profile readable,
// every layout and mode) without planning anything. Its errors, each with file:line:column,
// join those already in `errors`; all of them are thrown together as one InputError.
PlanSpecRuns read_plan_spec(const std::string& spec_path, const YAML::Node& spec,
                            SpecErrors& errors);

// Plans every run of `runs`, writing each into its folder under output_dir. Returns the exit
// code.
int run_plan_spec(const PlanSpecRuns& runs, const std::string& output_dir);

}  // namespace harness
