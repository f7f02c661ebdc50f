// Assignment of gradient tensors to all-reduce buckets, the way PyTorch DDP's C++ Reducer
// does it: walk the tensors in the order their gradients are expected to become ready, keep
// one open bucket per dtype, add whole tensors (never split one), and close a bucket once its
// size reaches the current limit. The first limit applies to the first bucket of each dtype
// (DDP: 1 MiB, so communication starts early), the last limit to every later bucket.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace baselines {

struct TensorSlot {
  size_t bytes = 0;
  std::string dtype;  // buckets never mix dtypes
};

struct Bucket {
  std::vector<size_t> tensors;  // indices into the registration-order tensor list
  size_t bytes = 0;
  size_t size_limit = 0;
  std::string dtype;
};

enum class BucketOrder {
  kReverse,  // gradient-ready order of a forward pass in registration order (DDP)
  kForward,  // registration order (compare_ddp's Python DDP)
};

// `size_limits` in bytes, non-empty, each > 0. Buckets come out in the order they close,
// remaining open buckets last (ordered by the position of their first tensor).
std::vector<Bucket> assign_buckets(const std::vector<TensorSlot>& tensors, BucketOrder order,
                                   const std::vector<size_t>& size_limits);

inline constexpr size_t kMiB = 1024 * 1024;

// Limits in bytes for a cap in MiB (fractions allowed): {first_mb, cap_mb}.
std::vector<size_t> ddp_size_limits(double first_bucket_mb, double bucket_cap_mb);

}  // namespace baselines
