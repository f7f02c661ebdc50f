// The limits of the machine a rank runs on, measured the way nccl-tests and STREAM measure
// them: fp32 (and bf16 where the CPU has it) GEMM throughput through LibTorch, on one core and
// on all of them, and memory bandwidth by a STREAM-like triad. They are the roofline that MFU
// is reported against.
#pragma once

#include <optional>

#include "runtime/models/precision_kind.h"

namespace runtime {

struct GemmThroughput {
  int n = 0;                    // square matrices n x n
  double gflops_one_core = 0;   // best of the repetitions, 1 thread
  double gflops_all_cores = 0;  // best of the repetitions, one thread per core
  int repetitions = 0;          // timed products per thread count
};

struct TriadBandwidth {
  double bytes_per_array = 0;
  double gbs_one_core = 0;  // GB/s (1e9 B), 3 arrays touched per element (2 reads, 1 write)
  double gbs_all_cores = 0;
};

// fp32 GEMM of n x n matrices, each thread count timed for about `seconds`.
GemmThroughput measure_gemm_fp32(int n, double seconds, int cores);

// The same in bfloat16, where the CPU has bf16 instructions (avx512_bf16 or amx_bf16); nothing
// otherwise (LibTorch would emulate it and the figure would mean nothing).
std::optional<GemmThroughput> measure_gemm_bf16(int n, double seconds, int cores);

// GEMM throughput of one GPU: best GFLOP/s of back-to-back n x n products in the math a rank of
// that precision runs (fp32: IEEE, no TF32; tf32: fp32 tensors on TF32 tensor cores; bf16), each
// batch timed from the first launch to the device finishing it.
struct GpuGemmThroughput {
  int n = 0;
  double gflops = 0;
  int repetitions = 0;  // products timed
};
GpuGemmThroughput measure_gpu_gemm(int gpu, Precision math, int n, double seconds);

// a[i] = b[i] + s * c[i] over float arrays of `bytes_per_array`, best of a few passes.
TriadBandwidth measure_triad(double bytes_per_array, int cores);

}  // namespace runtime
