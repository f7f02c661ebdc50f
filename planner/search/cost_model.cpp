#include "planner/search/cost_model.h"

#include <algorithm>

namespace harness::planner {

double CostModel::in_machine_all_reduce(int n, double bytes) const {
  if (n <= 1) return 0.0;
  // A measured all-reduce bus bandwidth already holds however many rings the machine runs.
  if (topology_.intra_machine_collective_bandwidth > 0) {
    return bytes * 2.0 * (n - 1) / n / topology_.intra_machine_collective_bandwidth;
  }
  // NVLink machines run n/2 rings at once (integer division, as in the published planner).
  return bytes * 2.0 * (n - 1) / n / topology_.intra_machine_bandwidth / (n / 2);
}

double CostModel::all_reduce(const GpuSet& gpus, double bytes) const {
  const int n = gpus.size();
  if (n <= 1) return 0.0;
  if (!gpus.spans_machines()) return in_machine_all_reduce(n, bytes);
  const double flat = bytes * 2.0 * (n - 1) / n / topology_.inter_machine_collective_bandwidth;
  if (mode_ == PlannerMode::kCompat) return flat;
  // Hierarchical: reduce inside each machine, all-reduce across machines, broadcast inside.
  // The busiest machine sets the in-machine part; every machine's NIC carries the whole
  // gradient once around the cross-machine ring.
  const int busiest = gpus.busiest;
  const int machines = gpus.machines_used;
  const double hierarchical =
      in_machine_all_reduce(busiest, bytes) +
      bytes * 2.0 * (machines - 1) / machines / topology_.inter_machine_collective_bandwidth;
  return std::min(flat, hierarchical);
}

double CostModel::transfer(const GpuSet& from, const GpuSet& to, double bytes) const {
  if (!to.spans_machines()) {
    // Senders on another machine than the receivers push their share over Ethernet.
    const int remote = from.size() - from.count_on(devices_, to.first_machine);
    if (remote > 0) {
      return bytes / from.size() * remote / topology_.inter_machine_p2p_bandwidth;
    }
    return bytes / topology_.intra_machine_bandwidth;
  }
  const bool crosses = std::min(from.first_machine, to.first_machine) !=
                       std::max(from.last_machine, to.last_machine);
  return bytes / (crosses ? topology_.inter_machine_collective_bandwidth
                          : topology_.intra_machine_bandwidth);
}

}  // namespace harness::planner
