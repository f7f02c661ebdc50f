#include "runtime/profile/layer_table.h"

#include <cstdio>

namespace runtime {

void print_layer_table(const LayerProfileResult& result) {
  std::printf("%-22s %-18s %12s %12s %14s %14s\n", "layer", "kind", "forward ms", "backward ms",
              "activation B", "parameter B");
  for (const LayerTiming& l : result.layers) {
    std::printf("%-22s %-18s %12.3f %12.3f %14lld %14lld\n", l.name.c_str(), l.kind.c_str(),
                l.forward.median_ms, l.backward.median_ms,
                static_cast<long long>(l.activation_bytes),
                static_cast<long long>(l.parameter_bytes));
  }
}

}  // namespace runtime
