// Where a rank trains: one GPU per local rank by default, Gloo ranks sharing GPUs round-robin,
// NCCL refused where ranks outnumber the GPUs or the LibTorch has no NCCL, each refusal one
// sentence that says what to change.
#include "runtime/device/device_placement.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using runtime::BackendKind;
using runtime::DeviceKind;
using runtime::PlacementRequest;

PlacementRequest request(DeviceKind device, BackendKind backend, int ranks, int gpus,
                         bool nccl = true) {
  return {device, backend, ranks, gpus, nccl};
}

TEST(DevicePlacement, CpuRanksStayOnTheCpu) {
  const auto placed = runtime::place_rank(request(DeviceKind::kCpu, BackendKind::kGloo, 4, 0), 3);
  EXPECT_EQ(placed.device, DeviceKind::kCpu);
  EXPECT_EQ(placed.gpu, -1);
  EXPECT_EQ(placed.device_name(), "cpu");
}

TEST(DevicePlacement, OneGpuPerLocalRankWithNccl) {
  for (int r = 0; r < 8; ++r) {
    const auto placed =
        runtime::place_rank(request(DeviceKind::kCuda, BackendKind::kNccl, 8, 8), r);
    EXPECT_EQ(placed.gpu, r);
    EXPECT_EQ(placed.device_name(), "cuda:" + std::to_string(r));
  }
}

TEST(DevicePlacement, GlooRanksShareGpusRoundRobin) {
  const int expected[] = {0, 1, 0, 1, 0};
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(runtime::place_rank(request(DeviceKind::kCuda, BackendKind::kGloo, 5, 2), r).gpu,
              expected[r]);
  }
}

TEST(DevicePlacement, RefusalsSayWhatToChange) {
  EXPECT_EQ(runtime::placement_problem(request(DeviceKind::kCuda, BackendKind::kGloo, 1, 0)),
            "cuda, but the rank program's LibTorch sees no CUDA device here (use cpu)");
  EXPECT_EQ(runtime::placement_problem(request(DeviceKind::kCpu, BackendKind::kNccl, 1, 4)),
            "nccl needs run.device: cuda");
  EXPECT_EQ(runtime::placement_problem(request(DeviceKind::kCuda, BackendKind::kNccl, 2, 2, false)),
            "nccl, but the rank program's LibTorch was built without NCCL (use gloo)");
  EXPECT_EQ(runtime::placement_problem(request(DeviceKind::kCuda, BackendKind::kNccl, 3, 2)),
            "3 ranks on a machine with 2 GPU(s): NCCL needs a GPU of its own per rank (fewer "
            "ranks, or backend: gloo to share)");
  EXPECT_EQ(runtime::placement_problem(request(DeviceKind::kCuda, BackendKind::kNccl, 2, 2)),
            std::nullopt);
  EXPECT_EQ(runtime::placement_problem(request(DeviceKind::kCuda, BackendKind::kGloo, 3, 2)),
            std::nullopt);
  try {
    runtime::place_rank(request(DeviceKind::kCuda, BackendKind::kNccl, 3, 2), 2);
    ADD_FAILURE() << "placed a third NCCL rank on two GPUs";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("3 ranks on a machine with 2 GPU(s)", 0), 0u);
  }
  EXPECT_THROW(runtime::place_rank(request(DeviceKind::kCpu, BackendKind::kGloo, 2, 0), 2),
               std::invalid_argument);  // local rank outside the machine's ranks
}

TEST(DevicePlacement, NamesParseBothWays) {
  EXPECT_EQ(runtime::parse_device_kind("cuda"), DeviceKind::kCuda);
  EXPECT_EQ(runtime::to_string(runtime::parse_backend_kind("nccl")), "nccl");
  EXPECT_EQ(runtime::to_string(DeviceKind::kCpu), "cpu");
  EXPECT_THROW(runtime::parse_device_kind("mps"), std::invalid_argument);
  EXPECT_THROW(runtime::parse_backend_kind("mpi"), std::invalid_argument);
}

}  // namespace
