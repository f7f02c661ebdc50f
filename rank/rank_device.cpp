#include "rank/rank_device.h"

#include <c10/core/Device.h>

#include <stdexcept>

#include "runtime/device/cuda_support.h"
#include "runtime/models/precision.h"

namespace runtime {

namespace {

PlacementRequest placement_request(const WorkerConfig& config, int local_rank) {
  PlacementRequest request;
  request.device = parse_device_kind(config.device);
  request.backend = parse_backend_kind(config.backend);
  // Launchers tell a rank its place on the machine, not how many share it: at least this many.
  request.ranks_on_machine = local_rank + 1;
  if (request.device == DeviceKind::kCuda) {
    request.gpus = cuda::device_count();
    request.nccl_built = cuda::built_with_cuda();
  }
  return request;
}

}  // namespace

RankDevice::RankDevice(const WorkerConfig& config, int local_rank)
    : backend_(parse_backend_kind(config.backend)),
      placement_(place_rank(placement_request(config, local_rank), local_rank)) {
  const Precision precision = parse_precision(config.model.precision);
  if (!on_gpu()) {
    if (precision == Precision::kTf32) {
      throw std::invalid_argument("model.precision: tf32 is a GPU's math; this rank runs on " +
                                  config.device + " (use fp32 or bf16)");
    }
    return;
  }
  cuda::use_device(placement_.gpu);
  set_gpu_fp32_math(precision);
}

c10::Device RankDevice::device() const {
  if (!on_gpu()) return c10::Device(c10::kCPU);
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(placement_.gpu));
}

std::unique_ptr<Communicator> RankDevice::communicator(const c10::intrusive_ptr<c10d::Store>& store,
                                                       int rank, int world_size,
                                                       std::chrono::milliseconds timeout,
                                                       const std::string& gloo_host) const {
  if (backend_ == BackendKind::kNccl) {
    return cuda::make_nccl_communicator(store, rank, world_size, timeout, placement_.gpu);
  }
  return make_gloo_communicator(store, rank, world_size, timeout, gloo_host);
}

std::unique_ptr<PhaseClock> RankDevice::phase_clock(int marks) const {
  if (on_gpu()) return cuda::make_event_phase_clock(marks, placement_.gpu);
  return make_cpu_phase_clock(marks);
}

void RankDevice::synchronize() const {
  if (on_gpu()) cuda::synchronize(placement_.gpu);
}

void RankDevice::reset_memory_peaks() const {
  if (on_gpu()) cuda::reset_peak_memory(placement_.gpu);
}

nlohmann::json RankDevice::memory_peaks() const {
  if (!on_gpu()) return nlohmann::json::object();
  const cuda::DeviceMemory peaks = cuda::peak_memory(placement_.gpu);
  return {{"peak_device_allocated_bytes", peaks.peak_allocated_bytes},
          {"peak_device_reserved_bytes", peaks.peak_reserved_bytes}};
}

nlohmann::json used_placement(const at::Tensor& tensor, const Communicator& communicator) {
  return {{"device", tensor.device().str()}, {"backend", communicator.backend()}};
}

}  // namespace runtime
