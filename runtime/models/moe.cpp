#include "runtime/models/moe.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace runtime {

namespace nn = torch::nn;

MoeFeedForwardImpl::MoeFeedForwardImpl(int64_t hidden, MoeOptions options) : options_(options) {
  if (options.experts < 1 || options.top_k < 1 || options.top_k > options.experts ||
      !(options.capacity_factor > 0)) {
    throw std::invalid_argument("mixture of experts: need experts >= top_k >= 1, capacity > 0");
  }
  router =
      register_module("router", nn::Linear(nn::LinearOptions(hidden, options.experts).bias(false)));
  experts = register_module("experts", nn::ModuleList());
  for (int64_t e = 0; e < options.experts; ++e) {
    experts->push_back(
        nn::Sequential(nn::Linear(hidden, 4 * hidden), nn::GELU(), nn::Linear(4 * hidden, hidden)));
  }
}

int64_t MoeFeedForwardImpl::capacity(int64_t tokens) const {
  return static_cast<int64_t>(std::ceil(options_.capacity_factor * static_cast<double>(tokens) *
                                        static_cast<double>(options_.top_k) /
                                        static_cast<double>(options_.experts)));
}

torch::Tensor MoeFeedForwardImpl::forward(torch::Tensor x) {
  const auto shape = x.sizes().vec();
  const int64_t hidden = shape.back();
  const torch::Tensor tokens = x.reshape({-1, hidden});
  const int64_t count = tokens.size(0);
  const torch::Tensor probabilities = torch::softmax(router->forward(tokens), -1);  // [T, E]
  const auto [top_probabilities, top_experts] = probabilities.topk(options_.top_k, -1);
  // Switch: the router's probability; GShard top-2: the chosen pair renormalised.
  const torch::Tensor gates = options_.top_k == 1
                                  ? top_probabilities
                                  : top_probabilities / top_probabilities.sum(-1, /*keepdim=*/true);

  // Capacity, claimed by first choices (in token order) before second ones: on the CPU, from
  // the routing alone (no gradient flows through it).
  const int64_t limit = capacity(count);
  const torch::Tensor choices = top_experts.to(torch::kCPU).contiguous();
  const auto* chosen = choices.data_ptr<int64_t>();
  std::vector<std::vector<int64_t>> rows(options_.experts), slots(options_.experts);
  dropped_ = 0;
  for (int64_t k = 0; k < options_.top_k; ++k) {
    for (int64_t t = 0; t < count; ++t) {
      const int64_t e = chosen[t * options_.top_k + k];
      if (static_cast<int64_t>(rows[e].size()) >= limit) {
        ++dropped_;
        continue;
      }
      rows[e].push_back(t);
      slots[e].push_back(k);
    }
  }
  torch::Tensor output = torch::zeros_like(tokens);
  for (int64_t e = 0; e < options_.experts; ++e) {
    if (rows[e].empty()) continue;
    const torch::Tensor index = torch::tensor(rows[e], torch::kLong).to(tokens.device());
    const torch::Tensor slot = torch::tensor(slots[e], torch::kLong).to(tokens.device());
    const torch::Tensor weight = gates.index({index, slot}).unsqueeze(-1);
    const torch::Tensor expert_out =
        experts[e]->as<nn::Sequential>()->forward(tokens.index_select(0, index));
    output = output.index_add(0, index, weight * expert_out);
  }
  // Load balance over first choices, before capacity (Switch Transformer, eq. 4).
  const torch::Tensor first = top_experts.select(-1, 0);
  const torch::Tensor share =
      torch::zeros({options_.experts}, probabilities.options())
          .index_add(0, first, torch::ones({count}, probabilities.options())) /
      static_cast<double>(count);
  auxiliary_loss_ = static_cast<double>(options_.experts) * (share * probabilities.mean(0)).sum();
  return output.reshape(shape);
}

}  // namespace runtime
