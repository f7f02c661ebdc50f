// Collectives as their transfer steps. An all-reduce of S bytes over n ranks becomes phases of
// lockstep steps; in every step each edge of the phase carries the same bytes, so one step is
// one network flow over all of the phase's edges and shares links with whatever else runs.
//   ring:          2(n-1) steps of S/n around the ring (reduce-scatter, then all-gather);
//   tree:          a binary tree (heap order): reduce level by level up to the root, then
//                  broadcast down, 2 ceil(log2 n) steps of S each (no pipelining: the
//                  latency-bound small-message algorithm);
//   hierarchical:  ring reduce-scatter inside each machine (g-1 steps of S/g), g parallel
//                  rings across machines over the GPUs of equal local index (2(M-1) steps of
//                  S/(gM)), ring all-gather inside each machine (g-1 steps of S/g). Needs the
//                  same number of the group's GPUs on each machine; otherwise a flat ring.
// Each step first waits its latency (the cluster's per-step collective latency, or the
// slowest link latency of its edges), then moves its bytes.
#pragma once

#include <algorithm>
#include <vector>

#include "simulator/cluster.h"

namespace harness::simulator {

struct CollectivePhase {
  int steps = 0;
  double bytes_fraction = 0.0;  // bytes per edge per step, as a fraction of the buffer
  double latency_s = 0.0;       // per step
  int edges = 0;
  std::vector<LinkUse> links;  // of all edges of one step, duplicates merged
  // The per-edge rate of a phase crossing machines where the NICs carry point-to-point streams
  // faster than the collective's measured rate (Cluster::nic_bandwidth), or of one inside a
  // machine where its all-reduce was measured (ClusterConfig::intra_collective_bandwidth);
  // 0: none.
  double rate_cap = 0.0;
  // Whether an edge of the phase joins two machines (else every edge stays inside one).
  bool crosses_machines = false;
};

// The tighter of two rate caps, where 0 means none.
inline double tighter_cap(double a, double b) { return a > 0 && b > 0 ? std::min(a, b) : a + b; }

// The phases of an all-reduce over `ranks` (distinct GPU ids, in ring order). Empty for a
// single rank.
std::vector<CollectivePhase> plan_allreduce(const Cluster& cluster, const std::vector<int>& ranks,
                                            CollectiveAlgorithm algorithm);

// The phases of an all-gather or a reduce-scatter of a buffer over `ranks`: one ring of n-1
// steps of 1/n of it (what NCCL runs for both, whatever the all-reduce algorithm), each step
// waiting the op's measured step latency where there is one.
enum class RingHalf { kAllGather, kReduceScatter };
std::vector<CollectivePhase> plan_ring_half(const Cluster& cluster, const std::vector<int>& ranks,
                                            RingHalf op);

// Time of the all-reduce on an idle network, without contention (closed form of the phases:
// sum of steps x (latency + fraction x bytes / slowest per-edge rate)). For tests and reports.
// The phases of an all-to-all of a buffer over `ranks`: n-1 steps, in step i every rank sending
// 1/n of it to the rank i places on (pairwise exchange), each step waiting the all-to-all's
// measured step latency where there is one.
std::vector<CollectivePhase> plan_all_to_all(const Cluster& cluster, const std::vector<int>& ranks);

double idle_allreduce_seconds(const Cluster& cluster, const std::vector<int>& ranks,
                              CollectiveAlgorithm algorithm, double bytes);

}  // namespace harness::simulator
