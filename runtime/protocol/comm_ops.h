// The operations `harness profile comm` asks the comm-worker rank program to time, by name
// (the harness validates --ops against this list; runtime/profile/comm_benchmark.cpp runs them).
#pragma once

namespace runtime {

inline constexpr const char* kCommOps[] = {"allreduce", "allgather", "reducescatter",
                                           "broadcast", "sendrecv",  "copy"};

}  // namespace runtime
