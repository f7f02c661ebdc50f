#include "harness/cli/harness_main.h"

#include <CLI/CLI.hpp>

#include "common/cli_exit.h"
#include "harness/cli/ab_command.h"
#include "harness/cli/compare_command.h"
#include "harness/cli/enter_machine_command.h"
#include "harness/cli/machine_command.h"
#include "harness/cli/models_command.h"
#include "harness/cli/plan_command.h"
#include "harness/cli/plot_command.h"
#include "harness/cli/profile_command.h"
#include "harness/cli/report_command.h"
#include "harness/cli/run_command.h"
#include "harness/cli/shape_link_command.h"
#include "harness/cli/simulate_command.h"
#include "harness/cli/trace_command.h"
#include "harness/launch/rank_program.h"

namespace harness {

int harness_main(int argc, char** argv) {
  CLI::App app{"harness: reproduce and compare parallel-training experiments"};
  app.require_subcommand(1);
  RankProgram rank_program = RankProgram::beside_this_executable();
  RunCommand run(rank_program);
  run.add_to(app);
  ModelsCommand models(rank_program);
  models.add_to(app);
  add_profile_command(app, rank_program);
  add_plan_command(app);
  add_simulate_command(app);
  add_report_command(app);
  add_plot_command(app);
  add_compare_command(app);
  add_ab_command(app);
  add_trace_command(app);
  add_machine_command(app, rank_program);
  add_enter_machine_command(app);
  add_shape_link_command(app);
  return parse_and_run(app, argc, argv);
}

}  // namespace harness
