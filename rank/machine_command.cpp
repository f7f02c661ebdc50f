#include "rank/machine_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/json_file.h"
#include "runtime/device/cuda_devices.h"
#include "runtime/machine/blas_library.h"
#include "runtime/machine/machine_limits.h"

namespace harness {
namespace {

using nlohmann::json;

json gemm_json(const runtime::GemmThroughput& gemm, const char* dtype) {
  return {{"dtype", dtype},
          {"n", gemm.n},
          {"gflops_one_core", gemm.gflops_one_core},
          {"gflops_all_cores", gemm.gflops_all_cores},
          {"repetitions", gemm.repetitions}};
}

struct MachineOptions {
  int gemm_n = 1024;
  int gpu_gemm_n = 8192;
  double gemm_seconds = 1.0;
  double triad_mib = 256;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
};

}  // namespace

void add_machine_command(CLI::App& app) {
  auto options = std::make_shared<MachineOptions>();
  auto* machine = app.add_subcommand("machine", "GEMM and memory limits of this machine, as JSON");
  machine->add_option("--gemm-n", options->gemm_n, "Square GEMM size")
      ->check(CLI::Range(64, 8192))
      ->capture_default_str();
  machine->add_option("--gpu-gemm-n", options->gpu_gemm_n, "Square GEMM size on a GPU")
      ->check(CLI::Range(256, 32768))
      ->capture_default_str();
  machine->add_option("--gemm-seconds", options->gemm_seconds, "Time per thread count")
      ->check(CLI::Range(0.01, 60.0))
      ->capture_default_str();
  machine->add_option("--triad-mib", options->triad_mib, "MiB per triad array")
      ->check(CLI::Range(1.0, 4096.0))
      ->capture_default_str();
  machine->add_option("--cores", options->cores, "Threads for the all-cores figures")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  machine->callback([options] {
    const runtime::BlasLibrary blas = runtime::loaded_blas_library();
    json out = {{"blas", {{"library", blas.name}, {"path", blas.path}}},
                {"cores", options->cores},
                {"gemm_fp32", gemm_json(runtime::measure_gemm_fp32(
                                            options->gemm_n, options->gemm_seconds, options->cores),
                                        "fp32")},
                {"gemm_bf16", nullptr}};
    if (auto bf16 =
            runtime::measure_gemm_bf16(options->gemm_n, options->gemm_seconds, options->cores)) {
      out["gemm_bf16"] = gemm_json(*bf16, "bf16");
    }
    // GPU 0 where the rank program sees one: the roofline of ranks that run on GPUs.
    if (runtime::cuda::device_count() > 0) {
      const auto gemm = [&](runtime::Precision math) {
        const auto g =
            runtime::measure_gpu_gemm(0, math, options->gpu_gemm_n, options->gemm_seconds);
        return json{{"dtype", runtime::to_string(math)},
                    {"n", g.n},
                    {"gflops", g.gflops},
                    {"repetitions", g.repetitions}};
      };
      out["gpu"] = {{"name", runtime::cuda::device_name(0)},
                    {"count", runtime::cuda::device_count()},
                    {"gemm_fp32", gemm(runtime::Precision::kFp32)},
                    {"gemm_tf32", gemm(runtime::Precision::kTf32)},
                    {"gemm_bf16", gemm(runtime::Precision::kBf16)}};
    }
    const auto triad = runtime::measure_triad(options->triad_mib * 1024 * 1024, options->cores);
    out["triad"] = {{"bytes_per_array", triad.bytes_per_array},
                    {"gbs_one_core", triad.gbs_one_core},
                    {"gbs_all_cores", triad.gbs_all_cores}};
    std::cout << json_text(out) << "\n";
  });
}

}  // namespace harness
