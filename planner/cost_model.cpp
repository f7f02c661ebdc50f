#include "planner/cost_model.h"

#include <algorithm>
#include <vector>

namespace harness::planner {

double CostModel::in_machine_all_reduce(int n, double bytes) const {
  if (n <= 1) return 0.0;
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
  std::vector<int> per_machine(devices_.num_machines(), 0);
  for (int g : gpus.ids) ++per_machine[devices_.machine_of(g)];
  const int busiest = *std::max_element(per_machine.begin(), per_machine.end());
  const int machines = static_cast<int>(
      std::count_if(per_machine.begin(), per_machine.end(), [](int c) { return c > 0; }));
  const double hierarchical =
      in_machine_all_reduce(busiest, bytes) +
      bytes * 2.0 * (machines - 1) / machines / topology_.inter_machine_collective_bandwidth;
  return std::min(flat, hierarchical);
}

double CostModel::transfer(const GpuSet& from, const GpuSet& to, double bytes) const {
  if (!to.spans_machines()) {
    // Senders on another machine than the receivers push their share over Ethernet.
    const int receiving_machine = to.first_machine;
    int remote = 0;
    for (int g : from.ids) remote += devices_.machine_of(g) != receiving_machine;
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
