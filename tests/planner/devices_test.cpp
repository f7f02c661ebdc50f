// Device layouts, placement policies and the communication cost formulas.
#include <gtest/gtest.h>

#include "common/input_error.h"
#include "planner/cluster/devices.h"
#include "planner/search/cost_model.h"

namespace harness::planner {
namespace {

std::vector<int> ids(const std::optional<Placement>& p) {
  return p ? p->gpus.ids : std::vector<int>{};
}

TEST(Devices, ParsesSeparatorsAndLayouts) {
  EXPECT_EQ(parse_devices("8,16", "x").separators(), (std::vector<int>{8, 16}));
  EXPECT_EQ(parse_devices("2x8", "x").separators(), (std::vector<int>{8, 16}));
  EXPECT_EQ(parse_devices("4x1", "x").separators(), (std::vector<int>{1, 2, 3, 4}));
  const Devices d = parse_devices("3,8", "x");
  EXPECT_EQ(d.machine_of(2), 0);
  EXPECT_EQ(d.machine_of(3), 1);
  EXPECT_EQ(d.machine_size(1), 5);
  try {
    parse_devices("8,4", "--devices");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--devices: machine separators must be positive and strictly increasing in "
              "devices '8,4' (expected separators like 8,16 or a layout like 2x8)");
  }
  EXPECT_THROW(parse_devices("8,a", "x"), InputError);
  // At most 4096 GPUs (common/limits.h), in either form.
  for (const char* huge : {"100000x100000", "8,5000"}) {
    try {
      parse_devices(huge, "--devices");
      FAIL() << huge;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--devices: more than 4096 GPUs in devices '") + huge +
                    "' (expected separators like 8,16 or a layout like 2x8)");
    }
  }
}

TEST(Devices, PlacementPolicies) {
  const Devices d({4, 8, 12});
  const Occupancy empty{0, 0, 0};
  EXPECT_EQ(ids(place(d, empty, 6, PlacementPolicy::kFreshFirst)),
            (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ids(place(d, empty, 6, PlacementPolicy::kScatterFirst)),
            (std::vector<int>{0, 1, 4, 5, 8, 9}));
  EXPECT_FALSE(place(d, empty, 1, PlacementPolicy::kAppendFirst));  // nothing partly used
  const Occupancy partly{2, 0, 0};
  EXPECT_EQ(ids(place(d, partly, 2, PlacementPolicy::kAppendFirst)), (std::vector<int>{2, 3}));
  EXPECT_EQ(ids(place(d, partly, 2, PlacementPolicy::kFreshFirst)), (std::vector<int>{4, 5}));
  EXPECT_EQ(ids(place(d, partly, 3, PlacementPolicy::kScatterFirst)), (std::vector<int>{2, 4, 8}));
  // Two rounds of one GPU, each under any policy: the distinct sets, depth first.
  const auto rounds = place_rounds(d, partly, 1, 2,
                                   {PlacementPolicy::kFreshFirst, PlacementPolicy::kAppendFirst,
                                    PlacementPolicy::kScatterFirst});
  std::vector<std::vector<int>> sets;
  for (const auto& r : rounds) sets.push_back(r.gpus.ids);
  EXPECT_EQ(sets, (std::vector<std::vector<int>>{{4, 8}, {2, 4}, {2, 3}}));
}

TEST(CostModel, CompatFormulas) {
  const Devices d({2, 4});
  const CostModel cost(d, Topology::published_constants(), PlannerMode::kCompat);
  const GpuSet pair0 = make_gpu_set(d, {0, 1});
  const GpuSet pair1 = make_gpu_set(d, {2, 3});
  const GpuSet all = make_gpu_set(d, {0, 1, 2, 3});
  EXPECT_DOUBLE_EQ(cost.all_reduce(make_gpu_set(d, {1}), 1e9), 0.0);
  EXPECT_DOUBLE_EQ(cost.all_reduce(pair0, 25e9), 1.0);                    // 2*(1/2)/25e9/(2/2)
  EXPECT_DOUBLE_EQ(cost.all_reduce(all, 3e9), 2.0 * 3 / 4);               // flat ring over Ethernet
  EXPECT_DOUBLE_EQ(cost.transfer(pair0, pair1, 2e9), 2e9 / 2 * 2 / 1e9);  // both senders remote
  EXPECT_DOUBLE_EQ(cost.transfer(make_gpu_set(d, {1, 2}), make_gpu_set(d, {3}), 2e9), 1.0);
  EXPECT_DOUBLE_EQ(cost.transfer(make_gpu_set(d, {2}), make_gpu_set(d, {3}), 25e9), 1.0);
  EXPECT_DOUBLE_EQ(cost.transfer(pair0, all, 3e9), 1.0);  // receivers span machines: NCCL
}

TEST(CostModel, DappleUsesHierarchicalAllReduceAcrossMachines) {
  const Devices d({2, 4});
  const CostModel cost(d, Topology::published_constants(), PlannerMode::kDapple);
  // In-machine pair (2*(1/2)/25e9) plus a two-machine ring (2*(1/2)/3e9), below the flat ring.
  EXPECT_DOUBLE_EQ(cost.all_reduce(make_gpu_set(d, {0, 1, 2, 3}), 3e9), 3e9 / 25e9 + 1.0);
  // One GPU per machine: hierarchical equals flat.
  const Devices flat({1, 2, 3, 4});
  const CostModel flat_cost(flat, Topology::published_constants(), PlannerMode::kDapple);
  EXPECT_DOUBLE_EQ(flat_cost.all_reduce(make_gpu_set(flat, {0, 1, 2, 3}), 3e9), 1.5);
}

TEST(CostModel, AMeasuredInMachineAllReducePricesTheReplicasOfAMachine) {
  // CPU ranks: send/recv 2 GB/s inside a machine, but Gloo's all-reduce among them measured at
  // a bus bandwidth of 0.8 GB/s. 4 ranks on machine 0 all-reducing 1.2 GB: 2*(3/4) x 1.2e9 /
  // 0.8e9 = 2.25 s (no n/2 rings: the measurement holds what the machine does at once), where
  // the published formula says 2*(3/4) x 1.2e9 / 2e9 / (4/2) = 0.45 s.
  const Devices d({4, 8});
  Topology topology = Topology::published_constants();
  topology.intra_machine_bandwidth = 2e9;
  const GpuSet four = make_gpu_set(d, {0, 1, 2, 3});
  EXPECT_DOUBLE_EQ(CostModel(d, topology, PlannerMode::kDapple).all_reduce(four, 1.2e9), 0.45);
  topology.intra_machine_collective_bandwidth = 0.8e9;
  EXPECT_DOUBLE_EQ(CostModel(d, topology, PlannerMode::kDapple).all_reduce(four, 1.2e9), 2.25);
  // Across machines the hierarchical sum takes its in-machine part the same way: a pair on
  // each machine at 6 GB/s (2*(1/2) x 1.2e9 / 6e9 = 0.2 s) and the two-machine ring
  // (2*(1/2) x 1.2e9 / 3e9 = 0.4 s), below the flat ring's 2*(3/4) x 1.2e9 / 3e9 = 0.6 s.
  topology.intra_machine_collective_bandwidth = 6e9;
  const CostModel cost(d, topology, PlannerMode::kDapple);
  EXPECT_DOUBLE_EQ(cost.all_reduce(make_gpu_set(d, {0, 1, 4, 5}), 1.2e9), 0.2 + 0.4);
  // Point-to-point inside a machine keeps the send/recv bandwidth.
  EXPECT_DOUBLE_EQ(cost.transfer(make_gpu_set(d, {2}), make_gpu_set(d, {3}), 2e9), 1.0);
}

}  // namespace
}  // namespace harness::planner
