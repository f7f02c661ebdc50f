// Each machine's token bucket on its way out, as an emulated link has one (a tbf qdisc;
// ClusterConfig::inter_burst_bytes): a point-to-point transfer across machines that finds it
// full sends its first `size` bytes at once, and the bucket refills at the NIC's rate while the
// machine sends no transfer. What a burst costs (its latency after the link idled, the host's
// path) is Cluster::burst_seconds; collectives neither use nor drain it.
#pragma once

#include <utility>
#include <vector>

namespace harness::simulator {

class TokenBuckets {
 public:
  TokenBuckets(int machines, double size, double refill_bytes_per_s);

  // Transfer `id` of `bytes` starts from `machine` at `now`: returns the bytes the bucket lets
  // through at once; the machine is sending until returned(id).
  double take(int id, int machine, double bytes, double now);
  // Transfer `id` ended at `now` (nothing happens for a transfer that took nothing).
  void returned(int id, double now);

 private:
  struct Bucket {
    double tokens = 0.0;
    double idle_since = -1e300;  // full at the start
    int sending = 0;
  };
  double size_;
  double refill_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<int, int>> sending_;  // (transfer, machine) that took from a bucket
};

}  // namespace harness::simulator
