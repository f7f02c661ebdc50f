#include "simulator/pair_streams.h"

#include <algorithm>

namespace harness::simulator {

void PairStreams::sent(int id, int src, int dst) { in_flight_[key(src, dst)].push_back(id); }

bool PairStreams::queue_notice(int id, int from, int to) {
  const auto ahead = in_flight_.find(key(from, to));
  if (ahead == in_flight_.end() || ahead->second.empty()) return true;
  waiting_for_[id] = static_cast<int>(ahead->second.size());
  for (int transfer : ahead->second) behind_[transfer].push_back(id);
  return false;
}

void PairStreams::arrived(int id, int src, int dst, std::vector<int>& released) {
  std::vector<int>& stream = in_flight_[key(src, dst)];
  stream.erase(std::find(stream.begin(), stream.end(), id));
  const auto behind = behind_.find(id);
  if (behind == behind_.end()) return;
  for (int notice : behind->second) {
    if (--waiting_for_[notice] == 0) {
      waiting_for_.erase(notice);
      released.push_back(notice);
    }
  }
  behind_.erase(behind);
}

}  // namespace harness::simulator
