#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <stdexcept>

#include "common/ports.h"
#include "runtime/comm/c10d_work.h"
#include "runtime/comm/communicator.h"

namespace runtime {
namespace {

// An operation run on a thread of its own: done when the thread's function returned.
class ThreadWork : public CommWork {
 public:
  explicit ThreadWork(std::future<void> done) : done_(std::move(done)) {}
  void wait() override { done_.get(); }

 private:
  std::future<void> done_;
};

// A collective whose result needs a last step on this rank once it has arrived.
class FinishingWork : public CommWork {
 public:
  FinishingWork(c10::intrusive_ptr<c10d::Work> work, std::function<void()> finish)
      : work_(std::move(work)), finish_(std::move(finish)) {}
  void wait() override {
    work_->wait();
    finish_();
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::function<void()> finish_;
};

class GlooCommunicator : public Communicator {
 public:
  static constexpr int kReduceScatterTag = 0x5253;     // keeps the ring apart from user tags
  static constexpr int kBFloat16RingTag = 0x42460000;  // + a per-call count (below)

  GlooCommunicator(c10::intrusive_ptr<c10d::ProcessGroupGloo> group) : group_(std::move(group)) {}

  int rank() const override { return group_->getRank(); }
  int world_size() const override { return group_->getSize(); }
  std::string backend() const override { return "gloo"; }

  std::unique_ptr<CommWork> all_reduce_sum(at::Tensor tensor) override {
    if (tensor.scalar_type() == at::kBFloat16) return all_reduce_bfloat16(std::move(tensor));
    std::vector<at::Tensor> tensors{std::move(tensor)};
    return c10d_work(group_->allreduce(tensors, c10d::AllreduceOptions()));
  }

  std::unique_ptr<CommWork> broadcast(at::Tensor tensor, int root) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    return c10d_work(group_->broadcast(tensors, options));
  }

  std::unique_ptr<CommWork> all_gather(at::Tensor output, at::Tensor input) override {
    std::vector<std::vector<at::Tensor>> outputs(1);
    outputs[0] = output.chunk(group_->getSize());
    std::vector<at::Tensor> inputs{std::move(input)};
    return c10d_work(group_->allgather(outputs, inputs));
  }

  // ProcessGroupGloo (1.13) has no reduce_scatter: the ring over point-to-point below.
  void reduce_scatter_sum(at::Tensor output, at::Tensor input) override {
    std::vector<at::Tensor> chunks = input.clone().chunk(group_->getSize());
    if (group_->getSize() > 1) ring_reduce_scatter(chunks, kReduceScatterTag);
    output.copy_(chunks[group_->getRank()]);
  }

  std::unique_ptr<CommWork> all_to_all(at::Tensor output, at::Tensor input,
                                       std::vector<int64_t> output_splits,
                                       std::vector<int64_t> input_splits) override {
    return c10d_work(group_->alltoall_base(output, input, output_splits, input_splits));
  }

  // ProcessGroupGloo stages a CUDA tensor through the host in its collectives, but its
  // point-to-point calls hand the tensor's memory to the socket as it is: a CUDA tensor is
  // sent from a host copy (made once the stream's work on it is done, held by the work) and
  // received into one, copied onto the device when the message has arrived.
  std::unique_ptr<CommWork> send(at::Tensor tensor, int destination, int tag) override {
    if (!tensor.is_cuda()) {
      std::vector<at::Tensor> tensors{std::move(tensor)};
      return c10d_work(group_->send(tensors, destination, tag));
    }
    std::vector<at::Tensor> tensors{tensor.to(at::kCPU)};
    return std::make_unique<FinishingWork>(group_->send(tensors, destination, tag),
                                           [host = tensors[0]] {});
  }

  std::unique_ptr<CommWork> recv(at::Tensor tensor, int source, int tag) override {
    if (!tensor.is_cuda()) {
      std::vector<at::Tensor> tensors{std::move(tensor)};
      return c10d_work(group_->recv(tensors, source, tag));
    }
    std::vector<at::Tensor> tensors{at::empty(tensor.sizes(), tensor.options().device(at::kCPU))};
    return std::make_unique<FinishingWork>(
        group_->recv(tensors, source, tag),
        [tensor, host = tensors[0]]() mutable { tensor.copy_(host); });
  }

  void barrier() override { group_->barrier()->wait(); }

 private:
  // Gloo (LibTorch 1.13) reduces no bfloat16. Two ranks all-gather its bits (moved as 2-byte
  // halves: data, no arithmetic) and sum in float, rounding once -- the bytes a ring would
  // send, over Gloo's collective path, which keeps both directions busy (its point-to-point
  // path carries one direction at a time). More ranks: a ring over point-to-point (2(n-1)/n
  // of the tensor per rank, an all-gather would send n-1 times it), on a thread of its own so
  // that it overlaps as a collective would; the per-call count keeps calls' messages apart
  // (issued in the same order on every rank).
  std::unique_ptr<CommWork> all_reduce_bfloat16(at::Tensor tensor) {
    const int n = group_->getSize();
    if (n == 2 && tensor.is_contiguous()) {
      at::Tensor bits = tensor.view({-1}).view(at::kHalf);
      at::Tensor gathered = at::empty({n, bits.numel()}, bits.options());
      std::vector<std::vector<at::Tensor>> outputs(1);
      outputs[0] = gathered.unbind(0);
      std::vector<at::Tensor> inputs{bits};
      auto work = group_->allgather(outputs, inputs);
      return std::make_unique<FinishingWork>(work, [tensor, gathered]() mutable {
        tensor.view({-1}).copy_(gathered.view(at::kBFloat16).to(at::kFloat).sum(0));
      });
    }
    const int tag = kBFloat16RingTag + static_cast<int>(bfloat16_calls_++ % 0x10000);
    return std::make_unique<ThreadWork>(std::async(
        std::launch::async, [this, tensor, tag]() mutable { ring_all_reduce(tensor, tag); }));
  }

  // Ring all-reduce of a flat tensor in its own precision: n-1 steps of reduce-scatter (each
  // rank adds the chunk arriving from its left, rounding as the type rounds), then n-1 steps
  // of all-gather; each rank sends 2(n-1)/n of the tensor, as Gloo's ring does.
  void ring_all_reduce(at::Tensor tensor, int tag) {
    const int n = group_->getSize();
    const int r = group_->getRank();
    if (n == 1) return;
    at::Tensor flat = tensor.view({-1});
    if (flat.numel() < n) {  // too small to split into a chunk per rank
      at::Tensor wide = flat.to(at::kFloat);
      std::vector<at::Tensor> tensors{wide};
      group_->allreduce(tensors)->wait();
      flat.copy_(wide);
      return;
    }
    std::vector<at::Tensor> chunks = flat.tensor_split(n);
    ring_reduce_scatter(chunks, tag);
    // Chunk r is complete on rank r: pass each complete chunk on around the ring.
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    const auto index = [n](int i) { return ((i % n) + n) % n; };
    for (int step = 0; step < n - 1; ++step) {
      auto sent = send(chunks[index(r - step)], right, tag);
      recv(chunks[index(r - step - 1)], left, tag)->wait();
      sent->wait();
    }
  }

  // The reduce-scatter ring over point-to-point: in n-1 steps each rank passes one partial chunk
  // to its right neighbour and adds the one arriving from its left (rounding as the chunks' type
  // rounds), so that chunk r ends complete on rank r. Chunks may differ in length by one.
  void ring_reduce_scatter(std::vector<at::Tensor>& chunks, int tag) {
    const int n = group_->getSize();
    const int r = group_->getRank();
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    const auto index = [n](int i) { return ((i % n) + n) % n; };
    at::Tensor incoming = at::empty_like(chunks[0]);
    for (int step = 0; step < n - 1; ++step) {
      at::Tensor& arriving = chunks[index(r - step - 2)];
      at::Tensor buffer = incoming.narrow(0, 0, arriving.size(0));
      auto sent = send(chunks[index(r - step - 1)], right, tag);
      recv(buffer, left, tag)->wait();
      sent->wait();
      arriving.add_(buffer);
    }
  }

  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
  std::atomic<long long> bfloat16_calls_{0};
};

}  // namespace

namespace {

c10::intrusive_ptr<c10d::Store> connect_shared_store(const Rendezvous& rendezvous, int rank,
                                                     int world_size) {
  if (rendezvous.kind == "file") {
    auto store = c10::make_intrusive<c10d::FileStore>(rendezvous.path, world_size);
    store->setTimeout(rendezvous.timeout);
    return store;
  }
  if (rendezvous.kind == "tcp") {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(rendezvous.port);
    options.isServer = rank == 0 && rendezvous.rank0_serves;
    options.numWorkers = world_size;
    options.waitWorkers = true;
    options.timeout = rendezvous.timeout;
    if (!options.isServer) {
      // Join once the server listens: TCPStore's own retry sleeps a second after a refusal.
      const auto start = std::chrono::steady_clock::now();
      harness::wait_until_listening(rendezvous.host, rendezvous.port, rendezvous.timeout);
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
      options.timeout = std::max(rendezvous.timeout - waited, std::chrono::milliseconds(1));
    }
    auto store = c10::make_intrusive<c10d::TCPStore>(rendezvous.host, options);
    store->setTimeout(rendezvous.timeout);  // the whole timeout again for what follows
    return store;
  }
  throw std::invalid_argument("unknown rendezvous kind '" + rendezvous.kind + "'");
}

}  // namespace

c10::intrusive_ptr<c10d::Store> connect_store(const Rendezvous& rendezvous, int rank,
                                              int world_size) {
  auto store = connect_shared_store(rendezvous, rank, world_size);
  if (rendezvous.key.empty()) return store;
  return c10::make_intrusive<c10d::PrefixStore>(rendezvous.key, store);
}

std::unique_ptr<Communicator> make_gloo_communicator(const c10::intrusive_ptr<c10d::Store>& store,
                                                     int rank, int world_size,
                                                     std::chrono::milliseconds timeout,
                                                     const std::string& interface_host,
                                                     int threads) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(interface_host));
  options->threads = threads;
  return std::make_unique<GlooCommunicator>(
      c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options));
}

}  // namespace runtime
