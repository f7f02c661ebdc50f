// The operations `harness profile comm` asks the comm-worker rank program to time, by name
// (the harness validates --ops against this list; runtime/profile/comm_benchmark.cpp runs them).
#pragma once

namespace runtime {

// `alltoall` sends an equal share of the buffer to every rank (mixture-of-experts token
// dispatch). `pingpong` times one way of a round trip between rank 0 and rank n/2 (the link between
// two machines when the ranks are spread over emulated ones): its smallest message's time is the
// link's one-way latency. `burst` is the same ping-pong after the link has idled before every
// round trip, so that an emulated link's token bucket is full when each message leaves: below the
// bucket's size its time is the host's own path between the machines.
inline constexpr const char* kCommOps[] = {"allreduce", "allgather", "reducescatter",
                                           "alltoall",  "broadcast", "sendrecv",
                                           "pingpong",  "burst",     "copy"};

}  // namespace runtime
