#include "runtime/machine/machine_limits.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/device/cuda_support.h"
#include "runtime/machine/blas_library.h"
#include "runtime/models/precision.h"

namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Best GFLOP/s of n x n products in `dtype` with `threads` threads, for about `seconds`.
double best_gemm_gflops(int n, torch::Dtype dtype, int threads, double seconds, int& repetitions) {
  torch::set_num_threads(threads);
  set_blas_threads(threads);
  const auto a = torch::rand({n, n}).to(dtype), b = torch::rand({n, n}).to(dtype);
  torch::Tensor c = torch::mm(a, b);  // warm-up: pages, thread pools
  const double flops = 2.0 * n * n * n;
  double best = 0;
  repetitions = 0;
  const auto start = Clock::now();
  while (repetitions < 3 || (seconds_since(start) < seconds && repetitions < 1000)) {
    const auto begin = Clock::now();
    c = torch::mm(a, b);
    best = std::max(best, flops / seconds_since(begin) / 1e9);
    ++repetitions;
  }
  return best;
}

GemmThroughput measure_gemm(int n, torch::Dtype dtype, double seconds, int cores) {
  GemmThroughput result;
  result.n = n;
  int reps_one = 0, reps_all = 0;
  result.gflops_one_core = best_gemm_gflops(n, dtype, 1, seconds, reps_one);
  result.gflops_all_cores = best_gemm_gflops(n, dtype, cores, seconds, reps_all);
  result.repetitions = std::min(reps_one, reps_all);
  torch::set_num_threads(1);
  set_blas_threads(1);
  return result;
}

bool cpu_has_bf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    return line.find(" avx512_bf16") != std::string::npos ||
           line.find(" amx_bf16") != std::string::npos;
  }
  return false;
}

// One triad pass over [begin, end) of each array.
void triad(float* a, const float* b, const float* c, size_t begin, size_t end) {
  const float s = 3.0f;
  for (size_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
}

double best_triad_gbs(std::vector<float>& a, const std::vector<float>& b,
                      const std::vector<float>& c, int threads) {
  const size_t n = a.size();
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const auto begin = Clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back(triad, a.data(), b.data(), c.data(), n * t / threads,
                           n * (t + 1) / threads);
    }
    for (auto& worker : workers) worker.join();
    best = std::max(best, 3.0 * n * sizeof(float) / seconds_since(begin) / 1e9);
  }
  return best;
}

}  // namespace

GemmThroughput measure_gemm_fp32(int n, double seconds, int cores) {
  return measure_gemm(n, torch::kFloat32, seconds, cores);
}

std::optional<GemmThroughput> measure_gemm_bf16(int n, double seconds, int cores) {
  if (!cpu_has_bf16()) return std::nullopt;
  return measure_gemm(n, torch::kBFloat16, seconds, cores);
}

GpuGemmThroughput measure_gpu_gemm(int gpu, Precision math, int n, double seconds) {
  const auto options = torch::TensorOptions()
                           .device(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(gpu)))
                           .dtype(math == Precision::kBf16 ? torch::kBFloat16 : torch::kFloat32);
  // cuBLAS's fp32 math as the ranks of this precision set it, restored afterwards.
  const cuda::Fp32Math before = cuda::fp32_math();
  set_gpu_fp32_math(math);
  const auto a = torch::rand({n, n}, options), b = torch::rand({n, n}, options);
  torch::Tensor c = torch::mm(a, b);  // warm-up: the library's handles and kernels
  torch::cuda::synchronize(gpu);
  // Batches of products, each long enough that one launch's latency is noise.
  constexpr int kBatch = 10;
  const double flops = 2.0 * n * n * n * kBatch;
  GpuGemmThroughput result{n, 0, 0};
  const auto start = Clock::now();
  while (result.repetitions == 0 || seconds_since(start) < seconds) {
    const auto batch_start = Clock::now();
    for (int k = 0; k < kBatch; ++k) torch::mm_out(c, a, b);
    torch::cuda::synchronize(gpu);
    result.gflops = std::max(result.gflops, flops / seconds_since(batch_start) / 1e9);
    result.repetitions += kBatch;
  }
  cuda::set_fp32_math(before);
  return result;
}

TriadBandwidth measure_triad(double bytes_per_array, int cores) {
  const size_t n = static_cast<size_t>(bytes_per_array / sizeof(float));
  // Written once before timing, so that no pass pays for first-touch page faults.
  std::vector<float> a(n, 0.0f), b(n, 1.0f), c(n, 2.0f);
  TriadBandwidth result;
  result.bytes_per_array = static_cast<double>(n * sizeof(float));
  result.gbs_one_core = best_triad_gbs(a, b, c, 1);
  result.gbs_all_cores = best_triad_gbs(a, b, c, cores);
  return result;
}

}  // namespace runtime
