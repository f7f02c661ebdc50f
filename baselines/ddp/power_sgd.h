// PowerSGD gradient compression (Vogels et al., NeurIPS 2019), as PyTorch DDP's powerSGD_hook
// applies it to a bucket: each gradient of two or more dimensions, viewed as an n x m matrix M
// (its first dimension by the rest), travels as a rank-r factorisation when that is at least
// twice smaller (2 r (n + m) < n m); every other gradient is all-reduced as it is. One power
// iteration per step, warm-started from the last step's Q:
//   M += E (error feedback: what compression lost on this rank last step)
//   P = M Q;   P = all-reduce sum of P;   P = Gram-Schmidt(P) (orthonormal columns)
//   Q = M^T P; Q = all-reduce sum of Q;   M' = P Q^T / world  (the rank average, compressed)
//   E = M - M'
// Q starts as N(0, 1) from a generator seeded `seed + tensor index` (the same on every rank).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "runtime/comm/communicator.h"

namespace baselines {

struct PowerSgdOptions {
  int64_t rank = 1;          // r: columns of P and Q
  int64_t warmup_steps = 2;  // steps of plain all-reduce before compression starts
  uint64_t seed = 0;         // Q's initial values
};

class PowerSgdBucket {
 public:
  // `members`: the bucket's gradients' shapes, in bucket order; `offsets`: each one's first
  // element in the bucket's flat buffer.
  PowerSgdBucket(const std::vector<std::vector<int64_t>>& members,
                 const std::vector<int64_t>& offsets, PowerSgdOptions options);

  // Replaces `flat` (this rank's gradients, the bucket's buffer) by the compressed rank
  // average; blocks until done. Every rank calls it for the same buckets in the same order.
  void all_reduce_average(at::Tensor flat, runtime::Communicator& group);

  // Bytes one step puts on the wire from this rank (P, Q and the uncompressed gradients).
  int64_t wire_bytes(int64_t element_size) const;
  // The residual member `i` carries to the next step (undefined for an uncompressed member).
  const at::Tensor& error(size_t i) const { return members_[i].error; }
  bool compressed(size_t i) const { return members_[i].compressed; }

 private:
  struct Member {
    int64_t offset = 0, numel = 0, rows = 0, columns = 0;
    bool compressed = false;
    at::Tensor q;      // [columns, rank], kept across steps (warm start)
    at::Tensor error;  // [rows, columns]
  };
  PowerSgdOptions options_;
  std::vector<Member> members_;
};

// Orthonormalises the columns of `matrix` in place (modified Gram-Schmidt; a zero column stays
// near zero: its norm gets 1e-8 added, as PyTorch's hook does).
void orthonormalize_columns(at::Tensor matrix);

}  // namespace baselines
