#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <stdexcept>

#include "runtime/communicator.h"

namespace runtime {
namespace {

class C10dWork : public CommWork {
 public:
  explicit C10dWork(c10::intrusive_ptr<c10d::Work> work) : work_(std::move(work)) {}
  void wait() override { work_->wait(); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
};

class GlooCommunicator : public Communicator {
 public:
  GlooCommunicator(c10::intrusive_ptr<c10d::ProcessGroupGloo> group) : group_(std::move(group)) {}

  int rank() const override { return group_->getRank(); }
  int world_size() const override { return group_->getSize(); }
  std::string backend() const override { return "gloo"; }

  std::unique_ptr<CommWork> all_reduce_sum(at::Tensor tensor) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    return std::make_unique<C10dWork>(group_->allreduce(tensors, c10d::AllreduceOptions()));
  }

  std::unique_ptr<CommWork> broadcast(at::Tensor tensor, int root) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    return std::make_unique<C10dWork>(group_->broadcast(tensors, options));
  }

  void barrier() override { group_->barrier()->wait(); }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

}  // namespace

c10::intrusive_ptr<c10d::Store> connect_store(const Rendezvous& rendezvous, int rank,
                                              int world_size) {
  if (rendezvous.kind == "file") {
    auto store = c10::make_intrusive<c10d::FileStore>(rendezvous.path, world_size);
    store->setTimeout(rendezvous.timeout);
    return store;
  }
  if (rendezvous.kind == "tcp") {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(rendezvous.port);
    options.isServer = rank == 0;
    options.numWorkers = world_size;
    options.waitWorkers = true;
    options.timeout = rendezvous.timeout;
    return c10::make_intrusive<c10d::TCPStore>(rendezvous.host, options);
  }
  throw std::invalid_argument("unknown rendezvous kind '" + rendezvous.kind + "'");
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
