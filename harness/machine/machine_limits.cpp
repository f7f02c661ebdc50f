#include "harness/machine/machine_limits.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "common/atomic_file.h"
#include "common/cache_file.h"
#include "common/environment_info.h"
#include "common/json_file.h"
#include "common/utc_time.h"
#include "harness/profile/comm_measurement.h"
#include "harness/profile/comm_profile.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path machine_cache_path() { return cache_file("HARNESS_MACHINE_CACHE", "machine.json"); }

// What the cached figures were measured for. `figures` counts changes to what is measured (2:
// GPUs' tf32 GEMM), so that a cache from an older harness is measured again.
json machine_key(RankProgram& rank_program) {
  json key = machine_identity();
  key["figures"] = 2;
  key["blas_path"] = rank_program.blas().value("path", "");
  key["torch_version"] = rank_program.torch_version();
  return key;
}

json measure_machine(RankProgram& rank_program) {
  json limits = rank_program.query({"machine"});
  // Loopback all-reduce between 2 ranks, nccl-tests' busbw at the largest size.
  const fs::path scratch =
      fs::temp_directory_path() / ("harness-machine-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  CommRequest request;
  request.world = 2;
  request.ops = "allreduce";
  request.iterations = 10;
  request.warmup = 2;
  const std::vector<int64_t> sizes = {1 << 20, 8 << 20, 64 << 20};
  const CommMeasurement measured = measure_comm(request, sizes, scratch, rank_program);
  json allreduce = nullptr;
  if (measured.exit_code == 0) {
    allreduce = json::array();
    for (const CommRow& row : comm_rows(measured.raw)) {
      allreduce.push_back({{"bytes", row.bytes},
                           {"p50_ms", row.p50_ms},
                           {"algbw_gbps", row.algbw_gbps},
                           {"busbw_gbps", row.busbw_gbps}});
    }
  }
  fs::remove_all(scratch);
  limits["allreduce_world2"] = allreduce;
  limits["key"] = machine_key(rank_program);
  limits["measured_at"] = utc_timestamp_compact();
  return limits;
}

std::optional<json> cached_machine_limits(RankProgram& rank_program) {
  const fs::path cache = machine_cache_path();
  if (!fs::exists(cache)) return std::nullopt;
  try {
    json cached = read_json_file(cache);
    if (cached.value("key", json()) == machine_key(rank_program)) return cached;
  } catch (const std::exception&) {
    // An unreadable cache is no figure: measured again and rewritten when asked for.
  }
  return std::nullopt;
}

json machine_limits(RankProgram& rank_program, bool remeasure) {
  const fs::path cache = machine_cache_path();
  if (!remeasure) {
    if (auto cached = cached_machine_limits(rank_program)) return *cached;
  }
  std::fprintf(stderr,
               "measuring this machine's limits once (GEMM, memory, all-reduce); cached in %s\n",
               cache.c_str());
  json limits = measure_machine(rank_program);
  try {
    fs::create_directories(cache.parent_path());
    write_file_atomic(cache, json_text(limits, 2) + "\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: machine figures not cached: %s\n", e.what());
  }
  return limits;
}

std::string render_machine_limits(const json& limits) {
  std::ostringstream out;
  char line[256];
  const json& blas = limits.value("blas", json::object());
  out << "# BLAS: " << blas.value("library", "?") << " (" << blas.value("path", "?") << ")\n";
  out << "# cores: " << limits.value("cores", 0) << "\n";
  out << "#\n# "
      << "what" << std::string(30, ' ') << "one core   all cores\n";
  for (const char* key : {"gemm_fp32", "gemm_bf16"}) {
    const json& gemm = limits.value(key, json());
    if (!gemm.is_object()) continue;
    std::snprintf(line, sizeof line, "  %-32s %10.1f %11.1f  GFLOP/s (%d^3, best of %d)\n",
                  (gemm.value("dtype", "") + " GEMM").c_str(), gemm.value("gflops_one_core", 0.0),
                  gemm.value("gflops_all_cores", 0.0), gemm.value("n", 0),
                  gemm.value("repetitions", 0));
    out << line;
  }
  if (const json& triad = limits.value("triad", json()); triad.is_object()) {
    std::snprintf(line, sizeof line, "  %-32s %10.1f %11.1f  GB/s (%.0f MiB arrays)\n",
                  "triad a = b + s*c", triad.value("gbs_one_core", 0.0),
                  triad.value("gbs_all_cores", 0.0),
                  triad.value("bytes_per_array", 0.0) / (1 << 20));
    out << line;
  }
  if (const json& gpu = limits.value("gpu", json()); gpu.is_object()) {
    out << "#\n# GPU 0 of " << gpu.value("count", 0) << ": " << gpu.value("name", "?") << "\n";
    for (const char* key : {"gemm_fp32", "gemm_tf32", "gemm_bf16"}) {
      const json& gemm = gpu.value(key, json());
      if (!gemm.is_object()) continue;
      std::snprintf(line, sizeof line, "  %-32s %10.1f %11s  GFLOP/s (%d^3, best of %d)\n",
                    (gemm.value("dtype", "") + " GEMM").c_str(), gemm.value("gflops", 0.0), "-",
                    gemm.value("n", 0), gemm.value("repetitions", 0));
      out << line;
    }
  }
  if (const json& rows = limits.value("allreduce_world2", json()); rows.is_array()) {
    out << "#\n# all-reduce, 2 ranks on this host (Gloo, loopback)\n";
    out << "#" << std::string(13, ' ') << "size(B)    time(ms)  algbw(GB/s)  busbw(GB/s)\n";
    for (const auto& row : rows) {
      std::snprintf(line, sizeof line, "  %18lld %11.3f %12.3f %12.3f\n", row.value("bytes", 0LL),
                    row.value("p50_ms", 0.0), row.value("algbw_gbps", 0.0),
                    row.value("busbw_gbps", 0.0));
      out << line;
    }
  }
  return out.str();
}

}  // namespace harness
