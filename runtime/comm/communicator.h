// The collectives a rank uses, behind one interface in the manner of c10d's ProcessGroup:
// Gloo on CPU now, NCCL on GPU behind the same calls. Operations are asynchronous where the
// backend allows it; a CommWork handle says when the result is in place.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace runtime {

class CommWork {
 public:
  virtual ~CommWork() = default;
  // Blocks until the operation finished; throws if it failed (a peer died, a timeout).
  virtual void wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string backend() const = 0;

  // Sums `tensor` across ranks, in place. Collectives must be issued in the same order on
  // every rank.
  virtual std::unique_ptr<CommWork> all_reduce_sum(at::Tensor tensor) = 0;
  virtual std::unique_ptr<CommWork> broadcast(at::Tensor tensor, int root) = 0;
  // `output` holds world_size chunks of `input`'s size; chunk r receives rank r's input.
  virtual std::unique_ptr<CommWork> all_gather(at::Tensor output, at::Tensor input) = 0;
  // Sums `input` (world_size equal chunks) across ranks; this rank's chunk lands in `output`.
  // Blocking where the backend has no native reduce-scatter (Gloo: a ring over send/recv).
  virtual void reduce_scatter_sum(at::Tensor output, at::Tensor input) = 0;
  // All-to-all along dim 0: rank s receives the `input_splits[s]` rows of `input` that follow
  // those for ranks before it, and this rank's `output` gets, in rank order, the
  // `output_splits[s]` rows rank s sent it. Empty split lists: equal splits (dim 0 divisible
  // by the world size). Splits must agree across ranks (what s sends r is what r expects).
  virtual std::unique_ptr<CommWork> all_to_all(at::Tensor output, at::Tensor input,
                                               std::vector<int64_t> output_splits,
                                               std::vector<int64_t> input_splits) = 0;
  virtual std::unique_ptr<CommWork> send(at::Tensor tensor, int destination, int tag) = 0;
  virtual std::unique_ptr<CommWork> recv(at::Tensor tensor, int source, int tag) = 0;
  virtual void barrier() = 0;
};

// Where ranks meet: "tcp" (a c10d TCPStore served by rank 0 on host:port) or "file"
// (a c10d FileStore at `path`).
struct Rendezvous {
  std::string kind = "tcp";
  std::string host = "127.0.0.1";
  int port = 0;
  std::string path;
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  // false under torchrun, whose agent already serves the store on host:port
  // (TORCHELASTIC_USE_AGENT_STORE): every rank then joins it as a client.
  bool rank0_serves = true;
  // The run's own key space in the store (empty: none). A port is picked free before rank 0
  // listens on it, so two runs started at once can meet the same port: one's rank 0 fails to
  // bind and runs again, but its other ranks may already have joined the other run's store.
  // Under a key of its own each run reads and writes only its own ranks' entries.
  std::string key;
};

c10::intrusive_ptr<c10d::Store> connect_store(const Rendezvous& rendezvous, int rank,
                                              int world_size);

// Gloo over TCP on `interface_host` (loopback by default), `threads` Gloo worker threads.
std::unique_ptr<Communicator> make_gloo_communicator(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int world_size,
    std::chrono::milliseconds timeout, const std::string& interface_host = "127.0.0.1",
    int threads = 2);

}  // namespace runtime
