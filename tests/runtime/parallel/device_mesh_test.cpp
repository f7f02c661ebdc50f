// The device mesh of a system, by hand: each rank's pipeline position and replica index, the
// group its data axis sums in, the ranks its rows go to (the replica mapping), and the lines
// `--dry-run` prints.
#include "runtime/parallel/device_mesh.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using runtime::DeviceMesh;
using runtime::ParallelSystem;

ParallelSystem pipeline_of(std::vector<runtime::StageAssignment> stages, int micro_batches = 1) {
  ParallelSystem system;
  system.name = "p";
  system.pipeline = runtime::PipelineAxis{runtime::PipelineSchedule::kDapple, "", micro_batches,
                                          std::move(stages)};
  return system;
}

TEST(DeviceMesh, TwoStagesOfTwoReplicasPairReplicaWithReplica) {
  const DeviceMesh mesh = runtime::device_mesh(pipeline_of({{0, 3, {0, 1}}, {4, 9, {2, 3}}}), 4, 8);
  EXPECT_EQ(mesh.pipeline, 2);
  EXPECT_EQ(mesh.data, 2);
  ASSERT_EQ(mesh.places.size(), 4u);
  EXPECT_EQ(mesh.places[3].pipeline, 1);
  EXPECT_EQ(mesh.places[3].data, 1);
  EXPECT_EQ(mesh.places[1].data_group, (std::vector<int>{0, 1}));
  // Replica j's rows go to replica j of the next stage; the last stage sends nothing.
  EXPECT_EQ(mesh.places[0].sends_to, (std::vector<int>{2}));
  EXPECT_EQ(mesh.places[1].sends_to, (std::vector<int>{3}));
  EXPECT_TRUE(mesh.places[2].sends_to.empty());
}

TEST(DeviceMesh, UnevenReplicasGatherAndSplitRows) {
  // 2 replicas feed 1, which feeds 2; a micro-batch of 6 rows.
  const DeviceMesh mesh =
      runtime::device_mesh(pipeline_of({{0, 2, {0, 1}}, {3, 6, {2}}, {7, 9, {3, 4}}}), 5, 6);
  EXPECT_EQ(mesh.places[0].sends_to, (std::vector<int>{2}));
  EXPECT_EQ(mesh.places[1].sends_to, (std::vector<int>{2}));
  EXPECT_EQ(mesh.places[2].sends_to, (std::vector<int>{3, 4}));
  EXPECT_EQ(mesh.places[2].data_group, (std::vector<int>{2}));
  EXPECT_EQ(mesh.places[4].pipeline, 2);
}

TEST(DeviceMesh, ARankOfTwoStagesSendsOnlyToOthers) {
  // Interleaved on 2 ranks: stages 0, 2 on rank 0 and 1, 3 on rank 1.
  const DeviceMesh mesh =
      runtime::device_mesh(pipeline_of({{0, 1, {0}}, {2, 3, {1}}, {4, 5, {0}}, {6, 7, {1}}}), 2, 2);
  EXPECT_EQ(mesh.pipeline, 2);
  EXPECT_EQ(mesh.places[0].sends_to, (std::vector<int>{1}));
  EXPECT_EQ(mesh.places[1].sends_to, (std::vector<int>{0}));
}

TEST(DeviceMesh, DataParallelKindsSpanEveryRankAndNameTheirCollectives) {
  ParallelSystem system;
  system.name = "z";
  system.data.zero_stage = 3;
  const DeviceMesh mesh = runtime::device_mesh(system, 3, 6);
  EXPECT_EQ(mesh.data, 3);
  EXPECT_EQ(mesh.places[2].data_group, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(runtime::describe_mesh(system, mesh, 2),
            "      mesh: pipeline 1 x data 3\n"
            "        rank 0 (pipeline 0, data 0): reduce-scatters and all-gathers in [0, 1, 2]\n"
            "        rank 1 (pipeline 0, data 1): reduce-scatters and all-gathers in [0, 1, 2]\n"
            "        ... 1 more ranks\n");
  const ParallelSystem zero1 = pipeline_of({{0, 3, {0, 1}}, {4, 9, {2, 3}}});
  ParallelSystem sharded = zero1;
  sharded.data.zero_stage = 1;
  EXPECT_EQ(runtime::describe_mesh(sharded, runtime::device_mesh(sharded, 4, 4), 1),
            "      mesh: pipeline 2 x data 2\n"
            "        rank 0 (pipeline 0, data 0): all-reduces and all-gathers in [0, 1]; sends "
            "to [2]\n"
            "        ... 3 more ranks\n");
}

TEST(DeviceMesh, ExpertsNameTheirAllToAllBesideTheDensePartsSum) {
  ParallelSystem system;
  system.experts = true;
  system.data.zero_stage = 2;
  EXPECT_EQ(runtime::describe_mesh(system, runtime::device_mesh(system, 2, 4), 1),
            "      mesh: pipeline 1 x data 2 (experts over data)\n"
            "        rank 0 (pipeline 0, data 0): all-to-all and reduce-scatters and all-gathers "
            "in [0, 1]\n"
            "        ... 1 more ranks\n");
}

TEST(DeviceMesh, TheTensorAxisIsInnermostAndDataRunsAcrossIt) {
  ParallelSystem system;
  system.tensor = {2, false};
  const DeviceMesh mesh = runtime::device_mesh(system, 4, 8);
  EXPECT_EQ(mesh.data, 2);
  EXPECT_EQ(mesh.tensor, 2);
  // Rank 3 is slice 1 of replica 1: it splits layers with rank 2, sums with rank 1.
  EXPECT_EQ(mesh.places[3].data, 1);
  EXPECT_EQ(mesh.places[3].tensor, 1);
  EXPECT_EQ(mesh.places[3].tensor_group, (std::vector<int>{2, 3}));
  EXPECT_EQ(mesh.places[3].data_group, (std::vector<int>{1, 3}));
  system.tensor.sequence_parallel = true;
  EXPECT_EQ(runtime::describe_mesh(system, mesh, 1),
            "      mesh: pipeline 1 x data 2 x tensor 2\n"
            "        rank 0 (pipeline 0, data 0, tensor 0): all-reduces in [0, 2]; splits layers "
            "with [0, 1] (all-gathers and reduce-scatters)\n"
            "        ... 3 more ranks\n");
  // Tensor alone: no data group to sum in.
  EXPECT_EQ(runtime::describe_mesh(system, runtime::device_mesh(system, 2, 2), 1),
            "      mesh: pipeline 1 x data 1 x tensor 2\n"
            "        rank 0 (pipeline 0, data 0, tensor 0): splits layers with [0, 1] "
            "(all-gathers and reduce-scatters)\n"
            "        ... 1 more ranks\n");
  EXPECT_THROW(runtime::device_mesh(system, 3, 3), std::invalid_argument);
}

TEST(DeviceMesh, ThreeAxesPlacePipelineThenDataThenTensor) {
  // 2 stages x 2 replicas over tensor groups of 2: 8 ranks, rank = (p x 2 + d) x 2 + j.
  ParallelSystem system = pipeline_of({{0, 1, {0, 1}}, {2, 4, {2, 3}}});
  system.tensor = {2, false};
  const DeviceMesh mesh = runtime::device_mesh(system, 8, 8);
  EXPECT_EQ(mesh.pipeline, 2);
  EXPECT_EQ(mesh.data, 2);
  EXPECT_EQ(mesh.tensor, 2);
  ASSERT_EQ(mesh.places.size(), 8u);
  // Rank 3: stage 0, replica 1, slice 1; it splits layers with rank 2, sums slice 1 with rank 1
  // and hands its rows to slice 1 of replica 1 of the next stage (rank 7).
  const runtime::MeshPlace& place = mesh.places[3];
  EXPECT_EQ((std::vector<int>{place.pipeline, place.data, place.tensor}),
            (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(place.tensor_group, (std::vector<int>{2, 3}));
  EXPECT_EQ(place.data_group, (std::vector<int>{1, 3}));
  EXPECT_EQ(place.sends_to, (std::vector<int>{7}));
  EXPECT_EQ(mesh.places[4].pipeline, 1);
  EXPECT_EQ(mesh.places[4].tensor_group, (std::vector<int>{4, 5}));
  // The seat a pipeline rank builds its groups from (rank/pipeline_worker.cpp) is its place:
  // rank 3 is slice 1 of tensor group 1, the layout's rank 1.
  const runtime::TensorSeat seat = runtime::tensor_seat(3, 2);
  EXPECT_EQ((std::vector<int>{seat.group, seat.slice}), (std::vector<int>{1, 1}));
  for (const runtime::MeshPlace& p : mesh.places) {
    EXPECT_EQ(runtime::tensor_seat(p.rank, 2).slice, p.tensor);
    EXPECT_EQ(runtime::rank_at(runtime::tensor_seat(p.rank, 2), 2), p.rank);
    EXPECT_EQ(p.tensor_group.front(),
              runtime::rank_at({runtime::tensor_seat(p.rank, 2).group, 0}, 2));
  }
  EXPECT_EQ(runtime::describe_mesh(system, mesh, 1),
            "      mesh: pipeline 2 x data 2 x tensor 2\n"
            "        rank 0 (pipeline 0, data 0, tensor 0): all-reduces in [0, 2]; splits layers "
            "with [0, 1] (all-reduces); sends to [4]\n"
            "        ... 7 more ranks\n");
  // 5 ranks make no whole tensor groups of 2.
  EXPECT_THROW(runtime::device_mesh(system, 5, 8), std::invalid_argument);
}

TEST(DeviceMesh, APipelineWhoseStagesAreNotPlacedHasNoMesh) {
  ParallelSystem system;
  system.pipeline = runtime::PipelineAxis{};
  EXPECT_THROW(runtime::device_mesh(system, 2, 2), std::invalid_argument);
  EXPECT_THROW(runtime::device_mesh(ParallelSystem{}, 0, 2), std::invalid_argument);
}

}  // namespace
