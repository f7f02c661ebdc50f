// Communication profiles in the manner of nccl-tests: per op and size, latency percentiles,
// algorithm bandwidth (bytes / time) and bus bandwidth (algbw times the op's bus factor:
// all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n, broadcast and send/recv 1),
// and a latency + size/bandwidth model fitted per op.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

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
  double algbw_gbps = 0;  // GB/s (1e9 bytes), from the p50 time
  double busbw_gbps = 0;
  // The process CPU time its timed iterations took over their wall time: cores a rank keeps
  // busy while the op runs (on CPU, Gloo's threads; 1 = a whole core). 0: not measured.
  double cpu_cores = 0;
  double wall_ms_total = 0, cpu_ms_total = 0;
};

struct CommFit {
  std::string op;
  double latency_us = 0;     // intercept
  double bus_bandwidth = 0;  // bytes/s: time = latency + bytes * bus_factor / bus_bandwidth
  double r_squared = 0;
  double cpu_cores = 0;  // over the op's rows, weighted by their time (0: not measured)
};

// Rows from the comm-worker's JSON (see runtime/profile/comm_benchmark.h).
std::vector<CommRow> comm_rows(const nlohmann::json& measurement);

// Least squares of p50 time against bytes * bus factor, over the rows of one op.
CommFit fit_comm_model(const std::vector<CommRow>& rows, const std::string& op, int world_size);

// nccl-tests-like columns.
std::string render_comm_table(const std::vector<CommRow>& rows, int world_size,
                              const std::string& backend);

// A topology file the planner reads (planner/README.md): one machine of `world_size` ranks;
// intra-machine bandwidth from the send/recv fit, collective bandwidth from all-reduce's.
std::string topology_yaml(const std::vector<CommFit>& fits, int world_size, double memory_bytes,
                          const std::string& name);

}  // namespace harness
