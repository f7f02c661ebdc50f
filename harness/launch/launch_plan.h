// The command line that starts the ranks of one run under a cluster launcher: Open MPI's
// mpirun, Slurm's srun or torchrun. The harness builds it (and `--print-launch` shows it);
// every rank is `harness-rank worker` reading its identity from that launcher's environment
// (runtime/protocol/rank_identity.h) and its config inline (no shared file system). Torch-free.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace harness {

enum class LauncherKind { local, mpirun, slurm, torchrun };

// "local", "mpirun", "slurm", "torchrun"; InputError otherwise.
LauncherKind parse_launcher(const std::string& name);
std::string launcher_name(LauncherKind kind);

struct HostSlots {
  std::string host;
  int slots = 1;
};

// "h1:8,h2:8" (a host without ":n" has 1 slot); InputError on a malformed list.
std::vector<HostSlots> parse_hosts(const std::string& text);

// What every rank of one run gets, whatever starts it.
struct WorkerLaunch {
  std::string executable;  // the harness binary
  std::string config_json;
  std::string out_dir;  // the run's raw folder (created on each host)
  long long world_size = 1;
  long long threads_per_rank = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  std::string rendezvous_key;  // the run's key space in the store; empty: none
  // Variables of the harness's environment to pass on to remote ranks (HARNESS_FAULT, ...).
  std::vector<std::string> forwarded_variables;
};

struct LaunchCommand {
  std::string host;               // torchrun: the host to run it on; "" = here
  std::vector<std::string> argv;  // argv[0] is the launcher program
};

// mpirun and srun: one command started here. torchrun: one per host (torchrun runs on every
// node); without hosts, one here. InputError when the hosts cannot hold world_size ranks, or
// (torchrun) the ranks do not divide evenly over the hosts.
std::vector<LaunchCommand> plan_launch(LauncherKind kind, const WorkerLaunch& worker,
                                       const std::vector<HostSlots>& hosts, bool as_root);

// Rank 0's host: the first of `hosts`, or 127.0.0.1 when there are none.
std::string master_address(const std::vector<HostSlots>& hosts);

// The program's path when `name` is found on PATH, else "".
std::string find_program(const std::string& name);

// A POSIX shell word: unchanged when it needs no quoting, else in single quotes.
std::string shell_quote(const std::string& word);
// The command as one shell line ("[on HOST] argv...").
std::string render_command(const LaunchCommand& command);

}  // namespace harness
