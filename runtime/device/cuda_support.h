// What the rank needs of CUDA, behind one interface: the device, NCCL, the allocator's peaks and
// event timing. cuda_support.cpp implements it where the LibTorch carries CUDA and NCCL (PyPI's
// torch 2.x); cuda_absent.cpp, chosen by CMake otherwise (Debian's 1.13), says so in one line.
// Nothing else in the tree names a CUDA header or asks which build it is in.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "runtime/comm/communicator.h"
#include "runtime/device/phase_clock.h"

namespace runtime::cuda {

// Whether this program was built against a LibTorch with CUDA and NCCL.
bool built_with_cuda();
// CUDA devices visible to this process (0 without CUDA or without a driver).
int device_count();

// The device's name as its driver gives it ("NVIDIA H100 80GB HBM3").
std::string device_name(int gpu);

// Makes `gpu` this thread's current device (every later allocation and kernel goes there).
void use_device(int gpu);

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

// Timing events on `gpu`'s current stream.
std::unique_ptr<PhaseClock> make_event_phase_clock(int marks, int gpu);

}  // namespace runtime::cuda
