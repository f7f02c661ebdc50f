#include "runtime/protocol/heap_policy.h"

#include <malloc.h>

#include <climits>
#include <stdexcept>

namespace runtime {
namespace {

// Blocks below this come from the heap (glibc's ceiling for the setting on 64-bit: 32 MiB),
// and larger ones too while no block may have a mapping of its own (kMmapMax 0): a mapped
// block goes back to the OS when freed, and the next one of its size faults every page in again
// (a sharded rank's flat gather buffer, every iteration). A freed heap top is kept up to INT_MAX
// bytes; the heap grows by 64 MiB more than asked, so that a growing working set does not call brk
// per tensor.
constexpr int kMmapThreshold = 32 << 20;
constexpr int kMmapMax = 0;
constexpr int kTrimThreshold = INT_MAX;
constexpr int kTopPad = 64 << 20;

void check_policy(const std::string& policy) {
  if (policy != "retain" && policy != "system") {
    throw std::invalid_argument("heap policy '" + policy + "': expected retain or system");
  }
}

}  // namespace

void apply_heap_policy(const std::string& policy) {
  check_policy(policy);
  if (policy == "system") return;
  if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 0 || mallopt(M_MMAP_MAX, kMmapMax) == 0 ||
      mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 0 || mallopt(M_TOP_PAD, kTopPad) == 0) {
    throw std::invalid_argument("heap policy retain: glibc refused a mallopt setting");
  }
}

std::map<std::string, std::string> heap_policy_environment(const std::string& policy) {
  check_policy(policy);
  if (policy == "system") return {};
  return {{"MALLOC_MMAP_THRESHOLD_", std::to_string(kMmapThreshold)},
          {"MALLOC_MMAP_MAX_", std::to_string(kMmapMax)},
          {"MALLOC_TRIM_THRESHOLD_", std::to_string(kTrimThreshold)},
          {"MALLOC_TOP_PAD_", std::to_string(kTopPad)}};
}

}  // namespace runtime
