#include "simulator/token_buckets.h"

#include <algorithm>

namespace harness::simulator {

TokenBuckets::TokenBuckets(int machines, double size, double refill_bytes_per_s)
    : size_(size), refill_(refill_bytes_per_s), buckets_(static_cast<size_t>(machines)) {}

double TokenBuckets::take(int id, int machine, double bytes, double now) {
  Bucket& bucket = buckets_[machine];
  if (bucket.sending == 0) {
    bucket.tokens = std::min(size_, bucket.tokens + (now - bucket.idle_since) * refill_);
  }
  ++bucket.sending;
  sending_.emplace_back(id, machine);
  const double burst = std::min(bytes, bucket.tokens);
  bucket.tokens -= burst;
  return burst;
}

void TokenBuckets::returned(int id, double now) {
  const auto at = std::find_if(sending_.begin(), sending_.end(),
                               [id](const std::pair<int, int>& s) { return s.first == id; });
  if (at == sending_.end()) return;
  Bucket& bucket = buckets_[at->second];
  sending_.erase(at);
  if (--bucket.sending == 0) bucket.idle_since = now;
}

}  // namespace harness::simulator
