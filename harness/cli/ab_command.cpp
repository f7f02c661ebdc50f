#include "harness/cli/ab_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "common/text_util.h"
#include "harness/analysis/compare_report.h"
#include "harness/analysis/sequential_gate.h"
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
  bool until_resolved = false;
  long long max_rounds = 0;  // 0: 4 x rounds
  std::vector<std::string> sets, new_sets;
  CompareRequest compare;
};

std::string join_rounds(const std::vector<long long>& looks) {
  std::vector<std::string> rounds;
  for (const long long look : looks) rounds.push_back(std::to_string(look));
  return join(rounds, ", ");
}

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

void check_rounds(const AbOptions& options) {
  if (options.rounds < 1 || options.rounds > kMaxAbRounds) {
    throw InputError("--rounds: expected 1 to " + std::to_string(kMaxAbRounds) + " (got " +
                     std::to_string(options.rounds) + ")");
  }
  if (options.max_rounds != 0 && !options.until_resolved) {
    throw InputError("--max-rounds: only with --until-resolved");
  }
  if (options.until_resolved && options.max_rounds != 0 &&
      (options.max_rounds < options.rounds || options.max_rounds > kMaxAbRounds)) {
    throw InputError("--max-rounds: expected --rounds (" + std::to_string(options.rounds) +
                     ") to " + std::to_string(kMaxAbRounds) + " (got " +
                     std::to_string(options.max_rounds) + ")");
  }
}

// The rounds after which the sides are compared: --rounds alone, or with --until-resolved the
// schedule of looks fixed now, before any round runs (harness/analysis/sequential_gate.h).
std::vector<long long> planned_looks(const AbOptions& options) {
  if (!options.until_resolved) return {options.rounds};
  const long long max_rounds = options.max_rounds != 0
                                   ? options.max_rounds
                                   : std::min<long long>(4 * options.rounds, kMaxAbRounds);
  return look_schedule(options.rounds, max_rounds);
}

// What the undecided rows would need, said after the last look.
std::string undecided_rows_note(const Comparison& comparison, double threshold_pct) {
  std::ostringstream note;
  for (const CompareRow& row : comparison.rows) {
    if (!row.gated ||
        (row.verdict != Verdict::unresolved && row.verdict != Verdict::too_few_runs)) {
      continue;
    }
    note << "- " << row.group << " / " << row.name << " / " << row.item << ": "
         << verdict_name(row.verdict);
    if (const auto runs = runs_needed(row, threshold_pct)) {
      note << "; a change of " << format_signed_percent(row.change_pct)
           << " at this machine's spread would need about " << *runs << " rounds for a verdict";
    }
    note << "\n";
  }
  return note.str();
}

int run_ab(const AbOptions& options) {
  check_rounds(options);
  const std::vector<long long> looks = planned_looks(options);
  AbRequest request;
  request.spec = options.spec;
  request.base_program = harness_program(options.base_build, "--base");
  request.new_program = harness_program(options.new_build, "--new");
  request.sets = options.sets;
  request.new_sets = options.new_sets;
  // The compare options are checked before anything runs: a typo costs no rounds.
  CompareRequest compare = options.compare;
  compare.allow_spec_change = !options.new_sets.empty();
  const CompareOptions compare_options = compare_options_of(compare);
  // Each look's level: alpha spent over the planned looks.
  compare.alpha = alpha_per_look(options.compare.alpha, looks.size());
  // The dry runs name the output they would use; nothing is made until both builds accept.
  request.out = options.out.empty() ? fs::path("results") / "ab" : fs::path(options.out);
  const AbChecked checked = check_ab_spec(request);
  request.out = ab_folder(options.out);
  keep_checked_answers(request, checked);
  compare.base = (request.out / "base").string();
  compare.candidate = (request.out / "new").string();
  if (options.until_resolved) {
    std::cout << "ab: up to " << looks.back() << " round(s) of " << options.spec << " into "
              << request.out.string() << " (looks after " << join_rounds(looks) << ")\n";
  } else {
    std::cout << "ab: " << options.rounds << " round(s) of " << options.spec << " into "
              << request.out.string() << "\n";
  }
  install_stop_signal_handlers();
  std::ostringstream sequence;
  Comparison comparison;
  for (size_t look = 0; look < looks.size(); ++look) {
    request.first_round = look == 0 ? 0 : looks[look - 1];
    request.rounds = looks[look];
    if (const int code = run_ab_rounds(request, std::cerr); code != 0) return code;
    comparison = compare_request(compare);
    const bool undecided = has_undecided_row(comparison);
    if (looks.size() > 1) {
      sequence << "- look " << look + 1 << " of " << looks.size() << ", " << looks[look]
               << " rounds, alpha " << format_general(compare.alpha) << ": "
               << (undecided ? "undecided" : "decided") << "\n";
      std::cerr << "ab: after " << looks[look]
                << " rounds: " << (undecided ? "a row is undecided" : "every row decided") << "\n";
    }
    if (!undecided) break;
  }
  // The looks and what undecided rows would need go before the verdict, which stays the last line.
  std::string markdown = render_comparison_markdown(comparison);
  std::string sequential;
  if (looks.size() > 1) {
    sequential = "Rounds until resolved: looks planned at " + join_rounds(looks) +
                 " rounds, alpha " + format_general(options.compare.alpha) +
                 " spent evenly over them (each look at " + format_general(compare.alpha) + "):\n" +
                 sequence.str();
  }
  sequential += undecided_rows_note(comparison, compare_options.threshold_pct);
  if (!sequential.empty()) {
    const size_t last_line = markdown.rfind('\n', markdown.size() - 2);
    markdown.insert(last_line == std::string::npos ? 0 : last_line + 1, sequential + "\n");
  }
  write_file_atomic(request.out / "compare.md", markdown);
  write_file_atomic(request.out / "compare.json",
                    json_text(comparison_to_json(comparison), 2) + "\n");
  std::cout << markdown << "wrote " << (request.out / "compare.md").string() << "\n";
  return comparison_exit_code(comparison);
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
  sub->add_option("--rounds", options->rounds,
                  "Rounds (each runs the spec once per build); with --until-resolved, the first "
                  "look's")
      ->capture_default_str();
  sub->add_flag("--until-resolved", options->until_resolved,
                "While a judged row is unresolved, double the rounds, up to --max-rounds (alpha "
                "spent over the looks)");
  sub->add_option("--max-rounds", options->max_rounds,
                  "The budget of --until-resolved (default 4 x --rounds)");
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
