// Link sharing: flows on a common link split its bandwidth, recomputed as flows come and go.
#include <gtest/gtest.h>

#include <utility>

#include "simulator/collective.h"
#include "simulator/engine.h"

namespace harness::simulator {
namespace {

ClusterConfig machine(int gpus) {
  ClusterConfig config;
  config.gpus_per_machine = {gpus};
  config.intra_bandwidth = 1e9;
  config.intra_latency_s = 0;
  return config;
}

// Machines of one rank each, joined by NICs of `inter` bytes/s with point-to-point streams
// capped at `p2p`, no latency.
ClusterConfig one_rank_machines(int machines, double inter, double p2p) {
  ClusterConfig config;
  config.gpus_per_machine.assign(static_cast<size_t>(machines), 1);
  config.intra_bandwidth = 1e12;
  config.inter_bandwidth = inter;
  config.inter_p2p_bandwidth = p2p;
  config.inter_latency_s = 0;
  return config;
}

// One forward of `seconds` on each of `ranks` ranks, all ready at once.
TaskGraph one_task_per_rank(int ranks, double seconds) {
  TaskGraph graph(ranks);
  for (int r = 0; r < ranks; ++r) graph.add_compute(r, TaskCategory::kForward, seconds);
  return graph;
}

TEST(Network, OneFlowAloneTakesBytesOverBandwidth) {
  const Cluster cluster(machine(2));
  TaskGraph graph(2);
  graph.add_transfer(1, 0, 100e6);
  EXPECT_NEAR(run_tasks(cluster, graph).makespan, 0.1, 1e-12);
}

TEST(Network, TwoConcurrentFlowsOnOneLinkEachTakeTwiceAsLong) {
  // Ranks 1 and 2 both send to rank 0: both flows cross rank 0's in-port.
  const Cluster cluster(machine(3));
  TaskGraph graph(3);
  const int a = graph.add_transfer(1, 0, 100e6);
  const int b = graph.add_transfer(2, 0, 100e6);
  const TaskTimes times = run_tasks(cluster, graph);
  EXPECT_NEAR(times.end[a], 0.2, 1e-12);
  EXPECT_NEAR(times.end[b], 0.2, 1e-12);
}

TEST(Network, RatesAreRecomputedWhenAFlowJoinsAndLeaves) {
  // A (100 MB) starts at 0; B (100 MB) starts at d = 0.05 s after a compute task.
  // A: 50 MB alone, then 50 MB at half speed: ends at 0.05 + 0.1 = 0.15 = 2S/W - d.
  // B: 50 MB at half speed until 0.15, then 50 MB alone: ends at 0.2 = 2S/W.
  const Cluster cluster(machine(3));
  TaskGraph graph(3);
  const int a = graph.add_transfer(1, 0, 100e6);
  const int wait = graph.add_compute(2, TaskCategory::kForward, 0.05);
  const int b = graph.add_transfer(2, 0, 100e6);
  graph.depend(b, wait);
  const TaskTimes times = run_tasks(cluster, graph);
  EXPECT_NEAR(times.end[a], 0.15, 1e-12);
  EXPECT_NEAR(times.end[b], 0.2, 1e-12);
  // B's first completion event, for 0.25 s at half speed, went stale when A left: the
  // iteration ends with B, not with that event.
  EXPECT_NEAR(times.makespan, 0.2, 1e-12);
}

// Rank 1 sends 100 MB to rank 2, then 100 MB to rank `second_to` (1 GB/s ports: 0.1 s each
// alone); the first waits for rank 2, busy 0.5 s (a receive not yet posted). Returns the start
// and end of each send.
struct TwoSends {
  double first_start, first_end, second_start, second_end;
};
TwoSends two_sends_after_a_busy_receiver(bool per_peer, int second_to) {
  const Cluster cluster(machine(3));
  TaskGraph graph(3, per_peer);
  const int busy = graph.add_compute(2, TaskCategory::kBackward, 0.5);
  const int first = graph.add_transfer(1, 2, 100e6);
  const int second = graph.add_transfer(1, second_to, 100e6);
  graph.depend(first, busy);
  const TaskTimes times = run_tasks(cluster, graph);
  return {times.start[first], times.end[first], times.start[second], times.end[second]};
}

TEST(Network, PerPeerSendChannelsLetASendPassOneThatWaitsForItsReceiver) {
  // The second send goes to rank 0. Through one channel it waits behind the first: 0.5-0.6,
  // then 0.6-0.7. With a channel per peer (Gloo's TCP pairs) it crosses at once, 0-0.1, and
  // the first still 0.5-0.6.
  for (const bool per_peer : {false, true}) {
    const TwoSends t = two_sends_after_a_busy_receiver(per_peer, 0);
    EXPECT_NEAR(t.first_start, 0.5, 1e-12);
    EXPECT_NEAR(t.first_end, 0.6, 1e-12);
    EXPECT_NEAR(t.second_start, per_peer ? 0.0 : 0.6, 1e-12) << per_peer;
    EXPECT_NEAR(t.second_end, per_peer ? 0.1 : 0.7, 1e-12) << per_peer;
  }
  // To one peer the channel stays in order: a second send to rank 2 waits behind the first.
  const TwoSends same_peer = two_sends_after_a_busy_receiver(true, 2);
  EXPECT_NEAR(same_peer.first_end, 0.6, 1e-12);
  EXPECT_NEAR(same_peer.second_start, 0.6, 1e-12);
  EXPECT_NEAR(same_peer.second_end, 0.7, 1e-12);
}

// Two machines of one rank, a 100 MB/s link (p2p cap the same): a transfer each way at once.
// Full duplex: each direction has its NICs to itself, 100 MB in 1 s. Half duplex (Gloo's TCP
// pairs): the pair's one rate is shared, both end at 2 s; a third rank's stream to rank 0
// is another pair and does not share it.
TEST(Network, HalfDuplexPairsShareOneRateBothWays) {
  for (const bool half : {false, true}) {
    SCOPED_TRACE(half ? "half duplex" : "full duplex");
    ClusterConfig config = one_rank_machines(3, 100e6, 100e6);
    config.p2p_half_duplex = half;
    const Cluster cluster(config);
    TaskGraph graph(3);
    const int forward = graph.add_transfer(0, 1, 100e6);
    const int backward = graph.add_transfer(1, 0, 100e6);
    const int other = graph.add_transfer(2, 1, 50e6);
    const TaskTimes times = run_tasks(cluster, graph);
    // Full: 0->1 and 2->1 share machine 1's NIC in at 50 MB/s each; 2->1 ends at 1 s, then
    // 0->1's last 50 MB alone: 1.5 s; 1->0 has its links to itself: 1 s. Half: 0->1 and 1->0
    // also share their pair at 50 MB/s each, so after 1 s the pair still holds 0->1 to 50
    // MB/s: both end at 2 s; 2->1 (its own pair) still ends at 1 s.
    EXPECT_NEAR(times.end[other], 1.0, 1e-9);
    EXPECT_NEAR(times.end[forward], half ? 2.0 : 1.5, 1e-9);
    EXPECT_NEAR(times.end[backward], half ? 2.0 : 1.0, 1e-9);
  }
  ClusterConfig large;
  large.gpus_per_machine = {257};
  large.p2p_half_duplex = true;
  EXPECT_THROW(Cluster{large}, std::invalid_argument);
}

// An emulated link where one stream moves more than the all-reduce's bus bandwidth (Gloo at 30
// Mbit/s: 28.7 against 25.3 Mbit/s): the NIC carries the faster, and each kind keeps its own
// rate. Two machines of one rank, p2p 120 MB/s, collective 100 MB/s: 120 MB sent alone take
// 1 s (not 1.2 s at the collective's rate); a 2-rank ring all-reduce of 100 MB (2 steps of 50
// MB per edge) still takes 1 s at 100 MB/s.
TEST(Network, StreamsAndCollectivesEachKeepTheirMeasuredRateAcrossMachines) {
  const Cluster cluster(one_rank_machines(2, 100e6, 120e6));
  EXPECT_DOUBLE_EQ(cluster.nic_bandwidth(), 120e6);
  TaskGraph graph(2);
  const int transfer = graph.add_transfer(0, 1, 120e6);
  const int allreduce = graph.add_collective(graph.add_group({0, 1}), 100e6);
  graph.depend(allreduce, transfer);
  const TaskTimes times = run_tasks(cluster, graph);
  EXPECT_NEAR(times.end[transfer], 1.0, 1e-9);
  EXPECT_NEAR(times.end[allreduce] - times.start[allreduce], 1.0, 1e-9);
  EXPECT_NEAR(idle_allreduce_seconds(cluster, {0, 1}, CollectiveAlgorithm::kRing, 100e6), 1.0,
              1e-9);
}

// An emulated link's token bucket (ClusterConfig::inter_burst_bytes): two machines of one
// rank, 100 MB/s, a 10 MB bucket on each machine's way out. A: 30 MB from rank 0 at 0 s, the
// bucket full: 10 MB at once, 20 MB in 0.2 s. B: 30 MB from rank 0 once a 0.25 s compute
// ends; the bucket refilled 0.05 s x 100 MB/s = 5 MB since A ended: 25 MB in 0.25 s, B ends
// at 0.5 s. C: 5 MB from rank 1, whose bucket is its own and full: it ends at once.
TEST(Network, ATokenBucketLetsABurstThroughAndRefillsWhileTheMachineSendsNothing) {
  ClusterConfig config = one_rank_machines(2, 100e6, 100e6);
  config.inter_burst_bytes = 10e6;
  const Cluster cluster(config);
  TaskGraph graph(2);
  const int a = graph.add_transfer(0, 1, 30e6);
  const int wait = graph.add_compute(0, TaskCategory::kForward, 0.25);
  const int b = graph.add_transfer(0, 1, 30e6);
  graph.depend(b, wait);
  const int c = graph.add_transfer(1, 0, 5e6);
  const TaskTimes times = run_tasks(cluster, graph);
  EXPECT_NEAR(times.end[a], 0.2, 1e-9);
  EXPECT_NEAR(times.start[b], 0.25, 1e-9);
  EXPECT_NEAR(times.end[b], 0.5, 1e-9);
  EXPECT_NEAR(times.end[c], 0.0, 1e-12);
  // No bucket: A takes 0.3 s, and B, behind it on rank 0's send channel, 0.3-0.6 s.
  config.inter_burst_bytes = 0;
  const TaskTimes plain = run_tasks(Cluster(config), graph);
  EXPECT_NEAR(plain.end[a], 0.3, 1e-9);
  EXPECT_NEAR(plain.end[b], 0.6, 1e-9);
}

// What a burst from the bucket costs (ClusterConfig::inter_burst_latency_s and _bandwidth):
// the same two machines at 100 MB/s with a 10 MB bucket, a link latency of 0.5 ms, and a burst
// that leaves after 1 ms and crosses at 1 GB/s. A: 30 MB from rank 0 at 0 s, the bucket full:
// 1 ms + 10 MB / 1 GB/s = 0.011 s, then 20 MB in 0.2 s: 0.211 s. B: 1 MB from rank 0 right
// after A, the bucket empty: the link's 0.5 ms and 1 MB in 0.01 s, 0.2215 s. C: 5 MB from
// rank 1, its own bucket full: 1 ms + 5 ms.
TEST(Network, ABurstFromTheBucketLeavesAfterItsLatencyAtTheHostsPath) {
  ClusterConfig config = one_rank_machines(2, 100e6, 100e6);
  config.inter_latency_s = 0.5e-3;
  config.inter_burst_bytes = 10e6;
  config.inter_burst_latency_s = 1e-3;
  config.inter_burst_bandwidth = 1e9;
  TaskGraph graph(2);
  const int a = graph.add_transfer(0, 1, 30e6);
  const int b = graph.add_transfer(0, 1, 1e6);
  const int c = graph.add_transfer(1, 0, 5e6);
  const TaskTimes times = run_tasks(Cluster(config), graph);
  EXPECT_NEAR(times.end[a], 0.211, 1e-9);
  EXPECT_NEAR(times.start[b], 0.211, 1e-9);
  EXPECT_NEAR(times.end[b], 0.2215, 1e-9);
  EXPECT_NEAR(times.end[c], 0.006, 1e-9);
  // Without the burst's own latency and path (the model before them): A 0.5 ms + 0.2 s, C at
  // the link's latency alone.
  config.inter_burst_latency_s = -1;
  config.inter_burst_bandwidth = 0;
  const TaskTimes free_burst = run_tasks(Cluster(config), graph);
  EXPECT_NEAR(free_burst.end[a], 0.2005, 1e-9);
  EXPECT_NEAR(free_burst.end[c], 0.0005, 1e-9);
  // What passing the bucket adds (ClusterConfig::inter_past_bucket_latency_s), 2 ms with the
  // burst's cost back: A, longer than its burst, 1 + 10 + 2 ms, then 20 MB in 0.2 s: 0.213 s;
  // B, after it with the bucket empty, no burst: 0.2235 s; C, within its own bucket: 6 ms as
  // before. A negative figure never brings a transfer below the link's latency: A 0.2005 s.
  config.inter_burst_latency_s = 1e-3;
  config.inter_burst_bandwidth = 1e9;
  config.inter_past_bucket_latency_s = 2e-3;
  const TaskTimes past = run_tasks(Cluster(config), graph);
  EXPECT_NEAR(past.end[a], 0.213, 1e-9);
  EXPECT_NEAR(past.end[b], 0.2235, 1e-9);
  EXPECT_NEAR(past.end[c], 0.006, 1e-9);
  config.inter_past_bucket_latency_s = -20e-3;
  EXPECT_NEAR(run_tasks(Cluster(config), graph).end[a], 0.2005, 1e-9);
}

// What a send call that writes its own message costs (ClusterConfig::inter_send_call): linear
// between the measured sizes, flat beyond them; inside a machine intra_send_call's, free where
// unmeasured; a table out of order or with a negative entry is refused.
TEST(Network, ASendCallCostsWhatItsSizeInterpolatesTo) {
  ClusterConfig config;
  config.gpus_per_machine = {2, 1};
  config.inter_send_call = {{8, 100e-6}, {65536, 120e-6}, {262144, 440e-6}};
  const Cluster cluster(config);
  EXPECT_NEAR(cluster.send_call_seconds(0, 2, 0), 100e-6, 1e-15);
  EXPECT_NEAR(cluster.send_call_seconds(0, 2, 8), 100e-6, 1e-15);
  EXPECT_NEAR(cluster.send_call_seconds(2, 0, (8 + 65536) / 2.0), 110e-6, 1e-15);
  EXPECT_NEAR(cluster.send_call_seconds(0, 2, 65536), 120e-6, 1e-15);
  EXPECT_NEAR(cluster.send_call_seconds(0, 2, 65536 + 49152), 200e-6, 1e-15);  // a quarter on
  EXPECT_NEAR(cluster.send_call_seconds(0, 2, 1e9), 440e-6, 1e-15);
  EXPECT_EQ(cluster.send_call_seconds(0, 1, 65536), 0.0);  // the same machine, unmeasured
  config.intra_send_call = {{65536, 60e-6}, {131072, 80e-6}};
  EXPECT_NEAR(Cluster(config).send_call_seconds(1, 0, 98304), 70e-6, 1e-15);
  EXPECT_NEAR(Cluster(config).send_call_seconds(0, 2, 65536), 120e-6, 1e-15);  // across: inter's
  config.inter_send_call.clear();
  EXPECT_EQ(Cluster(config).send_call_seconds(0, 2, 65536), 0.0);
  EXPECT_NEAR(Cluster(config).send_call_seconds(0, 1, 1e9), 80e-6, 1e-15);
  config.inter_send_call = {{65536, 120e-6}, {8, 100e-6}};
  EXPECT_THROW(Cluster{config}, std::invalid_argument);
  config.inter_send_call = {{8, -1e-6}};
  EXPECT_THROW(Cluster{config}, std::invalid_argument);
  config.inter_send_call.clear();
  config.intra_send_call = {{131072, 80e-6}, {65536, 60e-6}};
  EXPECT_THROW(Cluster{config}, std::invalid_argument);
}

TEST(Network, FlowsOnDifferentLinksDoNotInterfere) {
  const Cluster cluster(machine(4));
  TaskGraph graph(4);
  const int a = graph.add_transfer(0, 1, 100e6);
  const int b = graph.add_transfer(2, 3, 100e6);
  const TaskTimes times = run_tasks(cluster, graph);
  EXPECT_NEAR(times.end[a], 0.1, 1e-12);
  EXPECT_NEAR(times.end[b], 0.1, 1e-12);
}

TEST(Network, MachinesShareTheirNicAndP2pStreamsAreCapped) {
  // Two machines of 2 GPUs, NIC 1 GB/s, intra 10 GB/s, p2p cap 0.4 GB/s: one cross-machine
  // stream runs at the cap (100 MB: 0.25 s); two streams from machine 0 share the NIC but each
  // is capped below half of it, so both still take 0.25 s; three take 100 MB / (1/3 GB/s).
  ClusterConfig config;
  config.gpus_per_machine = {3, 3};
  config.intra_bandwidth = 10e9;
  config.inter_bandwidth = 1e9;
  config.inter_p2p_bandwidth = 0.4e9;
  config.inter_latency_s = 0;
  const Cluster cluster(config);
  TaskGraph two(6);
  two.add_transfer(0, 3, 100e6);
  two.add_transfer(1, 4, 100e6);
  EXPECT_NEAR(run_tasks(cluster, two).makespan, 0.25, 1e-12);
  TaskGraph three(6);
  three.add_transfer(0, 3, 100e6);
  three.add_transfer(1, 4, 100e6);
  three.add_transfer(2, 5, 100e6);
  EXPECT_NEAR(run_tasks(cluster, three).makespan, 0.3, 1e-12);
}

TEST(CpuCores, ComputeOfMoreRanksThanCoresIsFairlyShared) {
  // 3 ranks on 2 cores: tasks of 4, 8 and 8 ms start together at 2/3 of a core each; the
  // first is done at 4 / (2/3) = 6 ms, when the others have 4 ms left, now at a core each:
  // they end at 10 ms.
  ClusterConfig config = machine(3);
  config.cpu_cores_per_machine = 2;
  TaskGraph graph(3);
  const int a = graph.add_compute(0, TaskCategory::kForward, 4e-3);
  const int b = graph.add_compute(1, TaskCategory::kForward, 8e-3);
  const int c = graph.add_compute(2, TaskCategory::kBackward, 8e-3);
  const TaskTimes shared = run_tasks(Cluster(config), graph);
  EXPECT_NEAR(shared.end[a], 6e-3, 1e-12);
  EXPECT_NEAR(shared.end[b], 10e-3, 1e-12);
  EXPECT_NEAR(shared.end[c], 10e-3, 1e-12);
  // Ranks of 2 threads on 4 cores: 3 x 2 cores wanted, 4/3 each, so a 6 ms task (12
  // core-ms) ends at 9 ms.
  config.cpu_cores_per_machine = 4;
  config.cores_per_rank = 2;
  const TaskGraph wide = one_task_per_rank(3, 6e-3);
  EXPECT_NEAR(run_tasks(Cluster(config), wide).makespan, 9e-3, 1e-12);
  // Cores enough for every rank (or not modelled): compute keeps its time.
  config.cpu_cores_per_machine = 6;
  EXPECT_NEAR(run_tasks(Cluster(config), wide).makespan, 6e-3, 1e-12);
  config.cpu_cores_per_machine = 0;
  EXPECT_NEAR(run_tasks(Cluster(config), wide).makespan, 6e-3, 1e-12);
}

TEST(CpuCores, MachinesDoNotShareCores) {
  // 2 machines of 2 ranks, 1 core each: each machine's pair shares its own core.
  ClusterConfig config;
  config.gpus_per_machine = {2, 2};
  config.cpu_cores_per_machine = 1;
  EXPECT_NEAR(run_tasks(Cluster(config), one_task_per_rank(4, 5e-3)).makespan, 10e-3, 1e-12);
  config.cpu_cores_per_machine = -1;
  EXPECT_THROW(Cluster{config}, std::invalid_argument);
}

TEST(CpuCores, MachinesOfOneHostShareItsCores) {
  // 4 machines of 1 rank, 2 cores a host, a 5 ms task on every rank at once.
  ClusterConfig config = one_rank_machines(4, 1e9, 1e9);
  config.cpu_cores_per_machine = 2;
  const TaskGraph graph = one_task_per_rank(4, 5e-3);
  // Every machine a host of its own: a rank has 2 cores, its task keeps its time. One host: 4
  // ranks on 2 cores, half a core each: 10 ms.
  for (const auto& [per_host, makespan] : {std::pair{1, 5e-3}, std::pair{4, 10e-3}}) {
    config.machines_per_host = per_host;
    EXPECT_NEAR(run_tasks(Cluster(config), graph).makespan, makespan, 1e-12) << per_host;
  }
  // Hosts of 3 machines: the first runs 3 ranks at 2/3 of a core (7.5 ms), the second holds
  // the last machine alone (5 ms).
  config.machines_per_host = 3;
  const TaskTimes grouped = run_tasks(Cluster(config), graph);
  EXPECT_NEAR(grouped.end[0], 7.5e-3, 1e-12);
  EXPECT_NEAR(grouped.end[3], 5e-3, 1e-12);
  config.machines_per_host = 0;
  EXPECT_THROW(Cluster{config}, std::invalid_argument);
}

TEST(CpuCores, ATransferBetweenMachinesOfOneHostWantsBothEndsShareOfItsCores) {
  // Rank 0 computes 10 ms while it sends rank 1 4 MB at 1 GB/s (4 ms). Its communication
  // threads want half a core at each end.
  ClusterConfig config = one_rank_machines(2, 1e9, 1e9);
  config.cpu_cores_per_machine = 1;
  config.comm_cores_per_rank = 0.5;
  TaskGraph graph(2);
  const int compute = graph.add_compute(0, TaskCategory::kForward, 10e-3);
  const int send = graph.add_transfer(0, 1, 4e6);
  // A core per machine: rank 0's core carries the compute (1) and its end of the transfer
  // (0.5): 2/3 of a core for 4 ms (2.667 ms of work), then the rest, 7.333 ms, alone.
  const TaskTimes apart = run_tasks(Cluster(config), graph);
  EXPECT_NEAR(apart.end[send], 4e-3, 1e-12);
  EXPECT_NEAR(apart.end[compute], 4e-3 + (10e-3 - 4e-3 * 2.0 / 3.0), 1e-12);
  // One core for both machines: the transfer wants both ends' halves (1 core), so the
  // compute gets half of it for 4 ms (2 ms of work) and ends at 12 ms.
  config.machines_per_host = 2;
  const TaskTimes shared = run_tasks(Cluster(config), graph);
  EXPECT_NEAR(shared.end[send], 4e-3, 1e-12);
  EXPECT_NEAR(shared.end[compute], 12e-3, 1e-12);
}

TEST(Network, SendsOfOneRankAreQueuedOnItsChannel) {
  // Rank 0 sends to 1 and then to 2: its send channel runs one transfer at a time.
  const Cluster cluster(machine(3));
  TaskGraph graph(3);
  const int a = graph.add_transfer(0, 1, 100e6);
  const int b = graph.add_transfer(0, 2, 100e6);
  const TaskTimes times = run_tasks(cluster, graph);
  EXPECT_NEAR(times.end[a], 0.1, 1e-12);
  EXPECT_NEAR(times.start[b], 0.1, 1e-12);
  EXPECT_NEAR(times.end[b], 0.2, 1e-12);
}

TEST(Network, ACycleOfDependenciesIsReportedNotHung) {
  const Cluster cluster(machine(2));
  TaskGraph graph(2);
  const int a = graph.add_compute(0, TaskCategory::kForward, 1.0);
  const int b = graph.add_compute(1, TaskCategory::kForward, 1.0);
  graph.depend(a, b);
  graph.depend(b, a);
  EXPECT_THROW(run_tasks(cluster, graph), std::logic_error);
}

}  // namespace
}  // namespace harness::simulator
