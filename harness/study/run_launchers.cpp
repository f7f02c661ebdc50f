#include "harness/study/run_launchers.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/ports.h"
#include "common/text_util.h"
#include "common/torch_python.h"
#include "harness/emulation/machine_entry.h"
#include "harness/external/external_system.h"
#include "harness/launch/cluster_launcher.h"
#include "harness/results/rank_placement.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// One rank of the harness's own rank program ("harness-rank worker ...").
RankProcess worker_rank(const RunAttempt& attempt, long long r) {
  const PlannedRun& run = attempt.run;
  const fs::path& raw = attempt.raw;
  const int port = attempt.port;
  const RunConfig& c = run.point->config.run;
  RankProcess rank;
  // On emulated machines: the rank in its machine's namespace, meeting at machine 0's address
  // (Gloo binds the address it reaches that by: its own machine's).
  std::string master = "127.0.0.1";
  if (attempt.network) {
    rank.prefix = {"ip", "netns", "exec", attempt.network->machine_of(static_cast<int>(r)).netns};
    master = attempt.network->machines.front().address;
  }
  rank.arguments = {"worker",
                    "--config",
                    (raw / "config.json").string(),
                    "--out",
                    raw.string(),
                    "--rank",
                    std::to_string(r),
                    "--world-size",
                    std::to_string(c.world_size),
                    "--rendezvous",
                    c.rendezvous,
                    "--master-addr",
                    master,
                    "--master-port",
                    std::to_string(port),
                    "--store-path",
                    (raw / "store").string()};
  if (!attempt.rendezvous_key.empty()) {
    rank.arguments.insert(rank.arguments.end(), {"--rendezvous-key", attempt.rendezvous_key});
  }
  rank.stdout_path = raw / ("rank" + std::to_string(r) + ".stdout");
  rank.stderr_path = raw / ("rank" + std::to_string(r) + ".stderr");
  // torchrun's variables, so programs and libraries that read them see a familiar world.
  rank.environment = {{"RANK", std::to_string(r)},
                      {"LOCAL_RANK", std::to_string(r)},
                      {"WORLD_SIZE", std::to_string(c.world_size)},
                      {"MASTER_ADDR", master},
                      {"MASTER_PORT", std::to_string(port)},
                      {"OMP_NUM_THREADS", std::to_string(c.threads_per_rank)}};
  return rank;
}

// The same worker under a cluster launcher: config inline, identity from the launcher.
WorkerLaunch cluster_worker(const RunAttempt& attempt, const RunnerOptions& options) {
  const PlannedRun& run = attempt.run;
  WorkerLaunch worker;
  worker.executable = options.executable;
  worker.config_json = json_text(runtime::to_json(worker_config(run)));
  worker.out_dir = attempt.raw.string();
  worker.world_size = run.point->config.run.world_size;
  worker.threads_per_rank = run.point->config.run.threads_per_rank;
  worker.master_addr = master_address(options.hosts);
  worker.master_port = attempt.port;
  worker.rendezvous_key = attempt.rendezvous_key;
  for (const char* name : {"HARNESS_FAULT", "HARNESS_GLOO_HOST"}) {
    if (const char* value = std::getenv(name); value && *value) {
      worker.forwarded_variables.push_back(name);
    }
  }
  return worker;
}

void write_worker_config(const RunAttempt& attempt) {
  write_file_atomic(attempt.raw / "config.json",
                    json_text(runtime::to_json(worker_config(attempt.run)), 2) + "\n");
}

// A rank that exited 0 without writing its samples (the last such rank is named).
std::optional<RankFailure> missing_samples(const RunAttempt& attempt) {
  std::optional<RankFailure> failure;
  for (long long r = 0; r < attempt.run.point->config.run.world_size; ++r) {
    if (!fs::exists(attempt.raw / ("rank" + std::to_string(r) + ".csv"))) {
      failure = RankFailure{static_cast<int>(r), "exited 0 without writing its samples", ""};
    }
  }
  return failure;
}

// What every run of the harness's rank program must have left: every rank's samples, and every
// rank on the device and backend, and in the precision, the spec asked for.
std::optional<RankFailure> check_rank_results(const RunAttempt& attempt) {
  if (auto missing = missing_samples(attempt)) return missing;
  const RunConfig& c = attempt.run.point->config.run;
  const std::string& precision = attempt.run.point->config.model.precision;
  if (const auto wrong =
          check_rank_placements(attempt.raw, c.world_size, c.device, c.backend, precision)) {
    return RankFailure{wrong->rank, wrong->reason, ""};
  }
  return std::nullopt;
}

// The torchrun of the build's torch (beside its Python: a virtual environment's bin/, or
// /usr/bin for Debian's), else the first on PATH; "" when there is none.
std::string torchrun_program() {
  const std::string python = torch_python();
  if (!python.empty()) {
    const fs::path beside = fs::path(python).parent_path() / "torchrun";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return find_program("torchrun");
}

// The harness's rank program, one local process per rank.
class LocalRanks : public RunLauncher {
 public:
  explicit LocalRanks(std::string executable) : executable_(std::move(executable)) {}
  LauncherKind kind() const override { return LauncherKind::local; }
  bool needs_port(const PlannedRun& run) const override {
    return run.point->config.run.rendezvous == "tcp";
  }
  LaunchOutcome launch(const RunAttempt& attempt, const LaunchLimits& limits,
                       const ProgressCallback& progress) override {
    write_worker_config(attempt);
    return launch_local(executable_, ranks(attempt), limits, progress);
  }
  std::optional<RankFailure> collect(const RunAttempt& attempt, json&) override {
    return check_rank_results(attempt);
  }
  void print(const RunAttempt& attempt, std::ostream& out) const override {
    for (const RankProcess& rank : ranks(attempt)) {
      LaunchCommand command;
      for (const auto& [key, value] : rank.environment) command.argv.push_back(key + "=" + value);
      command.argv.push_back(executable_);
      command.argv.insert(command.argv.end(), rank.arguments.begin(), rank.arguments.end());
      out << "  " << render_command(command) << "\n";
    }
  }

 private:
  std::vector<RankProcess> ranks(const RunAttempt& attempt) const {
    std::vector<RankProcess> ranks;
    for (long long r = 0; r < attempt.run.point->config.run.world_size; ++r) {
      ranks.push_back(worker_rank(attempt, r));
    }
    return ranks;
  }

  std::string executable_;
};

// The harness's rank program under mpirun or srun (one launcher process here), or the
// commands torchrun would need on each host.
class ClusterRanks : public RunLauncher {
 public:
  explicit ClusterRanks(const RunnerOptions& options) : options_(options) {}
  LauncherKind kind() const override { return options_.launcher; }
  bool needs_port(const PlannedRun&) const override { return true; }
  LaunchOutcome launch(const RunAttempt& attempt, const LaunchLimits& limits,
                       const ProgressCallback& progress) override {
    write_worker_config(attempt);
    ClusterLaunch launch;
    launch.kind = options_.launcher;
    launch.commands = commands(attempt);
    launch.world_size = static_cast<int>(attempt.run.point->config.run.world_size);
    launch.directory = attempt.raw;
    LaunchOutcome outcome = launch_cluster(launch, limits, progress);
    std::error_code ignored;  // what the agent logged is in its ranks' streams already
    fs::remove_all(torchrun_logs(attempt), ignored);
    return outcome;
  }
  std::optional<RankFailure> collect(const RunAttempt& attempt, json&) override {
    return check_rank_results(attempt);
  }
  void print(const RunAttempt& attempt, std::ostream& out) const override {
    for (const auto& command : commands(attempt)) out << "  " << render_command(command) << "\n";
  }

 private:
  std::vector<LaunchCommand> commands(const RunAttempt& attempt) const {
    if (attempt.network) return on_emulated_machines(attempt);
    std::vector<LaunchCommand> planned = plan_launch(
        options_.launcher, cluster_worker(attempt, options_), options_.hosts, ::geteuid() == 0);
    // torchrun without hosts runs its one agent here: the build's own torchrun. Its log folder
    // goes in the run's folder, removed when the launch ends: by default torchrun makes one in
    // the temp folder (/tmp/torchelastic_*) every launch and leaves it there.
    if (options_.launcher == LauncherKind::torchrun && options_.hosts.empty()) {
      planned.front().argv.front() = torchrun_program();
      planned.front().argv.insert(planned.front().argv.begin() + 1,
                                  "--log_dir=" + torchrun_logs(attempt).string());
    }
    return planned;
  }

  static fs::path torchrun_logs(const RunAttempt& attempt) { return attempt.raw / "torchrun-logs"; }

  // Across emulated machines the machines are the hosts, each command runs on its machine
  // through `harness enter-machine`, and each machine sees the run's folder as an empty folder
  // of its own (rank 0 sends the results in its stream). mpirun runs on machine 0 and starts
  // Open MPI's daemon on the others through enter-machine as its rsh agent; torchrun runs one
  // agent on every machine. Either way the wire-up and the ranks' traffic cross the shaped
  // links.
  std::vector<LaunchCommand> on_emulated_machines(const RunAttempt& attempt) const {
    const NetworkPlan& network = *attempt.network;
    std::vector<HostSlots> hosts;
    for (const auto& machine : network.machines) {
      hosts.push_back({machine.address, network.ranks_per_machine});
    }
    WorkerLaunch worker = cluster_worker(attempt, options_);
    worker.master_addr = hosts.front().host;
    std::vector<LaunchCommand> planned =
        plan_launch(options_.launcher, worker, hosts, ::geteuid() == 0);
    const std::vector<std::string> entry =
        enter_machine_words(options_.harness_executable, network, attempt.raw.string());
    if (options_.launcher == LauncherKind::mpirun) {
      std::vector<std::string> agent = entry;
      agent.push_back("--shell");
      planned.front().argv.insert(planned.front().argv.begin() + 1,
                                  {"--mca", "plm_rsh_agent", join(agent, " ")});
      planned.front().host = hosts.front().host;
    } else {
      for (auto& command : planned) command.argv.front() = torchrun_program();
    }
    std::vector<LaunchCommand> commands;
    for (const auto& command : planned) {
      LaunchCommand& wrapped = commands.emplace_back();
      wrapped.argv = entry;
      wrapped.argv.push_back(command.host);
      wrapped.argv.insert(wrapped.argv.end(), command.argv.begin(), command.argv.end());
    }
    return commands;
  }

  const RunnerOptions& options_;
};

// An external system's program, one local process per rank; its timings are read back into
// the rank CSVs after it exits.
class ExternalProgram : public RunLauncher {
 public:
  explicit ExternalProgram(const SystemConfig& system) : system_(system) {}
  LauncherKind kind() const override { return LauncherKind::local; }
  bool needs_port(const PlannedRun& run) const override {
    return run.point->config.run.rendezvous == "tcp";
  }
  LaunchOutcome launch(const RunAttempt& attempt, const LaunchLimits& limits,
                       const ProgressCallback& progress) override {
    context_ = {&attempt.run.point->config, attempt.run.repeat, attempt.raw, attempt.port,
                attempt.network};
    // External programs rendezvous through MASTER_ADDR/MASTER_PORT (env://), so the TCP port
    // is picked whatever run.rendezvous says.
    if (attempt.port == 0) context_.master_port = pick_free_port();
    launch_ = plan_external_launch(*system_.external, context_);
    write_file_atomic(attempt.raw / "config.json",
                      json_text(external_run_config(system_, launch_), 2) + "\n");
    LaunchOutcome outcome;
    if (launch_.error) {
      outcome.failure = launch_.error;
      return outcome;
    }
    outcome = launch_local(launch_.executable, launch_.ranks, limits, progress);
    // A program that died: say how far it got, as the worker's heartbeats would.
    if (outcome.failure && !outcome.failure->reason.starts_with("hung")) {
      const std::string note =
          external_progress_note(*system_.external, context_, launch_, outcome.failure->rank);
      if (!note.empty()) outcome.failure->reason += " " + note;
    }
    return outcome;
  }
  std::optional<RankFailure> collect(const RunAttempt&, json& status) override {
    json details;
    auto failure = collect_external_samples(*system_.external, context_, launch_, details);
    status["external"] = details;
    return failure;
  }
  void print(const RunAttempt& attempt, std::ostream& out) const override {
    out << "  external system (started by the local launcher): "
        << preview_external_command(*system_.external, attempt.run.point->config,
                                    attempt.run.repeat)
        << "\n";
  }
  bool retries_busy_port() const override { return false; }

 private:
  const SystemConfig& system_;
  ExternalRunContext context_;
  ExternalLaunch launch_;
};

}  // namespace

std::unique_ptr<RunLauncher> make_run_launcher(const PlannedRun& run,
                                               const RunnerOptions& options) {
  if (run.system->external) return std::make_unique<ExternalProgram>(*run.system);
  if (options.launcher == LauncherKind::local) {
    return std::make_unique<LocalRanks>(options.executable);
  }
  return std::make_unique<ClusterRanks>(options);
}

void check_launcher_usable(const RunnerOptions& options) {
  if (options.launcher == LauncherKind::torchrun) {
    if (!options.hosts.empty()) {
      throw InputError(
          "--launcher torchrun: on other hosts torchrun is started by you or your scheduler; "
          "`--print-launch` prints each host's command (experiments/README.md, Launchers)");
    }
    if (torchrun_program().empty()) {
      throw InputError("--launcher torchrun: no torchrun beside the build's torch (" +
                       torch_python() + ") or on PATH");
    }
    return;
  }
  if (options.launcher != LauncherKind::local) {
    const std::string program = options.launcher == LauncherKind::mpirun ? "mpirun" : "srun";
    if (find_program(program).empty()) {
      throw InputError("--launcher " + launcher_name(options.launcher) + ": '" + program +
                       "' is not on PATH" +
                       (program == "mpirun" ? " (Debian: apt-get install openmpi-bin)" : ""));
    }
  }
}

}  // namespace harness
