// One measurement of collectives between local ranks: `harness profile comm` and `harness
// machine` launch the rank program's comm-worker on this host and read back what it timed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/emulation/network_plan.h"
#include "harness/launch/rank_program.h"

namespace harness {

struct CommRequest {
  int world = 2;
  std::string backend = "gloo";
  std::string sizes = "8:64M:x4";
  std::string ops = "allreduce,allgather,reducescatter,alltoall,broadcast,sendrecv,pingpong,copy";
  int iterations = 20;
  int warmup = 5;
  double stall_timeout_s = 300;
  std::string out_dir;
  // An emulated cluster built for the measurement (harness/emulation/emulated_network.h):
  // each rank runs in its machine's namespace and binds Gloo to its address; null: loopback.
  const NetworkPlan* network = nullptr;
  // As CommPhase's: plain c10d's all-reduce timed beside this communicator's.
  bool c10d_reference = false;
  // As CommPhase's: the matrix products each rank computes before every timed operation.
  int after_compute = 0;
};

struct CommMeasurement {
  nlohmann::json raw;  // comm-raw.json, as rank 0 wrote it
  int exit_code = 0;   // 0; 1 when a rank failed (said on stderr); 130 when interrupted
};

// Runs `request.world` comm-worker ranks meeting on a free local port, one thread each, over
// `sizes` and `request.ops`; their files (comm-raw.json, rank<r>.stdout/.stderr) go in `out`.
CommMeasurement measure_comm(const CommRequest& request, const std::vector<int64_t>& sizes,
                             const std::filesystem::path& out, RankProgram& rank_program);

// One of several measurements made by one launch of the ranks (one set of connections): its ops
// over its sizes, `iterations` timed after `warmup` untimed; comm-raw.json in `out`.
struct CommPhase {
  std::string ops;
  std::vector<int64_t> sizes;
  int iterations = 3;
  int warmup = 1;
  std::filesystem::path out;
  // Its all-reduce iterations alternated with plain c10d's (comm-raw.json `reference`): what
  // `harness profile comm` compares its communicator with. Off, the all-reduce takes half the time.
  bool c10d_reference = false;
  // Matrix products (64 x 512 by 512 x 512) every rank computes, untimed, before each timed
  // operation: the operation as a training step meets it, right after compute.
  int after_compute = 0;
};

struct CommSeries {
  std::vector<nlohmann::json> raw;  // each phase's comm-raw.json, in order
  int exit_code = 0;                // as CommMeasurement's
};

// `phases` in order by one launch of `request.world` ranks (the request's ops, iterations and
// warm-up are the phases'); the ranks' stdout/stderr go in `logs`. Creates the folders.
CommSeries measure_comm_phases(const CommRequest& request, const std::vector<CommPhase>& phases,
                               const std::filesystem::path& logs, RankProgram& rank_program);

// Send/recv and all-reduce among the first `ranks_per_machine` ranks of `cluster_request`'s
// emulated cluster, all in machine 0 (its namespace's loopback): what the machines' own links
// give (intra_machine_fits reads them).
CommMeasurement measure_intra_machine(const CommRequest& cluster_request, int ranks_per_machine,
                                      const std::vector<int64_t>& sizes,
                                      const std::filesystem::path& out, RankProgram& rank_program);

}  // namespace harness
