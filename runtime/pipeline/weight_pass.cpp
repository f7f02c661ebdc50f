#include "runtime/pipeline/weight_pass.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <unordered_map>
#include <unordered_set>

namespace runtime {

namespace weight_pass_detail {

struct Capture {
  bool armed = false;
  bool seen = false;
  torch::autograd::variable_list gradients;
};

// Records the gradients entering its node while armed; passes them on unchanged.
class CapturingHook : public torch::autograd::FunctionPreHook {
 public:
  explicit CapturingHook(std::shared_ptr<Capture> capture) : capture_(std::move(capture)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& grads) override {
    if (capture_->armed) {
      capture_->gradients = grads;
      capture_->seen = true;
    }
    return grads;
  }

 private:
  std::shared_ptr<Capture> capture_;
};

}  // namespace weight_pass_detail

struct WeightPass::Target {
  std::shared_ptr<torch::autograd::Node> node;
  std::shared_ptr<weight_pass_detail::Capture> capture;
  torch::autograd::edge_list weight_edges;  // the node's edges to the layer's weights
};

namespace {

using torch::autograd::Node;
using NodeSet = std::unordered_set<const Node*>;

// Whether `node` leads to `target` (memoised in `known`).
bool leads_to(const std::shared_ptr<Node>& node, const Node* target,
              std::unordered_map<const Node*, bool>& known) {
  if (!node) return false;
  if (node.get() == target) return true;
  const auto found = known.find(node.get());
  if (found != known.end()) return found->second;
  known[node.get()] = false;  // a graph has no cycles; this only stops a revisit
  bool reaches = false;
  for (const torch::autograd::Edge& edge : node->next_edges()) {
    reaches = leads_to(edge.function, target, known) || reaches;
  }
  return known[node.get()] = reaches;
}

// The weight accumulators reachable from `node` (a node off the input path).
void weights_below(const std::shared_ptr<Node>& node, const NodeSet& weights,
                   torch::autograd::edge_list& out, NodeSet& visited) {
  if (!node || !visited.insert(node.get()).second) return;
  for (const torch::autograd::Edge& edge : node->next_edges()) {
    if (!edge.function) continue;
    if (weights.count(edge.function.get()) != 0) {
      out.push_back(edge);
    } else {
      weights_below(edge.function, weights, out, visited);
    }
  }
}

}  // namespace

WeightPass::WeightPass(const at::Tensor& output, const at::Tensor& input,
                       const std::vector<at::Tensor>& weights) {
  NodeSet accumulators;
  for (const auto& weight : weights) {
    const torch::autograd::Edge edge = torch::autograd::impl::gradient_edge(weight);
    if (edge.function) accumulators.insert(edge.function.get());
  }
  const Node* input_node = torch::autograd::impl::gradient_edge(input).function.get();
  // The input path: the nodes I runs, those that lead to the layer's input.
  std::unordered_map<const Node*, bool> on_path;
  if (input_node == nullptr || !leads_to(output.grad_fn(), input_node, on_path)) return;
  // Each node on it that hands weights a gradient (directly, or through nodes off the path) is
  // a target, with the weights it reaches that way.
  std::unordered_map<const Node*, int> claimed;
  std::vector<std::shared_ptr<Node>> pending{output.grad_fn()};
  NodeSet visited;
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    if (!node || !visited.insert(node.get()).second) continue;
    torch::autograd::edge_list own;
    NodeSet below;
    for (const torch::autograd::Edge& edge : node->next_edges()) {
      if (!edge.function) continue;
      if (accumulators.count(edge.function.get()) != 0) {
        own.push_back(edge);
      } else if (on_path[edge.function.get()]) {
        pending.push_back(edge.function);
      } else {
        weights_below(edge.function, accumulators, own, below);
      }
    }
    if (own.empty()) continue;
    for (const auto& edge : own) ++claimed[edge.function.get()];
    auto capture = std::make_shared<weight_pass_detail::Capture>();
    node->add_pre_hook(std::make_unique<weight_pass_detail::CapturingHook>(capture));
    targets_.push_back({std::move(node), std::move(capture), std::move(own)});
  }
  // Usable only when every weight the graph reaches is claimed by exactly one target: a weight
  // used twice in the layer would have its gradient through one target flow on through another.
  torch::autograd::edge_list reached;
  NodeSet seen;
  weights_below(output.grad_fn(), accumulators, reached, seen);
  complete_ = !targets_.empty();
  for (const auto& edge : reached) {
    const auto found = claimed.find(edge.function.get());
    complete_ = complete_ && found != claimed.end() && found->second == 1;
  }
}

WeightPass::~WeightPass() = default;

void WeightPass::arm(bool on) {
  for (Target& target : targets_) target.capture->armed = on;
}

bool WeightPass::run() {
  if (!complete_ || targets_.empty()) return false;
  for (const Target& target : targets_) {
    if (!target.capture->seen) return false;
  }
  for (Target& target : targets_) {
    torch::autograd::edge_list roots;
    torch::autograd::variable_list gradients;
    const auto& captured = target.capture->gradients;
    for (uint32_t i = 0; i < captured.size(); ++i) {
      if (!captured[i].defined()) continue;
      roots.emplace_back(target.node, i);
      gradients.push_back(captured[i]);
    }
    if (roots.empty()) continue;
    // Only the weight edges wanted: the node computes its weight gradients alone, and the
    // engine accumulates them into the weights' .grad.
    torch::autograd::Engine::get_default_engine().execute(
        roots, gradients, /*keep_graph=*/false, /*create_graph=*/false, /*accumulate_grad=*/true,
        target.weight_edges);
    target.capture->gradients.clear();
  }
  return true;
}

}  // namespace runtime
