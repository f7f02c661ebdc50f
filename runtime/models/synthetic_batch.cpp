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
  int64_t classes = 0;
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
    classes = model.forward(batch.input.narrow(0, 0, 1).to(device)).size(1);
    model.train(was_training);
  }
  batch.target = loss == "cross_entropy" ? torch::randint(classes, {samples}, torch::kLong)
                                         : torch::randn({samples, classes});
  return batch;
}

at::Tensor sample_of(const SyntheticBatch& batch) { return batch.input.narrow(0, 0, 1); }

}  // namespace runtime
