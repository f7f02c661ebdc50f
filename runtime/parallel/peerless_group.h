// A tensor group of one slice with its peers left out, for timing what a tensor-parallel rank
// computes (`harness profile layers --tensor t`): the slice's layers run at its shapes (heads
// and feed-forward columns / t), and each collective returns at once -- an all-reduce leaves
// the partial sum as it is, an all-gather puts the rank's shard in every chunk, a
// reduce-scatter keeps its own chunk, an all-to-all receives from each peer what it sends it
// (a count exchange then hands back the rank's own counts, so an expert layer receives as many
// tokens as it dispatches). The values are not the model's; the work is the slice's.
// What the collectives cost is the simulator's to price (simulator/tensor_system.h).
#pragma once

#include "runtime/comm/communicator.h"

namespace runtime {

class PeerlessGroup : public Communicator {
 public:
  // Slice `rank` of `world_size`.
  PeerlessGroup(int rank, int world_size) : rank_(rank), world_size_(world_size) {}

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string backend() const override { return "peerless"; }
  std::unique_ptr<CommWork> all_reduce_sum(at::Tensor tensor) override;
  std::unique_ptr<CommWork> broadcast(at::Tensor tensor, int root) override;
  std::unique_ptr<CommWork> all_gather(at::Tensor output, at::Tensor input) override;
  void reduce_scatter_sum(at::Tensor output, at::Tensor input) override;
  // std::logic_error where the splits received differ from those sent.
  std::unique_ptr<CommWork> all_to_all(at::Tensor output, at::Tensor input,
                                       std::vector<int64_t> output_splits,
                                       std::vector<int64_t> input_splits) override;
  // Point-to-point has no stand-in: std::logic_error.
  std::unique_ptr<CommWork> send(at::Tensor tensor, int destination, int tag) override;
  std::unique_ptr<CommWork> recv(at::Tensor tensor, int source, int tag) override;
  void barrier() override {}

 private:
  int rank_;
  int world_size_;
};

}  // namespace runtime
