#include "runtime/parallel/spmd_mixture.h"

#include <torch/torch.h>

#include <stdexcept>

#include "runtime/parallel/reshard.h"

namespace runtime {
namespace {

using harness::spmd::kPartial;
using harness::spmd::kReplicated;
using harness::spmd::sharded;
using harness::spmd::SignatureKind;

// The layer as this rank runs the signature: which experts it holds, how wide their hidden
// layers, how many capacity groups the tokens it routes make.
MoeOptions options_for(SignatureKind signature, const MoeOptions& whole, int64_t hidden,
                       const Communicator& group) {
  MoeOptions options = whole;
  const int64_t ranks = group.world_size();
  options.shard = 0;
  options.shards = 1;
  options.groups = ranks;
  switch (signature) {
    case SignatureKind::kData:
      options.groups = 1;  // a batch shard is one group
      break;
    case SignatureKind::kExperts:
      options.groups = 1;
      options.shard = group.rank();
      options.shards = ranks;
      break;
    case SignatureKind::kColumn:
      options.expert_width = 4 * hidden / ranks;
      break;
    case SignatureKind::kReplicated:
      break;
    default:
      throw std::invalid_argument(std::string("a mixture of experts does not run as ") +
                                  harness::spmd::to_text(signature));
  }
  return options;
}

// The zoo's names of expert `e`'s tensors: its two linear layers' weight and bias.
std::string expert_tensor(const std::string& module, int64_t e, const char* what) {
  return module + ".experts." + std::to_string(e) + "." + what;
}
constexpr const char* kExpertTensors[] = {"0.weight", "0.bias", "2.weight", "2.bias"};
// Along which dimension a column mixture splits each of them (-1: whole).
constexpr int kColumnSplit[] = {0, 0, 1, -1};

const at::Tensor& zoo_tensor(const std::map<std::string, at::Tensor>& zoo,
                             const std::string& name) {
  const auto found = zoo.find(name);
  if (found == zoo.end()) throw std::invalid_argument("spmd plan: the model has no " + name);
  return found->second;
}

}  // namespace

SpmdMixture::SpmdMixture(const SpmdStep& step, const MoeFeedForwardImpl& whole,
                         const std::string& module, const std::map<std::string, at::Tensor>& zoo,
                         Communicator& group)
    : signature_(step.signature), module_(module), group_(group) {
  const at::Tensor& router = zoo_tensor(zoo, module + ".router.weight");
  const int64_t hidden = router.size(1);
  layer_ = MoeFeedForward(hidden, options_for(signature_, whole.options(), hidden, group));
  if (signature_ == SignatureKind::kExperts) layer_->set_expert_group(&group_);
  const torch::NoGradGuard no_grad;
  layer_->router->weight.copy_(router);
  const int64_t local = layer_->local_experts();
  for (int64_t j = 0; j < local; ++j) take_expert(j, layer_->first_local_expert() + j, zoo);
}

// Expert `global`'s tensors into local expert `local`: whole, or this rank's columns of its
// hidden layer (the second bias rank 0's alone, a constant zero elsewhere).
void SpmdMixture::take_expert(int64_t local, int64_t global,
                              const std::map<std::string, at::Tensor>& zoo) {
  const bool column = signature_ == SignatureKind::kColumn;
  const auto named = layer_->experts[local]->named_parameters();
  for (size_t i = 0; i < std::size(kExpertTensors); ++i) {
    at::Tensor source = zoo_tensor(zoo, expert_tensor(module_, global, kExpertTensors[i]));
    at::Tensor target = named[kExpertTensors[i]];
    const int split = kColumnSplit[i];
    if (column && split >= 0) {
      const int64_t size = source.size(split) / group_.world_size();
      source = source.narrow(split, group_.rank() * size, size);
    }
    if (column && split < 0 && group_.rank() != 0) {
      target.zero_();
      target.set_requires_grad(false);
      continue;
    }
    target.copy_(source);
  }
}

at::Tensor SpmdMixture::forward(const at::Tensor& x) { return layer_->forward(x); }

// A batch shard's layer averaged its own group's loss, a whole batch's every group's; the
// column mixture's ranks each computed the whole, and their gradients are summed.
at::Tensor SpmdMixture::auxiliary_loss() const {
  const at::Tensor loss = layer_->auxiliary_loss();
  return auxiliary_is_part() ? loss / static_cast<double>(group_.world_size()) : loss;
}

std::vector<at::Tensor> SpmdMixture::parameters() const {
  std::vector<at::Tensor> out;
  for (const auto& p : layer_->parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

std::vector<at::Tensor> SpmdMixture::expert_parameters() const {
  std::vector<at::Tensor> out;
  for (const auto& p : layer_->experts->parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

std::vector<at::Tensor> SpmdMixture::summed_parameters() const {
  switch (signature_) {
    case SignatureKind::kData:
      return parameters();
    case SignatureKind::kExperts:
    case SignatureKind::kColumn:
      return {layer_->router->weight};
    default:
      return {};
  }
}

// A tensor split along `split` put back together on every rank.
at::Tensor SpmdMixture::whole_of(const at::Tensor& local, int split) {
  return change_form(group_, local.detach().contiguous(), sharded(split), kReplicated);
}

void SpmdMixture::add_whole(std::map<std::string, at::Tensor>& whole) {
  whole[module_ + ".router.weight"] = layer_->router->weight.detach().clone();
  const int64_t local = layer_->local_experts();
  for (size_t i = 0; i < std::size(kExpertTensors); ++i) {
    std::vector<at::Tensor> own;
    for (int64_t j = 0; j < local; ++j) {
      own.push_back(layer_->experts[j]->named_parameters()[kExpertTensors[i]]);
    }
    // Expert parallelism's experts lie rank after rank: gathered as a stack.
    at::Tensor stacked = torch::stack(own).detach();
    if (signature_ == SignatureKind::kExperts) stacked = whole_of(stacked, 0);
    if (signature_ == SignatureKind::kColumn) {
      const int split = kColumnSplit[i];
      stacked = split >= 0 ? whole_of(stacked, split + 1)
                           : change_form(group_, stacked.contiguous(), kPartial, kReplicated);
    }
    const int64_t experts = stacked.size(0);
    for (int64_t e = 0; e < experts; ++e) {
      whole[expert_tensor(module_, e, kExpertTensors[i])] = stacked[e].clone();
    }
  }
}

}  // namespace runtime
