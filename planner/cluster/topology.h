// Bandwidths and GPU memory of a cluster. The published planner hard-codes V100-era constants;
// dapple mode reads them from a YAML topology file (planner/topologies/v100_8x2.yaml is the
// cluster of the paper).
#pragma once

#include <string>
#include <vector>

namespace harness::planner {

struct Topology {
  std::string name = "published-v100";
  double gpu_memory_bytes = 16e9;
  double intra_machine_bandwidth = 25e9;            // NVLink point to point, B/s
  double inter_machine_p2p_bandwidth = 1e9;         // Ethernet point to point, B/s
  double inter_machine_collective_bandwidth = 3e9;  // NCCL over Ethernet, B/s
  // All-reduce bus bandwidth among one machine's GPUs as measured (B/s); 0: none given, and an
  // in-machine all-reduce is priced as the published planner does, from intra_machine_bandwidth
  // with n/2 rings at once (NVLink). Measured topologies of CPU ranks carry it: there Gloo's
  // all-reduce over loopback runs at under half of send/recv's rate.
  double intra_machine_collective_bandwidth = 0;
  std::vector<int> gpus_per_machine;  // default layout; empty if not given

  // The constants of the published planner (HPGO 0.9.2).
  static Topology published_constants() { return Topology{}; }
};

// Loads a topology file; InputError "file:line:column: what" on malformed or unknown keys.
Topology load_topology(const std::string& path);

// The default topology file shipped with the planner (absolute path, from the source tree).
std::string default_topology_path();

}  // namespace harness::planner
