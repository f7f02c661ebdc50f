// Where a rank trains and what it measures there: its device (runtime/device/device_placement.h
// decides), its communicator on that device's backend, its phase clock (steady clock on the
// CPU, CUDA events on a GPU), its device memory, and the placement it actually used, read back
// from its tensors, its communicator and its forward pass for the harness to check against the
// spec.
#pragma once

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "runtime/comm/communicator.h"
#include "runtime/device/device_placement.h"
#include "runtime/device/phase_clock.h"
#include "runtime/protocol/worker_config.h"

namespace runtime {

class RankDevice {
 public:
  // The device of the rank with this local rank; std::invalid_argument (one sentence) when the
  // config asks for what this machine or LibTorch cannot give. Makes a GPU the current device
  // and sets its fp32 math as the model's precision says (TF32 for tf32, IEEE otherwise).
  RankDevice(const WorkerConfig& config, int local_rank);

  const RankPlacement& placement() const { return placement_; }
  c10::Device device() const;
  bool on_gpu() const { return placement_.device == DeviceKind::kCuda; }

  // Gloo (host tensors, or CUDA tensors staged through the host) or NCCL on this GPU.
  std::unique_ptr<Communicator> communicator(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                             int world_size, std::chrono::milliseconds timeout,
                                             const std::string& gloo_host) const;
  std::unique_ptr<PhaseClock> phase_clock(int marks) const;
  // Waits for the work queued on the device (a GPU's stream; nothing to wait for on the CPU).
  void synchronize() const;

  // Forgets the device's memory peaks (after warm-up) / the peaks since then: peak allocated and
  // reserved bytes on a GPU, an empty object on the CPU.
  void reset_memory_peaks() const;
  nlohmann::json memory_peaks() const;

 private:
  BackendKind backend_;
  RankPlacement placement_;
};

// What the rank actually used: the device its `tensor` (a parameter) lives on and its
// communicator's backend, as {"device": "cpu"|"cuda:N", "backend": "gloo"|"nccl"}.
nlohmann::json used_placement(const at::Tensor& tensor, const Communicator& communicator);

}  // namespace runtime
