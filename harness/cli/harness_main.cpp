#include "harness/cli/harness_main.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/build_info.h"
#include "common/cache_file.h"
#include "common/cli_exit.h"
#include "common/input_error.h"
#include "common/text_util.h"
#include "harness/cli/ab_command.h"
#include "harness/cli/actions_command.h"
#include "harness/cli/compare_command.h"
#include "harness/cli/enter_machine_command.h"
#include "harness/cli/history_command.h"
#include "harness/cli/machine_command.h"
#include "harness/cli/models_command.h"
#include "harness/cli/plan_command.h"
#include "harness/cli/plot_command.h"
#include "harness/cli/profile_command.h"
#include "harness/cli/report_command.h"
#include "harness/cli/run_command.h"
#include "harness/cli/shape_link_command.h"
#include "harness/cli/simulate_command.h"
#include "harness/cli/spmd_command.h"
#include "harness/cli/trace_command.h"
#include "harness/launch/rank_answers_file.h"
#include "harness/launch/rank_program.h"

namespace harness {

namespace {

// HARNESS_RANK_ANSWERS names a file of rank programs' answers that commands hand on to the next
// (harness/launch/rank_answers_file.h), by default the user's cache: taken before the command
// where they hold for this rank program here, and written back when the command has asked
// something they did not hold, whatever its exit code.
std::filesystem::path rank_answers_file() {
  return cache_file("HARNESS_RANK_ANSWERS", "rank_answers.json");
}

void keep_new_answers(const RankProgram& rank_program, const std::filesystem::path& file,
                      const nlohmann::json& before) {
  if (rank_program.answers() == before) return;
  // The command is done: a file that cannot be written costs the next one its questions only.
  try {
    keep_answers(rank_program, file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: the rank program's answers not kept: %s\n", e.what());
  }
}

// A first word that names no command: "unknown command 'rnu'; did you mean 'run'?", where CLI11
// would only say that a subcommand is required.
void refuse_unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == argv[1]) return;
    names.push_back(sub->get_name());
  }
  const std::string hint = closest_match(argv[1], names);
  throw InputError("unknown command '" + std::string(argv[1]) + "'; " +
                   (hint.empty() ? "expected one of " + join(names, ", ")
                                 : "did you mean '" + hint + "'? (harness --help lists them)"));
}

}  // namespace

int harness_main(int argc, char** argv) {
  CLI::App app{"harness: reproduce and compare parallel-training experiments"};
  app.require_subcommand(1);
  app.set_version_flag("--version", build_description(),
                       "Print the version, the LibTorch it was "
                       "built against and the commit, and exit");
  app.footer(
      "A first study:\n  harness run experiments/quickstart.yaml\n"
      "  harness plot results/quickstart/<stamp>\n"
      "harness COMMAND --help lists a command's options. Exit codes: 0 success, 1 a run failed or "
      "a regression was found, 2 bad input (nothing launched or written), 3 inconclusive, 130 "
      "interrupted. Docs: README.md and docs/.");
  RankProgram rank_program = RankProgram::beside_this_executable();
  const std::filesystem::path answers_file = rank_answers_file();
  adopt_kept_answers(rank_program, answers_file);
  const nlohmann::json answers_before = rank_program.answers();
  RunCommand run(rank_program);
  run.add_to(app);
  ModelsCommand models(rank_program);
  models.add_to(app);
  add_profile_command(app, rank_program);
  add_plan_command(app);
  add_simulate_command(app);
  add_spmd_command(app);
  add_report_command(app);
  add_plot_command(app);
  add_compare_command(app);
  add_ab_command(app);
  add_history_command(app);
  add_trace_command(app);
  add_actions_command(app);
  add_machine_command(app, rank_program);
  add_enter_machine_command(app);
  add_shape_link_command(app);
  // Before CLI11 reads the words: parse_and_run reports its InputError as every other one.
  app.preparse_callback([&](std::size_t) { refuse_unknown_command(app, argc, argv); });
  const int code = parse_and_run(app, argc, argv);
  keep_new_answers(rank_program, answers_file, answers_before);
  return code;
}

}  // namespace harness
