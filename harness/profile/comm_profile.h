// Communication profiles in the manner of nccl-tests: per op and size, latency percentiles,
// algorithm bandwidth (bytes / time) and bus bandwidth (algbw times the op's bus factor:
// all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n, broadcast and send/recv 1),
// and a latency + size/bandwidth model fitted per op.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/emulation/network_plan.h"

namespace harness {

// "8", "4K", "256M", "1G" (powers of 1024); InputError on anything else.
int64_t parse_byte_size(const std::string& text);

// "8:256M:x2" (first:last:xfactor) or "1M:8M:+1M" (additive step) or "1K,4K,64K".
std::vector<int64_t> parse_size_range(const std::string& text);

double bus_factor(const std::string& op, int world_size);

struct CommRow {
  std::string op;
  int64_t bytes = 0;
  size_t samples = 0;
  double p50_ms = 0;
  double p90_ms = 0;
  // The mean: what an iteration that holds many such operations pays for each on average. A
  // small collective's time has a long tail on shared cores, so its mean stands well above its
  // p50. 0: not recorded (an older comm.json).
  double mean_ms = 0;
  double algbw_gbps = 0;  // GB/s (1e9 bytes), from the p50 time
  double busbw_gbps = 0;
  // The process CPU time its timed iterations took over their wall time: cores a rank keeps
  // busy while the op runs (on CPU, Gloo's threads; 1 = a whole core). 0: not measured.
  double cpu_cores = 0;
  double wall_ms_total = 0, cpu_ms_total = 0;
  // Ping-pong and burst: the p50 of the initiator's send calls alone (from the call to its
  // return, the receive posted); unset where the comm-worker did not time them (an older
  // profile).
  std::optional<double> send_call_p50_ms;
};

struct CommFit {
  std::string op;
  double latency_us = 0;     // intercept
  double bus_bandwidth = 0;  // bytes/s: time = latency + bytes * bus_factor / bus_bandwidth
  double r_squared = 0;
  double cpu_cores = 0;  // over the op's rows, weighted by their time (0: not measured)
};

// comm.json's `fits` entries (op, latency_us, bus_bandwidth_bytes_per_s, r_squared,
// cpu_cores_per_rank): written by `harness profile comm` and read by the simulator and HiDup's
// search through these two alone. comm_fits skips entries that are not objects naming an op,
// and keeps each figure as written (a negative fitted latency too: readers decide).
nlohmann::json to_json(const CommFit& fit);
std::vector<CommFit> comm_fits(const nlohmann::json& comm);

// Rows from the comm-worker's JSON (see runtime/profile/comm_benchmark.h).
std::vector<CommRow> comm_rows(const nlohmann::json& measurement);

// Which time of a size a fit rests on: its p50, or its mean (the p50 where a row has none).
enum class CommTime { kMedian, kMean };

// Least squares of each size's time against bytes * bus factor, over the rows of one op.
CommFit fit_comm_model(const std::vector<CommRow>& rows, const std::string& op, int world_size,
                       CommTime time = CommTime::kMedian);

// comm.json's `rows` (op, bytes, p50_ms, mean_ms): what a reader refits from; entries that
// are not objects naming an op are skipped.
std::vector<CommRow> comm_rows_of(const nlohmann::json& comm);

// comm.json's fits as the simulator and HiDup's search price them. An iteration holds many
// collectives and pays each one's mean time, not its p50: on shared cores a small collective's
// time has a long tail (simulator/README.md). So each collective's fit (all-reduce, all-gather,
// reduce-scatter, all-to-all) is refitted on its rows' means where they record them (its CPU
// share kept); point-to-point fits and older files keep their p50 fits.
std::vector<CommFit> priced_fits(const nlohmann::json& comm);

// The fit, or where its bandwidth is not positive (a few noisy sizes on a fast link) the bus
// bandwidth of the largest size alone, with no latency: a bandwidth to price transfers by.
CommFit fit_or_largest(const std::vector<CommRow>& rows, const std::string& op, int world_size);

// What one machine's own links give, from a measurement among its ranks (measure_intra_machine):
// the send/recv fit and the all-reduce fit, each else its largest size (fit_or_largest).
std::vector<CommFit> intra_machine_fits(const std::vector<CommRow>& rows, int ranks_per_machine);

// nccl-tests-like columns.
std::string render_comm_table(const std::vector<CommRow>& rows, int world_size,
                              const std::string& backend);

// What a topology file the planner reads says (planner/README.md), and why, in its comment.
struct TopologyFigures {
  std::string name;
  std::string comment;  // lines written above the values, each prefixed "# "
  double memory_bytes = 0;
  double intra_machine = 0;             // bytes/s between ranks of one machine
  double inter_machine_p2p = 0;         // bytes/s of a point-to-point transfer between machines
  double inter_machine_collective = 0;  // all-reduce bus bandwidth across machines
  // All-reduce bus bandwidth among the ranks of one machine; 0: not measured (not written).
  // On CPU ranks it is well below send/recv's (Gloo reduces on the rank's own core: 0.92
  // against 2.17 GB/s over loopback here), so a stage's replicas are priced by it.
  double intra_machine_collective = 0;
  std::vector<int> machines;  // ranks per machine
};

std::string topology_yaml(const TopologyFigures& figures);

// The figures of one machine of `world_size` ranks: intra-machine bandwidth from the send/recv
// fit, collective bandwidth (intra- and inter-machine) from all-reduce's (inter-machine values
// repeat them). Throws InputError when either fit has no positive bandwidth.
TopologyFigures loopback_topology(const std::vector<CommFit>& fits, int world_size,
                                  double memory_bytes, const std::string& name);

// What the links between emulated machines delivered, from fits over ranks spread on them:
// point-to-point bandwidth (ping-pong's fit: one direction at a time, as a pipeline's
// activations go; else send/recv's, both directions at once), all-reduce bus bandwidth and
// one-way latency: the p50 one-way time of the smallest ping-pong message (not the fit's
// intercept: a token bucket lets small transfers through at line rate, which bends the line);
// 0 or nothing where the op was not measured.
struct MeasuredLink {
  double p2p_bytes_per_s = 0;
  double allreduce_bus_bytes_per_s = 0;
  std::optional<double> one_way_latency_us;
  // What of a core each rank's process kept busy through the all-reduce (CPU time over wall
  // time, the sizes weighed by their time): the simulator's comm_cores_per_rank, for machines
  // that share one host's cores. Unset where the measurement has no CPU times.
  std::optional<double> allreduce_cpu_cores_per_rank;
  // The same for the all-reduce among one machine's ranks (intra_machine_fits; over loopback
  // two ranks keep 0.7-0.85 of a core each busy): the simulator's intra_comm_cores_per_rank.
  // Unset where no machine has two ranks.
  std::optional<double> intra_allreduce_cpu_cores_per_rank;
  // A message that leaves after its link idled (the `burst` ping-pong, an emulated link's
  // token bucket full): the smallest one's one-way time, and the bandwidth of the host's own
  // path below the bucket's size (0: not resolved above the noise: at once, or no faster than
  // the link's p2p rate). Unset where the op was not measured (an unshaped link has no bucket).
  std::optional<double> burst_latency_us;
  double burst_bytes_per_s = 0;
  // What the burst's send call held its thread for, by size ({bytes, us}, ascending): the
  // simulator's inter_send_call_us. Empty where not measured.
  std::vector<std::pair<int64_t, double>> send_call_us;
  // What a message longer than the bucket took beyond the burst model of it (the burst's
  // latency and path for the bucket's bytes, the rest at p2p_bytes_per_s): the median over the
  // sizes past the bucket (past_bucket_latency_us below), microseconds, negative where faster.
  // The simulator's inter_past_bucket_latency_us. Unset where not measured.
  std::optional<double> past_bucket_latency_us;
  // The all-gather's and reduce-scatter's fits (latency of the whole op, bus bandwidth), where
  // the probe measured them (a study with sharded systems).
  std::optional<double> allgather_latency_us, reducescatter_latency_us;
  double allgather_bus_bytes_per_s = 0, reducescatter_bus_bytes_per_s = 0;
};
MeasuredLink measured_link(const std::vector<CommFit>& fits, const std::vector<CommRow>& rows,
                           const std::vector<CommFit>& intra_fits = {});
nlohmann::json to_json(const MeasuredLink& link);

// MeasuredLink::past_bucket_latency_us from `burst` rows of messages longer than a token bucket
// of `bucket_bytes` (the others are left out), given the link's burst figures and p2p rate;
// unset where there is no such row, no burst latency or no p2p rate.
std::optional<double> past_bucket_latency_us(const MeasuredLink& link,
                                             const std::vector<CommRow>& rows, double bucket_bytes);

// An emulated cluster's machines and their link as configured and as measured: comm.json's
// `emulated_cluster`, and each entry of a study's env.json `emulated_links`
// (`inter_machine_measured`: to_json above; `intra_machine_measured`: the in-machine
// all-reduce's cores per rank, null where unmeasured).
nlohmann::json emulated_link_json(const EmulatedClusterShape& shape, const MeasuredLink& measured);

// The figures of `machines` emulated machines of `ranks_per_machine` ranks: inter-machine
// values from the link measured between them (`link`: p2p and all-reduce), intra-machine from
// `intra_fits` (send/recv between ranks of one machine, and their all-reduce where measured),
// or the link's own p2p value when no two ranks share a machine (then no intra-machine transfer
// exists to price). Throws InputError when a needed bandwidth is missing.
TopologyFigures emulated_topology(const MeasuredLink& link, const std::vector<CommFit>& intra_fits,
                                  int machines, int ranks_per_machine, double memory_bytes,
                                  const std::string& name);

}  // namespace harness
