// A flat parameter buffer that gives its memory back, and takes it again, without the tensor
// changing: the parameters are views of it, and autograd's saved tensors hold those views, so a
// buffer refilled before backward reaches it is what backward reads (FSDP frees its unsharded
// FlatParameter the same way). ZeRO-3 of data parallelism (sharded_data_parallel.h) and of a
// pipeline stage's replicas (replica_shards.h) both hold their whole parameters only while
// gathered.
#pragma once

#include <ATen/core/Tensor.h>

namespace baselines {

void release_storage(const at::Tensor& flat);
// No-op where the storage already holds the buffer's bytes.
void allocate_storage(const at::Tensor& flat);

}  // namespace baselines
