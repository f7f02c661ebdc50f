#include "harness/launch/launch_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "common/input_error.h"
#include "common/text_util.h"

namespace harness {
namespace {

// The worker's own arguments, the same under every launcher but for where its rank comes from.
std::vector<std::string> worker_arguments(const WorkerLaunch& worker, const std::string& source,
                                          bool pass_master_addr) {
  std::vector<std::string> args = {
      worker.executable,  "worker", "--rank-from",  source,         "--config-json",
      worker.config_json, "--out",  worker.out_dir, "--rendezvous", "tcp"};
  if (pass_master_addr) {
    args.insert(args.end(), {"--master-addr", worker.master_addr});
  }
  args.insert(args.end(), {"--master-port", std::to_string(worker.master_port), "--emit-results"});
  if (!worker.rendezvous_key.empty()) {
    args.insert(args.end(), {"--rendezvous-key", worker.rendezvous_key});
  }
  return args;
}

long long total_slots(const std::vector<HostSlots>& hosts) {
  long long total = 0;
  for (const auto& h : hosts) total += h.slots;
  return total;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

LauncherKind parse_launcher(const std::string& name) {
  if (name == "local") return LauncherKind::local;
  if (name == "mpirun") return LauncherKind::mpirun;
  if (name == "slurm") return LauncherKind::slurm;
  if (name == "torchrun") return LauncherKind::torchrun;
  throw InputError("--launcher: expected local, mpirun, slurm or torchrun, got '" + name + "'");
}

std::string launcher_name(LauncherKind kind) {
  switch (kind) {
    case LauncherKind::local:
      return "local";
    case LauncherKind::mpirun:
      return "mpirun";
    case LauncherKind::slurm:
      return "slurm";
    case LauncherKind::torchrun:
      return "torchrun";
  }
  return "?";
}

std::vector<HostSlots> parse_hosts(const std::string& text) {
  std::vector<HostSlots> hosts;
  if (text.empty()) return hosts;
  for (const auto& entry : split(text, ',')) {
    HostSlots host;
    const auto colon = entry.find(':');
    host.host = entry.substr(0, colon);
    if (colon != std::string::npos) {
      const std::string count = entry.substr(colon + 1);
      const bool digits =
          !count.empty() && count.size() < 7 && std::all_of(count.begin(), count.end(), ::isdigit);
      host.slots = digits ? std::stoi(count) : 0;
    }
    if (host.host.empty() || host.slots < 1 ||
        host.host.find_first_of(" \t") != std::string::npos) {
      throw InputError("--hosts: expected host[:slots],... with slots >= 1, got '" + entry + "'");
    }
    hosts.push_back(host);
  }
  return hosts;
}

std::string master_address(const std::vector<HostSlots>& hosts) {
  return hosts.empty() ? "127.0.0.1" : hosts.front().host;
}

std::vector<LaunchCommand> plan_launch(LauncherKind kind, const WorkerLaunch& worker,
                                       const std::vector<HostSlots>& hosts, bool as_root) {
  if (!hosts.empty() && total_slots(hosts) < worker.world_size) {
    throw InputError("--hosts: " + std::to_string(total_slots(hosts)) +
                     " slot(s) cannot hold run.world_size = " + std::to_string(worker.world_size) +
                     " ranks");
  }
  const std::string threads = std::to_string(worker.threads_per_rank);
  const std::string world = std::to_string(worker.world_size);
  switch (kind) {
    case LauncherKind::local:
      throw InputError("the local launcher starts its ranks itself; it has no command line");
    case LauncherKind::mpirun: {
      // --oversubscribe: more ranks than cores is fine for tests; --bind-to none: a rank's
      // intra-op threads are not pinned to one core; --tag-output: every chunk of a rank's
      // output carries "[job,rank]<stdout>:", which the harness splits per rank.
      LaunchCommand command;
      command.argv = {"mpirun", "--oversubscribe", "--bind-to", "none", "--tag-output"};
      if (as_root) command.argv.push_back("--allow-run-as-root");
      append(command.argv, {"-np", world});
      if (!hosts.empty()) {
        std::vector<std::string> list;
        for (const auto& h : hosts) list.push_back(h.host + ":" + std::to_string(h.slots));
        append(command.argv, {"--host", join(list, ",")});
      }
      append(command.argv, {"-x", "OMP_NUM_THREADS=" + threads});
      for (const auto& name : worker.forwarded_variables) append(command.argv, {"-x", name});
      append(command.argv, worker_arguments(worker, "openmpi", true));
      return {command};
    }
    case LauncherKind::slurm: {
      // Task 0 runs on the first node of the step; the worker takes the master address from
      // SLURM_STEP_NODELIST. --label prefixes every line with its task number.
      LaunchCommand command;
      command.argv = {"srun",
                      "--ntasks=" + world,
                      "--cpus-per-task=" + threads,
                      "--distribution=block",
                      "--kill-on-bad-exit=1",
                      "--label"};
      if (!hosts.empty()) {
        std::vector<std::string> names;
        for (const auto& h : hosts) names.push_back(h.host);
        append(command.argv,
               {"--nodes=" + std::to_string(hosts.size()), "--nodelist=" + join(names, ",")});
      }
      command.argv.push_back("--export=ALL,OMP_NUM_THREADS=" + threads);
      append(command.argv, worker_arguments(worker, "slurm", false));
      return {command};
    }
    case LauncherKind::torchrun: {
      // torchrun runs on every node with the same number of workers; its agent serves the
      // store on the master port and the workers join it as clients.
      const long long nodes = hosts.empty() ? 1 : static_cast<long long>(hosts.size());
      if (worker.world_size % nodes != 0) {
        throw InputError("--launcher torchrun: run.world_size = " + world +
                         " ranks do not divide evenly over " + std::to_string(nodes) + " hosts");
      }
      const long long per_node = worker.world_size / nodes;
      for (const auto& h : hosts) {
        if (h.slots < per_node) {
          throw InputError("--launcher torchrun: host " + h.host + " has " +
                           std::to_string(h.slots) + " slot(s), " + std::to_string(per_node) +
                           " ranks per host needed");
        }
      }
      std::vector<LaunchCommand> commands;
      for (long long node = 0; node < nodes; ++node) {
        LaunchCommand command;
        command.host = hosts.empty() ? "" : hosts[node].host;
        command.argv = {"torchrun",
                        "--nnodes=" + std::to_string(nodes),
                        "--nproc_per_node=" + std::to_string(per_node),
                        "--node_rank=" + std::to_string(node),
                        "--master_addr=" + worker.master_addr,
                        "--master_port=" + std::to_string(worker.master_port),
                        "--max_restarts=0",
                        "--tee=3",  // its ranks' lines prefixed "[default<local rank>]:"
                        "--no_python"};
        auto args = worker_arguments(worker, "torchrun", false);
        // The agent owns MASTER_PORT; the worker must not pass it as its own server port.
        const auto port = std::find(args.begin(), args.end(), "--master-port");
        args.erase(port, port + 2);
        append(command.argv, args);
        commands.push_back(command);
      }
      return commands;
    }
  }
  return {};
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (const auto& folder : split(path ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = (folder.empty() ? "." : folder) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string render_command(const LaunchCommand& command) {
  std::vector<std::string> words;
  for (const auto& word : command.argv) words.push_back(shell_quote(word));
  std::string line = join(words, " ");
  if (!command.host.empty()) line = "[on " + command.host + "] " + line;
  return line;
}

}  // namespace harness
