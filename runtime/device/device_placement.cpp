#include "runtime/device/device_placement.h"

#include <stdexcept>

namespace runtime {

DeviceKind parse_device_kind(const std::string& name) {
  if (name == "cpu") return DeviceKind::kCpu;
  if (name == "cuda") return DeviceKind::kCuda;
  throw std::invalid_argument("unknown device '" + name + "' (expected cpu or cuda)");
}

BackendKind parse_backend_kind(const std::string& name) {
  if (name == "gloo") return BackendKind::kGloo;
  if (name == "nccl") return BackendKind::kNccl;
  throw std::invalid_argument("unknown backend '" + name + "' (expected gloo or nccl)");
}

std::string to_string(DeviceKind kind) { return kind == DeviceKind::kCuda ? "cuda" : "cpu"; }
std::string to_string(BackendKind kind) { return kind == BackendKind::kNccl ? "nccl" : "gloo"; }

std::optional<std::string> placement_problem(const PlacementRequest& request) {
  const bool nccl = request.backend == BackendKind::kNccl;
  if (request.device == DeviceKind::kCpu) {
    if (nccl) return "nccl needs run.device: cuda";
    return std::nullopt;
  }
  if (request.gpus <= 0) {
    return "cuda, but the rank program's LibTorch sees no CUDA device here (use cpu)";
  }
  if (!nccl) return std::nullopt;  // Gloo ranks may share GPUs
  if (!request.nccl_built) {
    return "nccl, but the rank program's LibTorch was built without NCCL (use gloo)";
  }
  if (request.ranks_on_machine > request.gpus) {
    return std::to_string(request.ranks_on_machine) + " ranks on a machine with " +
           std::to_string(request.gpus) +
           " GPU(s): NCCL needs a GPU of its own per rank (fewer ranks, or backend: gloo to "
           "share)";
  }
  return std::nullopt;
}

std::string RankPlacement::device_name() const {
  return device == DeviceKind::kCuda ? "cuda:" + std::to_string(gpu) : "cpu";
}

RankPlacement place_rank(const PlacementRequest& request, int local_rank) {
  if (const auto problem = placement_problem(request)) throw std::invalid_argument(*problem);
  if (local_rank < 0 || local_rank >= request.ranks_on_machine) {
    throw std::invalid_argument("local rank " + std::to_string(local_rank) + " of " +
                                std::to_string(request.ranks_on_machine) + " on the machine");
  }
  if (request.device == DeviceKind::kCpu) return {};
  return {DeviceKind::kCuda, local_rank % request.gpus};
}

}  // namespace runtime
