// TCP ports on this host for rendezvous stores and lockstep barriers: the harness picks one
// for each run's ranks, the profilers for their co-located processes.
#pragma once

#include <chrono>
#include <string>

namespace harness {

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it, close).
int pick_free_port();

// Whether a TCP port can be bound on this host right now (all interfaces).
bool port_is_free(int port);

// Waits until something on `host` accepts TCP connections on `port`, trying every few
// milliseconds, for at most `limit`; returns whether it did. A rank that joins a store served
// by another calls it first: c10d's TCPStore client sleeps a whole second after a refused
// connection (LibTorch 1.13), which a rank started beside the server's meets on most launches.
bool wait_until_listening(const std::string& host, int port, std::chrono::milliseconds limit);

// A key no other run shares (16 random hex digits after "run-"): the ranks of one run keep
// their entries under it in a store, since a port picked free can be picked by two runs at once.
std::string new_rendezvous_key();

}  // namespace harness
