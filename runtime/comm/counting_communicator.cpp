#include "runtime/comm/counting_communicator.h"

namespace runtime {
namespace {

int64_t payload_bytes(const at::Tensor& tensor) {
  return tensor.numel() * static_cast<int64_t>(tensor.element_size());
}

}  // namespace

double ring_bytes_sent(const CollectivePayload& payload, int world_size) {
  const double n = world_size;
  return 2 * (n - 1) / n * static_cast<double>(payload.all_reduce) +
         (n - 1) * static_cast<double>(payload.all_gather) +
         (n - 1) / n * static_cast<double>(payload.reduce_scatter) +
         static_cast<double>(payload.broadcast + payload.point_to_point);
}

CollectivePayload CountingCommunicator::payload() const {
  return {all_reduce_.load(), all_gather_.load(), reduce_scatter_.load(), broadcast_.load(),
          point_to_point_.load()};
}

void CountingCommunicator::reset() {
  all_reduce_ = all_gather_ = reduce_scatter_ = broadcast_ = point_to_point_ = 0;
}

std::unique_ptr<CommWork> CountingCommunicator::all_reduce_sum(at::Tensor tensor) {
  all_reduce_ += payload_bytes(tensor);
  return inner_.all_reduce_sum(std::move(tensor));
}

// Counted as the root sends it; the other ranks send nothing.
std::unique_ptr<CommWork> CountingCommunicator::broadcast(at::Tensor tensor, int root) {
  if (root == inner_.rank()) broadcast_ += payload_bytes(tensor);
  return inner_.broadcast(std::move(tensor), root);
}

std::unique_ptr<CommWork> CountingCommunicator::all_gather(at::Tensor output, at::Tensor input) {
  all_gather_ += payload_bytes(input);
  return inner_.all_gather(std::move(output), std::move(input));
}

void CountingCommunicator::reduce_scatter_sum(at::Tensor output, at::Tensor input) {
  reduce_scatter_ += payload_bytes(input);
  inner_.reduce_scatter_sum(std::move(output), std::move(input));
}

// What leaves this rank: its rows for the others.
std::unique_ptr<CommWork> CountingCommunicator::all_to_all(at::Tensor output, at::Tensor input,
                                                           std::vector<int64_t> output_splits,
                                                           std::vector<int64_t> input_splits) {
  const int64_t row_bytes = input.size(0) == 0 ? 0 : payload_bytes(input) / input.size(0);
  const int64_t own_rows =
      input_splits.empty() ? input.size(0) / inner_.world_size() : input_splits[inner_.rank()];
  point_to_point_ += payload_bytes(input) - own_rows * row_bytes;
  return inner_.all_to_all(std::move(output), std::move(input), std::move(output_splits),
                           std::move(input_splits));
}

std::unique_ptr<CommWork> CountingCommunicator::send(at::Tensor tensor, int destination, int tag) {
  point_to_point_ += payload_bytes(tensor);
  return inner_.send(std::move(tensor), destination, tag);
}

std::unique_ptr<CommWork> CountingCommunicator::recv(at::Tensor tensor, int source, int tag) {
  return inner_.recv(std::move(tensor), source, tag);
}

}  // namespace runtime
