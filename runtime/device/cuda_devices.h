// What the rank program's LibTorch and driver say about CUDA devices, without a LibTorch header:
// `harness-rank machine` and `version` ask only this, and compile without LibTorch's headers.
// The rest of the CUDA interface (NCCL, events, the allocator) is cuda_support.h.
#pragma once

#include <string>

namespace runtime::cuda {

// Whether this program was built against a LibTorch with CUDA and NCCL.
bool built_with_cuda();
// CUDA devices visible to this process (0 without CUDA or without a driver).
int device_count();

// The device's name as its driver gives it ("NVIDIA H100 80GB HBM3").
std::string device_name(int gpu);

}  // namespace runtime::cuda
