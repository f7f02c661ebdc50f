// A Communicator that passes every call on to another and counts what it carries, in the manner
// of c10d's ProcessGroupWrapper: the payload of each kind of collective, from which the bytes this
// rank sends follow under ring algorithms (nccl-tests' accounting). Systems report them per
// iteration, so that a run's traffic is checked against its system's formula
// (baselines/sharded/shard_layout.h) rather than assumed.
#pragma once

#include <atomic>
#include <cstdint>

#include "runtime/comm/communicator.h"

namespace runtime {

// Payload bytes since the counter was made or reset.
struct CollectivePayload {
  int64_t all_reduce = 0;      // the tensors all-reduced
  int64_t all_gather = 0;      // this rank's inputs (one chunk of each output)
  int64_t reduce_scatter = 0;  // the inputs (world_size chunks each)
  int64_t broadcast = 0;
  int64_t point_to_point = 0;  // sent
};

// Bytes a rank sends for `payload` among `world_size` ranks: all-reduce 2 (N-1)/N B, all-gather
// (N-1) b, reduce-scatter (N-1)/N B; a broadcast's and a send's bytes as they are.
double ring_bytes_sent(const CollectivePayload& payload, int world_size);

class CountingCommunicator : public Communicator {
 public:
  explicit CountingCommunicator(Communicator& inner) : inner_(inner) {}

  CollectivePayload payload() const;
  void reset();

  int rank() const override { return inner_.rank(); }
  int world_size() const override { return inner_.world_size(); }
  std::string backend() const override { return inner_.backend(); }
  std::unique_ptr<CommWork> all_reduce_sum(at::Tensor tensor) override;
  std::unique_ptr<CommWork> broadcast(at::Tensor tensor, int root) override;
  std::unique_ptr<CommWork> all_gather(at::Tensor output, at::Tensor input) override;
  void reduce_scatter_sum(at::Tensor output, at::Tensor input) override;
  std::unique_ptr<CommWork> all_to_all(at::Tensor output, at::Tensor input,
                                       std::vector<int64_t> output_splits,
                                       std::vector<int64_t> input_splits) override;
  std::unique_ptr<CommWork> send(at::Tensor tensor, int destination, int tag) override;
  std::unique_ptr<CommWork> recv(at::Tensor tensor, int source, int tag) override;
  void barrier() override { inner_.barrier(); }

 private:
  Communicator& inner_;
  // Calls come from the training thread and from a system's collective thread.
  std::atomic<int64_t> all_reduce_{0}, all_gather_{0}, reduce_scatter_{0}, broadcast_{0},
      point_to_point_{0};
};

}  // namespace runtime
