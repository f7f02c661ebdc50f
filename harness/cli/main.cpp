// harness: one CLI for the experiment harness. It loads no LibTorch: whatever needs it runs
// in the rank program (harness-rank, beside this binary) as a process of its own.
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

int main(int argc, char** argv) {
  CLI::App app{"harness: reproduce and compare parallel-training experiments"};
  app.require_subcommand(1);
  harness::RankProgram rank_program = harness::RankProgram::beside_this_executable();
  harness::RunCommand run(rank_program);
  run.add_to(app);
  harness::ModelsCommand models(rank_program);
  models.add_to(app);
  harness::add_profile_command(app, rank_program);
  harness::add_plan_command(app);
  harness::add_simulate_command(app);
  harness::add_report_command(app);
  harness::add_plot_command(app);
  harness::add_compare_command(app);
  harness::add_ab_command(app);
  harness::add_trace_command(app);
  harness::add_machine_command(app, rank_program);
  harness::add_enter_machine_command(app);
  harness::add_shape_link_command(app);
  return harness::parse_and_run(app, argc, argv);
}
