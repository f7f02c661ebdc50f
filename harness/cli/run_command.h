// `harness run SPEC`: every spec kind (train, plan, simulate, profile) from one command; train
// specs go to the study runner (harness/study/experiment_runner.h).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "harness/launch/rank_program.h"
#include "harness/study/experiment_runner.h"

namespace CLI {
class App;
}

namespace harness {

class RunCommand {
 public:
  explicit RunCommand(RankProgram& rank_program) : rank_program_(rank_program) {}

  // Adds `run` to the app; the app calls back into this object, which must outlive it.
  void add_to(CLI::App& app);

 private:
  int execute();
  int run_plan_kind(YAML::Node root);
  int run_train_kind(YAML::Node root);
  RunnerOptions runner_options(const Experiment& experiment);
  nlohmann::json cached_machine_for_estimate(const Experiment& experiment);

  RankProgram& rank_program_;
  std::string spec_path_;
  std::vector<std::string> overrides_;
  bool quick_ = false, dry_run_ = false, print_launch_ = false;
  std::string launcher_ = "local", hosts_, resume_;
};

}  // namespace harness
