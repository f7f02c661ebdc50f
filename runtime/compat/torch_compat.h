// What differs between the LibTorch versions the harness builds against -- Debian 12's 1.13
// and PyPI's 2.x (HARNESS_LIBTORCH, scripts/build.sh) -- in one place, so that no other file
// needs to know which version it is compiled with. Each difference is read off LibTorch's own
// declarations where it can be, not off a version number.
#pragma once

#include <c10/core/Allocator.h>

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

}  // namespace runtime::torch_compat
