// The figure kinds of `harness plot` and of a spec's `plots:` list.
#pragma once

namespace harness {

inline constexpr const char* kPlotKinds[] = {"bucket_sweep", "sweep",   "bandwidth", "scaling",
                                             "cdf",          "planner", "timeline"};

}  // namespace harness
