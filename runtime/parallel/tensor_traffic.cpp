#include "runtime/parallel/tensor_traffic.h"

#include <algorithm>

namespace runtime {
namespace {

// The (t - 1) / t of one ring pass over b s h elements.
double ring_pass_bytes(const TensorTrafficShape& shape) {
  const double t = shape.degree;
  return (t - 1) / t * static_cast<double>(shape.batch * shape.tokens * shape.width) *
         static_cast<double>(shape.element_size);
}

// The vocabulary-parallel loss's collectives (runtime::vocabulary_cross_entropy): float32, or
// the activations' type where it is wider.
double vocabulary_loss_bytes(const TensorTrafficShape& shape) {
  const double t = shape.degree;
  const double tokens = static_cast<double>(shape.batch * shape.tokens) *
                        static_cast<double>(std::max<int64_t>(shape.element_size, 4));
  return (t - 1) * tokens + 2 * (2 * (t - 1) / t * tokens);
}

}  // namespace

int64_t partial_vectors_of(const std::string& model) { return model == "bert" ? 6 : 2; }

double tensor_layer_bytes_sent(const TensorTrafficShape& shape) {
  // An all-reduce is two passes (reduce-scatter, then all-gather); four of them per layer.
  const bool regathered = shape.sequence_parallel && shape.recompute_gather;
  return (regathered ? 10 : 8) * ring_pass_bytes(shape);
}

double tensor_iteration_bytes_sent(const TensorTrafficShape& shape, int64_t gradient_element_size) {
  const bool vocabulary = shape.vocabulary_parallel;
  double bytes = static_cast<double>(shape.layers) * tensor_layer_bytes_sent(shape);
  if (vocabulary) bytes += 4 * ring_pass_bytes(shape) + vocabulary_loss_bytes(shape);
  if (!shape.sequence_parallel) return bytes;
  const double t = shape.degree;
  const int64_t partial_vectors = shape.partial_vectors * shape.layers + (vocabulary ? 1 : 0);
  const double norm_gradients =
      static_cast<double>(partial_vectors * shape.width * shape.micro_batches) *
      static_cast<double>(gradient_element_size);
  const int ends = vocabulary ? 0 : shape.ends;
  return bytes + ends * ring_pass_bytes(shape) + 2 * (t - 1) / t * norm_gradients;
}

}  // namespace runtime
