#include "rank/rank_main.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "common/cli_exit.h"
#include "rank/layer_profile_command.h"
#include "rank/machine_command.h"
#include "rank/spmd_times_command.h"
#include "rank/worker.h"
#include "rank/zoo_query_commands.h"
#include "runtime/compat/flight_recorder.h"
#include "runtime/profile/comm_benchmark.h"

namespace harness {
namespace {

std::string self_executable(const char* argv0) {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : argv0;
}

// A rank program that reads its own flags: everything after the subcommand goes to `main`.
void add_rank_program(CLI::App& app, const std::string& name, const std::string& description,
                      std::function<int(const std::vector<std::string>&)> main, int& exit_code) {
  auto* program = app.add_subcommand(name, description)->prefix_command();
  program->set_help_flag();  // --help is the program's own
  program->callback([program, main, &exit_code] { exit_code = main(program->remaining()); });
}

}  // namespace

int rank_main(int argc, char** argv) {
  runtime::torch_compat::keep_flight_recorder_off();  // before any thread starts a group
  CLI::App app{"harness-rank: the rank program that `harness` launches"};
  app.require_subcommand(1);
  int exit_code = 0;
  add_rank_program(app, "worker", "One rank of a run", runtime::worker_main, exit_code);
  add_rank_program(app, "comm-worker", "One rank of `harness profile comm`",
                   runtime::comm_benchmark_main, exit_code);
  auto* profile = app.add_subcommand("profile", "Layer profiles (`harness profile layers`)");
  profile->require_subcommand(1);
  add_layer_profile_command(*profile, self_executable(argv[0]));
  add_zoo_query_commands(app);
  add_spmd_times_command(app, self_executable(argv[0]));
  add_machine_command(app);
  const int code = parse_and_run(app, argc, argv);
  return code != 0 ? code : exit_code;
}

}  // namespace harness
