// What differs between the LibTorch versions the harness builds against -- Debian 12's 1.13
// and PyPI's 2.x (HARNESS_LIBTORCH, scripts/build.sh) -- in one place, so that no other file
// needs to know which version it is compiled with. Each difference is read off LibTorch's own
// declarations where it can be, not off a version number.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/ScalarType.h>

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

// The flight recorder of 2.x, off unless asked for: flight_recorder.h.

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
