#include "runtime/models/moe.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include "runtime/comm/differentiable_all_to_all.h"

namespace runtime {

namespace nn = torch::nn;

namespace {

nn::Sequential make_expert(int64_t hidden, int64_t width) {
  return nn::Sequential(nn::Linear(hidden, width), nn::GELU(), nn::Linear(width, hidden));
}

// Runs `build` without drawing from torch's global generator (its state is put back after):
// how many experts a rank builds then leaves every later weight of the model unchanged.
template <typename Build>
void without_global_draws(Build build) {
  at::Generator global = at::detail::getDefaultCPUGenerator();
  at::Tensor state;
  {
    std::lock_guard<std::mutex> lock(global.mutex());
    state = global.get_state();
  }
  build();
  std::lock_guard<std::mutex> lock(global.mutex());
  global.set_state(state);
}

torch::Tensor index_tensor(const std::vector<int64_t>& values, const torch::Device& device) {
  return torch::tensor(values, torch::kLong).to(device);
}

// Zero that depends on every parameter of an expert no token reached: its gradient is then
// zero rather than absent, as a bucketed reducer (DDP without find_unused_parameters) needs.
torch::Tensor idle_expert_term(nn::Module& expert) {
  torch::Tensor term;
  for (const auto& p : expert.parameters()) {
    const torch::Tensor zero = p.sum() * 0;
    term = term.defined() ? term + zero : zero;
  }
  return term;
}

}  // namespace

// Where each token's choices go: for each expert (global index), the tokens it takes and which
// of their k choices brought them there, in the order capacity was claimed.
struct MoeFeedForwardImpl::Routing {
  std::vector<std::vector<int64_t>> rows, slots;
  torch::Tensor gates;  // [tokens, k]
};

MoeFeedForwardImpl::MoeFeedForwardImpl(int64_t hidden, MoeOptions options) : options_(options) {
  if (options.experts < 1 || options.top_k < 1 || options.top_k > options.experts ||
      !(options.capacity_factor > 0)) {
    throw std::invalid_argument("mixture of experts: need experts >= top_k >= 1, capacity > 0");
  }
  if (options.groups < 1 || options.shards < 1 || options.experts % options.shards != 0 ||
      options.shard < 0 || options.shard >= options.shards) {
    throw std::invalid_argument("mixture of experts: " + std::to_string(options.experts) +
                                " experts do not shard evenly over " +
                                std::to_string(options.shards) + " ranks");
  }
  router =
      register_module("router", nn::Linear(nn::LinearOptions(hidden, options.experts).bias(false)));
  experts = register_module("experts", nn::ModuleList());
  without_global_draws([&] {
    const int64_t width = options.expert_width > 0 ? options.expert_width : 4 * hidden;
    for (int64_t e = 0; e < local_experts(); ++e) experts->push_back(make_expert(hidden, width));
  });
  // One draw from the global generator whatever the shard: the rest of the model is the same.
  const auto seed = torch::randint(int64_t{1} << 62, {1}, torch::kLong).item<int64_t>();
  initialize_experts(static_cast<uint64_t>(seed), 1.0 / std::sqrt(static_cast<double>(hidden)));
}

void MoeFeedForwardImpl::initialize_experts(uint64_t seed, double std) {
  torch::NoGradGuard no_grad;
  for (int64_t j = 0; j < local_experts(); ++j) {
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(
        seed + static_cast<uint64_t>(first_local_expert() + j));
    for (auto& parameter : experts[j]->named_parameters()) {
      if (parameter.key().find("bias") != std::string::npos) {
        parameter.value().zero_();
      } else {
        parameter.value().normal_(0, std, generator);
      }
    }
  }
}

int64_t MoeFeedForwardImpl::capacity(int64_t tokens) const {
  return static_cast<int64_t>(std::ceil(options_.capacity_factor * static_cast<double>(tokens) *
                                        static_cast<double>(options_.top_k) /
                                        static_cast<double>(options_.experts)));
}

// Capacity, per group, claimed by first choices (in token order) before second ones: on the
// CPU, from the routing alone (no gradient flows through it).
MoeFeedForwardImpl::Routing MoeFeedForwardImpl::route(const torch::Tensor& top_experts,
                                                      int64_t count) {
  if (count % options_.groups != 0) {
    throw std::invalid_argument("mixture of experts: " + std::to_string(count) +
                                " tokens do not split into " + std::to_string(options_.groups) +
                                " groups");
  }
  const int64_t group_size = count / options_.groups;
  const int64_t limit = capacity(group_size);
  const torch::Tensor choices = top_experts.to(torch::kCPU).contiguous();
  const auto* chosen = choices.data_ptr<int64_t>();
  Routing routing;
  routing.rows.resize(options_.experts);
  routing.slots.resize(options_.experts);
  dropped_ = 0;
  for (int64_t g = 0; g < options_.groups; ++g) {
    std::vector<int64_t> taken(options_.experts, 0);
    for (int64_t k = 0; k < options_.top_k; ++k) {
      for (int64_t t = g * group_size; t < (g + 1) * group_size; ++t) {
        const int64_t e = chosen[t * options_.top_k + k];
        if (taken[e] >= limit) {
          ++dropped_;
          continue;
        }
        ++taken[e];
        routing.rows[e].push_back(t);
        routing.slots[e].push_back(k);
      }
    }
  }
  return routing;
}

// Runs this rank's experts on `arrived`: expert j on the rows rows_of_expert[j] (an expert no
// row reached adds its zero term instead); each result at its row.
torch::Tensor MoeFeedForwardImpl::run_experts(
    const torch::Tensor& arrived, const std::vector<std::vector<int64_t>>& rows_of_expert) {
  // Zeros that depend on `arrived`: where no row reached this rank's experts, the dispatch's
  // all-to-all must still run backward here, as it does on the ranks it sent rows to.
  torch::Tensor results = arrived * 0;
  for (int64_t j = 0; j < local_experts(); ++j) {
    if (rows_of_expert[j].empty()) {
      results = results + idle_expert_term(*experts[j]).to(results.scalar_type());
      continue;
    }
    const torch::Tensor index = index_tensor(rows_of_expert[j], arrived.device());
    const torch::Tensor expert_out =
        experts[j]->as<nn::Sequential>()->forward(arrived.index_select(0, index));
    results = results.index_add(0, index, expert_out.to(results.scalar_type()));
  }
  return results;
}

// Each token goes to its experts in one block per expert (experts in order, so rank r's
// experts' rows are one contiguous block). Sharded, the blocks are dispatched by all-to-all:
// each rank runs its own experts on what arrives from every rank and sends the results back
// the way they came. Either way the gates are applied where the tokens live. A layer holding
// every expert is the one-shard case without the exchanges.
torch::Tensor MoeFeedForwardImpl::dispatch(const torch::Tensor& tokens, const Routing& routing) {
  const int64_t ranks = options_.shards, local = local_experts();
  const bool sharded = ranks > 1;
  std::vector<int64_t> send_rows, send_slots, counts(options_.experts);
  std::vector<int64_t> input_splits(ranks, 0);
  for (int64_t e = 0; e < options_.experts; ++e) {
    send_rows.insert(send_rows.end(), routing.rows[e].begin(), routing.rows[e].end());
    send_slots.insert(send_slots.end(), routing.slots[e].begin(), routing.slots[e].end());
    counts[e] = static_cast<int64_t>(routing.rows[e].size());
    input_splits[e / local] += counts[e];
  }
  // How many rows each rank sends each of this rank's experts: [ranks x local], source-major;
  // exchanged on the tokens' device (NCCL moves no host tensor), read on the host.
  torch::Tensor arriving_counts = torch::tensor(counts, torch::kLong);
  if (sharded) {
    const torch::Tensor sent_counts = arriving_counts.to(tokens.device());
    torch::Tensor arrived_counts = torch::empty_like(sent_counts);
    group_->all_to_all(arrived_counts, sent_counts, {}, {})->wait();
    arriving_counts = arrived_counts.to(torch::kCPU);
  }
  const auto* arriving = arriving_counts.data_ptr<int64_t>();
  std::vector<int64_t> output_splits(ranks, 0);
  std::vector<std::vector<int64_t>> rows_of_expert(local);
  int64_t row = 0;
  for (int64_t source = 0; source < ranks; ++source) {
    for (int64_t j = 0; j < local; ++j) {
      const int64_t n = arriving[source * local + j];
      output_splits[source] += n;
      for (int64_t i = 0; i < n; ++i) rows_of_expert[j].push_back(row++);
    }
  }
  const torch::Tensor send_index = index_tensor(send_rows, tokens.device());
  const torch::Tensor sent = tokens.index_select(0, send_index);
  const torch::Tensor arrived =
      sharded ? all_to_all_with_grad(*group_, sent, output_splits, input_splits, trace_,
                                     trace_name_ + " dispatch")
              : sent;
  const torch::Tensor results = run_experts(arrived, rows_of_expert);
  const torch::Tensor returned =
      sharded ? all_to_all_with_grad(*group_, results, input_splits, output_splits, trace_,
                                     trace_name_ + " combine")
              : results;
  const torch::Tensor weight =
      routing.gates.index({send_index, index_tensor(send_slots, tokens.device())}).unsqueeze(-1);
  return torch::zeros_like(tokens).index_add(0, send_index,
                                             (weight * returned).to(tokens.scalar_type()));
}

torch::Tensor MoeFeedForwardImpl::forward(torch::Tensor x) {
  const auto shape = x.sizes().vec();
  const int64_t hidden = shape.back();
  const torch::Tensor tokens = x.reshape({-1, hidden});
  const int64_t count = tokens.size(0);
  const torch::Tensor probabilities = torch::softmax(router->forward(tokens), -1);  // [T, E]
  const auto [top_probabilities, top_experts] = probabilities.topk(options_.top_k, -1);
  Routing routing = route(top_experts, count);
  // Switch: the router's probability; GShard top-2: the chosen pair renormalised.
  routing.gates = options_.top_k == 1
                      ? top_probabilities
                      : top_probabilities / top_probabilities.sum(-1, /*keepdim=*/true);
  if (options_.shards > 1 && group_ == nullptr) {
    throw std::logic_error("mixture of experts: a sharded layer needs its expert group");
  }
  const torch::Tensor output = dispatch(tokens, routing);

  // Load balance over first choices, before capacity (Switch Transformer, eq. 4), per group.
  const int64_t groups = options_.groups, experts_count = options_.experts;
  const torch::Tensor first = top_experts.select(-1, 0).reshape({groups, -1});
  const torch::Tensor share =
      torch::one_hot(first, experts_count).to(probabilities.scalar_type()).mean(1);  // [G, E]
  const torch::Tensor mean_probability = probabilities.reshape({groups, -1, experts_count}).mean(1);
  auxiliary_loss_ = static_cast<double>(experts_count) * (share * mean_probability).sum(-1).mean();
  return output.reshape(shape);
}

std::vector<MoeFeedForwardImpl*> mixtures_of(torch::nn::Module& model) {
  std::vector<MoeFeedForwardImpl*> found;
  for (const auto& module : model.modules(/*include_self=*/true)) {
    if (auto* mixture = module->as<MoeFeedForwardImpl>()) found.push_back(mixture);
  }
  return found;
}

std::vector<torch::Tensor> expert_parameters(torch::nn::Module& model) {
  std::vector<torch::Tensor> parameters;
  for (auto* mixture : mixtures_of(model)) {
    for (const auto& p : mixture->experts->parameters()) parameters.push_back(p);
  }
  return parameters;
}

bool is_expert_parameter(const std::vector<torch::Tensor>& experts,
                         const torch::Tensor& parameter) {
  return std::any_of(experts.begin(), experts.end(),
                     [&](const torch::Tensor& e) { return e.is_same(parameter); });
}

torch::Tensor summed_auxiliary_loss(const std::vector<MoeFeedForwardImpl*>& mixtures) {
  torch::Tensor total;
  for (const auto* mixture : mixtures) {
    const torch::Tensor loss = mixture->auxiliary_loss();
    if (loss.defined()) total = total.defined() ? total + loss : loss;
  }
  return total;
}

}  // namespace runtime
