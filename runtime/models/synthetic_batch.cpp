#include "runtime/models/synthetic_batch.h"

#include <torch/torch.h>

namespace runtime {

SyntheticBatch make_synthetic_batch(ZooModel& model, const ModelOptions& options, int64_t samples,
                                    const std::string& loss) {
  std::vector<int64_t> shape{samples};
  shape.insert(shape.end(), options.input_shape.begin(), options.input_shape.end());
  SyntheticBatch batch;
  batch.input = model.input_vocabulary() > 0
                    ? torch::randint(model.input_vocabulary(), shape, torch::kLong)
                    : torch::randn(shape);
  std::vector<int64_t> output_shape;
  {
    // BatchNorm cannot train on one sample; eval mode gives the same output width.
    torch::NoGradGuard no_grad;
    const bool was_training = model.is_training();
    model.eval();
    // The batch is drawn on the CPU (the same numbers wherever the model trains); the probe
    // runs where the model's parameters are.
    const auto parameters = model.parameters();
    const c10::Device device =
        parameters.empty() ? c10::Device(c10::kCPU) : parameters.front().device();
    output_shape = model.forward(batch.input.narrow(0, 0, 1).to(device)).sizes().vec();
    model.train(was_training);
  }
  output_shape[0] = samples;
  const int64_t classes = output_shape.back();
  if (loss != "cross_entropy") {
    batch.target = torch::randn(output_shape);
  } else if (output_shape.size() == 3) {
    // Next-token prediction: token t's target is token t + 1; the last one's is drawn from the
    // vocabulary (a vocabulary-parallel head's output holds only this rank's part of it).
    const int64_t vocabulary = model.input_vocabulary() > 0 ? model.input_vocabulary() : classes;
    const auto last = torch::randint(vocabulary, {samples, 1}, torch::kLong);
    batch.target = torch::cat({batch.input.narrow(1, 1, batch.input.size(1) - 1), last}, 1);
  } else {
    batch.target = torch::randint(classes, {samples}, torch::kLong);
  }
  return batch;
}

at::Tensor training_loss(const std::string& loss, const at::Tensor& output,
                         const at::Tensor& target) {
  if (loss != "cross_entropy") return torch::mse_loss(output, target);
  if (output.dim() == 3) {
    return torch::nn::functional::cross_entropy(output.flatten(0, 1), target.flatten());
  }
  return torch::nn::functional::cross_entropy(output, target);
}

at::Tensor sample_of(const SyntheticBatch& batch) { return batch.input.narrow(0, 0, 1); }

}  // namespace runtime
