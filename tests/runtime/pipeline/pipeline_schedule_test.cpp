// Schedules as data: the generated orders against hand-worked ones, the placements, the sends
// and receives the lowering adds, the check's refusals (rank and step), the bubble each
// schedule's own order gives against the closed forms, and torch's schedule CSV.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runtime/pipeline/pipeline_schedule.h"
#include "runtime/pipeline/schedule_check.h"
#include "runtime/pipeline/schedule_csv.h"

namespace {

using runtime::PipelineAction;
using runtime::PipelineSchedule;
using runtime::ScheduleTable;

std::string order(PipelineSchedule schedule, int ranks, int rank, int micro_batches,
                  int stages_per_rank = 1) {
  return runtime::describe_actions(
      runtime::make_schedule(schedule, ranks, stages_per_rank, micro_batches).actions[rank]);
}

// A table from one line per rank ("0F0 0B0").
ScheduleTable table_of(const std::vector<std::string>& rows, int stages_per_rank = 1) {
  std::string csv;
  for (const auto& row : rows) {
    std::string line = row;
    std::replace(line.begin(), line.end(), ' ', ',');
    csv += line + "\n";
  }
  ScheduleTable t = runtime::read_schedule_csv(csv, "test.csv");
  EXPECT_EQ(t.stages_per_rank(), stages_per_rank);
  return t;
}

std::string refusal(const ScheduleTable& t) {
  try {
    runtime::validate_schedule(t);
  } catch (const runtime::ScheduleError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(PipelineSchedule, DappleRunsRanksMinusRankMinusOneWarmupForwardsThenOneForwardOneBackward) {
  // 4 stages, 6 micro-batches: warm-up 3, 2, 1, 0.
  EXPECT_EQ(order(PipelineSchedule::kDapple, 4, 0, 6),
            "0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0B3 0B4 0B5");
  EXPECT_EQ(order(PipelineSchedule::kDapple, 4, 2, 6),
            "2F0 2F1 2B0 2F2 2B1 2F3 2B2 2F4 2B3 2F5 2B4 2B5");
  EXPECT_EQ(order(PipelineSchedule::kDapple, 4, 3, 6),
            "3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3F4 3B4 3F5 3B5");
  const ScheduleTable t = runtime::make_schedule(PipelineSchedule::kDapple, 4, 1, 6);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(runtime::warmup_forwards(t.actions[r]), 4 - r);  // warm-up + the first 1F1B F
    EXPECT_EQ(runtime::peak_in_flight(t.actions[r]), 4 - r);
  }
  EXPECT_EQ(order(PipelineSchedule::kDapple, 4, 0, 2), "0F0 0F1 0B0 0B1");
}

TEST(PipelineSchedule, GpipeRunsEveryForwardThenEveryBackward) {
  EXPECT_EQ(order(PipelineSchedule::kGpipe, 3, 1, 4), "1F0 1F1 1F2 1F3 1B0 1B1 1B2 1B3");
  for (int m : {1, 2, 8}) {
    const auto t = runtime::make_schedule(PipelineSchedule::kGpipe, 2, 1, m);
    EXPECT_EQ(runtime::peak_in_flight(t.actions[1]), m);
  }
}

TEST(PipelineSchedule, InterleavedFollowsMegatronsDepthFirstOrder) {
  // p = 2, v = 2, m = 4: rounds of 2 micro-batches; stage c on rank c mod 2. Rank 0 warms up
  // (v-1) x 2 + 2 x (p-1) = 4 forwards, rank 1 two.
  const auto t = runtime::make_schedule(PipelineSchedule::kInterleaved1F1B, 2, 2, 4);
  EXPECT_EQ(t.rank_of_stage, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(runtime::describe_actions(t.actions[0]),
            "0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3");
  EXPECT_EQ(runtime::describe_actions(t.actions[1]),
            "1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3");
  EXPECT_NO_THROW(runtime::validate_schedule(t));
  try {
    runtime::make_schedule(PipelineSchedule::kInterleaved1F1B, 4, 2, 9);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "interleaved_1f1b needs the micro-batches (9) to be a multiple of 2, max(1, "
                 "micro-batches / ranks)");
  }
}

TEST(PipelineSchedule, ZeroBubbleH1DefersRankManyWeightPassesAndHoldsRanksManyMicroBatches) {
  // Rank r of p runs 1F1B's order with B split, its W right after its I once r W's wait.
  EXPECT_EQ(order(PipelineSchedule::kZbH1, 2, 0, 3), "0F0 0F1 0I0 0W0 0F2 0I1 0W1 0I2 0W2");
  EXPECT_EQ(order(PipelineSchedule::kZbH1, 2, 1, 3), "1F0 1I0 1F1 1I1 1W0 1F2 1I2 1W1 1W2");
  const auto t = runtime::make_schedule(PipelineSchedule::kZbH1, 4, 1, 8);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(runtime::peak_in_flight(t.actions[r]), 4);
  EXPECT_NO_THROW(runtime::validate_schedule(t));
}

// A rank's list as pipeline_rank<r>.json writes it reads back action by action, and its compute
// counts: ZB-H1's rank 0 of 2 at 3 micro-batches runs F, I and W three times each, no B.
TEST(PipelineSchedule, AWrittenListReadsBackAndCountsItsComputeKinds) {
  const auto schedule =
      runtime::with_communication(runtime::make_schedule(PipelineSchedule::kZbH1, 2, 1, 3));
  const std::string written = runtime::describe_actions(schedule.actions[0]);
  const std::vector<PipelineAction> read = runtime::parse_actions(written);
  EXPECT_EQ(runtime::describe_actions(read), written);
  const runtime::ComputeActionCounts counts = runtime::count_compute_actions(read);
  EXPECT_EQ(counts.forwards, 3);
  EXPECT_EQ(counts.fulls, 0);
  EXPECT_EQ(counts.inputs, 3);
  EXPECT_EQ(counts.weights, 3);
  EXPECT_EQ(runtime::count_compute_actions(runtime::parse_actions("0F0 0B0 1SEND_F0")).fulls, 1);
  EXPECT_THROW(runtime::parse_actions("0F0 0X1"), std::invalid_argument);
}

TEST(PipelineSchedule, ZbvPlacesTwoStagesPerRankInAVAndRunsEveryPassOnce) {
  EXPECT_EQ(runtime::v_placement(3), (std::vector<int>{0, 1, 2, 2, 1, 0}));
  for (int p : {1, 2, 3, 4}) {
    for (int m : {1, 2, 3, 4, 5, 7, 8, 16}) {
      const auto t = runtime::make_schedule(PipelineSchedule::kZbv, p, 2, m);
      EXPECT_EQ(refusal(t), "accepted") << "p " << p << " m " << m;
    }
  }
  try {
    runtime::make_schedule(PipelineSchedule::kZbv, 2, 3, 4);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "zbv runs exactly 2 stages per rank (stages_per_rank: 3)");
  }
}

// torch.distributed.pipelining's own orders (baselines/pipeline/python/torch_schedule_orders.py
// wrote them from torch 2.11): the harness's interleaved 1F1B, ZB-H1 and ZB-V are the same lists.
TEST(PipelineSchedule, OrdersEqualTorchPipeliningsOwn) {
  std::ifstream file(std::string(HARNESS_TEST_DATA) + "/pipeline/torch_schedule_orders.txt");
  ASSERT_TRUE(file) << "tests/data/pipeline/torch_schedule_orders.txt";
  std::string line;
  int compared = 0;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    int ranks = 0, per_rank = 0, micro_batches = 0, rank = 0;
    fields >> name >> ranks >> per_rank >> micro_batches >> rank;
    std::string actions;
    std::getline(fields, actions);
    actions.erase(0, actions.find_first_not_of(' '));
    const auto schedule = runtime::parse_pipeline_schedule(name);
    EXPECT_EQ(order(schedule, ranks, rank, micro_batches, per_rank), actions)
        << name << " p " << ranks << " v " << per_rank << " m " << micro_batches << " rank "
        << rank;
    ++compared;
  }
  EXPECT_GE(compared, 90);
}

TEST(PipelineSchedule, EveryGeneratedScheduleRunsWithoutDeadlock) {
  for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kDapple,
                        PipelineSchedule::kInterleaved1F1B, PipelineSchedule::kZbH1}) {
    for (int p : {1, 2, 3, 4}) {
      for (int m : {1, 2, 4, 8, 12}) {
        for (int v : {1, 2, 3}) {
          if (v > 1 && schedule != PipelineSchedule::kInterleaved1F1B) continue;
          if (schedule == PipelineSchedule::kInterleaved1F1B && m % std::max(1, m / p) != 0)
            continue;
          const auto t = runtime::make_schedule(schedule, p, v, m);
          EXPECT_EQ(refusal(t), "accepted") << to_string(schedule) << " p" << p << " m" << m;
        }
      }
    }
  }
}

// Bubbles from the orders themselves (free communication), against the closed forms.
TEST(ScheduleTiming, BubblesMatchTheClosedForms) {
  const runtime::StageCosts unit{1, 1, 1};  // F = I = W, B = 2F
  for (int p : {2, 4}) {
    for (int m : {4, 8, 16}) {
      const double one_f_one_b = (p - 1.0) / (m + p - 1.0);
      for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kDapple}) {
        const auto times = runtime::time_schedule(runtime::make_schedule(schedule, p, 1, m), unit);
        for (int r = 0; r < p; ++r) EXPECT_NEAR(times.bubble_fraction(r), one_f_one_b, 1e-12);
        EXPECT_DOUBLE_EQ(times.makespan, 3.0 * (m + p - 1));
      }
      // Interleaved at v = 2, each stage half of a rank's layers: (p-1) / (v m + p - 1).
      const runtime::StageCosts half{0.5, 0.5, 0.5};
      const auto interleaved = runtime::time_schedule(
          runtime::make_schedule(PipelineSchedule::kInterleaved1F1B, p, 2, m), half);
      EXPECT_NEAR(interleaved.mean_bubble_fraction(), (p - 1.0) / (2.0 * m + p - 1.0), 1e-12)
          << "p " << p << " m " << m;
      // ZB-H1: (p-1)(F + I - W) of bubble against 1F1B's (p-1)(F + B), a third at F = I = W.
      const auto zb =
          runtime::time_schedule(runtime::make_schedule(PipelineSchedule::kZbH1, p, 1, m), unit);
      const double zb_bubble = (p - 1.0) / (3.0 * m + p - 1.0);
      EXPECT_NEAR(zb.mean_bubble_fraction(), zb_bubble, 1e-12) << "p " << p << " m " << m;
    }
  }
}

TEST(ScheduleCommunication, ReceivesOneComputeAheadSendsAfterTheirMakingNoneWithinARank) {
  // A receive goes before the compute action before its use (the first one at the start), a
  // send right after the action that made it.
  const auto dapple =
      runtime::with_communication(runtime::make_schedule(PipelineSchedule::kDapple, 2, 1, 2));
  EXPECT_EQ(runtime::describe_actions(dapple.actions[0]),
            "0F0 0SEND_F0 0RECV_B0 0F1 0SEND_F1 0RECV_B1 0B0 0B1");
  EXPECT_EQ(runtime::describe_actions(dapple.actions[1]),
            "1RECV_F0 1F0 1RECV_F1 1B0 1SEND_B0 1F1 1B1 1SEND_B1");
  // ZB-V on 2 ranks: rank 0 holds stages 0 and 3, so 3's loss and backward start at home, and
  // only the hops 0 -> 1 and 2 -> 3 cross ranks. W moves nothing.
  const auto zbv =
      runtime::with_communication(runtime::make_schedule(PipelineSchedule::kZbv, 2, 2, 1));
  EXPECT_EQ(runtime::describe_actions(zbv.actions[0]),
            "3RECV_F0 0F0 0SEND_F0 3F0 3I0 3SEND_B0 0RECV_B0 3W0 0I0 0W0");
  EXPECT_EQ(runtime::describe_actions(zbv.actions[1]),
            "1RECV_F0 1F0 2RECV_B0 2F0 2SEND_F0 2I0 2W0 1I0 1SEND_B0 1W0");
}

TEST(ScheduleCheck, RefusesWithTheRankAndStep) {
  EXPECT_EQ(refusal(table_of({"0F0 0B0 0F1 0B1", "1F0 1F1 1B0 1B1"})),
            "rank 0, step 1 (0B0): waits for the backward of micro-batch 0 of stage 1 (rank 1), "
            "which waits in turn: the schedule deadlocks");
  EXPECT_EQ(refusal(table_of({"0F0 0F1 0B1 0B0", "1B0 1F0 1F1 1B1"})),
            "rank 1, step 0 (1B0): the backward of micro-batch 0 of stage 1 comes before its "
            "forward");
  EXPECT_EQ(refusal(table_of({"0F0 0F1 0B0 0B1", "1F0 1F1 1B0"})),
            "rank 1, step 3 (end): micro-batch 1 of stage 1 has no backward");
  EXPECT_EQ(refusal(table_of({"0F0 0I0 0W0 0F0 0B1", "1F0 1B0"})),
            "rank 0, step 3 (0F0): a second forward of micro-batch 0 of stage 0");
  EXPECT_EQ(refusal(table_of({"0F0 0W0 0I0", "1F0 1B0"})),
            "rank 0, step 1 (0W0): the W of micro-batch 0 of stage 0 comes before its I");
}

TEST(ScheduleCsv, ReadsTorchsCellsIdleStepsAndItsCommunicationCells) {
  // As torch's _dump_csv writes a compute_comms schedule: empty cells idle, sends and
  // receives among the compute (the harness places its own).
  const auto t = runtime::read_schedule_csv(
      "0F0,0SEND_F0,,0F1,0RECV_B0,0B0,0B1\n1RECV_F0,1F0,1B0,1SEND_B0,1F1,1B1\n", "s.csv");
  EXPECT_EQ(t.ranks, 2);
  EXPECT_EQ(t.stages, 2);
  EXPECT_EQ(t.micro_batches, 2);
  EXPECT_EQ(runtime::describe_actions(t.actions[0]), "0F0 0F1 0B0 0B1");
  EXPECT_EQ(refusal(t), "accepted");
  const auto error = [](const std::string& text) {
    try {
      runtime::read_schedule_csv(text, "s.csv");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error("0F0,0B0\n1F0,1X0\n"),
            "s.csv:2:5: '1X0' is not an action (expected "
            "[stage][F|B|I|W|SEND_F|RECV_F|SEND_B|RECV_B][micro-batch], e.g. 1F0)");
  EXPECT_EQ(error("0F0,0UNSHARD\n"),
            "s.csv:1:5: '0UNSHARD' is an FSDP action, which the harness's pipelines do not run "
            "(their stages are not sharded)");
  EXPECT_EQ(error("0F0,1F0\n1F0\n"),
            "s.csv:2:1: stage 1 is on row 1 already (a stage runs on one rank)");
  EXPECT_EQ(error("\n\n"), "s.csv: the schedule has no F, B, I or W action");
}

TEST(PipelineSchedule, ParsesNamesAndRejectsOthers) {
  for (const auto& name : runtime::pipeline_schedule_names()) {
    EXPECT_EQ(runtime::to_string(runtime::parse_pipeline_schedule(name)), name);
  }
  try {
    runtime::parse_pipeline_schedule("1f1b");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "unknown pipeline schedule '1f1b' (expected dapple, gpipe, interleaved_1f1b, "
                 "zb_h1 or zbv)");
  }
}

}  // namespace
