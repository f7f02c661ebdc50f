// A cluster of machines on one host (issue 21): each emulated machine is a network namespace
// holding its ranks, joined to the others through a veth pair into a switch namespace (a
// bridge), with the inter-machine link shaped on each machine's side (netem for delay and
// loss, tbf for the rate: every byte between two machines leaves one of them through its
// shaped egress). Ranks of one machine talk over their namespace's own loopback.
//
// The plan is data: the namespaces, addresses and the exact iproute2/tc commands that build
// and remove them, so that --dry-run can print it and tests can read it. Everything carries
// the prefix "harness-<pid>-" of the harness that made it; nothing has a route out (the
// namespaces are joined only to each other), and the next harness removes a dead one's.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace harness {

struct LinkShape {
  std::optional<double> rate_bits_per_s;  // nothing: unshaped
  double delay_s = 0;
  double loss_percent = 0;
  bool operator==(const LinkShape&) const = default;
};

struct EmulatedClusterShape {
  int machines = 2;
  int ranks_per_machine = 1;
  LinkShape inter_machine;
  bool operator==(const EmulatedClusterShape&) const = default;
};

struct EmulatedMachine {
  std::string netns;    // "harness-<pid>-m0"
  std::string address;  // "10.99.0.1": its end of the link, eth0
};

using Command = std::vector<std::string>;

struct NetworkPlan {
  std::string prefix;        // "harness-<pid>-"
  std::string switch_netns;  // "harness-<pid>-sw"
  std::vector<EmulatedMachine> machines;
  std::vector<Command> setup;     // in order; a failure means teardown
  std::vector<Command> teardown;  // every namespace deleted (their links and qdiscs go with them)
  int ranks_per_machine = 1;

  // The machine rank `rank` runs on: ranks fill machine 0 first.
  const EmulatedMachine& machine_of(int rank) const;
};

// The interface every machine reaches the others through.
inline constexpr const char* kMachineInterface = "eth0";

NetworkPlan plan_network(const EmulatedClusterShape& shape, int owner_pid);

// The commands that shape `link` on the machine interface of namespace `netns` (none for an
// unshaped link): the plan's, and `harness shape-link`'s for machines made by others
// (scripts/emulated-slurm.sh), so that a link is the same link whoever built the machines.
std::vector<Command> link_shaping_commands(const std::string& netns, const LinkShape& link);

// The token bucket of a link shaped to `bits_per_second`, in bytes: what a transfer finding it
// full passes at the host's speed before the rate holds (the simulator models it:
// `simulate.cluster.inter_burst_bytes`).
long long token_bucket_bytes(double bits_per_second);

// What --dry-run prints: the namespaces, their addresses, and every command.
std::string describe_network_plan(const NetworkPlan& plan);

// Namespaces made by harnesses that are gone ("harness-<pid>-..." with `alive(pid)` false),
// from a list as `ip netns list` gives it (first word of each line).
std::vector<std::string> stale_namespaces(const std::vector<std::string>& listed,
                                          const std::function<bool(int)>& alive);

}  // namespace harness
