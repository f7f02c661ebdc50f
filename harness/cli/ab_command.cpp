#include "harness/cli/ab_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/limits.h"
#include "harness/analysis/compare_report.h"
#include "harness/cli/compare_command.h"
#include "harness/launch/local_launcher.h"
#include "harness/results/results_folder.h"
#include "harness/study/ab_rounds.h"

namespace harness {

namespace fs = std::filesystem;

namespace {

struct AbOptions {
  std::string spec, base_build, new_build, out;
  long long rounds = 10;
  std::vector<std::string> sets, new_sets;
  CompareRequest compare;
};

// The folder the rounds write into: a new one, never one that holds anything already.
fs::path ab_folder(const std::string& out) {
  if (out.empty()) return create_run_directory("results", "ab");
  std::error_code error;
  if (fs::exists(out, error) && !(fs::is_directory(out, error) && fs::is_empty(out, error))) {
    throw InputError("--out: " + out +
                     " exists and is not an empty folder (results are never "
                     "overwritten)");
  }
  create_output_folder(out, "--out");
  return out;
}

int run_ab(const AbOptions& options) {
  if (options.rounds < 1 || options.rounds > kMaxAbRounds) {
    throw InputError("--rounds: expected 1 to " + std::to_string(kMaxAbRounds) + " (got " +
                     std::to_string(options.rounds) + ")");
  }
  AbRequest request;
  request.spec = options.spec;
  request.base_program = harness_program(options.base_build, "--base");
  request.new_program = harness_program(options.new_build, "--new");
  request.rounds = options.rounds;
  request.sets = options.sets;
  request.new_sets = options.new_sets;
  // The compare options are checked before anything runs: a typo costs no rounds.
  CompareRequest compare = options.compare;
  compare.format = "md";
  compare.allow_spec_change = !options.new_sets.empty();
  compare_options_of(compare);
  // The dry runs name the output they would use; nothing is made until both builds accept.
  request.out = options.out.empty() ? fs::path("results") / "ab" : fs::path(options.out);
  check_ab_spec(request);
  request.out = ab_folder(options.out);
  compare.base = (request.out / "base").string();
  compare.candidate = (request.out / "new").string();
  std::cout << "ab: " << options.rounds << " round(s) of " << options.spec << " into "
            << request.out.string() << "\n";
  install_stop_signal_handlers();
  if (const int code = run_ab_rounds(request, std::cerr); code != 0) return code;
  std::ostringstream markdown;
  const int code = run_compare(compare, markdown);
  compare.format = "json";
  std::ostringstream json;
  run_compare(compare, json);
  write_file_atomic(request.out / "compare.md", markdown.str());
  write_file_atomic(request.out / "compare.json", json.str());
  std::cout << markdown.str() << "wrote " << (request.out / "compare.md").string() << "\n";
  return code;
}

}  // namespace

void add_ab_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "ab", "Run a baseline and a candidate build in alternating rounds, then compare them");
  sub->footer(
      "Example:\n"
      "  harness ab experiments/ci_regression.yaml --base ../base/build --new build --rounds 24\n"
      "(exit 0: no regression, 1: a regression, 3: too few runs to say; docs/ci-gate.md)");
  auto options = std::make_shared<AbOptions>();
  sub->add_option("spec", options->spec, "Experiment spec (YAML) both builds run")->required();
  sub->add_option("--base", options->base_build,
                  "Baseline: a build folder holding harness, or the executable")
      ->required();
  sub->add_option("--new", options->new_build, "Candidate, the same way")->required();
  sub->add_option("--rounds", options->rounds, "Rounds (each runs the spec once per build)")
      ->capture_default_str();
  sub->add_option("--out", options->out,
                  "Folder for base/, new/, logs/ and compare.md "
                  "(default results/ab/<UTC stamp>)");
  sub->add_option("--set", options->sets, "Override a spec value on both sides (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  sub->add_option("--new-set", options->new_sets,
                  "Override a spec value on the new side only: compares a configuration change")
      ->take_all()
      ->allow_extra_args(false);
  CompareRequest& compare = options->compare;
  sub->add_option("--threshold", compare.threshold, "As for compare")->capture_default_str();
  sub->add_option("--alpha", compare.alpha, "As for compare")->capture_default_str();
  sub->add_option("--metric", compare.metric, "As for compare")
      ->check(CLI::IsMember({"p50", "mean"}))
      ->capture_default_str();
  sub->add_option("--phases", compare.phases, "As for compare")->capture_default_str();
  sub->add_option("--noise-floor-ms", compare.noise_floor_ms, "As for compare")
      ->capture_default_str();
  sub->add_option("--memory-tolerance", compare.memory_tolerance, "As for compare")
      ->capture_default_str();
  sub->callback([options]() {
    const int code = run_ab(*options);
    std::cout.flush();
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness
