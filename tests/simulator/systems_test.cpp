// Systems against closed forms: pipelines of equal stages, schedule orders, DDP buckets.
#include <gtest/gtest.h>

#include "runtime/pipeline/layout_schedule.h"
#include "runtime/pipeline/schedule_check.h"

#include <array>
#include <vector>

#include "simulator/chrome_trace.h"
#include "simulator/collective.h"
#include "simulator/data_parallel_system.h"
#include "simulator/pipeline_system.h"
#include "tests/simulator/test_costs.h"

namespace harness::simulator {
namespace {

using testing::chain;

ClusterConfig idle_machine(int gpus) {
  ClusterConfig config;
  config.gpus_per_machine = {gpus};
  config.intra_bandwidth = 10e9;
  config.intra_latency_s = 0;
  return config;
}

PipelineSystem equal_stages(int stages, int layers_per_stage, int replicas, int micro_batches,
                            PipelineSchedule schedule) {
  PipelineSystem system;
  system.schedule = schedule;
  system.micro_batches = micro_batches;
  system.global_batch = micro_batches * replicas;  // one sample per replica per micro-batch
  int rank = 0;
  for (int s = 0; s < stages; ++s) {
    PipelineStage stage;
    for (int l = 0; l < layers_per_stage; ++l) stage.layers.push_back(s * layers_per_stage + l);
    for (int r = 0; r < replicas; ++r) stage.ranks.push_back(rank++);
    system.stages.push_back(stage);
  }
  return system;
}

TEST(Pipeline, GpipeOfEqualStagesTakesMPlusPMinusOneStageTimes) {
  // p = 4 stages of 2 layers (forward 1 ms, backward 2 ms each): stage time 6 ms per
  // micro-batch; m = 8: (8 + 4 - 1) x 6 ms = 66 ms. No activations: transfers are free.
  for (auto schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kDapple}) {
    const LayerCosts costs = chain(8, 1e-3, 2e-3);
    const Cluster cluster(idle_machine(4));
    ComputeNoise none;
    const SimulatedIteration it =
        simulate_pipeline(cluster, costs, equal_stages(4, 2, 1, 8, schedule), 4, none);
    EXPECT_NEAR(it.times.makespan, 11 * 6e-3, 1e-12) << to_string(schedule);
    // Every rank: forward 8 x 2 ms, backward is the rest of the iteration.
    EXPECT_NEAR(it.ranks[2].forward_ms, 16.0, 1e-9);
    EXPECT_NEAR(it.ranks[2].iteration_ms, 66.0, 1e-9);
    EXPECT_NEAR(it.ranks[2].backward_ms, 50.0, 1e-9);
  }
}

TEST(Pipeline, ReplicatedStagesSplitMicroBatchesAndAllReduce) {
  // 2 stages x 2 replicas, 1 layer each (forward 2 ms, backward 4 ms per sample), micro-batch
  // of 2 samples -> 1 per replica; m = 3: (3 + 2 - 1) x 6 ms = 24 ms, then a 2-rank ring
  // all-reduce of 10 MB at 10 GB/s, no latency: 2 x 5 MB / 10 GB/s = 1 ms.
  const LayerCosts costs = chain(2, 2e-3, 4e-3, 0, 10e6);
  const Cluster cluster(idle_machine(4));
  ComputeNoise none;
  PipelineSystem system = equal_stages(2, 1, 2, 3, PipelineSchedule::kGpipe);
  const SimulatedIteration it = simulate_pipeline(cluster, costs, system, 4, none);
  EXPECT_NEAR(it.times.makespan, 24e-3 + 1e-3, 1e-12);
}

TEST(Pipeline, ReplicatedStagesCopyGradientsAroundTheirAllReduce) {
  // As above with the reducer's passes at 10 GB/s: 10 MB per pass = 1 ms. A replicated stage
  // copies in (1 pass: it sums, no scaling), all-reduces (1 ms), copies out (1 pass): stage 0
  // ends its last backward at 24 ms, so 24 + 1 + 1 + 1 = 27 ms.
  const LayerCosts costs = chain(2, 2e-3, 4e-3, 0, 10e6);
  ClusterConfig config = idle_machine(4);
  config.bucket_copy_bandwidth = 10e9;
  const Cluster cluster(config);
  ComputeNoise none;
  PipelineSystem system = equal_stages(2, 1, 2, 3, PipelineSchedule::kGpipe);
  const SimulatedIteration it = simulate_pipeline(cluster, costs, system, 4, none);
  EXPECT_NEAR(it.times.makespan, 27e-3, 1e-12);
  // A stage of one replica has no reducer: nothing to copy, the closed form is unchanged.
  const SimulatedIteration single = simulate_pipeline(
      cluster, costs, equal_stages(2, 1, 1, 3, PipelineSchedule::kGpipe), 2, none);
  EXPECT_NEAR(single.times.makespan, (3 + 2 - 1) * 6e-3, 1e-12);
}

TEST(Pipeline, ReplicasThatShardAStageStepTheirChunkAndGatherIt) {
  // 2 stages x 2 replicas of one 10 MB layer each, GPipe, m = 3: the last backward ends at
  // 24 ms. The whole model's step is 4 ms, a stage's share 2 ms. Plain replicas: the all-reduce
  // (1 ms), the 2 ms step: 27 ms. ZeRO-1: the all-reduce, half the share (1 ms), the chunks'
  // all-gather (one ring step of 5 MB, 0.5 ms): 26.5 ms. ZeRO-2: a reduce-scatter (0.5 ms)
  // instead of the all-reduce: 26 ms.
  const LayerCosts costs = chain(2, 2e-3, 4e-3, 0, 10e6);
  const Cluster cluster(idle_machine(4));
  ComputeNoise none;
  PipelineSystem system = equal_stages(2, 1, 2, 3, PipelineSchedule::kGpipe);
  system.step_s = 4e-3;
  const std::array<double, 3> expected = {27e-3, 26.5e-3, 26e-3};
  for (int zero = 0; zero <= 2; ++zero) {
    system.zero_stage = zero;
    const SimulatedIteration it = simulate_pipeline(cluster, costs, system, 4, none);
    EXPECT_NEAR(it.times.makespan, expected[zero], 1e-12) << "zero_stage " << zero;
    EXPECT_NEAR(it.ranks[0].step_ms, zero == 0 ? 2.0 : 1.0, 1e-9) << "zero_stage " << zero;
  }
}

TEST(Pipeline, EachStageStepsItsShareOfTheParameters) {
  // The whole model's step is 4 ms; stage 0 holds 10 MB of the 40 MB of parameters, stage 1
  // 30 MB: their steps take 1 ms and 3 ms. One replica per stage: no all-reduce, no copies.
  LayerCosts costs = chain(2, 1e-3, 1e-3, 0, 10e6);
  costs.parameter_bytes[1] = 30e6;
  const Cluster cluster(idle_machine(2));
  ComputeNoise none;
  PipelineSystem system = equal_stages(2, 1, 1, 2, PipelineSchedule::kDapple);
  system.step_s = 4e-3;
  const SimulatedIteration it = simulate_pipeline(cluster, costs, system, 2, none);
  EXPECT_NEAR(it.ranks[0].step_ms, 1.0, 1e-9);
  EXPECT_NEAR(it.ranks[1].step_ms, 3.0, 1e-9);
  // 1F1B, 1 ms per forward or backward: stage 1's last backward ends at 5 ms and its step at
  // 8 ms; stage 0's at 6 ms and 7 ms. With the whole step on both stages it would be 9 ms.
  EXPECT_NEAR(it.times.makespan, 8e-3, 1e-12);
}

TEST(Pipeline, RanksOutnumberingTheCoresShareThem) {
  // 2 stages x 2 replicas on one machine of 2 cores, 1 core per rank: whenever all four ranks
  // compute, each runs at half speed. GPipe, m = 3, one sample per replica, forward 2 ms and
  // backward 4 ms: the closed form for 4 free cores is (3 + 2 - 1) x 6 = 24 ms; on 2 cores the
  // two stages overlap for m - 1 = 2 of the 4 forward and the 4 backward slots, and those run
  // at half speed: stage 0 forwards f0 = 2 ms, then (f1, f2 beside stage 1's f0, f1) 4 ms
  // each... every slot where both stages work takes twice as long. The forwards: 2 + 4 + 4 +
  // 2 = 12 ms; the backwards likewise 4 + 8 + 8 + 4 = 24 ms: 36 ms in all (no parameters).
  const LayerCosts costs = chain(2, 2e-3, 4e-3, 0, 0);
  ClusterConfig config = idle_machine(4);
  const PipelineSystem system = equal_stages(2, 1, 2, 3, PipelineSchedule::kGpipe);
  ComputeNoise none;
  EXPECT_NEAR(simulate_pipeline(Cluster(config), costs, system, 4, none).times.makespan, 24e-3,
              1e-12);
  config.cpu_cores_per_machine = 4;  // enough cores: unchanged
  EXPECT_NEAR(simulate_pipeline(Cluster(config), costs, system, 4, none).times.makespan, 24e-3,
              1e-12);
  config.cpu_cores_per_machine = 2;
  EXPECT_NEAR(simulate_pipeline(Cluster(config), costs, system, 4, none).times.makespan, 36e-3,
              1e-12);
}

// DAPPLE over 2 stages of one layer, one sample per micro-batch, its activation 10 MB at
// 10 GB/s: every forward, backward and transfer takes 1 ms.
SimulatedIteration two_stages_of_one_ms(int micro_batches, bool ready_behind_sends = false) {
  const LayerCosts costs = chain(2, 1e-3, 1e-3, 10e6, 0);
  ClusterConfig config = idle_machine(2);
  config.p2p_ready_behind_sends = ready_behind_sends;
  ComputeNoise none;
  return simulate_pipeline(Cluster(config), costs,
                           equal_stages(2, 1, 1, micro_batches, PipelineSchedule::kDapple), 2,
                           none);
}

// The transfer rank `from` sends for micro-batch k.
int transfer_of(const SimulatedIteration& it, int from, int k) {
  for (size_t t = 0; t < it.graph.tasks().size(); ++t) {
    const Task& task = it.graph.task(static_cast<int>(t));
    if (task.kind == TaskKind::kTransfer && task.rank == from && task.micro_batch == k) {
      return static_cast<int>(t);
    }
  }
  return -1;
}

TEST(Pipeline, ActivationTransfersDelayTheNextStage) {
  // m = 1: forward 1 ms, transfer 1 ms, forward 1 ms, backward 1 ms, gradient transfer 1 ms,
  // backward 1 ms.
  EXPECT_NEAR(two_stages_of_one_ms(1).times.makespan, 6e-3, 1e-12);
}

TEST(Pipeline, ATransferWaitsForItsReceiverToPostTheReceive) {
  // Point-to-point is a rendezvous (Gloo writes a message once its receiver posted the receive;
  // the runtime posts it where its list has it, one compute action ahead of its use). As above
  // with m = 2: stage 0 runs 0F0 0SEND_F0 0RECV_B0 0F1 0SEND_F1 0RECV_B1 0B0 0B1, stage 1
  // 1RECV_F0 1F0 1RECV_F1 1B0 1SEND_B0 1F1 1B1 1SEND_B1. Stage 0's F1 ends at 2 ms, but stage
  // 1 posts the receive for it only after its F0 (2-3): activation 1 crosses 3-4 while stage 1
  // runs B0 3-4; gradient 0 crosses 4-5 (posted at 1), F1 4-5, B1 5-6, gradient 1 6-7 (posted
  // at 2); stage 0's B0 5-6, B1 7-8 ends the iteration at 8 ms. A receive posted right before
  // its use (after B0, at 4 ms) would hold activation 1 until 4-5 and end it at 9 ms.
  const SimulatedIteration it = two_stages_of_one_ms(2);
  EXPECT_NEAR(it.times.makespan, 8e-3, 1e-12);
  const int activation1 = transfer_of(it, 0, 1);
  ASSERT_GE(activation1, 0);
  EXPECT_NEAR(it.times.start[activation1], 3e-3, 1e-12);
  EXPECT_NEAR(it.times.end[activation1], 4e-3, 1e-12);
}

TEST(Pipeline, AStageStepsOnceItsSendsAreComplete) {
  // The runtime waits for every send of the iteration before the stage's all-reduce and step
  // (finish_iteration). m = 1 as above: stage 1's backward ends at 4 ms and its gradient
  // crosses 4-5 ms; its step (all 4 ms of the model's: stage 1 holds every parameter) runs
  // 5-9 ms, not 4-8 ms beside the send.
  LayerCosts costs = chain(2, 1e-3, 1e-3, 10e6, 0);
  costs.parameter_bytes[1] = 10e6;
  PipelineSystem system = equal_stages(2, 1, 1, 1, PipelineSchedule::kDapple);
  system.step_s = 4e-3;
  ComputeNoise none;
  const SimulatedIteration it = simulate_pipeline(Cluster(idle_machine(2)), costs, system, 2, none);
  EXPECT_NEAR(it.ranks[1].step_ms, 4.0, 1e-9);
  EXPECT_NEAR(it.times.makespan, 9e-3, 1e-12);
}

TEST(Pipeline, AReadyNoticeQueuesBehindTheSendsItsRankIssuedFirst) {
  // As above, with the receiver's "ready" sent as Gloo's TCP pair sends it: into the pair's one
  // connection, behind the bytes its rank already sends the same peer. Stage 0 sends activation
  // 1 (made at 2 ms) before it posts the receive of gradient 1: that notice follows activation
  // 1's bytes, which cross 3-4 once stage 1 posts their receive after its F0, and arrives with
  // them at 4 ms -- before gradient 1 is made (6 ms), so the iteration still ends at 8 ms.
  // Gradient 0's notice (posted at 1, behind activation 0's bytes crossing 1-2) arrived at 2.
  const SimulatedIteration it = two_stages_of_one_ms(2, /*ready_behind_sends=*/true);
  EXPECT_NEAR(it.times.makespan, 8e-3, 1e-12);
  const int activation1 = transfer_of(it, 0, 1), gradient0 = transfer_of(it, 1, 0);
  ASSERT_GE(activation1, 0);
  ASSERT_GE(gradient0, 0);
  EXPECT_NEAR(it.times.start[gradient0], 4e-3, 1e-12);
  EXPECT_NEAR(it.times.end[gradient0], 5e-3, 1e-12);
  EXPECT_NEAR(it.times.start[activation1], 3e-3, 1e-12);
  EXPECT_NEAR(it.times.end[activation1], 4e-3, 1e-12);
  // With one micro-batch nothing is in flight when a receive is posted: the notices change
  // nothing (6 ms, as ActivationTransfersDelayTheNextStage).
  EXPECT_NEAR(two_stages_of_one_ms(1, true).times.makespan, 6e-3, 1e-12);
}

// The send calls of a task graph, each with its duration, in the order their transfers were
// added: {micro_batch, sender, seconds}.
std::vector<std::array<double, 3>> send_calls(const SimulatedIteration& it) {
  std::vector<std::array<double, 3>> calls;
  for (size_t t = 0; t < it.graph.tasks().size(); ++t) {
    const Task& task = it.graph.task(static_cast<int>(t));
    if (task.category != TaskCategory::kSendCall) continue;
    calls.push_back({static_cast<double>(task.micro_batch), static_cast<double>(task.rank),
                     it.times.end[t] - it.times.start[t]});
  }
  return calls;
}

TEST(Pipeline, ASendCallWritingItsMessageHoldsItsRankBeforeItPostsTheNextReceive) {
  // two_stages_of_one_ms(2) on two machines (their link 10 GB/s, no latency), every send call
  // that writes its own message holding its thread 0.5 ms (ClusterConfig::inter_send_call).
  // Stage 0 F0 0-1; activation 0 leaves at once (stage 1 posted its receive at the start), so
  // its call writes it: 1-1.5, and F1 1.5-2.5. Activation 1 waits for stage 1 to post its
  // receive after F0 (2-3), so its call only queues it (no time); it crosses 3-4. Stage 1: B0
  // 3-4, gradient 0's call 4-4.5 (stage 0 posted at 1.5) while it crosses 4-5, F1 4.5-5.5, B1
  // 5.5-6.5, gradient 1's call 6.5-7 while it crosses 6.5-7.5 (posted at 2.5); stage 0's B0
  // 5-6 and B1 7.5-8.5.
  const LayerCosts costs = chain(2, 1e-3, 1e-3, 10e6, 0);
  ClusterConfig config;
  config.gpus_per_machine = {1, 1};
  config.intra_bandwidth = config.inter_bandwidth = 10e9;
  config.inter_p2p_bandwidth = 0;
  config.intra_latency_s = config.inter_latency_s = 0;
  config.inter_send_call = {{0.0, 0.5e-3}};
  ComputeNoise none;
  const PipelineSystem system = equal_stages(2, 1, 1, 2, PipelineSchedule::kDapple);
  const SimulatedIteration it = simulate_pipeline(Cluster(config), costs, system, 2, none);
  EXPECT_NEAR(it.times.makespan, 8.5e-3, 1e-12);
  const int activation1 = transfer_of(it, 0, 1);
  ASSERT_GE(activation1, 0);
  EXPECT_NEAR(it.times.start[activation1], 3e-3, 1e-12);
  const auto calls = send_calls(it);  // activations 0 and 1, then gradients 0 and 1
  ASSERT_EQ(calls.size(), 4u);
  const std::vector<std::array<double, 3>> expected = {
      {0, 0, 0.5e-3}, {1, 0, 0.0}, {0, 1, 0.5e-3}, {1, 1, 0.5e-3}};
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i][0], expected[i][0]) << i;
    EXPECT_EQ(calls[i][1], expected[i][1]) << i;
    EXPECT_NEAR(calls[i][2], expected[i][2], 1e-12) << i;
  }
  // Free calls (the default): the 8 ms of ATransferWaitsForItsReceiverToPostTheReceive, across
  // machines as inside one.
  config.inter_send_call.clear();
  EXPECT_NEAR(simulate_pipeline(Cluster(config), costs, system, 2, none).times.makespan, 8e-3,
              1e-12);
  // Inside one machine the calls across machines are not what is paid: free where unmeasured.
  ClusterConfig one_machine = idle_machine(2);
  one_machine.inter_send_call = {{0.0, 0.5e-3}};
  EXPECT_NEAR(simulate_pipeline(Cluster(one_machine), costs, system, 2, none).times.makespan, 8e-3,
              1e-12);
  // A measured call inside one (a comm profile's `handover`) is the same rule: on one machine
  // with the same 10 GB/s, the calls whose receive is posted take it, activation 1's (its
  // receive not posted yet) nothing -- the makespan and calls of the two machines above.
  ClusterConfig measured = config;
  measured.gpus_per_machine = {2};
  measured.intra_send_call = {{0.0, 0.5e-3}};
  measured.inter_send_call.clear();
  const SimulatedIteration inside = simulate_pipeline(Cluster(measured), costs, system, 2, none);
  EXPECT_NEAR(inside.times.makespan, 8.5e-3, 1e-12);
  const auto paid = send_calls(inside);
  ASSERT_EQ(paid.size(), 4u);
  for (size_t i = 0; i < paid.size(); ++i) EXPECT_NEAR(paid[i][2], expected[i][2], 1e-12) << i;
}

// The simulator runs the runtime's action lists: with free links its makespan is the schedule's
// own (runtime::time_schedule) for every schedule, stages of one layer, F = 1 ms, B = 2 ms.
TEST(Pipeline, FreeLinksGiveTheSchedulesOwnMakespan) {
  struct Case {
    PipelineSchedule schedule;
    int per_rank;
  };
  for (const Case c : {Case{PipelineSchedule::kGpipe, 1}, Case{PipelineSchedule::kDapple, 1},
                       Case{PipelineSchedule::kInterleaved1F1B, 2},
                       Case{PipelineSchedule::kZbH1, 1}, Case{PipelineSchedule::kZbv, 2}}) {
    for (int p : {2, 4}) {
      const int m = 8, stages = p * c.per_rank;
      const LayerCosts costs = chain(stages, 1e-3, 2e-3);
      PipelineSystem system = equal_stages(stages, 1, 1, m, c.schedule);
      const auto placement = runtime::placement_for(c.schedule, p, stages);
      for (int s = 0; s < stages; ++s) system.stages[s].ranks = {placement[s]};
      ComputeNoise none;
      SimulatedIteration it;
      try {
        it = simulate_pipeline(Cluster(idle_machine(p)), costs, system, p, none);
      } catch (const std::exception& e) {
        ADD_FAILURE() << runtime::to_string(c.schedule) << " p " << p << ": " << e.what();
        continue;
      }
      const auto own = runtime::time_schedule(runtime::make_schedule(c.schedule, p, c.per_rank, m),
                                              runtime::StageCosts{1e-3, 1e-3, 1e-3});
      EXPECT_NEAR(it.times.makespan, own.makespan, 1e-12)
          << runtime::to_string(c.schedule) << " p " << p;
    }
  }
}

// A profile that timed the backward split (harness profile layers --split-backward) prices a
// zero-bubble stage's I and W as measured, and a whole B as the profile's backward: with free
// links, F = 1 ms, I = 0.8 ms and W = 1.6 ms against a whole B of 2 ms, ZB-H1's makespan is the
// schedule's own at {1, 0.8, 1.6} and 1F1B's at B = 2 ms.
TEST(Pipeline, AProfiledSplitBackwardPricesIAndW) {
  const int p = 2, m = 4;
  LayerCosts costs = chain(p, 1e-3, 2e-3);
  add_backward_split(costs, {0.8, 0.8}, {1.6, 1.6});
  ComputeNoise none;
  for (auto schedule : {PipelineSchedule::kZbH1, PipelineSchedule::kDapple}) {
    const SimulatedIteration it = simulate_pipeline(Cluster(idle_machine(p)), costs,
                                                    equal_stages(p, 1, 1, m, schedule), p, none);
    const runtime::StageCosts own = schedule == PipelineSchedule::kZbH1
                                        ? runtime::StageCosts{1e-3, 0.8e-3, 1.6e-3}
                                        : runtime::StageCosts{1e-3, 1e-3, 1e-3};
    EXPECT_NEAR(it.times.makespan,
                runtime::time_schedule(runtime::make_schedule(schedule, p, 1, m), own).makespan,
                1e-12)
        << runtime::to_string(schedule);
  }
  EXPECT_THROW(add_backward_split(costs, {0.8}, {1.6}), std::invalid_argument);
  EXPECT_THROW(add_backward_split(costs, {0.8, -1}, {1.6, 1.6}), std::invalid_argument);
}

TEST(Pipeline, SimulatedComputeFollowsTheScheduleOrder) {
  // The trace of stage 0 lists its compute events in DAPPLE order, with 1F1B keeping at most
  // p - s micro-batches in flight, where GPipe holds all m.
  const LayerCosts costs = chain(4, 1e-3, 2e-3);
  const Cluster cluster(idle_machine(4));
  for (auto schedule : {PipelineSchedule::kDapple, PipelineSchedule::kGpipe}) {
    ComputeNoise none;
    const SimulatedIteration it =
        simulate_pipeline(cluster, costs, equal_stages(4, 1, 1, 8, schedule), 4, none);
    const nlohmann::json trace = rank_trace(it, 0, "p", 0);
    std::vector<std::string> names;
    int in_flight = 0, peak = 0;
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] != "X" || e["tid"] != 0 || e["cat"] == "step") continue;
      names.push_back(e["name"]);
      in_flight += e["cat"] == "forward" ? 1 : -1;
      peak = std::max(peak, in_flight);
    }
    ASSERT_EQ(names.size(), 16u);
    if (schedule == PipelineSchedule::kDapple) {
      EXPECT_EQ(names[3], "forward mb3");
      EXPECT_EQ(names[4], "backward mb0");
      EXPECT_EQ(names[5], "forward mb4");
      EXPECT_EQ(peak, 4);
      EXPECT_EQ(trace["otherData"]["schedule"], "dapple");
    } else {
      EXPECT_EQ(names[7], "forward mb7");
      EXPECT_EQ(names[8], "backward mb0");
      EXPECT_EQ(peak, 8);
    }
    EXPECT_EQ(trace["otherData"]["stage"], 0);
  }
}

TEST(Pipeline, RejectsBadStages) {
  const LayerCosts costs = chain(3, 1e-3, 1e-3);
  PipelineSystem system;
  system.stages = {{{0, 1}, {0}}};
  EXPECT_THROW(validate_pipeline(costs, system, 2), std::invalid_argument);  // layer 2 missing
  system.stages = {{{1, 2}, {0}}, {{0}, {1}}};
  EXPECT_THROW(validate_pipeline(costs, system, 2), std::invalid_argument);  // edge backwards
  system.stages = {{{0, 1}, {0, 1}}, {{2}, {1}}};
  EXPECT_THROW(validate_pipeline(costs, system, 2), std::invalid_argument);  // other replicas
  system.stages = {{{0, 1}, {0}}, {{2}, {5}}};
  EXPECT_THROW(validate_pipeline(costs, system, 2), std::invalid_argument);  // rank outside
}

TEST(DataParallel, SyncIsComputePlusEveryBucketsAllReduce) {
  // 4 layers of 30 MiB parameters, buckets capped at 1 MiB first then 25 MiB: every layer is
  // its own bucket (a tensor is never split). 2 ranks on one machine, 10 GB/s, no latency.
  const double mib = 1024.0 * 1024.0;
  const LayerCosts costs = chain(4, 5e-3, 10e-3, 0, 30 * mib);
  const Cluster cluster(idle_machine(2));
  const auto buckets = layer_buckets(costs, 1, 25);
  ASSERT_EQ(buckets.size(), 4u);
  EXPECT_EQ(buckets[0].layers, std::vector<int>{3});  // ready first: the last layer
  DataParallelSystem system;
  system.world = 2;
  system.batch_per_rank = 1;
  system.overlap = false;
  system.step_s = 1e-3;
  ComputeNoise none;
  const double allreduce = idle_allreduce_seconds(cluster, {0, 1}, CollectiveAlgorithm::kRing,
                                                  30 * mib);  // = 30 MiB / 10 GB/s
  EXPECT_NEAR(allreduce, 30 * mib / 10e9, 1e-15);
  const SimulatedIteration sync = simulate_data_parallel(cluster, costs, system, none);
  EXPECT_NEAR(sync.times.makespan, 20e-3 + 40e-3 + 4 * allreduce + 1e-3, 1e-12);
  EXPECT_NEAR(sync.ranks[1].forward_ms, 20.0, 1e-9);
  EXPECT_NEAR(sync.ranks[1].step_ms, 1.0, 1e-9);
  // Overlap: each bucket's all-reduce (3.1 ms) runs under the next layer's backward (10 ms);
  // only the last one is exposed.
  system.overlap = true;
  const SimulatedIteration overlap = simulate_data_parallel(cluster, costs, system, none);
  EXPECT_NEAR(overlap.times.makespan, 20e-3 + 40e-3 + allreduce + 1e-3, 1e-12);
}

// The setup above: 4 layers of 30 MiB parameters (forward 5 ms, backward 10 ms), each its own
// bucket, on 2 ranks of one machine at 10 GB/s, step 1 ms; A = 30 MiB / 10 GB/s is one
// bucket's all-reduce.
struct FourBuckets {
  LayerCosts costs = chain(4, 5e-3, 10e-3, 0, 30.0 * 1024 * 1024);
  ClusterConfig config = idle_machine(2);
  double a = 30.0 * 1024 * 1024 / 10e9;
  DataParallelSystem system;
  ComputeNoise none;
  FourBuckets() {
    system.world = 2;
    system.batch_per_rank = 1;
    system.step_s = 1e-3;
  }
  double makespan(bool overlap) {
    system.overlap = overlap;
    return simulate_data_parallel(Cluster(config), costs, system, none).times.makespan;
  }
};

TEST(DataParallel, BucketCopiesAddTheReducersPasses) {
  // With the reducer's host-side passes at 10 GB/s one pass over a bucket takes A too.
  FourBuckets setup;
  setup.config.bucket_copy_bandwidth = 10e9;
  const Cluster cluster(setup.config);
  const double a = setup.a;
  DataParallelSystem& system = setup.system;
  ComputeNoise& none = setup.none;
  const LayerCosts& costs = setup.costs;
  // Sync: after backward, per bucket copy in and scale (2A), all-reduce (A), copy out (A).
  system.overlap = false;
  const SimulatedIteration sync = simulate_data_parallel(cluster, costs, system, none);
  EXPECT_NEAR(sync.times.makespan, 20e-3 + 40e-3 + 4 * 4 * a + 1e-3, 1e-12);
  // Overlap: each bucket's copy-in (2A) runs on the compute stream right after its layer's
  // backward and delays the next layer; its all-reduce hides under that layer's backward.
  // After backward the four copy-outs (A each) follow, the last one after the last all-reduce
  // (which ended at 60 ms + 9A, before the third copy-out did): 60 ms + 8A + 4A + step.
  system.overlap = true;
  const SimulatedIteration overlap = simulate_data_parallel(cluster, costs, system, none);
  EXPECT_NEAR(overlap.times.makespan, 20e-3 + 40e-3 + 12 * a + 1e-3, 1e-12);
  // The copies count as backward time, and the trace names them.
  EXPECT_NEAR(overlap.ranks[0].backward_ms, (40e-3 + 12 * a) * 1e3, 1e-9);
  int copies = 0;
  const nlohmann::json trace = rank_trace(overlap, 0, "overlap", 0);
  for (const auto& event : trace.at("traceEvents")) {
    if (event.value("name", "").rfind("bucket copy ", 0) == 0) ++copies;
  }
  EXPECT_EQ(copies, 8);  // 4 copy-ins, 4 copy-outs
}

TEST(DataParallel, OnSharedCoresOverlapHidesNoCommunication) {
  // The setup above on a CPU host: 2 cores for 2 ranks, each with a compute thread and a
  // communication thread. A bucket's all-reduce alone takes A (both threads get a core); under
  // the next layer's backward the four threads get half a core each, so the all-reduce ends
  // after 2A, having taken A of the backward's core time: that layer ends A late. Every
  // bucket delays the iteration by A, as sync does: overlap = sync = 60 ms + 4A + step.
  FourBuckets setup;
  setup.config.cpu_cores_per_machine = 2;
  EXPECT_NEAR(setup.makespan(true), 61e-3 + 4 * setup.a, 1e-12);
  EXPECT_NEAR(setup.makespan(false), 61e-3 + 4 * setup.a, 1e-12);
  setup.config.cpu_cores_per_machine = 4;  // a core per thread: the idle-machine overlap
  EXPECT_NEAR(setup.makespan(true), 61e-3 + setup.a, 1e-12);
  // A communication thread that keeps half a core busy: on 2 cores compute and all-reduce
  // want 3 in all, each gets 2/3 of its want. An all-reduce (A alone) under a layer's
  // backward ends after 1.5A, having taken 0.5A of the layer's core time: overlap hides half
  // of every bucket but the last, 61 ms + 3 x 0.5A + A.
  setup.config.cpu_cores_per_machine = 2;
  setup.config.comm_cores_per_rank = 0.5;
  EXPECT_NEAR(setup.makespan(true), 61e-3 + 2.5 * setup.a, 1e-12);
  EXPECT_NEAR(setup.makespan(false), 61e-3 + 4 * setup.a, 1e-12);
  // Ranks of 2 compute threads on 4 cores, the same half-core thread: wants of 2 + 2 + 0.5 +
  // 0.5 = 5 cores, each gets 4/5 of its want. The all-reduce ends after 1.25A, having taken
  // 0.25A of the layer's time: 61 ms + 3 x 0.25A + A. (Counting a compute flow as one core
  // would give 61 ms + 2A.)
  setup.config.cpu_cores_per_machine = 4;
  setup.config.cores_per_rank = 2;
  EXPECT_NEAR(setup.makespan(true), 61e-3 + 1.75 * setup.a, 1e-12);
}

TEST(DataParallel, AMachinesOwnAllReduceStepsWantTheirOwnShareOfACore) {
  // As above on 2 cores, the half-core communication thread given only to the collective's
  // steps inside a machine (both ranks are one machine's): the same 61 ms + 2.5A. Half a core
  // elsewhere and a whole one inside: the whole core's 61 ms + 4A.
  FourBuckets setup;
  setup.config.cpu_cores_per_machine = 2;
  setup.config.intra_comm_cores_per_rank = 0.5;
  EXPECT_NEAR(setup.makespan(true), 61e-3 + 2.5 * setup.a, 1e-12);
  setup.config.comm_cores_per_rank = 0.5;
  setup.config.intra_comm_cores_per_rank = 1.0;
  EXPECT_NEAR(setup.makespan(true), 61e-3 + 4 * setup.a, 1e-12);
  // Three cores: compute and a tenth of a core each would fit (2.2), the in-machine
  // all-reduce's whole core does not (4): every flow gets 3/4 of its want, so an all-reduce
  // under a backward ends after 4A/3, having taken A/3 of the layer's core time: 61 ms +
  // 3 x A/3 + A (with the host taken for one that fits: 61 ms + A).
  setup.config.cpu_cores_per_machine = 3;
  setup.config.comm_cores_per_rank = 0.1;
  EXPECT_NEAR(setup.makespan(true), 61e-3 + 2 * setup.a, 1e-12);
  setup.config.cpu_cores_per_machine = 2;
  setup.config.comm_cores_per_rank = 0.5;
  // The two ranks on two machines of one host, the link as fast: the ring crosses machines,
  // so comm_cores_per_rank's half core decides.
  setup.config.gpus_per_machine = {1, 1};
  setup.config.machines_per_host = 2;
  setup.config.inter_bandwidth = 10e9;
  setup.config.inter_latency_s = 0;
  EXPECT_NEAR(setup.makespan(true), 61e-3 + 2.5 * setup.a, 1e-12);
}

TEST(DataParallel, AccumulationRunsMicroBatchesThenReduces) {
  // 2 micro-batches of half the batch: same compute as one, still one set of all-reduces.
  const LayerCosts costs = chain(2, 4e-3, 8e-3, 0, 10e6);
  const Cluster cluster(idle_machine(2));
  DataParallelSystem system;
  system.world = 2;
  system.batch_per_rank = 2;
  system.bucket_mb = 1000;
  system.first_bucket_mb = 1000;
  ComputeNoise none;
  const double one = simulate_data_parallel(cluster, costs, system, none).times.makespan;
  system.accumulation = 2;
  const double two = simulate_data_parallel(cluster, costs, system, none).times.makespan;
  // One 20 MB bucket after the whole backward: 2 x 10 MB / 10 GB/s = 2 ms either way.
  EXPECT_NEAR(one, 2 * 2 * 4e-3 + 2 * 2 * 8e-3 + 2e-3, 1e-12);
  EXPECT_NEAR(two, one, 1e-12);
}

TEST(ComputeNoise, SeededAndBounded) {
  ComputeNoise a(0.1, 7), b(0.1, 7), c(0.1, 8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const double x = a.apply(1.0);
    EXPECT_EQ(x, b.apply(1.0));
    EXPECT_GE(x, 0.9);
    EXPECT_LT(x, 1.1);
    differs |= x != c.apply(1.0);
  }
  EXPECT_TRUE(differs);
}

TEST(Trace, BoundedRankSubset) {
  EXPECT_EQ(traced_ranks(4, 16), (std::vector<int>{0, 1, 2, 3}));
  const auto ranks = traced_ranks(1024, 5);
  EXPECT_EQ(ranks, (std::vector<int>{0, 255, 511, 767, 1023}));
}

}  // namespace
}  // namespace harness::simulator
