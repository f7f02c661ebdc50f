// The operations `harness profile comm` asks the comm-worker rank program to time, by name
// (the harness validates --ops against this list; runtime/profile/comm_benchmark.cpp runs them).
#pragma once

#include <algorithm>
#include <cstdint>

namespace runtime {

// `alltoall` sends an equal share of the buffer to every rank (mixture-of-experts token
// dispatch). `pingpong` times one way of a round trip between rank 0 and rank n/2 (the link between
// two machines when the ranks are spread over emulated ones): its smallest message's time is the
// link's one-way latency. `burst` is the same ping-pong after the link has idled before every
// round trip, so that an emulated link's token bucket is full when each message leaves: below the
// bucket's size its time is the host's own path between the machines. `handover` times no
// transfer but a send call whose receiver computes, as a pipeline stage's hand-over meets it
// (runtime/profile/comm_benchmark.cpp): the call's own time, no bandwidth.
inline constexpr const char* kCommOps[] = {"allreduce", "allgather", "reducescatter", "alltoall",
                                           "broadcast", "sendrecv",  "pingpong",      "burst",
                                           "copy",      "handover"};
inline constexpr const char* kHandOverOp = "handover";

// Round trips a `pingpong` times per operation, after one untimed trip: four, enough that the
// first trip's handshake, which the untimed one absorbs, is not what is measured; for larger
// messages as few as carry 4 MiB each way, at least one: their transfer dwarfs a handshake (4 MiB
// takes 0.34 ms at 100 Gbit/s), and on a shaped link four trips were most of a measurement's
// time (40 transfers a size of 130 ms or more each: a link probe at 2 Gbit/s sends 2, 8 and 32
// MiB). A `burst` makes four at every size: its messages are a few token buckets, each after an
// idle wait, and its send calls are averaged over the trips.
inline constexpr int kPingPongRoundTrips = 4;
inline constexpr int64_t kPingPongBytesEachWay = int64_t{4} << 20;
constexpr int pingpong_round_trips(int64_t bytes, bool burst) {
  if (burst) return kPingPongRoundTrips;
  return static_cast<int>(std::clamp<int64_t>(kPingPongBytesEachWay / std::max<int64_t>(bytes, 1),
                                              1, kPingPongRoundTrips));
}

}  // namespace runtime
