// Follows this thread's allocations on one device through c10's memory-reporting hook (the one
// the autograd profiler uses; the CPU allocator and CUDA's caching allocator both report to
// it): every allocation and free made there while it is installed, the bytes still held and
// their peak. Install with c10::DebugInfoGuard(c10::DebugInfoKind::PROFILER_STATE, tracker).
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

#include <algorithm>
#include <cstdint>

#include "runtime/compat/torch_compat.h"

namespace runtime {

class AllocationTracker : public c10::MemoryReportingInfoBase {
 public:
  explicit AllocationTracker(c10::DeviceType device) : device_(device) {}
  void reportMemoryUsage(void*, int64_t alloc_size, torch_compat::MemoryTotal,
                         torch_compat::MemoryTotal, c10::Device device) override {
    if (device.type() != device_) return;
    current_ += alloc_size;
    peak_ = std::max(peak_, current_);
  }
  bool memoryProfilingEnabled() const override { return true; }
  void reset() { current_ = peak_ = 0; }
  int64_t current() const { return current_; }  // allocated less freed since reset
  int64_t peak() const { return peak_; }

 private:
  c10::DeviceType device_;
  int64_t current_ = 0;
  int64_t peak_ = 0;
};

}  // namespace runtime
