// A Llama-style decoder-only transformer, the model class today's systems papers train: token
// embeddings, `depth` blocks of RMSNorm -> causal multi-head attention with rotary position
// embeddings (grouped-query heads where kv_heads < heads) -> residual, RMSNorm -> SwiGLU
// feed-forward -> residual; a last RMSNorm and an untied language-model head. Its output is the
// next-token logits, [batch, tokens, vocabulary]; a chain of named layers like every zoo model,
// so that the profiler times it layer by layer and a pipeline splits it into stages.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>

#include "runtime/models/model_zoo.h"

namespace runtime {

// Llama's pieces that a rank running a searched SPMD strategy (runtime/parallel/spmd_transformer.h)
// computes on its parts of the activations: the RMSNorm (eps 1e-5) and the rotary embedding of
// [batch, heads, tokens, head_width] by the angles' cosines and sines, [tokens, head_width].
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight);
at::Tensor apply_rotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

// make_model's for "llama": the options as check_model_options (model_catalog.h) took them,
// defaults (kLlama* there) where they are 0. Build it through make_model.
std::shared_ptr<ZooModel> make_llama(const ModelOptions& options);

}  // namespace runtime
