// Building and removing a NetworkPlan on this host (needs root or CAP_NET_ADMIN; iproute2).
#pragma once

#include <string>

#include "harness/emulation/network_plan.h"

namespace harness {

// Why this host cannot build the network `shape` asks for, in one line ("" when it can): not
// root, no `ip` or `tc`, a namespace that cannot be made or entered (a chroot), or a kernel
// without the qdisc a link needs (netem for delay and loss, tbf for a rate), found by trying
// it in a namespace of its own.
std::string emulation_unavailable_reason(const EmulatedClusterShape& shape);

// The plan's namespaces, links and qdiscs for as long as it lives: built in the constructor
// (a failing command removes what was made and throws std::runtime_error naming the command
// and what it printed), removed in the destructor.
class EmulatedNetwork {
 public:
  explicit EmulatedNetwork(NetworkPlan plan);
  ~EmulatedNetwork();
  EmulatedNetwork(const EmulatedNetwork&) = delete;
  EmulatedNetwork& operator=(const EmulatedNetwork&) = delete;

  const NetworkPlan& plan() const { return plan_; }

 private:
  NetworkPlan plan_;
};

// Removes the namespaces of harnesses that died without removing theirs; returns their names.
std::vector<std::string> remove_stale_namespaces();

}  // namespace harness
