#include "harness/emulation/network_plan.h"

#include <algorithm>
#include <cstdlib>

#include "harness/emulation/link_quantities.h"

namespace harness {
namespace {

const std::string kPrefix = "harness-";

// tbf's bucket: 1 ms of the rate, and at least 8 KiB (a few full-size frames; tbf cuts larger
// GSO packets to fit). A real link has no burst at all: a deep bucket lets a pipeline's small
// transfers pass at the host's speed (10 ms of 100 Mbit/s holds 125 KB) and inflates what
// short transfers measure; the kernel's high-resolution timers keep the rate with 1 ms. Its
// queue holds 100 ms before it drops.
std::string tbf_burst(double bits_per_second) {
  return std::to_string(token_bucket_bytes(bits_per_second)) + "b";
}

}  // namespace

long long token_bucket_bytes(double bits_per_second) {
  return static_cast<long long>(std::max(8.0 * 1024, bits_per_second / 8 / 1000));
}

std::vector<Command> link_shaping_commands(const std::string& netns, const LinkShape& link) {
  std::vector<Command> commands;
  const bool netem = link.delay_s > 0 || link.loss_percent > 0;
  if (link.rate_bits_per_s) {
    // TCP small queues: what one socket may keep queued below it. The default (4 MiB here) is
    // a second of a 30 Mbit/s link, which fills the token bucket's queue past its limit (drops,
    // retransmission timeouts) and holds the ACKs of the opposite direction behind it (one
    // FIFO; the kernel may have no fq_codel to keep flows apart). A few ms of the rate, at
    // least 64 KiB, keeps the link busy without either.
    const double queued = std::max(64.0 * 1024, *link.rate_bits_per_s / 8 * 0.002);
    commands.push_back({"ip", "netns", "exec", netns, "sh", "-c",
                        "echo " + std::to_string(static_cast<long long>(queued)) +
                            " > /proc/sys/net/ipv4/tcp_limit_output_bytes"});
  }
  const Command tc = {"ip", "netns", "exec", netns, "tc", "qdisc", "add", "dev", kMachineInterface};
  if (netem) {
    Command command = tc;
    command.insert(command.end(), {"root", "handle", "1:", "netem"});
    if (link.delay_s > 0) command.insert(command.end(), {"delay", tc_delay(link.delay_s)});
    if (link.loss_percent > 0) command.insert(command.end(), {"loss", tc_loss(link.loss_percent)});
    commands.push_back(command);
  }
  if (link.rate_bits_per_s) {
    Command command = tc;
    if (netem) {
      command.insert(command.end(), {"parent", "1:1", "handle", "10:"});
    } else {
      command.insert(command.end(), {"root", "handle", "1:"});
    }
    command.insert(command.end(), {"tbf", "rate", tc_rate(*link.rate_bits_per_s), "burst",
                                   tbf_burst(*link.rate_bits_per_s), "latency", "100ms"});
    commands.push_back(command);
  }
  return commands;
}

const EmulatedMachine& NetworkPlan::machine_of(int rank) const {
  return machines.at(static_cast<size_t>(rank / std::max(1, ranks_per_machine)));
}

NetworkPlan plan_network(const EmulatedClusterShape& shape, int owner_pid) {
  NetworkPlan plan;
  plan.prefix = kPrefix + std::to_string(owner_pid) + "-";
  plan.switch_netns = plan.prefix + "sw";
  plan.ranks_per_machine = shape.ranks_per_machine;
  const std::string& sw = plan.switch_netns;
  plan.setup = {{"ip", "netns", "add", sw},
                {"ip", "-n", sw, "link", "set", "lo", "up"},
                {"ip", "-n", sw, "link", "add", "br0", "type", "bridge"},
                {"ip", "-n", sw, "link", "set", "br0", "up"}};
  for (int k = 0; k < shape.machines; ++k) {
    EmulatedMachine machine{
        plan.prefix + "m" + std::to_string(k),
        "10.99." + std::to_string((k + 1) / 256) + "." + std::to_string((k + 1) % 256)};
    const std::string port = "m" + std::to_string(k);  // the machine's end in the switch
    const std::string& ns = machine.netns;
    plan.setup.insert(plan.setup.end(), {{"ip", "netns", "add", ns},
                                         {"ip", "-n", ns, "link", "set", "lo", "up"},
                                         {"ip", "-n", ns, "link", "add", kMachineInterface, "type",
                                          "veth", "peer", "name", port, "netns", sw},
                                         {"ip", "-n", sw, "link", "set", port, "master", "br0"},
                                         {"ip", "-n", sw, "link", "set", port, "up"},
                                         {"ip", "-n", ns, "addr", "add", machine.address + "/16",
                                          "dev", kMachineInterface},
                                         {"ip", "-n", ns, "link", "set", kMachineInterface, "up"}});
    const auto shaping = link_shaping_commands(ns, shape.inter_machine);
    plan.setup.insert(plan.setup.end(), shaping.begin(), shaping.end());
    plan.machines.push_back(machine);
  }
  for (const auto& machine : plan.machines)
    plan.teardown.push_back({"ip", "netns", "del", machine.netns});
  plan.teardown.push_back({"ip", "netns", "del", sw});
  return plan;
}

std::string describe_network_plan(const NetworkPlan& plan) {
  std::string text = "emulated cluster: " + std::to_string(plan.machines.size()) +
                     " machine(s) joined through " + plan.switch_netns + "\n";
  for (const auto& machine : plan.machines) {
    text += "  " + machine.netns + "  " + kMachineInterface + " " + machine.address + "\n";
  }
  text += "commands:\n";
  for (const auto& command : plan.setup) {
    std::string line;
    for (const auto& word : command) line += (line.empty() ? "" : " ") + word;
    text += "  " + line + "\n";
  }
  text += "removed afterwards with: ";
  for (size_t i = 0; i < plan.teardown.size(); ++i) {
    text += (i ? ", " : "") + plan.teardown[i].back();
  }
  return text + " (ip netns del)\n";
}

std::vector<std::string> stale_namespaces(const std::vector<std::string>& listed,
                                          const std::function<bool(int)>& alive) {
  std::vector<std::string> stale;
  for (const auto& line : listed) {
    const std::string name = line.substr(0, line.find(' '));
    if (name.rfind(kPrefix, 0) != 0) continue;
    const std::string rest = name.substr(kPrefix.size());
    const size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos) continue;
    const std::string digits = rest.substr(0, dash);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    if (!alive(std::atoi(digits.c_str()))) stale.push_back(name);
  }
  return stale;
}

}  // namespace harness
