// The byte streams between the ranks of point-to-point pairs, for ready notices that queue
// behind data (ClusterConfig::p2p_ready_behind_sends). Gloo's TCP pair has one connection per
// pair of ranks and writes every op into it in order: a receiver's "ready" for a transfer goes
// behind the bytes of the transfers the receiver is already sending the same peer, and arrives
// with the last of them. Transfers still waiting for their own ready are not in the stream
// (Gloo keeps them as pending sends), so they hold nothing back.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace harness::simulator {

class PairStreams {
 public:
  explicit PairStreams(int ranks) : ranks_(ranks) {}

  // Transfer `id` was written into the stream from `src` to `dst`.
  void sent(int id, int src, int dst);
  // Notice `id` from `from` to `to` enters that stream: true when nothing is ahead of it (it
  // arrives after the link's latency alone), false when it waits for the transfers in flight.
  bool queue_notice(int id, int from, int to);
  // Transfer `id` from `src` to `dst` arrived; appends the notices that had nothing else ahead.
  void arrived(int id, int src, int dst, std::vector<int>& released);

 private:
  std::int64_t key(int src, int dst) const { return static_cast<std::int64_t>(src) * ranks_ + dst; }

  int ranks_;
  std::unordered_map<std::int64_t, std::vector<int>> in_flight_;  // transfers per stream
  std::unordered_map<int, std::vector<int>> behind_;              // notices behind a transfer
  std::unordered_map<int, int> waiting_for_;                      // transfers ahead of a notice
};

}  // namespace harness::simulator
