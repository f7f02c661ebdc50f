// The system keys a train spec and a simulate spec share, read once for both: a sharded
// system's ZeRO stage, unit and prefetch, a composed system's zero_stage, and a bucket cap in
// MiB. A key both spec kinds accept means the same thing in both and is checked by the same rule.
#pragma once

#include <string>

#include "harness/spec/yaml_reader.h"
#include "runtime/parallel/parallel_system.h"

namespace harness {

// `stage: 1|2|3` (default 3), `unit: layer|model` (default layer), `prefetch: BOOL` (default
// true): the data axis of `kind: sharded`.
runtime::DataAxis read_sharded_data_axis(MapReader& reader);

// `zero_stage: 0 | 1 | 2 | 3` (default 0) of a pipeline or expert-parallel system: how the ranks
// that hold the same parameters hold them (baselines/sharded/replica_shards.h); 3 is FSDP
// inside them, its parameters gathered once per iteration.
int read_replica_zero_stage(MapReader& reader);

// `tensor: t` (2 to 256 ranks that split each layer) and `sequence_parallel: BOOL` (default
// false): the tensor axis of a tensor-parallel system or of a pipeline's stages.
runtime::TensorAxis read_tensor_axis(MapReader& reader);
// A `kind: tensor_parallel` system's axis: read_tensor_axis's keys, `vocabulary_parallel: BOOL`
// (which a pipeline's stages do not take) and read_recompute_gather's.
runtime::TensorAxis read_tensor_system_axis(MapReader& reader);
// `recompute_gather: BOOL` (default false; with sequence parallelism only): gathering the token
// shards again in backward, as Megatron-LM does, for a tensor-parallel system or the stages.
void read_recompute_gather(MapReader& reader, runtime::TensorAxis& tensor);

// What stops ZeRO's `zero_stage` from sharding a tensor-parallel system's replicas: tensor
// `degree` over `world` ranks leaving one group; "" where it leaves more (or does not divide
// them: refused apart) or there is nothing to shard (stage 0). One message for train and
// simulate specs.
std::string tensor_replicas_problem(int zero_stage, int degree, long long world);

// A bucket cap in MiB: at least one byte. A smaller value is reported and `fallback` returned.
double read_bucket_mb(MapReader& reader, const std::string& key, double fallback);

}  // namespace harness
