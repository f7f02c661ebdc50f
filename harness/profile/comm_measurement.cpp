#include "harness/profile/comm_measurement.h"

#include <cstdio>

#include "common/atomic_file.h"
#include "common/json_file.h"
#include "common/ports.h"
#include "common/text_util.h"
#include "harness/launch/local_launcher.h"

namespace harness {
namespace {

namespace fs = std::filesystem;

// The comm-worker ranks of one launch, meeting on a free local port, measuring `phases` in turn.
std::vector<RankProcess> comm_ranks(const CommRequest& request,
                                    const std::vector<CommPhase>& phases, const fs::path& logs) {
  std::vector<std::string> measurements;
  for (const CommPhase& phase : phases) {
    std::vector<std::string> size_text;
    for (int64_t s : phase.sizes) size_text.push_back(std::to_string(s));
    if (!measurements.empty()) measurements.push_back("--then");
    measurements.insert(
        measurements.end(),
        {"--ops", phase.ops, "--sizes", join(size_text, ","), "--iterations",
         std::to_string(phase.iterations), "--warmup", std::to_string(phase.warmup), "--out",
         (phase.out / "comm-raw.json").string(), "--reference", phase.c10d_reference ? "on" : "off",
         "--after-compute", std::to_string(phase.after_compute)});
  }
  const int port = pick_free_port();
  const std::string key = new_rendezvous_key();
  std::vector<RankProcess> ranks;
  // Loopback, or each rank in its emulated machine, meeting at machine 0's address.
  const std::string master =
      request.network ? request.network->machines.front().address : "127.0.0.1";
  for (int r = 0; r < request.world; ++r) {
    RankProcess rank;
    std::string gloo_host = "127.0.0.1";
    if (request.network) {
      const EmulatedMachine& machine = request.network->machine_of(r);
      rank.prefix = {"ip", "netns", "exec", machine.netns};
      gloo_host = machine.address;
    }
    rank.arguments = {"comm-worker",
                      "--rank",
                      std::to_string(r),
                      "--world-size",
                      std::to_string(request.world),
                      "--master-addr",
                      master,
                      "--master-port",
                      std::to_string(port),
                      "--gloo-host",
                      gloo_host,
                      "--rendezvous-key",
                      key};
    rank.arguments.insert(rank.arguments.end(), measurements.begin(), measurements.end());
    rank.stdout_path = logs / ("rank" + std::to_string(r) + ".stdout");
    rank.stderr_path = logs / ("rank" + std::to_string(r) + ".stderr");
    rank.environment = {{"OMP_NUM_THREADS", "1"}};
    ranks.push_back(rank);
  }
  return ranks;
}

}  // namespace

CommSeries measure_comm_phases(const CommRequest& request, const std::vector<CommPhase>& phases,
                               const fs::path& logs, RankProgram& rank_program) {
  fs::create_directories(logs);
  for (const CommPhase& phase : phases) fs::create_directories(phase.out);
  const std::vector<RankProcess> ranks = comm_ranks(request, phases, logs);
  LaunchLimits limits;
  limits.stall_timeout_s = request.stall_timeout_s;
  install_stop_signal_handlers();
  const LaunchOutcome outcome = launch_local(rank_program.path(), ranks, limits);
  CommSeries series;
  if (!outcome.ok) {
    const int rank = outcome.failure ? outcome.failure->rank : -1;
    std::fprintf(stderr, "error: comm profile failed: rank %d %s\n%s", rank,
                 outcome.failure ? outcome.failure->reason.c_str() : "interrupted",
                 outcome.failure ? outcome.failure->stderr_tail.c_str() : "");
    series.exit_code = outcome.interrupted ? 130 : 1;
    return series;
  }
  for (const CommPhase& phase : phases) {
    series.raw.push_back(parse_json(read_file(phase.out / "comm-raw.json")));
  }
  return series;
}

CommMeasurement measure_comm(const CommRequest& request, const std::vector<int64_t>& sizes,
                             const fs::path& out, RankProgram& rank_program) {
  const CommPhase phase{request.ops,          sizes, request.iterations,
                        request.warmup,       out,   request.c10d_reference,
                        request.after_compute};
  CommSeries series = measure_comm_phases(request, {phase}, out, rank_program);
  if (series.exit_code != 0) return {nlohmann::json(), series.exit_code};
  return {std::move(series.raw.front()), 0};
}

CommMeasurement measure_intra_machine(const CommRequest& cluster_request, int ranks_per_machine,
                                      const std::vector<int64_t>& sizes, const fs::path& out,
                                      RankProgram& rank_program) {
  NetworkPlan machine0 = *cluster_request.network;
  machine0.machines.resize(1);  // ranks 0 .. ranks_per_machine-1 all live there
  CommRequest request = cluster_request;
  request.world = ranks_per_machine;
  request.ops = "sendrecv,allreduce";
  request.network = &machine0;
  request.c10d_reference = false;  // only the fits are read
  return measure_comm(request, sizes, out, rank_program);
}

}  // namespace harness
