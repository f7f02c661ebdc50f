// Collectives on an idle network against their closed forms (hand-computed numbers).
#include <gtest/gtest.h>

#include "simulator/collective.h"
#include "simulator/engine.h"

namespace harness::simulator {
namespace {

double simulate_allreduce(const ClusterConfig& config, std::vector<int> ranks, double bytes,
                          std::uint64_t* events = nullptr) {
  const Cluster cluster(config);
  TaskGraph graph(cluster.num_gpus());
  graph.add_collective(graph.add_group(std::move(ranks)), bytes);
  const TaskTimes times = run_tasks(cluster, graph);
  if (events) *events = times.events;
  return times.makespan;
}

ClusterConfig one_machine(int gpus) {
  ClusterConfig config;
  config.gpus_per_machine = {gpus};
  config.intra_bandwidth = 10e9;
  config.intra_latency_s = 10e-6;
  return config;
}

TEST(RingAllReduce, MatchesClosedFormInsideOneMachine) {
  // n = 4, S = 100 MB, W = 10 GB/s, alpha = 10 us:
  // 2(n-1) steps x (alpha + S/n/W) = 6 x (10e-6 + 2.5e-3) = 15.06 ms
  // = 2(n-1)/n x S/W + 2(n-1) alpha.
  EXPECT_NEAR(simulate_allreduce(one_machine(4), {0, 1, 2, 3}, 100e6), 15.06e-3, 1e-12);
  const double n = 4, S = 100e6, W = 10e9, alpha = 10e-6;
  EXPECT_NEAR(simulate_allreduce(one_machine(4), {0, 1, 2, 3}, S),
              2 * (n - 1) / n * S / W + 2 * (n - 1) * alpha, 1e-12);
}

TEST(RingAllReduce, AcrossMachinesRunsAtTheNicBandwidth) {
  // 4 machines of 2 GPUs, ring over one GPU per machine: every edge crosses two NICs (3 GB/s,
  // below the 10 GB/s ports), alpha = 20 us: 6 x (20e-6 + 25e6 / 3e9) = 50.12 ms.
  ClusterConfig config = one_machine(2);
  config.gpus_per_machine = {2, 2, 2, 2};
  config.inter_bandwidth = 3e9;
  config.inter_latency_s = 20e-6;
  EXPECT_NEAR(simulate_allreduce(config, {0, 2, 4, 6}, 100e6), 6 * (20e-6 + 25e6 / 3e9), 1e-12);
  // Over all 8 GPUs the ring crosses each NIC once per direction: the NIC is still the
  // bottleneck: 14 steps x (20e-6 + 12.5e6 / 3e9).
  EXPECT_NEAR(simulate_allreduce(config, {0, 1, 2, 3, 4, 5, 6, 7}, 100e6),
              14 * (20e-6 + 12.5e6 / 3e9), 1e-12);
}

TEST(RingAllReduce, CollectiveCapAndStepLatencyFromAMeasuredFit) {
  // comm.json style: 2 ranks, fitted latency L = 1.2 ms total, bus bandwidth 1.25 GB/s:
  // t = L + S x 2(n-1)/n / busbw. Per-step latency L / 2, rate cap 1.25e9.
  ClusterConfig config = one_machine(2);
  config.intra_bandwidth = 1.6e9;
  config.collective_rate_cap = 1.25e9;
  config.collective_step_latency_s = 0.6e-3;
  EXPECT_NEAR(simulate_allreduce(config, {0, 1}, 10e6), 1.2e-3 + 10e6 / 1.25e9, 1e-12);
}

double simulate_all_to_all(const ClusterConfig& config, std::vector<int> ranks, double bytes) {
  const Cluster cluster(config);
  TaskGraph graph(cluster.num_gpus());
  graph.add_collective(graph.add_group(std::move(ranks)), bytes, -1, TaskCategory::kAllToAll);
  return run_tasks(cluster, graph).makespan;
}

TEST(AllToAll, PairwiseStepsOfAShareEach) {
  // n = 4, S = 100 MB: 3 steps, in each every rank sends S/4 to another (its own quarter stays):
  // 3 x (10 us + 25e6 / 10e9) = (n-1)/n x S/W + (n-1) alpha.
  EXPECT_NEAR(simulate_all_to_all(one_machine(4), {0, 1, 2, 3}, 100e6), 3 * (10e-6 + 2.5e-3),
              1e-12);
  // comm.json's alltoall fit, L = 0.9 ms and busbw 2 GB/s: t = L + S (n-1)/n / busbw, from n-1
  // steps of L/(n-1) at the rate cap; the measured sizes' rates win over the fit.
  ClusterConfig config = one_machine(4);
  config.alltoall.step_latency_s = 0.3e-3;
  config.alltoall.rate_cap = 2e9;
  EXPECT_NEAR(simulate_all_to_all(config, {0, 1, 2, 3}, 100e6), 0.9e-3 + 0.75 * 100e6 / 2e9, 1e-12);
  config.alltoall.rate_by_bytes = {{1e6, 1e9}, {100e6, 4e9}};
  config.alltoall.step_latency_s = 0;
  EXPECT_NEAR(simulate_all_to_all(config, {0, 1, 2, 3}, 100e6), 0.75 * 100e6 / 4e9, 1e-12);
}

TEST(RingAllReduce, AMeasuredInMachineAllReduceCapsOnlyTheStepsInsideAMachine) {
  // CPU ranks: ports of 2 GB/s (send/recv over loopback), the all-reduce among a machine's
  // ranks measured at a bus bandwidth of 0.8 GB/s. Two ranks of one machine, S = 8 MB:
  // 2 steps x (10 us + 4 MB / 0.8 GB/s) = 10.02 ms, not 2 x (10 us + 4 MB / 2 GB/s).
  ClusterConfig config = one_machine(2);
  config.gpus_per_machine = {2, 2};
  config.intra_bandwidth = 2e9;
  config.inter_bandwidth = 0.1e9;
  config.inter_latency_s = 20e-6;
  config.intra_collective_bandwidth = 0.8e9;
  EXPECT_NEAR(simulate_allreduce(config, {0, 1}, 8e6), 2 * (10e-6 + 4e6 / 0.8e9), 1e-12);
  // A ring across the machines is the NICs' (0.1 GB/s, below the cap): 6 x (20 us + 2 MB /
  // 0.1 GB/s), as without the measurement.
  EXPECT_NEAR(simulate_allreduce(config, {0, 1, 2, 3}, 8e6), 6 * (20e-6 + 2e6 / 0.1e9), 1e-12);
  config.intra_collective_bandwidth = 0.0;
  EXPECT_NEAR(simulate_allreduce(config, {0, 1}, 8e6), 2 * (10e-6 + 4e6 / 2e9), 1e-12);
}

TEST(TreeAllReduce, LevelsUpThenDown) {
  // 7 ranks: depth 2, 4 steps of the whole buffer. A parent receives from (reduce) or sends to
  // (broadcast) its two children at once over its one port: half the bandwidth each,
  // 4 x (10e-6 + 2 x 100e6 / 10e9) = 80.04 ms.
  ClusterConfig config = one_machine(7);
  config.algorithm = CollectiveAlgorithm::kTree;
  EXPECT_NEAR(simulate_allreduce(config, {0, 1, 2, 3, 4, 5, 6}, 100e6), 4 * (10e-6 + 20e-3), 1e-12);
  // 3 ranks: one level, root with two children: 2 x (10e-6 + 20e-3).
  EXPECT_NEAR(simulate_allreduce(config, {0, 1, 2}, 100e6), 2 * (10e-6 + 20e-3), 1e-12);
}

TEST(HierarchicalAllReduce, InsideAcrossInside) {
  // 2 machines x 4 GPUs, S = 80 MB: reduce-scatter 3 x (10 us + 20 MB / 10 GB/s), 4 parallel
  // rings across (each NIC carries 4 edges: 3 GB/s / 4) 2 x (20 us + 10 MB / 0.75 GB/s),
  // all-gather as the first phase.
  ClusterConfig config = one_machine(4);
  config.gpus_per_machine = {4, 4};
  config.inter_bandwidth = 3e9;
  config.inter_latency_s = 20e-6;
  config.algorithm = CollectiveAlgorithm::kHierarchicalRing;
  const double expected = 2 * 3 * (10e-6 + 20e6 / 10e9) + 2 * (20e-6 + 10e6 / 0.75e9);
  EXPECT_NEAR(simulate_allreduce(config, {0, 1, 2, 3, 4, 5, 6, 7}, 80e6), expected, 1e-12);
  const Cluster cluster(config);
  EXPECT_NEAR(idle_allreduce_seconds(cluster, {0, 1, 2, 3, 4, 5, 6, 7},
                                     CollectiveAlgorithm::kHierarchicalRing, 80e6),
              expected, 1e-12);
}

TEST(RingAllReduce, DisjointGroupsInsideAMachineDoNotContend) {
  // GPU ports are per GPU: two all-reduces over disjoint groups share no link and each runs
  // as fast as alone.
  const Cluster cluster(one_machine(4));
  TaskGraph graph(4);
  graph.add_collective(graph.add_group({0, 1}), 100e6);
  graph.add_collective(graph.add_group({2, 3}), 100e6);
  const TaskTimes times = run_tasks(cluster, graph);
  EXPECT_NEAR(times.end[0], 2 * (10e-6 + 50e6 / 10e9), 1e-12);
  EXPECT_NEAR(times.end[1], times.end[0], 1e-12);
}

TEST(RingAllReduce, EventsGrowWithSteps) {
  std::uint64_t small = 0, large = 0;
  simulate_allreduce(one_machine(4), {0, 1, 2, 3}, 1e6, &small);
  simulate_allreduce(one_machine(16), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 1e6,
                     &large);
  // 2 events per step (latency over, flow done) + the end, over 2(n-1) steps.
  EXPECT_EQ(small, 2u * 6 + 1);
  EXPECT_EQ(large, 2u * 30 + 1);
}

}  // namespace
}  // namespace harness::simulator
