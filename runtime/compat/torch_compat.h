// What differs between the LibTorch versions the harness builds against -- Debian 12's 1.13
// and PyPI's 2.x (HARNESS_LIBTORCH, scripts/build.sh) -- in one place, so that no other file
// needs to know which version it is compiled with. Each difference is read off LibTorch's own
// declarations where it can be, not off a version number.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/ScalarType.h>

#include <cstdlib>
#include <type_traits>

namespace runtime::torch_compat {

namespace detail {
template <class MemberFunction>
struct ThirdParameter;
template <class Class, class Result, class First, class Second, class Third, class... Rest>
struct ThirdParameter<Result (Class::*)(First, Second, Third, Rest...)> {
  using type = Third;
};
}  // namespace detail

// The type of the running totals c10's memory-reporting hook passes: int64_t in 1.13, size_t
// in 2.x. An override of MemoryReportingInfoBase::reportMemoryUsage spells its parameters with it.
using MemoryTotal =
    detail::ThirdParameter<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>::type;

// LibTorch 2.x records every collective in a process-wide "flight recorder" (a debugging aid
// for hung NCCL jobs), and the record of a process group's first operation inserts into a map
// outside the recorder's lock (FlightRecorder::recordWithResetEnabled, 2.11): two process
// groups of one process starting their first operations on two threads at once corrupt it
// (SIGSEGV in the tests that run ranks as threads; a rank whose two groups started on two
// threads at once would crash alike). The harness has its own hang detection, so the recorder
// is turned off unless the user asked for it; 1.13 has none and ignores the variable. The
// recorder reads it once, when its first process group starts: call this before any thread
// creates one.
inline void keep_flight_recorder_off() {
  if (std::getenv("TORCH_FR_BUFFER_SIZE") == nullptr &&
      std::getenv("TORCH_NCCL_TRACE_BUFFER_SIZE") == nullptr) {
    setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0);
  }
}

// The CPU's autocast: its switch and the lower-precision dtype it casts to. LibTorch 2.4 gave
// autocast's C++ API the device as an argument (is_autocast_enabled(at::kCPU); pytorch#124359)
// and deprecated the per-device functions, the only ones 1.13 has (is_cpu_enabled). This is
// the one difference decided by the version number (torch_compat.cpp): a function that a
// version lacks cannot be named to find out. Defined there, so that this header stays free of
// ATen's headers (the rank program's torch-free files include it).
bool cpu_autocast_enabled();
void set_cpu_autocast_enabled(bool enabled);
void set_cpu_autocast_dtype(c10::ScalarType dtype);

}  // namespace runtime::torch_compat
