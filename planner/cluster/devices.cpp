#include "planner/cluster/devices.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/input_error.h"
#include "common/limits.h"

namespace harness::planner {

Devices::Devices(std::vector<int> separators) : separators_(std::move(separators)) {
  if (separators_.empty()) throw std::invalid_argument("no machines given");
  int previous = 0;
  for (int s : separators_) {
    if (s <= previous) {
      throw std::invalid_argument("machine separators must be positive and strictly increasing");
    }
    previous = s;
  }
  machine_of_.resize(num_gpus());
  for (int m = 0; m < num_machines(); ++m) {
    for (int g = machine_begin(m); g < separators_[m]; ++g) machine_of_[g] = m;
  }
}

std::string Devices::describe() const {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < separators_.size(); ++i) out << (i ? "," : "") << separators_[i];
  out << ']';
  return out.str();
}

Devices parse_devices(const std::string& text, const std::string& where) {
  auto bad = [&](const std::string& what) -> InputError {
    return InputError(where + ": " + what + " in devices '" + text +
                      "' (expected separators like 8,16 or a layout like 2x8)");
  };
  auto parse_int = [&](const std::string& s) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 6) {
      throw bad("'" + s + "' is not a positive integer");
    }
    return std::stoi(s);
  };
  std::vector<int> separators;
  const auto x = text.find('x');
  if (x != std::string::npos) {
    const int machines = parse_int(text.substr(0, x));
    const int per_machine = parse_int(text.substr(x + 1));
    if (machines <= 0 || per_machine <= 0) throw bad("zero size");
    if (static_cast<long long>(machines) * per_machine > kMaxGpus) {
      throw bad("more than " + std::to_string(kMaxGpus) + " GPUs");
    }
    for (int m = 1; m <= machines; ++m) separators.push_back(m * per_machine);
  } else {
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) separators.push_back(parse_int(item));
    if (!separators.empty() && separators.back() > kMaxGpus) {
      throw bad("more than " + std::to_string(kMaxGpus) + " GPUs");
    }
  }
  try {
    return Devices(separators);
  } catch (const std::invalid_argument& e) {
    throw bad(e.what());
  }
}

GpuSet make_gpu_set(const Devices& devices, std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  GpuSet set;
  set.ids = std::move(ids);
  if (!set.ids.empty()) {
    set.first_machine = devices.machine_of(set.ids.front());
    set.last_machine = devices.machine_of(set.ids.back());
  }
  for (int m = set.first_machine; m <= set.last_machine && !set.ids.empty(); ++m) {
    const int count = set.count_on(devices, m);
    set.machines_used += count > 0;
    set.busiest = std::max(set.busiest, count);
  }
  return set;
}

int GpuSet::count_on(const Devices& devices, int machine) const {
  const int begin = devices.machine_begin(machine);
  const int end = begin + devices.machine_size(machine);
  return static_cast<int>(std::lower_bound(ids.begin(), ids.end(), end) -
                          std::lower_bound(ids.begin(), ids.end(), begin));
}

const char* to_string(PlacementPolicy policy) {
  switch (policy) {
    case PlacementPolicy::kFreshFirst:
      return "fresh";
    case PlacementPolicy::kAppendFirst:
      return "append";
    default:
      return "scatter";
  }
}

std::optional<PlacementPolicy> parse_placement_policy(const std::string& text) {
  if (text == "fresh") return PlacementPolicy::kFreshFirst;
  if (text == "append") return PlacementPolicy::kAppendFirst;
  if (text == "scatter") return PlacementPolicy::kScatterFirst;
  return std::nullopt;
}

std::optional<Placement> place(const Devices& devices, const Occupancy& occupancy, int need,
                               PlacementPolicy policy) {
  Placement result{occupancy, {}};
  std::vector<int> ids;
  auto take = [&](int machine, int count) {
    for (int c = 0; c < count; ++c) {
      ids.push_back(devices.machine_begin(machine) + result.occupancy[machine]);
      ++result.occupancy[machine];
    }
  };
  auto free_on = [&](int machine) {
    return devices.machine_size(machine) - result.occupancy[machine];
  };
  int left = need;
  if (policy == PlacementPolicy::kScatterFirst) {
    int total_free = 0;
    for (int m = 0; m < devices.num_machines(); ++m) total_free += free_on(m);
    if (total_free < need) return std::nullopt;
    while (left > 0) {
      for (int m = 0; m < devices.num_machines() && left > 0; ++m) {
        if (free_on(m) > 0) {
          take(m, 1);
          --left;
        }
      }
    }
  } else {
    const bool want_fresh = policy == PlacementPolicy::kFreshFirst;
    for (int m = 0; m < devices.num_machines() && left > 0; ++m) {
      // Whether a machine is fresh is judged on the occupancy before this request.
      if ((occupancy[m] == 0) != want_fresh) continue;
      const int count = std::min(left, free_on(m));
      take(m, count);
      left -= count;
    }
    if (left > 0) return std::nullopt;
  }
  result.gpus = make_gpu_set(devices, std::move(ids));
  return result;
}

namespace {

void place_rounds_into(const Devices& devices, const Occupancy& start, const Occupancy& current,
                       int need, int rounds_left, const std::vector<PlacementPolicy>& policies,
                       std::set<std::pair<int, Occupancy>>& visited, std::set<Occupancy>& emitted,
                       std::vector<Placement>& out) {
  if (rounds_left == 0) {
    // Every policy takes the lowest free ids, so the GPU set is what the occupancy gained.
    if (!emitted.insert(current).second) return;
    std::vector<int> ids;
    for (int m = 0; m < devices.num_machines(); ++m) {
      for (int u = start[m]; u < current[m]; ++u) ids.push_back(devices.machine_begin(m) + u);
    }
    out.push_back({current, make_gpu_set(devices, std::move(ids))});
    return;
  }
  // The same occupancy at the same depth yields the same leaves: explore it once.
  if (!visited.insert({rounds_left, current}).second) return;
  for (PlacementPolicy policy : policies) {
    if (auto step = place(devices, current, need, policy)) {
      place_rounds_into(devices, start, step->occupancy, need, rounds_left - 1, policies, visited,
                        emitted, out);
    }
  }
}

}  // namespace

std::vector<Placement> place_rounds(const Devices& devices, const Occupancy& occupancy, int need,
                                    int rounds, const std::vector<PlacementPolicy>& policies) {
  std::vector<Placement> out;
  std::set<std::pair<int, Occupancy>> visited;
  std::set<Occupancy> emitted;
  place_rounds_into(devices, occupancy, occupancy, need, rounds, policies, visited, emitted, out);
  return out;
}

}  // namespace harness::planner
