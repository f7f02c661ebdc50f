// The simulated cluster: GPUs grouped into machines, and the links between them. Every GPU has
// a port to its machine's fabric in each direction (intra-machine bandwidth: NVLink/NVSwitch,
// or shared memory for CPU ranks); every machine has a NIC in each direction that all of its
// GPUs share (inter-machine bandwidth). A transfer inside a machine crosses the sender's out
// port and the receiver's in port; across machines it also crosses both NICs, and a single
// point-to-point stream is capped at the inter-machine p2p bandwidth (what one TCP stream
// gets, below what a collective over many streams gets: the planner topology's two numbers).
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "simulator/network.h"

namespace harness::simulator {

enum class CollectiveAlgorithm { kRing, kTree, kHierarchicalRing };

// An all-gather, reduce-scatter or all-to-all measured on its own (comm.json's fit and rows of
// its op), in place of the all-reduce's step latency and rate: a per-step latency (< 0: the
// all-reduce's) and a per-edge rate cap (0: the all-reduce's), or, where the profile measured it
// size by size, the bus bandwidth each buffer size ran at ({bytes, bytes/s}, ascending bytes),
// interpolated in log bytes and flat beyond, in place of the cap. A Gloo ring's rate bends with
// its size, and one line fitted over the sizes prices every size wrong; the sizes' times hold the
// latency (their step latency is then 0).
struct MeasuredCollective {
  double step_latency_s = -1.0;
  double rate_cap = 0.0;
  std::vector<std::pair<double, double>> rate_by_bytes;
};
const char* to_string(CollectiveAlgorithm algorithm);
// "ring", "tree", "hierarchical"; false when the text names none.
bool parse_collective_algorithm(const std::string& text, CollectiveAlgorithm& out);

struct ClusterConfig {
  std::vector<int> gpus_per_machine{1};
  double intra_bandwidth = 25e9;     // per GPU port and direction, bytes/s
  double inter_bandwidth = 3e9;      // per machine NIC and direction, bytes/s
  double inter_p2p_bandwidth = 1e9;  // cap of one point-to-point stream across machines; 0: none
  double intra_latency_s = 5e-6;     // per transfer (per collective step)
  double inter_latency_s = 20e-6;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  // Measured collectives (comm.json fits) run slower than the links' raw speed: a cap on the
  // per-edge rate of collective steps (0: none) and a per-step latency (< 0: the links').
  double collective_rate_cap = 0.0;
  double collective_step_latency_s = -1.0;
  // The same for sharded systems' all-gathers and reduce-scatters and expert parallelism's
  // all-to-alls (n-1 pairwise steps), where they were measured on their own.
  MeasuredCollective gather, scatter, alltoall;
  // The all-reduce bus bandwidth measured among one machine's ranks: a cap on the per-edge
  // rate of collective steps that stay inside a machine (0: none, the ports decide). CPU ranks
  // reduce on their own cores, so their all-reduce over loopback runs well below send/recv.
  double intra_collective_bandwidth = 0.0;
  // The gradient reducer's host-side pass over a bucket (one copy of its bytes): seconds =
  // latency + bytes / bandwidth, from the `copy` fit of `harness profile comm`. On CPU ranks
  // these passes cost as much as a 2-rank all-reduce; 0 bandwidth: free (GPU studies).
  double bucket_copy_bandwidth = 0.0;
  double bucket_copy_latency_s = 0.0;
  // CPU ranks share their machine's cores: with more ranks computing at once than it has
  // cores, each gets its share (the kernel's fair scheduler), so a pipeline whose ranks
  // outnumber the cores runs its busy phases slower. 0: every rank computes on a device of its
  // own (GPUs; CPU hosts with a core per rank thread). A rank's compute uses `cores_per_rank`
  // (its intra-op threads, as the layer profile was measured).
  double cpu_cores_per_machine = 0.0;
  double cores_per_rank = 1.0;
  // Machines that are one host's: consecutive groups of this many machines share one set of
  // `cpu_cores_per_machine` cores (the last group holds the rest). Emulated machines are
  // network namespaces of one host, whose ranks, Gloo threads and kernel all run on its cores;
  // 1: every machine has cores of its own.
  int machines_per_host = 1;
  // The share of a core a rank's communication thread keeps busy while it moves data (Gloo
  // waits on its sockets part of the time): `harness profile comm` measures it per op.
  double comm_cores_per_rank = 1.0;
  // The same for the steps of a collective that stay inside a machine, where they differ: two
  // ranks all-reducing over loopback keep 0.7-0.85 of a core each busy, over an emulated
  // 1 Gbit/s link 0.08 (the link probe measures both). 0: comm_cores_per_rank.
  double intra_comm_cores_per_rank = 0.0;
  // What a rank's communication thread wants while it moves data between machines
  // (`crosses_machines`) or inside one: the rule of the two fields above in one place.
  double comm_cores(bool crosses_machines) const {
    return crosses_machines || intra_comm_cores_per_rank <= 0 ? comm_cores_per_rank
                                                              : intra_comm_cores_per_rank;
  }
  // Point-to-point streams between two ranks on different machines share one rate in both
  // directions (inter_p2p_bandwidth, else inter_bandwidth): on an emulated link Gloo's sends
  // each way at once took the time of both one after the other, where plain TCP carried both
  // at once; p2p_ready_behind_sends below is the mechanism (a rank's ready notice behind its
  // own data), this the cruder stand-in. false: full duplex (NCCL, the
  // published constants). At most kMaxHalfDuplexGpus GPUs (a link per pair of them).
  bool p2p_half_duplex = false;
  static constexpr int kMaxHalfDuplexGpus = 256;
  // How a receiver's "ready" reaches the sender of a point-to-point transfer (the rendezvous:
  // simulator/pipeline_system.cpp). false: apart from the data, after the link's latency
  // (NCCL's credits; the published constants). true: as Gloo's TCP pair sends it, behind the
  // bytes the receiver is already sending that peer (simulator/pair_streams.h; Gloo writes a
  // pair's ops into its one connection in order). A pipeline's gradient k going up then holds
  // back activation k+1 coming down, whose receive the same rank posts next, so the two cross
  // one after the other although the link carries both directions at once.
  bool p2p_ready_behind_sends = false;
  // A rank's point-to-point sends: false, one at a time through one channel (the published
  // constants); true, one channel per peer, in order to one peer and side by side to different
  // ones, sharing the rank's link (Gloo's TCP pairs and NCCL's peer channels: a pipeline stage
  // sends its gradient up while its activation still goes down). With p2p_ready_behind_sends a
  // receiver's "ready" then queues behind the gradient it already sends that peer.
  bool p2p_send_channel_per_peer = false;
  // A token bucket of this many bytes on each machine's way out, as an emulated link has
  // (simulator/token_buckets.h). 0: none (a real NIC).
  double inter_burst_bytes = 0.0;
  // What a transfer's burst from the bucket costs: it leaves a link that idled, after this
  // latency (< 0: inter_latency_s), and crosses at the host's own path between the machines at
  // this bandwidth (0: at once). The link probe's `burst` ping-pong measures both: a message
  // sent after the link idled takes longer one way than back-to-back ones.
  double inter_burst_latency_s = -1.0;
  double inter_burst_bandwidth = 0.0;
  // What a transfer longer than the burst its bucket let through takes beyond it and the rest at
  // the link's rate (< 0: less), before the rest flows: the link probe's one-way times at twice
  // and eight times the bucket less that model of them.
  double inter_past_bucket_latency_s = 0.0;
  // What a send call across machines holds its rank's thread for when its receive is already
  // posted, so that the call writes the message itself (simulator/engine.cpp), by message size:
  // {bytes, seconds} pairs in ascending bytes, linear between them and flat beyond; empty: free
  // (GPUs: a send is a kernel launch). The link probe's `burst` ping-pong times its initiator's
  // send calls, each after the link and the thread idled as a pipeline stage's do between sends.
  std::vector<std::pair<double, double>> inter_send_call;
  // The same for a send call between two ranks of one machine, its receive posted: Gloo's TCP
  // pair writes the message on the calling thread, and over loopback the kernel carries it to the
  // receiving socket there too, while the receiver computes beside it on the same cores. A
  // loopback comm profile's `handover` times such calls (runtime/profile/comm_benchmark.cpp).
  // Empty: free.
  std::vector<std::pair<double, double>> intra_send_call;

  // The rate a {bytes, rate} table gives a buffer of `bytes` (log-linear between its sizes,
  // flat beyond them; 0 for an empty table).
  static double rate_at(const std::vector<std::pair<double, double>>& rates, double bytes);

  int num_gpus() const;
  // `world` GPUs on machines of `gpus_per_machine` (the last one holds the rest).
  static std::vector<int> machines_for(int world, int gpus_per_machine);
};

class Cluster {
 public:
  explicit Cluster(ClusterConfig config);

  const ClusterConfig& config() const { return config_; }
  int num_gpus() const { return static_cast<int>(machine_of_.size()); }
  int num_machines() const { return static_cast<int>(config_.gpus_per_machine.size()); }
  int machine_of(int gpu) const { return machine_of_[gpu]; }
  bool same_machine(int a, int b) const { return machine_of_[a] == machine_of_[b]; }

  std::vector<double> link_bandwidths() const;
  // Per GPU an out and an in port, per machine an out and an in NIC and its CPU cores (a
  // "link" whose bandwidth is cores and whose flows are compute tasks' core-seconds).
  // With p2p_half_duplex, then a link per unordered pair of GPUs.
  int link_count() const {
    const int base = 2 * num_gpus() + 3 * num_machines();
    return config_.p2p_half_duplex ? base + num_gpus() * num_gpus() : base;
  }
  // The host whose cores a machine's ranks run on (ClusterConfig::machines_per_host).
  int host_of(int machine) const { return machine / config_.machines_per_host; }
  // The CPU link of a machine's host (one per host; the slots of the other machines are unused).
  int cpu_link(int machine) const { return 2 * num_gpus() + 2 * num_machines() + host_of(machine); }
  // Appends the links of a transfer src -> dst (2 inside a machine, 4 across).
  void route(int src, int dst, std::vector<LinkUse>& out) const;
  // The same for a point-to-point transfer, with its pair's shared link when p2p streams are
  // half duplex (collectives' edges are not: Gloo's all-reduce keeps the link's rate).
  void route_p2p(int src, int dst, std::vector<LinkUse>& out) const;
  double latency(int src, int dst) const {
    return same_machine(src, dst) ? config_.intra_latency_s : config_.inter_latency_s;
  }
  // A machine's NIC: the faster of what a collective and what one point-to-point stream were
  // measured to move across machines. Each kind keeps its own rate as a cap (p2p_cap; a
  // collective phase across machines, CollectivePhase::rate_cap): on a link where the
  // all-reduce's bus bandwidth is below a stream's (Gloo over an emulated 30 Mbit/s link: 25.3
  // against 28.7 Mbit/s), a pipeline's transfers would otherwise move at the all-reduce's rate.
  double nic_bandwidth() const {
    return std::max(config_.inter_bandwidth, config_.inter_p2p_bandwidth);
  }
  // Cap of one point-to-point stream (0: none).
  double p2p_cap(int src, int dst) const {
    return same_machine(src, dst) ? 0.0 : config_.inter_p2p_bandwidth;
  }
  // From a transfer's start to the end of its burst of `bytes` from the bucket
  // (ClusterConfig::inter_burst_*): its latency, then the burst at the host's path; where
  // `rest` bytes follow at the link's rate, what passing the bucket costs as well (a negative
  // figure never below the link's own latency, nor below the burst alone where that is less).
  double burst_seconds(double bytes, double rest = 0.0) const {
    const double latency = config_.inter_burst_latency_s >= 0 ? config_.inter_burst_latency_s
                                                              : config_.inter_latency_s;
    const double burst =
        latency + (config_.inter_burst_bandwidth > 0 ? bytes / config_.inter_burst_bandwidth : 0.0);
    const double past = rest > 0 ? config_.inter_past_bucket_latency_s : 0.0;
    return past >= 0 ? burst + past
                     : std::max(burst + past, std::min(burst, config_.inter_latency_s));
  }
  // A send call that writes its own message of `bytes` from src to dst
  // (ClusterConfig::inter_send_call, inside a machine intra_send_call; unmeasured: free).
  double send_call_seconds(int src, int dst, double bytes) const;
  // One reducer pass over `bytes` (ClusterConfig::bucket_copy_*); 0 when not modelled.
  double bucket_copy_seconds(double bytes) const {
    return config_.bucket_copy_bandwidth > 0
               ? config_.bucket_copy_latency_s + bytes / config_.bucket_copy_bandwidth
               : 0.0;
  }
  bool models_bucket_copies() const { return config_.bucket_copy_bandwidth > 0; }
  std::string describe() const;  // "2 machines x 8 GPUs" or "[8,8,4]"

 private:
  int gpu_out(int gpu) const { return 2 * gpu; }
  int gpu_in(int gpu) const { return 2 * gpu + 1; }
  int nic_out(int machine) const { return 2 * num_gpus() + 2 * machine; }
  int nic_in(int machine) const { return 2 * num_gpus() + 2 * machine + 1; }
  // The link both directions between GPUs a and b share (p2p_half_duplex).
  int pair_link(int a, int b) const {
    const int low = a < b ? a : b, high = a < b ? b : a;
    return 2 * num_gpus() + 3 * num_machines() + low * num_gpus() + high;
  }

  ClusterConfig config_;
  std::vector<int> machine_of_;
};

}  // namespace harness::simulator
