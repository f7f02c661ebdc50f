#include "harness/emulation/emulated_network.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <stdexcept>

#include "common/child_process.h"

namespace harness {
namespace {

void run_all(const std::vector<Command>& commands, bool stop_at_failure) {
  for (const auto& command : commands) {
    const CapturedOutput result =
        run_captured(command.front(), {command.begin() + 1, command.end()});
    if (result.exit_code == 0 || !stop_at_failure) continue;
    std::string line;
    for (const auto& word : command) line += (line.empty() ? "" : " ") + word;
    throw std::runtime_error("emulated network: '" + line + "' failed (exit " +
                             std::to_string(result.exit_code) + "): " + first_line_said(result));
  }
}

bool on_path(const char* program) {
  return run_captured("sh", {"-c", std::string("command -v ") + program}).exit_code == 0;
}

}  // namespace

std::string emulation_unavailable_reason(const EmulatedClusterShape& shape) {
  if (::geteuid() != 0) {
    return "emulated networks need root (network namespaces, veth pairs and tc qdiscs)";
  }
  for (const char* program : {"ip", "tc"}) {
    if (!on_path(program)) {
      return std::string("emulated networks need iproute2 (no `") + program + "`)";
    }
  }
  std::vector<std::pair<std::string, Command>> qdiscs;
  if (shape.inter_machine.delay_s > 0 || shape.inter_machine.loss_percent > 0) {
    qdiscs.push_back({"netem (delay, loss)", {"netem", "delay", "1ms"}});
  }
  if (shape.inter_machine.rate_bits_per_s) {
    qdiscs.push_back(
        {"tbf (rate)", {"tbf", "rate", "1mbit", "burst", "32kbit", "latency", "100ms"}});
  }
  // Tried in a namespace of its own, so that nothing of this host's own links is touched.
  const std::string probe = "harness-" + std::to_string(::getpid()) + "-probe";
  if (run_captured("ip", {"netns", "add", probe}).exit_code != 0) {
    return "cannot create a network namespace here";
  }
  std::string missing;
  // iproute2 enters a namespace in a mount namespace of its own, whose / it first makes a slave
  // mount: where / is no mount point (a chroot) that fails, and every machine's set-up with it.
  if (const CapturedOutput entered = run_captured("ip", {"-n", probe, "link", "set", "lo", "up"});
      entered.exit_code != 0) {
    missing = "cannot enter a network namespace here (ip -n NAME link set lo up: " +
              first_line_said(entered) + ")";
    qdiscs.clear();
  }
  for (const auto& [what, qdisc] : qdiscs) {
    Command command = {"netns", "exec", probe, "tc", "qdisc", "add", "dev", "lo", "root"};
    command.insert(command.end(), qdisc.begin(), qdisc.end());
    if (run_captured("ip", command).exit_code != 0) {
      missing =
          "this kernel has no " + what + " qdisc (tc qdisc add ... " + qdisc.front() + " failed)";
      break;
    }
    run_captured("ip", {"netns", "exec", probe, "tc", "qdisc", "del", "dev", "lo", "root"});
  }
  run_captured("ip", {"netns", "del", probe});
  return missing;
}

EmulatedNetwork::EmulatedNetwork(NetworkPlan plan) : plan_(std::move(plan)) {
  try {
    run_all(plan_.setup, true);
  } catch (...) {
    run_all(plan_.teardown, false);
    throw;
  }
}

EmulatedNetwork::~EmulatedNetwork() { run_all(plan_.teardown, false); }

std::vector<std::string> remove_stale_namespaces() {
  const CapturedOutput listed = run_captured("ip", {"netns", "list"});
  std::vector<std::string> lines;
  std::istringstream text(listed.out);
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  const auto stale = stale_namespaces(lines, [](int pid) {
    return ::kill(pid, 0) == 0 || errno == EPERM;  // EPERM: alive, another user's
  });
  for (const auto& name : stale) run_captured("ip", {"netns", "del", name});
  return stale;
}

}  // namespace harness
