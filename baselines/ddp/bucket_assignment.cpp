#include "baselines/ddp/bucket_assignment.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace baselines {

std::vector<Bucket> assign_buckets(const std::vector<TensorSlot>& tensors, BucketOrder order,
                                   const std::vector<size_t>& size_limits) {
  if (size_limits.empty()) throw std::invalid_argument("assign_buckets: no size limit");
  for (size_t limit : size_limits) {
    if (limit == 0) throw std::invalid_argument("assign_buckets: a size limit is 0");
  }
  struct Open {
    Bucket bucket;
    size_t next_limit = 0;  // index into size_limits for the bucket after this one
    size_t first_position = 0;
  };
  std::map<std::string, Open> open;
  std::vector<std::pair<size_t, Bucket>> closed;  // (position of first tensor, bucket)

  const size_t n = tensors.size();
  for (size_t position = 0; position < n; ++position) {
    const size_t index = order == BucketOrder::kReverse ? n - 1 - position : position;
    const TensorSlot& tensor = tensors[index];
    auto [it, inserted] = open.try_emplace(tensor.dtype);
    Open& slot = it->second;
    if (slot.bucket.tensors.empty()) {
      slot.first_position = position;
      slot.bucket.dtype = tensor.dtype;
      slot.bucket.size_limit = size_limits[std::min(slot.next_limit, size_limits.size() - 1)];
    }
    slot.bucket.tensors.push_back(index);
    slot.bucket.bytes += tensor.bytes;
    if (slot.bucket.bytes >= slot.bucket.size_limit) {
      closed.emplace_back(slot.first_position, std::move(slot.bucket));
      slot.bucket = Bucket{};
      ++slot.next_limit;
    }
  }
  std::vector<std::pair<size_t, Bucket>> remaining;
  for (auto& [dtype, slot] : open) {
    if (!slot.bucket.tensors.empty()) remaining.emplace_back(slot.first_position, slot.bucket);
  }
  std::sort(remaining.begin(), remaining.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Bucket> buckets;
  for (auto& entry : closed) buckets.push_back(std::move(entry.second));
  for (auto& entry : remaining) buckets.push_back(std::move(entry.second));
  return buckets;
}

std::vector<size_t> ddp_size_limits(double first_bucket_mb, double bucket_cap_mb) {
  auto bytes = [](double mb) { return static_cast<size_t>(std::llround(mb * kMiB)); };
  return {bytes(first_bucket_mb), bytes(bucket_cap_mb)};
}

}  // namespace baselines
