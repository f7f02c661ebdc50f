#include "harness/results/run_counters.h"

#include <numeric>

#include "harness/results/rank_memory.h"

namespace harness {

using nlohmann::json;

namespace {

// buckets.json: one all-reduce per bucket and iteration, carrying its wire bytes (its bytes
// where the file predates compression).
void add_bucket_counters(const json& buckets, std::vector<RunCounter>& counters) {
  if (!buckets.is_array() || buckets.empty()) return;
  double wire_bytes = 0;
  std::string layout;
  for (const json& bucket : buckets) {
    const double bytes = bucket.value("bytes", 0.0);
    wire_bytes += bucket.value("wire_bytes", bytes);
    layout += (layout.empty() ? "" : " ") + std::to_string(static_cast<long long>(bytes));
  }
  counters.push_back(
      {"all-reduces per iteration", CounterKind::exact, static_cast<double>(buckets.size()), ""});
  counters.push_back({"all-reduce wire bytes per iteration", CounterKind::exact, wire_bytes, ""});
  counters.push_back({"bucket layout (bytes)", CounterKind::layout, 0, layout});
}

void add_flops_counter(const json& flops, std::vector<RunCounter>& counters) {
  if (!flops.is_object()) return;
  const auto per_rank = flops.value("iteration_flops_per_rank", std::vector<double>{});
  if (per_rank.empty()) return;
  counters.push_back({"model FLOPs per iteration (all ranks)", CounterKind::exact,
                      std::accumulate(per_rank.begin(), per_rank.end(), 0.0), ""});
}

void add_memory_counters(const std::vector<json>& memory, std::vector<RunCounter>& counters) {
  const auto largest = largest_rank_memory(memory);
  if (!largest) return;
  counters.push_back(
      {"parameter bytes per rank", CounterKind::exact, largest->parameter_bytes, ""});
  counters.push_back({"gradient bytes per rank", CounterKind::exact, largest->gradient_bytes, ""});
  counters.push_back(
      {"optimizer state bytes per rank", CounterKind::exact, largest->optimizer_state_bytes, ""});
  counters.push_back(
      {"peak resident bytes per rank", CounterKind::measured, largest->peak_resident_bytes, ""});
  if (largest->peak_device_allocated_bytes) {
    counters.push_back({"peak device allocated bytes per rank", CounterKind::measured,
                        *largest->peak_device_allocated_bytes, ""});
  }
  if (largest->peak_device_reserved_bytes) {
    counters.push_back({"peak device reserved bytes per rank", CounterKind::measured,
                        *largest->peak_device_reserved_bytes, ""});
  }
}

}  // namespace

std::vector<RunCounter> run_counters(const SystemSamples& system) {
  std::vector<RunCounter> counters;
  add_bucket_counters(system.buckets, counters);
  add_flops_counter(system.flops, counters);
  add_memory_counters(system.memory, counters);
  return counters;
}

}  // namespace harness
