#include "harness/study/link_probe.h"

#include <unistd.h>
#include <algorithm>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <utility>

#include "common/atomic_file.h"
#include "common/environment_info.h"
#include "harness/emulation/emulated_network.h"
#include "harness/profile/comm_measurement.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Sizes large enough that the rate, not the token bucket's burst (10 ms of it, network_plan.cpp)
// or the per-message cost, decides the fit: the largest carries at least 80 ms of the rate
// (and 1 MiB; 16 MiB on an unshaped link), the others a quarter and a sixteenth of it.
std::vector<int64_t> bandwidth_sizes(const LinkShape& link) {
  int64_t largest = link.rate_bits_per_s ? 1 << 20 : 16 << 20;
  if (link.rate_bits_per_s) {
    while (static_cast<double>(largest) * 8 < *link.rate_bits_per_s * 0.080) largest *= 2;
  }
  return {largest / 16, largest / 4, largest};
}

// The all-reduce also up to the size of a data-parallel bucket, 4 MiB at least: on a slow
// shaped link a transfer of megabytes runs slower than one of 80 ms (TCP both ways through the
// token bucket's queue: at 30 Mbit/s a 4 MiB all-reduce took 1.16x its wire time, 512 KiB and
// 1 MiB 1.07x), and DDP's buckets are such transfers (its first is 1 MiB, the rest 25 MiB).
constexpr int64_t kBucketSized = 4 << 20;
std::vector<int64_t> allreduce_sizes(const LinkShape& link) {
  const std::vector<int64_t> sizes = bandwidth_sizes(link);
  if (sizes.back() >= kBucketSized) return sizes;
  return {kBucketSized / 16, kBucketSized / 4, kBucketSized};
}

// A machine's own links (its namespace's loopback): GB/s, so larger sizes to rise above the
// per-message cost.
const std::vector<int64_t> kIntraMachineSizes = {1 << 20, 4 << 20, 16 << 20};
// A message small enough that its one-way time is the link's latency.
const std::vector<int64_t> kLatencySizes = {8};

// The `burst` ping-pong (after the link idled, its token bucket full): the smallest message,
// then a quarter and a half of the bucket, so that the host's own path, which the bucket lets
// a burst cross at, is what the bigger ones add (whole floats: the rank program's buffers).
std::vector<int64_t> burst_sizes(double bits_per_second) {
  const int64_t bucket = token_bucket_bytes(bits_per_second);
  return {8, bucket / 4 / 4 * 4, bucket / 2 / 4 * 4};
}

// The same ping-pong's send calls beyond the bucket: there the call writes the bucket's bytes
// through and queues the rest, and may take longer (at 300 Mbit/s a 64 KiB call held its thread
// 0.38 ms against 0.10-0.13 ms below the bucket); twice and eight times the bucket cover the
// pipelines' messages of the validations (64 and 128 KiB from 30 Mbit/s to 1 Gbit/s). Their
// one-way times, the bucket's rate, stay out of the burst's fit; what they take beyond the
// burst-then-rate model of them is MeasuredLink::past_bucket_latency_us.
std::vector<int64_t> send_call_sizes(double bits_per_second) {
  const int64_t bucket = token_bucket_bytes(bits_per_second);
  return {bucket * 2 / 4 * 4, bucket * 8 / 4 * 4};
}

// `gathers`: also the all-gather and reduce-scatter (a study with sharded systems).
ProbedLink probe_one(const EmulatedClusterShape& shape, const fs::path& out,
                     RankProgram& rank_program, bool gathers) {
  EmulatedNetwork network(plan_network(shape, static_cast<int>(getpid())));
  CommRequest request;
  request.world = shape.machines * shape.ranks_per_machine;
  request.network = &network.plan();
  // Point to point one way at a time (ping-pong: a pipeline's activations), and the
  // all-reduce. Three iterations after one, so that each size's median sets aside one
  // iteration another process slowed (a loaded CI machine: two took a 2 Gbit/s all-reduce
  // 25% low); the ping-pong times eight transfers in each up to 1 MiB, fewer above
  // (runtime::pingpong_round_trips). The all-reduce alone (without
  // plain c10d's beside it, `harness profile comm`'s check: 9.9 -> 8.4 s a probe at 100 Mbit/s)
  // after two untimed ones (with c10d's between them its timed ones came later). Measured alike
  // at 100 Mbit/s, ten probes each: 86.2-91.9 Mbit/s (median 90.4) with c10d's, 87.7-91.9
  // (89.9) without. All in one launch of the ranks.
  std::vector<CommPhase> phases = {
      {"pingpong", bandwidth_sizes(shape.inter_machine), 3, 1, out / "bandwidth"},
      {"allreduce", allreduce_sizes(shape.inter_machine), 3, 2, out / "allreduce"},
      {"pingpong", kLatencySizes, 5, 1, out / "latency"}};
  if (shape.inter_machine.rate_bits_per_s) {
    phases.push_back(
        {"burst", burst_sizes(*shape.inter_machine.rate_bits_per_s), 5, 1, out / "burst"});
    phases.push_back(
        {"burst", send_call_sizes(*shape.inter_machine.rate_bits_per_s), 3, 1, out / "send_call"});
  }
  const size_t first_gather = phases.size();
  if (gathers) {
    for (const char* op : {"allgather", "reducescatter"}) {
      phases.push_back({op, allreduce_sizes(shape.inter_machine), 3, 2, out / op});
    }
  }
  const CommSeries measured = measure_comm_phases(request, phases, out, rank_program);
  if (measured.exit_code != 0) {
    throw std::runtime_error("measuring the emulated links failed (" + out.string() + ")");
  }
  const nlohmann::json &bandwidth = measured.raw[0], &allreduce = measured.raw[1],
                       &latency = measured.raw[2];
  const bool shaped = shape.inter_machine.rate_bits_per_s.has_value();
  const std::vector<CommRow> burst_rows =
      shaped ? comm_rows(measured.raw[3]) : std::vector<CommRow>{};
  const std::vector<CommRow> send_call_rows =
      shaped ? comm_rows(measured.raw[4]) : std::vector<CommRow>{};
  std::vector<CommFit> intra_fits;
  if (shape.ranks_per_machine > 1) {
    request.iterations = 5;
    request.warmup = 1;
    const CommMeasurement intra = measure_intra_machine(
        request, shape.ranks_per_machine, kIntraMachineSizes, out / "intra", rank_program);
    if (intra.exit_code != 0) throw std::runtime_error("measuring a machine's own links failed");
    intra_fits = intra_machine_fits(comm_rows(intra.raw), shape.ranks_per_machine);
  }
  std::vector<CommRow> rows = comm_rows(bandwidth);
  const std::vector<CommRow> allreduce_rows = comm_rows(allreduce);
  rows.insert(rows.end(), allreduce_rows.begin(), allreduce_rows.end());
  rows.insert(rows.end(), burst_rows.begin(), burst_rows.end());
  std::vector<CommFit> fits = {fit_comm_model(rows, "pingpong", request.world),
                               fit_comm_model(rows, "allreduce", request.world),
                               fit_comm_model(rows, "burst", request.world)};
  for (size_t k = first_gather; k < measured.raw.size(); ++k) {
    const std::vector<CommRow> gather_rows = comm_rows(measured.raw[k]);
    rows.insert(rows.end(), gather_rows.begin(), gather_rows.end());
    fits.push_back(fit_comm_model(rows, phases[k].ops, request.world));
  }
  const std::vector<CommRow> latency_rows = comm_rows(latency);
  rows.insert(rows.end(), latency_rows.begin(), latency_rows.end());
  rows.insert(rows.end(), send_call_rows.begin(), send_call_rows.end());
  ProbedLink probed{shape, measured_link(fits, rows, intra_fits), out / "topology.yaml"};
  if (shape.inter_machine.rate_bits_per_s) {
    probed.measured.past_bucket_latency_us = past_bucket_latency_us(
        probed.measured, send_call_rows,
        static_cast<double>(token_bucket_bytes(*shape.inter_machine.rate_bits_per_s)));
  }
  write_file_atomic(probed.topology,
                    topology_yaml(emulated_topology(
                        probed.measured, intra_fits, shape.machines, shape.ranks_per_machine,
                        physical_memory_bytes(), "emulated-" + out.filename().string())));
  return probed;
}

}  // namespace

std::optional<EmulatedClusterShape> emulated_cluster_of(const Point& point) {
  const ClusterConfig& cluster = point.config.cluster;
  if (cluster.machines <= 1) return std::nullopt;
  EmulatedClusterShape shape;
  shape.machines = static_cast<int>(cluster.machines);
  shape.ranks_per_machine = static_cast<int>(point.config.run.world_size / cluster.machines);
  shape.inter_machine = cluster.inter_machine;
  return shape;
}

const ProbedLink* ProbedLinks::find(const Point& point) const {
  const auto it = of_point.find(&point);
  return it == of_point.end() ? nullptr : &links[it->second];
}

json ProbedLinks::to_json(const fs::path& directory) const {
  json out = json::array();
  for (size_t i = 0; i < links.size(); ++i) {
    const ProbedLink& link = links[i];
    json points = json::array();
    for (const auto& [point, index] : of_point) {
      if (index == i) points.push_back(point->label);
    }
    json entry = emulated_link_json(link.shape, link.measured);
    entry["topology"] = fs::relative(link.topology, directory).string();
    entry["points"] = points;
    out.push_back(std::move(entry));
  }
  return out;
}

ProbedLinks probe_emulated_links(const Experiment& experiment, const fs::path& directory,
                                 RankProgram& rank_program, std::ostream& log) {
  ProbedLinks probed;
  bool said_unprobed = false;
  // Sharded systems move their gradients and parameters by all-gather and reduce-scatter,
  // which Gloo runs at other rates than its all-reduce: measured where a study has them.
  const bool gathers =
      std::any_of(experiment.systems.begin(), experiment.systems.end(),
                  [](const SystemConfig& system) { return system.kind() == SystemKind::kSharded; });
  for (const auto& point : experiment.points) {
    const auto shape = emulated_cluster_of(point);
    if (!shape) continue;
    if (!point.config.cluster.probe_links) {
      if (!std::exchange(said_unprobed, true)) {
        log << "the emulated links of " << point.label
            << " are not measured (cluster.network.probe: false)" << std::endl;
      }
      continue;
    }
    size_t index = 0;
    while (index < probed.links.size() && !(probed.links[index].shape == *shape)) ++index;
    if (index == probed.links.size()) {
      const fs::path out = directory / "links" / ("link" + std::to_string(index));
      log << "measuring the emulated links of " << point.label << " ..." << std::endl;
      probed.links.push_back(probe_one(*shape, out, rank_program, gathers));
      const MeasuredLink& m = probed.links.back().measured;
      char line[160];
      std::snprintf(line, sizeof line,
                    "  p2p %.1f Mbit/s, all-reduce busbw %.1f Mbit/s, one way %.1f us (%s)\n",
                    m.p2p_bytes_per_s * 8 / 1e6, m.allreduce_bus_bytes_per_s * 8 / 1e6,
                    m.one_way_latency_us.value_or(0), out.c_str());
      log << line << std::flush;
    }
    probed.of_point[&point] = index;
  }
  return probed;
}

}  // namespace harness
