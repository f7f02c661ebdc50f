// GPUs grouped into machines, and the placement policies that pick GPUs for a pipeline stage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness::planner {

// Machine layout given by cumulative exclusive upper GPU ids: [8,16] is two machines of eight
// GPUs (ids 0-7 and 8-15); [1,2,...,16] is sixteen single-GPU machines.
class Devices {
 public:
  Devices() = default;
  // std::invalid_argument unless the separators are positive and strictly increasing.
  explicit Devices(std::vector<int> separators);

  int num_gpus() const { return separators_.empty() ? 0 : separators_.back(); }
  int num_machines() const { return static_cast<int>(separators_.size()); }
  int machine_of(int gpu) const { return machine_of_[gpu]; }
  int machine_begin(int machine) const { return machine == 0 ? 0 : separators_[machine - 1]; }
  int machine_size(int machine) const { return separators_[machine] - machine_begin(machine); }
  const std::vector<int>& separators() const { return separators_; }
  // "[8,16]" as printed in reports.
  std::string describe() const;

 private:
  std::vector<int> separators_;
  std::vector<int> machine_of_;
};

// "8,16" (separators) or "2x8" (machines x GPUs per machine; "16x1" is flat). InputError with
// `where` as location prefix on malformed text.
Devices parse_devices(const std::string& text, const std::string& where);

// A set of GPU ids, ascending, with the machines it spans.
struct GpuSet {
  std::vector<int> ids;
  int first_machine = 0;
  int last_machine = 0;
  // Summaries kept so that the cost model answers in O(log n), not O(n): the two-stage
  // candidates of 1024 GPUs are millions of cost queries.
  int machines_used = 0;  // machines holding at least one of the GPUs
  int busiest = 0;        // most GPUs of the set on one machine

  int size() const { return static_cast<int>(ids.size()); }
  // GPUs of the set on `machine` (ids are sorted and machines hold consecutive ids).
  int count_on(const Devices& devices, int machine) const;
  // The published planner's test: a set is cross-machine iff its min and max ids are on
  // different machines (exact, since machines hold consecutive ids).
  bool spans_machines() const { return first_machine != last_machine; }
};
GpuSet make_gpu_set(const Devices& devices, std::vector<int> ids);

enum class PlacementPolicy : std::uint8_t { kFreshFirst, kAppendFirst, kScatterFirst };
const char* to_string(PlacementPolicy policy);
// "fresh", "append", "scatter"; nullopt otherwise.
std::optional<PlacementPolicy> parse_placement_policy(const std::string& text);

// GPUs in use per machine. Every policy takes the lowest free ids of a machine, so the used
// GPUs of a machine are always a prefix and a count per machine describes the occupancy.
using Occupancy = std::vector<std::uint16_t>;

struct Placement {
  Occupancy occupancy;  // after taking `gpus`
  GpuSet gpus;
};

// Takes `need` GPUs under `policy`: fresh-first fills untouched machines in order, append-first
// fills partly used ones, scatter-first takes one GPU per machine round-robin. nullopt when the
// policy cannot find enough GPUs.
std::optional<Placement> place(const Devices& devices, const Occupancy& occupancy, int need,
                               PlacementPolicy policy);

// The distinct placements (by GPU set) of `rounds` successive requests of `need` GPUs each, every
// round under any of `policies` -- how the published planner places a stage of `need` units of
// `rounds` GPUs. Deterministic order: depth first, policies in the order given.
std::vector<Placement> place_rounds(const Devices& devices, const Occupancy& occupancy, int need,
                                    int rounds, const std::vector<PlacementPolicy>& policies);

}  // namespace harness::planner
