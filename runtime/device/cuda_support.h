// What the rank needs of CUDA, behind one interface: the device (cuda_devices.h), NCCL, the
// allocator's peaks and event timing. cuda_support.cpp implements it where the LibTorch carries
// CUDA and NCCL (PyPI's torch 2.x); cuda_absent.cpp, chosen by CMake otherwise (Debian's 1.13),
// says so in one line. Nothing else in the tree names a CUDA header or asks which build it is in.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "runtime/comm/communicator.h"
#include "runtime/device/cuda_devices.h"
#include "runtime/device/phase_clock.h"

namespace runtime::cuda {

// Makes `gpu` this thread's current device (every later allocation and kernel goes there).
void use_device(int gpu);

// The fp32 math of the process's CUDA libraries: TF32 tensor cores or IEEE fp32, for cuDNN's
// convolutions and for cuBLAS's matmuls. LibTorch's default is TF32 for cuDNN and IEEE for
// cuBLAS, so a rank always sets both (tf32: both on; fp32 and bf16: both off).
struct Fp32Math {
  bool cudnn_tf32 = false;
  bool cublas_tf32 = false;
};
void set_fp32_math(Fp32Math math);
Fp32Math fp32_math();  // as set now

// Autocast in bfloat16 on CUDA tensors on or off for this thread; returns whether it was on.
bool set_bf16_autocast(bool enabled);

// NCCL on `gpu` behind the Communicator interface; collectives run on NCCL's own streams and
// wait() orders the rank's current stream after them.
std::unique_ptr<Communicator> make_nccl_communicator(const c10::intrusive_ptr<c10d::Store>& store,
                                                     int rank, int world_size,
                                                     std::chrono::milliseconds timeout, int gpu);

struct DeviceMemory {
  long long peak_allocated_bytes = 0;  // the caching allocator's peak of live tensors
  long long peak_reserved_bytes = 0;   // and of what it held from the driver
};
DeviceMemory peak_memory(int gpu);
void reset_peak_memory(int gpu);

// Blocks the host until the work queued so far on `gpu`'s current stream is done, so that a
// host clock read next times the kernels rather than their launch.
void synchronize(int gpu);

// Timing events on `gpu`'s current stream.
std::unique_ptr<PhaseClock> make_event_phase_clock(int marks, int gpu);

}  // namespace runtime::cuda
