// Which device a rank trains on, decided before anything is placed: one GPU per rank on a
// machine by default (local rank r on GPU r); ranks may share a GPU only over Gloo, since an
// NCCL communicator needs a GPU of its own per rank. The harness asks the same question
// before it launches anything (from the rank program's GPU count), a rank again on its machine.
#pragma once

#include <optional>
#include <string>

namespace runtime {

enum class DeviceKind { kCpu, kCuda };
enum class BackendKind { kGloo, kNccl };

// "cpu" | "cuda"; "gloo" | "nccl"; std::invalid_argument otherwise.
DeviceKind parse_device_kind(const std::string& name);
BackendKind parse_backend_kind(const std::string& name);
std::string to_string(DeviceKind kind);
std::string to_string(BackendKind kind);

struct PlacementRequest {
  DeviceKind device = DeviceKind::kCpu;
  BackendKind backend = BackendKind::kGloo;
  int ranks_on_machine = 1;  // how many ranks share this machine's GPUs
  int gpus = 0;              // CUDA devices the rank program sees on the machine
  bool nccl_built = false;   // the rank program's LibTorch has NCCL
};

// Why the request cannot be placed, one sentence; nullopt when it can.
std::optional<std::string> placement_problem(const PlacementRequest& request);

struct RankPlacement {
  DeviceKind device = DeviceKind::kCpu;
  int gpu = -1;  // the CUDA device index; -1 on the CPU
  // "cpu" or "cuda:N", as torch names the device.
  std::string device_name() const;
};

// The device of the rank with this local rank (0-based on its machine): GPU local_rank, or
// local_rank modulo the GPUs where Gloo ranks share them. std::invalid_argument carrying
// placement_problem's sentence when it cannot be placed.
RankPlacement place_rank(const PlacementRequest& request, int local_rank);

}  // namespace runtime
