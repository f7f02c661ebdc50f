// The pipeline's plan as data: stage layouts and the replica-to-replica row mapping, layer
// ranges, and the Chrome trace a rank writes (schedules: pipeline_schedule_test.cpp).
#include <gtest/gtest.h>

#include "runtime/pipeline/pipeline_layout.h"
#include "runtime/protocol/trace_recorder.h"

namespace {

TEST(PipelineLayout, ReplicasSplitAMicroBatchIntoContiguousRows) {
  using runtime::SampleRange;
  EXPECT_EQ(runtime::replica_samples(7, 2, 0), (SampleRange{0, 3}));
  EXPECT_EQ(runtime::replica_samples(7, 2, 1), (SampleRange{3, 7}));
  EXPECT_EQ(runtime::micro_batch_samples(12, 4, 3), (SampleRange{9, 12}));
  EXPECT_EQ(runtime::micro_batch_samples(10, 3, 1), (SampleRange{3, 6}));
}

TEST(PipelineLayout, TransfersSendEachRowToTheReplicaThatHoldsItNext) {
  using runtime::SliceTransfer;
  // Equal replica counts: replica j to replica j.
  EXPECT_EQ(runtime::slice_transfers(8, 2, 2),
            (std::vector<SliceTransfer>{{0, 0, {0, 4}}, {1, 1, {4, 8}}}));
  // Two replicas into one: the one gathers both halves in order.
  EXPECT_EQ(runtime::slice_transfers(6, 2, 1),
            (std::vector<SliceTransfer>{{0, 0, {0, 3}}, {1, 0, {3, 6}}}));
  // Two into three, 6 rows: [0,3) [3,6) -> [0,2) [2,4) [4,6).
  EXPECT_EQ(
      runtime::slice_transfers(6, 2, 3),
      (std::vector<SliceTransfer>{{0, 0, {0, 2}}, {0, 1, {2, 3}}, {1, 1, {3, 4}}, {1, 2, {4, 6}}}));
}

runtime::PipelineLayout two_by_two() { return {{{0, 4, {0, 1}}, {5, 9, {2, 3}}}}; }

TEST(PipelineLayout, FindsEachRanksStageAndReplica) {
  const auto layout = two_by_two();
  EXPECT_NO_THROW(runtime::validate_layout(layout, 10, 4));
  EXPECT_EQ(layout.stage_of(3), 1);
  EXPECT_EQ(layout.replica_of(3), 1);
  EXPECT_EQ(layout.replica_of(0), 0);
}

void expect_invalid(const runtime::PipelineLayout& layout, int layers, int world,
                    const std::string& message) {
  try {
    runtime::validate_layout(layout, layers, world);
    FAIL() << "accepted: " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(e.what(), message);
  }
}

TEST(PipelineLayout, RejectsGapsOverlapsMissingLayersAndRanks) {
  expect_invalid({{{0, 4, {0}}, {6, 9, {1}}}}, 10, 2,
                 "stage 1: starts at layer 6, expected 5 (stages must cover the layers in "
                 "order, without gaps)");
  expect_invalid({{{0, 4, {0}}, {5, 10, {1}}}}, 10, 2,
                 "stage 1: layer 10 does not exist (the model has 10 layers, 0-9)");
  expect_invalid({{{0, 4, {0}}, {5, 8, {1}}}}, 10, 2,
                 "the stages end at layer 8 but the model has 10 layers (0-9)");
  expect_invalid({{{0, 4, {0, 1}}, {5, 9, {1}}}}, 10, 2, "stage 1: rank 1 already serves stage 0");
  expect_invalid({{{0, 4, {0}}, {5, 9, {1}}}}, 10, 3,
                 "rank 2 serves no stage (every rank of the 3 must serve one)");
  expect_invalid({{{0, 4, {0}}, {5, 9, {4}}}}, 10, 2,
                 "stage 1: rank 4 is outside the world of 2 ranks");
}

TEST(PipelineLayout, ParsesLayerRanges) {
  EXPECT_EQ(runtime::parse_layer_range("0-12"), (std::pair<int, int>{0, 12}));
  EXPECT_EQ(runtime::parse_layer_range("7"), (std::pair<int, int>{7, 7}));
  EXPECT_THROW(runtime::parse_layer_range("5-2"), std::invalid_argument);
  EXPECT_THROW(runtime::parse_layer_range("a-3"), std::invalid_argument);
  EXPECT_THROW(runtime::parse_layer_range("-3"), std::invalid_argument);
}

TEST(TraceRecorder, WritesCompleteEventsOnePidPerRankOneTidPerStream) {
  runtime::TraceRecorder trace;
  trace.add("ignored", runtime::TraceCategory::kForward, 0, 1);  // disabled: dropped
  trace.set_enabled(true);
  trace.add("forward mb0", runtime::TraceCategory::kForward, 100, 350, {{"micro_batch", 0}});
  trace.add("recv gradients mb0", runtime::TraceCategory::kRecv, 350, 400);
  trace.add("allreduce stage 1", runtime::TraceCategory::kAllReduce, 400, 500);
  trace.add("moe 0 dispatch", runtime::TraceCategory::kAllToAll, 500, 520);
  trace.add("allgather layers.0", runtime::TraceCategory::kAllGather, 520, 530);
  trace.add("reducescatter layers.0", runtime::TraceCategory::kReduceScatter, 530, 540);
  const auto json = trace.to_json({{"rank", 3}, {"stage", 1}, {"system", "dapple"}});
  const auto& events = json.at("traceEvents");
  ASSERT_EQ(events.size(), 9u + 6u);  // process name, sort index, 7 thread names, 6 events
  EXPECT_EQ(events[0].at("args").at("name"), "rank 3 (stage 1)");
  EXPECT_EQ(events[6].at("args").at("name"), "alltoall");
  EXPECT_EQ(events[8].at("args").at("name"), "reducescatter");
  EXPECT_EQ(events[12].at("cat"), "alltoall");
  EXPECT_EQ(events[12].at("tid"), 4);
  EXPECT_EQ(events[13].at("cat"), "allgather");
  EXPECT_EQ(events[13].at("tid"), 5);
  EXPECT_EQ(events[14].at("tid"), 6);
  const auto& forward = events[9];
  EXPECT_EQ(forward.at("ph"), "X");
  EXPECT_EQ(forward.at("cat"), "forward");
  EXPECT_DOUBLE_EQ(forward.at("ts").get<double>(), 100);
  EXPECT_DOUBLE_EQ(forward.at("dur").get<double>(), 250);
  EXPECT_EQ(forward.at("pid"), 3);
  EXPECT_EQ(forward.at("tid"), 0);
  EXPECT_EQ(events[10].at("tid"), 2);
  EXPECT_EQ(events[11].at("tid"), 3);
  EXPECT_EQ(events[11].at("cat"), "allreduce");
  EXPECT_EQ(json.at("otherData").at("clock"), "steady");
  EXPECT_EQ(json.at("displayTimeUnit"), "ms");
}

}  // namespace
