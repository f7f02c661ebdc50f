// The optimizer every system steps with (DDP, expert parallelism, the pipelines), made from the
// worker's configuration: SGD (with momentum and weight decay) or AdamW (decoupled weight decay,
// Loshchilov and Hutter; PyTorch's torch.optim.AdamW), LibTorch's own implementations. Its state
// is what a rank's memory report counts as optimizer state.
#pragma once

#include <torch/optim/optimizer.h>

#include <memory>
#include <vector>

#include "runtime/protocol/worker_config.h"

namespace runtime {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const WorkerOptimizer& config,
                                                        std::vector<torch::Tensor> parameters);

// The tensors of its state now: SGD's momentum buffers, AdamW's first and second moments (none
// before the first step: LibTorch makes them lazily).
std::vector<torch::Tensor> optimizer_state_tensors(torch::optim::Optimizer& optimizer);

// How many parameter-sized state tensors it keeps once it has stepped: AdamW's two moments,
// SGD's momentum buffer (none without momentum). The formulas of a rank's memory use it.
int optimizer_states_per_element(const WorkerOptimizer& config);

}  // namespace runtime
